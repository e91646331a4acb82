"""A forest: G independent searches whose leaves go to the device in ONE call per round.

Each tree is a `Search` (its own position, seed, parameters' budget, tree reuse, priors); a
round descends L leaves in every tree still searching, plays the G x L leaf positions with K
playouts each in one jitted call, and backs each tree's slice of the result up into that tree.
The leaf keys are the ones a lone search derives (fold_in(fold_in(tree's key, tree's call),
leaf)) and a playout's numbers do not depend on its batch, so tree g of a forest gives, move for
move, what a lone `Search` with that seed gives (tests/test_forest.py).  As in `Search.run`,
one round is in flight while the previous one is backed up, in the same order.

Each call plays only the trees still searching, packed and padded to a power of two of trees:
trees stop at different times (a budget met, a game over) without costing playouts, and a forest
compiles at most log2 G + 1 shapes.  The host
work (descents, backups) is still a loop over trees; its cost per leaf is what
`gojax bench --search --trees G` reports beside the aggregate rate.  poolRave and contextual
Monte-Carlo (per-tree device tables) are not supported in a forest.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels import rules
from gojax.kernels.host import Board
from gojax.kernels.playout import PlayoutConfig, PlayoutResult, run_playouts
from gojax.kernels.state import numpy_fields, with_placeholder_chains
from gojax.search.mcts import MoveStats, Search, SearchResult, leaf_keys, leaf_prior_codes
from gojax.search.params import SearchParams


@functools.partial(jax.jit, static_argnames=("leaves", "k", "config", "with_prior"))
def play_forest(fields: dict, keys: jax.Array, calls: jax.Array, leaves: int, k: int, config: PlayoutConfig,
                 with_prior: bool) -> PlayoutResult:
    """One round of G trees: fields hold G x L leaf boards (tree-major); keys uint32 [G, 2] the
    trees' raw key data (jax.random.key_data), calls int32 [G] their call counters.  Leaf i of
    tree g plays with fold_in(fold_in(keys[g], calls[g]), i), as search.mcts._play_leaves does."""
    states = jax.vmap(rules.with_chains)(with_placeholder_chains(fields))
    keys = jax.random.wrap_key_data(keys)
    per_tree = jax.vmap(lambda key, call: leaf_keys(jax.random.fold_in(key, call), jnp.arange(leaves)))(keys, calls)
    res = run_playouts(states, per_tree.reshape(-1), k, config)
    if with_prior:
        res = res.replace(start_prior=leaf_prior_codes(states))
    return res


def _rows(result: PlayoutResult, start: int, stop: int) -> PlayoutResult:
    """Tree g's slice of a forest result (numpy)."""
    return jax.tree.map(lambda a: a[start:stop] if a is not None and np.ndim(a) >= 1 else a, result)


