"""The search: picks L leaves, sends them to the device in one batch, backs up the results.

Start at `Search.run`.  One round: descend L times from the root (virtual loss keeps the
leaves apart, and each new leaf becomes a node at once, as in Algorithm 2's SIMTREE),
dispatch the L leaf positions to the device for K playouts each, then back up the PREVIOUS
round's results while the device plays this one.  The dispatch runs on a worker thread: JAX
dispatch is asynchronous on a CPU backend, but on a GPU a call whose playout loop is a
`while_loop` blocks its caller until the loop ends (XLA reads the loop condition back on the
host every iteration), which would serialise the host's descent behind the device.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels import policy, rules
from gojax.kernels.geometry import Geometry
from gojax.kernels.host import Board
from gojax.kernels.playout import PlayoutConfig, PlayoutResult, pad_to_multiple, run_playouts, sharded_playouts
from gojax.kernels.state import geometry_of, numpy_batch, numpy_fields, with_placeholder_chains
from gojax.search import priors
from gojax.search.backup import Leaf, apply_virtual_loss, backup_round
from gojax.search.params import SearchParams
from gojax.search.select import q_star, refresh, refresh_path, select_action
from gojax.search.tree import Tree

_label_chains = jax.jit(jax.vmap(rules.with_chains))


@jax.jit
def leaf_prior_codes(states):
    """int8 [L, P]: the MoGo prior's verdicts (kernels/policy.prior_codes) at each leaf position."""
    return jax.vmap(policy.prior_codes)(states)[:, jnp.asarray(geometry_of(states).point_to_cell)]


def leaf_keys(key, index):
    """One PRNG key per leaf: fold_in(key, leaf index)."""
    return jax.vmap(lambda i: jax.random.fold_in(key, i))(index)


@functools.partial(jax.jit, static_argnames=("k", "config", "with_prior"))
def _play_leaves(fields: dict, key: jax.Array, call: jax.Array, k: int, config: PlayoutConfig,
                 with_prior: bool) -> PlayoutResult:
    """A search round's device call in ONE dispatch: label the leaf boards' chains (fields:
    kernels/state.numpy_fields), K playouts from each with the keys fold_in(fold_in(key, call),
    leaf), and the MoGo prior's verdicts for the new nodes.  One call, not four: each jitted call
    costs host Python that the search's own thread would wait for (the interpreter lock)."""
    states = jax.vmap(rules.with_chains)(with_placeholder_chains(fields))
    keys = leaf_keys(jax.random.fold_in(key, call), jnp.arange(fields["color"].shape[0], dtype=jnp.int32))
    res = run_playouts(states, keys, k, config)
    if with_prior:
        res = res.replace(start_prior=leaf_prior_codes(states))
    return res