class Forest:
    """G searches, one device call per round.  `searches[g]` is an ordinary `Search`: advance
    it, read its tree, or run it alone; `run` searches them all together."""

    def __init__(self, boards: list[Board], params: SearchParams | list[SearchParams]):
        plist = list(params) if isinstance(params, (list, tuple)) else [params] * len(boards)
        if len(plist) != len(boards) or not boards:
            raise ValueError("a forest needs one or more boards and one SearchParams per board (or one for all)")
        self._setup([Search(b, p) for b, p in zip(boards, plist)])

    @classmethod
    def of(cls, searches: list[Search]) -> Forest:
        """A forest of existing searches (their trees, keys and call counters carry on)."""
        forest = cls.__new__(cls)
        forest._setup(list(searches))
        return forest

    def _setup(self, searches: list[Search]) -> None:
        if not searches:
            raise ValueError("a forest needs one or more searches")
        plist = [s.params for s in searches]
        first = plist[0]
        for p in plist:
            if (p.leaves, p.playouts_per_leaf, p.playout_config(), p.uses_mogo_verdicts) != \
                    (first.leaves, first.playouts_per_leaf, first.playout_config(), first.uses_mogo_verdicts):
                raise ValueError("the trees of a forest share one device call: same L, K, playout policy and prior")
            if p.pool_prob > 0 or p.cmc_prob > 0:
                raise ValueError("poolRave and contextual Monte-Carlo keep per-tree device tables: not in a forest")
        if len({s.size for s in searches}) != 1:
            raise ValueError("the boards of a forest must have one size")
        self.params = first
        self.searches = searches
        self._key_data = np.stack([np.asarray(jax.random.key_data(s._key)) for s in searches])  # uint32 [G, 2]
        self.config = first.playout_config()
        self._play_on_finished = [p.rules == "chinese" for p in plist]
        if not hasattr(self, "_device"):  # kept when `use` swaps the searches
            self._device = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="gojax-forest-device")
            self._fetcher = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="gojax-forest-fetch")

    def use(self, searches: list[Search]) -> Forest:
        """Search these trees from now on (same checks as `of`; the worker threads are kept)."""
        self._setup(list(searches))
        return self

    @property
    def size(self) -> int:
        return len(self.searches)

    def _submit(self, leaf_boards: list[list[Board] | None], calls: list[int]) -> concurrent.futures.Future:
        """Start one round (asynchronously) and fetch its result to the host on a second thread.
        Only the trees with leaves this round are played, packed in order and padded to a power
        of two of trees: a few shapes to compile, and no playouts for trees that have stopped."""
        p = self.params
        active = [g for g, bs in enumerate(leaf_boards) if bs]
        bucket = 1 << (len(active) - 1).bit_length()
        rows = []
        for g in active:
            bs = leaf_boards[g]
            if self._play_on_finished[g]:
                bs = [b.resumed() if b.game_over else b for b in bs]
            rows.extend(bs + [bs[0]] * (p.leaves - len(bs)))  # each tree pads its own rows, as alone
        rows.extend(rows[:p.leaves] * (bucket - len(active)))
        order = active + [active[0]] * (bucket - len(active))
        keys = self._key_data[np.asarray(order)]
        fields = numpy_fields(rows)
        # Dispatch on a worker thread: on a GPU the playout loop's call blocks its caller until
        # the loop ends, and the host's next descents must not wait for it (search/mcts.py).
        started = self._device.submit(play_forest, fields, keys, np.asarray([calls[g] for g in order], np.int32),
                                      p.leaves, p.playouts_per_leaf, self.config, p.uses_mogo_verdicts)
        return self._fetcher.submit(lambda: jax.device_get(started.result()))

    def run(self, simulations: int | list[int], stop_early: bool = True,
            seconds: float | None = None) -> list[SearchResult]:
        """Search every tree for its budget of simulations (one for all, or one per tree),
        rounded up to whole rounds of L x K, as `Search.run`, or until `seconds` have passed;
        returns each tree's result.  A tree with a budget of 0 is left alone, so a caller can keep
        its seats while trees drop out."""
        budgets = [simulations] * self.size if isinstance(simulations, int) else list(simulations)
        p = self.params
        per_call = p.batch
        t_start = time.perf_counter()
        cpu_start = time.thread_time()
        host = wait = 0.0
        done = [0] * self.size
        own = [np.zeros(s.size * s.size) for s in self.searches]
        caps = [0] * self.size
        active = [b > 0 for b in budgets]
        pending = None  # (leaves per tree or None, future)
        deadline = None if seconds is None else t_start + seconds
        while True:
            if deadline is not None and time.perf_counter() >= deadline and any(done):
                active = [False] * self.size
            t0 = time.perf_counter()
            leaves: list = [None] * self.size
            for g, s in enumerate(self.searches):
                if not active[g]:
                    continue
                launched = done[g] + (per_call if pending and pending[0][g] is not None else 0)
                if launched > 0 and (launched >= budgets[g]
                                     or (stop_early and s._decided(budgets[g] - launched))
                                     or s.root_board.game_over):
                    active[g] = False
                    continue
                leaves[g] = [s._descend() for _ in range(p.leaves)]
                s._calls += 1
            future = None
            if any(ls is not None for ls in leaves):
                future = self._submit([None if ls is None else [leaf.board for leaf in ls] for ls in leaves],
                                      [s._calls for s in self.searches])
            host += time.perf_counter() - t0
            if pending is not None:
                t0 = time.perf_counter()
                result = pending[1].result()
                wait += time.perf_counter() - t0
                t0 = time.perf_counter()
                played = [g for g, ls in enumerate(pending[0]) if ls is not None]  # the call's tree order
                for pos, g in enumerate(played):
                    o, c = self.searches[g]._backup(pending[0][g], _rows(result, pos * p.leaves, (pos + 1) * p.leaves))
                    own[g] += o
                    caps[g] += c
                    done[g] += per_call
                host += time.perf_counter() - t0
            if future is None:
                break
            pending = (leaves, future)
        seconds = time.perf_counter() - t_start
        cpu = time.thread_time() - cpu_start
        self.last_timing = {"seconds": seconds, "host_seconds": host, "host_cpu_seconds": cpu,
                            "device_wait_seconds": wait, "simulations": sum(done)}
        return [s._result(done[g], seconds, host, cpu, wait, own[g] / max(done[g], 1), caps[g])
                for g, s in enumerate(self.searches)]


def merge_roots(results: list[SearchResult], searches: list[Search]) -> tuple[SearchResult, int]:
    """Root parallelisation (seed 003, sec. 4.3): the trees' root statistics summed move by move
    (visits added, values averaged by visits); returns the merged result and the index of the
    tree whose principal variation it reports (the one that visited the chosen move most)."""
    merged: dict = {}
    for r in results:
        for m in r.moves:
            acc = merged.setdefault(m.move, [0, 0.0, 0.0, 0.0, m.prior, 0])
            acc[0] += m.visits
            acc[1] += m.visits * (0.0 if math.isnan(m.q) else m.q)
            acc[2] += m.q_star
            acc[3] += 0.0 if math.isnan(m.q_amaf) else m.q_amaf
            acc[5] += 1
    stats = []
    for move, (visits, wq, qs, qa, prior, n) in merged.items():
        stats.append(MoveStats(move, int(visits), wq / visits if visits else float("nan"), qa / n, qs / n, prior))
    stats.sort(key=lambda m: (-m.visits, -m.q_star))
    best = stats[0]
    owner = max(range(len(results)), key=lambda g: next((m.visits for m in results[g].moves if m.move == best.move), 0))
    total = sum(r.simulations for r in results)
    out = dataclasses.replace(
        results[owner], move=best.move, value=best.q if best.visits else best.q_star,
        root_value=sum(r.root_value * r.simulations for r in results) / max(total, 1), simulations=total,
        nodes=sum(r.nodes for r in results), moves=stats,
        ownership=sum(r.ownership * r.simulations for r in results) / max(total, 1),
        cap_hits=sum(r.cap_hits for r in results))
    s = searches[owner]
    out.pv = s.variation(s.tree.pass_action if best.move is None else best.move)
    return out, owner