class Simulator:
    """The device side of a search: K playouts from each of L leaf positions per call.

    With contextual Monte-Carlo on, it also owns the CMC tables (device arrays [2, P, P]): each
    call's pair statistics are added to them on the device, for the whole game."""

    def __init__(self, params: SearchParams, config: PlayoutConfig | None = None):
        self.leaves = params.leaves
        self.k = params.playouts_per_leaf
        self.config = config or params.playout_config()
        self.pool_size = params.pool_size if self.config.pool_prob > 0 else 0
        self.devices = jax.device_count()
        self.cmc = None
        self._cmc_size = None
        self.prior_codes = params.uses_mogo_verdicts
        self.play_on_finished = params.rules == "chinese"  # two passes in the tree: dead stones come off
        self._worker: concurrent.futures.ThreadPoolExecutor | None = None  # dispatches, in order
        self._fetcher: concurrent.futures.ThreadPoolExecutor | None = None  # waits, copies to the host

    def submit(self, boards: list[Board], key: jax.Array, call: int,
               pools: np.ndarray | None = None) -> concurrent.futures.Future:
        """`dispatch(boards, fold_in(key, call), pools)` on the simulator's one worker thread;
        the future's result is dispatch's.  One worker keeps the calls in order (the CMC tables
        of one call feed the next).  The fold happens inside the jitted leaf-key function (an
        eager fold_in costs host time, and on the worker it would queue behind the running
        playouts).  The worker must not wait for the results either: the next round's dispatch
        would queue behind the wait and the device would idle between calls.  A second thread
        waits instead and copies the result to the host as numpy while the search thread is
        still waiting for it (docs/history.md has the timings)."""
        if self._worker is None:
            self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="gojax-device")
            self._fetcher = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="gojax-fetch")
        started = self._worker.submit(self.dispatch, boards, key, pools, call)
        return self._fetcher.submit(lambda: jax.device_get(started.result()))

    def dispatch(self, boards: list[Board], key: jax.Array, pools: np.ndarray | None = None,
                 call: int = 0) -> PlayoutResult:
        """Start the playouts (asynchronously); `jax.device_get` the result to wait for it.
        Leaf i plays with fold_in(fold_in(key, call), i), on every path (one key derivation).

        pools: int32 [len(boards), 2, pool_size] poolRave cells (0 = empty), when poolRave is on.
        With several local devices the L leaves are split over them (shard_map, one key per
        leaf: the same numbers as on one device); extra rows from padding are ignored."""
        if self.play_on_finished:
            boards = [b.resumed() if b.game_over else b for b in boards]
        if self.devices == 1 and not (self.pool_size or self.config.cmc_prob > 0):
            boards = boards + [boards[0]] * (self.leaves - len(boards))  # fixed shape: one compile
            return _play_leaves(numpy_fields(boards), key, np.int32(call), self.k, self.config, self.prior_codes)
        res, states = self._playouts(boards, key, pools, call)
        if self.prior_codes:  # the new nodes' MoGo prior, computed where the leaf boards already are
            res = res.replace(start_prior=leaf_prior_codes(states))
        return res

    def _playouts(self, boards: list[Board], key: jax.Array, pools: np.ndarray | None, call: int):
        n = len(boards)
        boards = boards + [boards[0]] * (self.leaves - n)  # fixed shape: one compile
        states = _label_chains(numpy_batch(boards))  # one copy to the device, which labels the chains
        index = np.arange(len(boards), dtype=np.int32)
        keys = self._call_leaf_keys(key, np.int32(call), index)
        if self.pool_size or self.config.cmc_prob > 0:  # learned rules: one device, tables alongside
            pool = None
            if self.pool_size:
                pool = np.zeros((self.leaves, 2, self.pool_size), np.int32)
                if pools is not None:
                    pool[:n] = pools
            cmc = self._cmc_tables(boards[0].size) if self.config.cmc_prob > 0 else None
            res = run_playouts(states, keys, self.k, self.config, pool=pool, cmc=cmc)
            if cmc is not None:
                self.cmc = (cmc[0] + res.cmc_wins, cmc[1] + res.cmc_count)
            return res, states
        if self.devices == 1:
            return run_playouts(states, keys, self.k, self.config), states
        states, keys = pad_to_multiple(states, keys, self.devices)
        fn, sharding = sharded_playouts(self.devices, self.k, self.config)
        return fn(*jax.device_put((states, keys), sharding)), states

    def _cmc_tables(self, size: int):
        if self.cmc is None or self._cmc_size != size:
            p = size * size
            self.cmc = (jnp.zeros((2, p, p), jnp.float32), jnp.zeros((2, p, p), jnp.float32))
            self._cmc_size = size
        return self.cmc

    def new_game(self) -> None:
        """Forget the CMC tables (they are learned over one game)."""
        self.cmc = None

    @staticmethod
    @jax.jit
    def _call_leaf_keys(key, call, index):
        return leaf_keys(jax.random.fold_in(key, call), index)

    def warm_up(self, board: Board) -> float:
        """Compile for this board size and batch shape; returns the seconds it took."""
        t0 = time.perf_counter()
        jax.block_until_ready(self.dispatch([board], jax.random.key(0), call=1).wins)  # as Search.run calls it
        return time.perf_counter() - t0


@dataclasses.dataclass
class MoveStats:
    move: int | None  # point, None for pass
    visits: int  # MC simulations through the move (prior's equivalent experience excluded)
    q: float  # MC value for the mover (NaN if unvisited)
    q_amaf: float  # AMAF value for the mover (NaN without AMAF data)
    q_star: float  # eq. 12 combination the tree policy uses (mover's view)
    prior: float  # heuristic H (mover's view)


@dataclasses.dataclass
class SearchResult:
    move: int | None  # the move to play (before pass/resign decisions): None = pass
    value: float  # the chosen move's MC value for the player to move
    root_value: float  # mean outcome of this search's simulations for the player to move
    simulations: int
    seconds: float
    host_seconds: float  # descent + backup + leaf conversion
    host_cpu_seconds: float  # CPU time of the search's thread over the search (it uses none while
    #                          it waits): what the host work costs, without the time it waits for
    #                          a core (on a CPU backend the playouts' threads share the cores)
    device_wait_seconds: float  # blocked waiting for the device
    nodes: int
    max_depth: int
    moves: list[MoveStats]  # sorted by visits, most first
    pv: list[int | None]  # principal variation (most visited child chain)
    ownership: np.ndarray  # [P] mean final owner over this search's playouts (+1 Black, -1 White)
    cap_hits: int

    @property
    def pv_vertices(self) -> list[str]:
        """The principal variation in GTP coordinates ("E5", "pass")."""
        from gojax.kernels.geometry import Geometry
        g = Geometry(int(round(len(self.ownership) ** 0.5)))
        return [g.to_gtp(p) for p in self.pv]

    @property
    def host_fraction(self) -> float:
        return self.host_seconds / self.seconds if self.seconds > 0 else 0.0


class Search:
    """MC-RAVE (or UCT) search from one position; `advance` reuses the tree after moves."""

    def __init__(self, board: Board, params: SearchParams = SearchParams(), simulator: Simulator | None = None):
        self.params = params
        self.simulator = simulator or Simulator(params)
        self.size = board.size
        self.tree = Tree(board.size, params.max_nodes, params.pass_in_tree == "always")
        rng = np.random.default_rng(params.seed)
        self._jitter = rng.uniform(0, 1e-6, self.tree.num_actions).astype(np.float32)
        self._new_root(board)
        self._key = jax.random.key(params.seed)
        self._calls = 0

    # --- tree management --------------------------------------------------------------------
    def _new_root(self, board: Board) -> None:
        self._codes = {}  # node -> device prior codes (int8 [P]) waiting for the node's first descent
        self.tree.num_nodes = 0
        self.root = self.tree.add(board.copy(), -1, -1)
        self._initialise(self.root)

    def _initialise(self, node: int, codes: np.ndarray | None = None) -> None:
        """Before the first descent through a node: its legal moves (if its playouts have not
        sent them yet), its prior (`codes`: the device's MoGo verdicts, if they came) and its
        cached values."""
        self.tree.ensure_legal(node)
        priors.initialise(self.tree, node, self.params, codes)
        refresh(self.tree, [node], self.params, self._jitter)

    @property
    def root_board(self) -> Board:
        return self.tree.boards[self.root]

    def advance(self, board: Board) -> bool:
        """Move the root to `board` (the game after one or more moves).  Keeps the matching
        subtree when `params.reuse_tree` and the moves lead there from the root; returns
        whether it did."""
        old = self.root_board
        k = len(old.moves)
        node = self.root
        if self.params.reuse_tree and board.size == old.size and board.moves[:k] == old.moves:
            for _color, p in board.moves[k:]:
                a = self.tree.pass_action if p is None else p
                node = int(self.tree.child[node, a]) if node >= 0 else -1
                if node < 0:
                    break
            if node >= 0 and int(self.tree.boards[node].hash) == int(board.hash) \
                    and self.tree.boards[node].komi == board.komi:
                self.tree.boards[node] = board.copy()  # same position; keep the game's own record
                self.root = self.tree.reroot(node)
                self._codes = {}  # node indices changed; initialise falls back to the host
                self.tree.ensure_legal(self.root)
                return True
        self._new_root(board)
        return False

    # --- one simulation round --------------------------------------------------------------
    def _descend(self) -> Leaf:
        tree, params = self.tree, self.params
        node = self.root
        nodes, actions = [node], []
        board = tree.boards[node]
        while not board.game_over:
            if not tree.initialised[node]:
                self._initialise(node, self._codes.pop(node, None))
            a = select_action(tree, node)
            actions.append(a)
            child = int(tree.child[node, a])
            if child >= 0:
                node = child
                nodes.append(child)
                board = tree.boards[child]
                continue
            board = board.copy()
            board.play(None if a == tree.pass_action else a)
            if not tree.full:
                child = tree.add(board, node, a, lazy=True)
                nodes.append(child)
            break
        leaf = Leaf(nodes, actions, board)
        if params.virtual_loss:
            leaf.virtual = params.virtual_loss * params.playouts_per_leaf
            apply_virtual_loss(tree, leaf, leaf.virtual)
            refresh_path(tree, leaf.nodes, leaf.actions, params, self._jitter)  # the round's next leaves see it
        return leaf

    def _pools(self, leaves: list[Leaf]) -> np.ndarray:
        """poolRave (seed 004 sec. IV.A): for each leaf, the k actions with the best AMAF value
        Q~ for each colour, from the deepest node on the leaf's path with `pool_min_visits`
        simulations (the colour to move there) and its parent (the other colour).  Cells
        int32 [L, 2, k], 0 for an empty slot; pass never enters a pool."""
        tree, p = self.tree, self.params
        k = self.simulator.pool_size
        cells = Geometry(self.size).point_to_cell
        out = np.zeros((len(leaves), 2, k), np.int32)
        for i, leaf in enumerate(leaves):
            deep = [n for n in leaf.nodes if tree.sims[n] >= p.pool_min_visits]
            if not deep:
                continue
            for node in (deep[-1], int(tree.parent[deep[-1]])):
                if node < 0:
                    continue
                na = tree.na[node, :-1]
                seen = (na > 0) & tree.legal[node, :-1]
                if not seen.any():
                    continue
                black = tree.to_play[node] == 1
                q = np.where(seen, tree.wa[node, :-1] / np.maximum(na, 1), np.nan)
                q = q if black else 1.0 - q
                q = np.where(seen, q, -np.inf)
                best = np.argsort(-q, kind="stable")[:min(k, int(seen.sum()))]
                out[i, int(tree.to_play[node]) - 1, :len(best)] = cells[best]
        return out

    def _backup(self, leaves: list[Leaf], result: PlayoutResult) -> tuple[np.ndarray, int]:
        # Already numpy when it came through `submit` (a second device_get walks the pytree again:
        # ~0.1 ms a round).
        r = result if isinstance(result.wins, np.ndarray) else jax.device_get(result)
        k = self.params.playouts_per_leaf
        fresh, rows = [], []  # new nodes not yet initialised, and their leaves' rows
        for i, leaf in enumerate(leaves):
            new = leaf.nodes[-1]
            if len(leaf.nodes) > len(leaf.actions) and not self.tree.legal_ready[new]:
                # The new node's legal moves: the device's masks for the leaf position, less superko.
                self.tree.set_legal(new, leaf.board.superko_filter(r.start_legal[i], r.start_capture[i]))
                if not self.tree.initialised[new]:
                    fresh.append(new)
                    rows.append(i)
        if fresh and self._batch_priors(r):
            # Their priors now, all at once (the refresh below covers them: they are on the paths).
            priors.initialise_batch(self.tree, fresh, self.params, None if r.start_prior is None else r.start_prior[rows])
        elif r.start_prior is not None:
            for new, i in zip(fresh, rows):
                self._codes[new] = r.start_prior[i]  # used when a descent first goes through it
        touched = backup_round(self.tree, leaves, k, r.wins, r.first_move, r.z, r.amaf_count, r.amaf_wins,
                               self.params.amaf_rule)
        refresh(self.tree, touched, self.params, self._jitter)
        own = (r.ownership[:len(leaves)] * k).sum(axis=0)
        return own, int(r.cap_hit[:len(leaves)].sum())

    def _batch_priors(self, r: PlayoutResult) -> bool:
        """Whether a round's new nodes take their prior at backup (priors.initialise_batch):
        every prior but the grandfather's, which reads the tree when the node is first descended
        through; the MoGo and shape priors only with the device's verdicts."""
        return self.params.prior in ("none", "even") or (self.params.uses_mogo_verdicts and r.start_prior is not None)

    def _decided(self, remaining: int) -> bool:
        """True when no remaining simulation budget can change the most visited root move."""
        v = np.sort(self.tree.visits(self.root, self._prior_count())[self.tree.legal[self.root]])
        return len(v) < 2 or v[-1] - v[-2] > remaining

    def _prior_count(self) -> float:
        return 0.0 if self.params.prior == "none" else self.params.prior_equiv

    # --- the public entry point ------------------------------------------------------------
    def run(self, simulations: int | None = None, seconds: float | None = None,
            stop_early: bool = True) -> SearchResult:
        """Search until `simulations` playouts (rounded up to whole batches of L * K) or
        `seconds` of wall time, whichever comes first.  At least one batch always runs."""
        if simulations is None and seconds is None:
            raise ValueError("give simulations or seconds")
        p = self.params
        per_call = p.batch
        t_start = time.perf_counter()
        deadline = t_start + seconds if seconds is not None else None
        host = wait = 0.0
        cpu_start = time.thread_time()  # one reading per search: the thread uses no CPU while it waits
        done = 0
        own = np.zeros(self.size * self.size)
        caps = 0
        pending = None
        while True:
            launched = done + (per_call if pending else 0)
            stop = launched > 0 and (
                (simulations is not None and launched >= simulations)
                or (deadline is not None and time.perf_counter() >= deadline)
                or (stop_early and simulations is not None and self._decided(simulations - launched))
                or self.root_board.game_over)
            t0 = time.perf_counter()
            if not stop:
                leaves = [self._descend() for _ in range(p.leaves)]
                self._calls += 1
                pools = self._pools(leaves) if self.simulator.pool_size else None
                future = self.simulator.submit([leaf.board for leaf in leaves], self._key, self._calls, pools)
            host += time.perf_counter() - t0
            if pending is not None:
                t0 = time.perf_counter()
                result = pending[1].result()  # numpy: the fetch thread waited for the device
                wait += time.perf_counter() - t0
                t0 = time.perf_counter()
                o, c = self._backup(pending[0], result)
                own += o
                caps += c
                done += per_call
                host += time.perf_counter() - t0
            if stop:
                break
            pending = (leaves, future)
        cpu = time.thread_time() - cpu_start
        return self._result(done, time.perf_counter() - t_start, host, cpu, wait, own / max(done, 1), caps)

    # --- reporting ---------------------------------------------------------------------------
    def _result(self, sims, seconds, host, cpu, wait, ownership, caps) -> SearchResult:
        tree, params, root = self.tree, self.params, self.root
        mover_black = tree.to_play[root] == 1
        pc = self._prior_count()
        visits = tree.visits(root, pc)
        legal = np.flatnonzero(tree.legal[root])
        prior_black = np.where(mover_black, tree.prior[root], 1 - tree.prior[root])
        q_mc_black = np.divide(tree.w[root] - pc * prior_black * (pc > 0), visits,
                               out=np.full(tree.num_actions, np.nan, np.float32), where=visits > 0)
        q_am_black = np.divide(tree.wa[root], tree.na[root], out=np.full(tree.num_actions, np.nan, np.float32),
                               where=tree.na[root] > 0)
        mine = (lambda x: x) if mover_black else (lambda x: 1.0 - x)
        qs = q_star(tree, root, params)
        stats = [MoveStats(None if a == tree.pass_action else int(a), int(round(visits[a])), float(mine(q_mc_black[a])),
                           float(mine(q_am_black[a])), float(qs[a]), float(tree.prior[root, a])) for a in legal]
        stats.sort(key=lambda m: (-m.visits, -m.q_star))
        if params.final_move == "value":
            best = max(stats, key=lambda m: m.q_star)
        else:
            best = stats[0]
        root_black = tree.wins[root] / tree.sims[root] if tree.sims[root] else 0.5
        return SearchResult(
            move=best.move, value=best.q if best.visits else best.q_star,
            root_value=float(mine(root_black)), simulations=sims, seconds=seconds,
            host_seconds=host, host_cpu_seconds=cpu, device_wait_seconds=wait, nodes=tree.num_nodes, max_depth=self._depth(),
            moves=stats, pv=self._pv(), ownership=ownership.astype(np.float32), cap_hits=caps)

    def variation(self, action: int, max_len: int = 20) -> list[int | None]:
        """The line starting with root `action` (point, or P for pass), then most visited."""
        node = int(self.tree.child[self.root, action])
        first = None if action == self.tree.pass_action else action
        return [first] + (self._pv(max_len - 1, node) if node >= 0 else [])

    def _pv(self, max_len: int = 20, start: int | None = None) -> list[int | None]:
        pv, node = [], self.root if start is None else start
        pc = self._prior_count()
        while node >= 0 and len(pv) < max_len:
            v = self.tree.visits(node, pc)
            v = np.where(self.tree.legal[node], v, -1)
            a = int(np.argmax(v))
            if v[a] <= 0:
                break
            pv.append(None if a == self.tree.pass_action else a)
            node = int(self.tree.child[node, a])
        return pv

    def _depth(self) -> int:
        n = self.tree.num_nodes
        depth = np.zeros(n, np.int32)
        for i in range(1, n):  # parents come before children
            par = self.tree.parent[i]
            depth[i] = depth[par] + 1 if par >= 0 else 0
        return int(depth.max()) if n else 0
