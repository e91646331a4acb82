"""The search loop: G searches (a forest; a lone search is a forest of one) whose leaves go to the
device in ONE call per round.

Each tree is a `Search` (search/mcts.py: its own position, seed, budget, tree reuse, priors).
A round is four steps (search/steps.py holds the tree side of each, for many trees at once):
  1. descend   L leaves in every tree still searching (`Rounds._descend`, steps.descend);
  2. submit    the G x L leaf positions to the device in one call (search/device.py);
  3. expand    the round's new nodes get their legal moves and priors from the device's
               verdicts, back ahead of the playouts (`Rounds._expand`, steps.expand);
  4. back up   the playouts' results up the paths (`Rounds._back_up`, steps.back_up),
and the host backs up round r - 1 while the device plays round r.  The leaf keys depend only
on the tree's seed and round, and a playout's numbers do not depend on its batch, so tree g of
a forest gives, move for move, what a lone search with that seed gives (tests/test_forest.py).

Each call plays only the trees still searching, packed and padded to a power of two of trees:
trees stop at different times (a budget met, a game over) without costing playouts, and a
forest compiles at most log2 G + 1 shapes.  Trees whose params differ only in the seed keep
their arrays side by side in one TreeStack (search/tree.py), and the host work of a round is
array operations over all of them.  What stays a Python loop is per leaf: playing the leaf's
move on a copy of its host board and its superko check.  A node that a descent reaches after an
earlier descent of the same round made it has no verdicts yet: the descent waits there while
the other trees step on, and then the waiting nodes of all trees get theirs in one call of
compiled code on the host's CPU (Simulator.verdicts_now; `in_flight` and `waves` are the
alternatives, search/params.py).  Contextual Monte-Carlo keeps one tree's tables on the device:
a forest of one only.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from typing import TYPE_CHECKING

import numpy as np

from gojax.kernels.geometry import NO_MOVE
from gojax.search.backup import Leaf, apply_virtual_loss
from gojax.search.device import Submitted, bucket
from gojax.search.select import refresh_path
from gojax.search.steps import back_up, descend, expand, leaf_rows

if TYPE_CHECKING:  # mcts.py imports this module
    from gojax.search.mcts import Search, SearchResult


@dataclasses.dataclass
class _Progress:
    """One `Rounds.run`: each tree's budget and what it has done, and the clocks."""
    budgets: list  # int or None (time only) per tree
    deadline: float | None
    stop_early: list  # per tree: stop once its most visited move cannot change
    done: list  # simulations backed up, per tree
    own: list  # ownership summed over those playouts, per tree ([P])
    caps: list  # playouts stopped by the move cap, per tree
    active: list  # still searching, per tree
    exact: list  # per tree: its last round backs up only the playouts its budget still needs
    host: float = 0.0  # seconds of descents and backups
    wait: float = 0.0  # seconds blocked on the device (the same-round verdicts' calls included)


@dataclasses.dataclass
class _Round:
    """A round in flight: each tree's leaves (None: it sat this round out) and the device's
    answers (search/device.Submitted: its leaf verdicts, if asked ahead, and its result)."""
    leaves: list
    call: Submitted
    keep: list | None = None  # per tree, the playouts to back up (None: all; `run`'s `exact`)


class Rounds:
    """The loop over G searches, one device call per round (`run`)."""

    def __init__(self, searches: list[Search]):
        """The loop over `searches` (their params must agree but for the seed's effects: one
        device call per round); it plays on the first search's simulator."""
        self._setup(list(searches))

    def _setup(self, searches: list[Search]) -> None:
        if not searches:
            raise ValueError("a forest needs one or more searches")
        first = searches[0].params
        for s in searches:
            p = s.params
            if (p.leaves, p.playouts_per_leaf, p.playout_config(), p.uses_mogo_verdicts, p.pool_size) != \
                    (first.leaves, first.playouts_per_leaf, first.playout_config(), first.uses_mogo_verdicts,
                     first.pool_size):
                raise ValueError("the trees of a forest share one device call: same L, K, playout policy and prior")
        if first.cmc_prob > 0 and len(searches) > 1:
            raise ValueError("contextual Monte-Carlo keeps one tree's device tables: not in a forest of several")
        if len({s.size for s in searches}) != 1:
            raise ValueError("the boards of a forest must have one size")
        self.params = first
        self.searches = searches
        if not hasattr(self, "simulator"):  # kept when `use` swaps the searches
            self.simulator = searches[0].simulator

    def use(self, searches: list[Search]) -> Rounds:
        """Search these trees from now on (same checks as `of`; the simulator is kept)."""
        self._setup(list(searches))
        return self

    @property
    def size(self) -> int:
        return len(self.searches)

    def run(self, simulations: int | list[int] | None, stop_early: bool | list[bool] = True,
            seconds: float | None = None, exact: bool | list[bool] = False) -> list[SearchResult]:
        """Search every tree for its budget of simulations (one for all, or one per tree; None:
        until `seconds`), rounded up to whole rounds of L x K (with `exact`, not rounded: the
        last round backs up only the playouts the budget still needs), or until `seconds` have
        passed; returns each tree's result.  `stop_early` and `exact`: one for all, or one per
        tree.  A tree with a budget of 0 is left alone, so a caller can keep its seats while
        trees drop out; every other tree plays at least one round."""
        if simulations is None and seconds is None:
            raise ValueError("give simulations or seconds")
        g = self.size
        budgets = list(simulations) if isinstance(simulations, (list, tuple)) else [simulations] * g
        t_start = time.perf_counter()
        cpu_start = time.thread_time()  # the thread uses no CPU while it waits for the device
        simulators = list({id(s.simulator): s.simulator for s in self.searches}.values())
        now_start = sum(sim.verdicts_now_seconds for sim in simulators)
        run = _Progress(budgets, None if seconds is None else t_start + seconds, _per_tree(stop_early, g), [0] * g,
                        [np.zeros(s.size * s.size) for s in self.searches], [0] * g,
                        [b is None or b > 0 for b in budgets], _per_tree(exact, g))
        pending = None
        # The cycle collector would walk every tree's boards again and again for garbage the
        # loop does not make (its lists and leaves are freed by reference counting), a large
        # share of the host's time (bench/results/forest/README.md): off while searching.
        collecting = gc.isenabled()
        gc.disable()
        try:
            while True:  # the device plays round r while the host backs up round r - 1
                if pending is not None and pending.call.verdicts is not None:
                    self._expand(run, pending)
                leaves = self._descend(run, pending)
                round_ = None if leaves is None else self._submit(run, pending, leaves)
                if pending is not None:
                    self._back_up(run, pending)
                if round_ is None:
                    break
                pending = round_
            seconds = time.perf_counter() - t_start
            cpu = time.thread_time() - cpu_start
            # The descents' same-round verdicts were timed as host work: they are a device call.
            now = sum(sim.verdicts_now_seconds for sim in simulators) - now_start
            run.host -= now
            run.wait += now
            self.last_timing = {"seconds": seconds, "host_seconds": run.host, "host_cpu_seconds": cpu,
                                "device_wait_seconds": run.wait, "simulations": sum(run.done)}
            return [s.result(simulations=run.done[t], seconds=seconds, host=run.host, cpu=cpu, wait=run.wait,
                             ownership=run.own[t] / max(run.done[t], 1), cap_hits=run.caps[t])
                    for t, s in enumerate(self.searches)]
        finally:
            if collecting:
                gc.enable()

    def _searching(self, run: _Progress, t: int, in_flight: int) -> bool:
        """Does tree t play another round?  Not once its budget is launched, its move is decided
        (stop_early), its clock has run out or its game is over; always at least one round."""
        s = self.searches[t]
        launched = run.done[t] + in_flight
        if launched == 0:
            return True
        budget = run.budgets[t]
        return not ((budget is not None and launched >= budget)
                    or (run.deadline is not None and time.perf_counter() >= run.deadline)
                    or (run.stop_early[t] and budget is not None and s.decided(budget - launched))
                    or s.root_board.game_over)

    def _descend(self, run: _Progress, pending: _Round | None) -> list | None:
        """Step 1: L descents in every tree still searching (in `waves`, the device giving each
        wave's new nodes their verdicts before the next); the leaves per tree (None: it sits
        this round out), or None when no tree searches on."""
        t0 = time.perf_counter()
        leaves: list[list[Leaf] | None] = [None] * self.size
        for t in range(self.size):
            in_flight = self._in_flight(pending, t)
            if run.active[t] and not self._searching(run, t, in_flight):
                run.active[t] = False
        groups = list(self._groups([t for t in range(self.size) if run.active[t]]).values())
        for t in (t for members in groups for t in members):
            leaves[t] = []
            self.searches[t].calls += 1
        L = self.params.leaves
        waves = self.params.waves if self.params.uses_verdicts_ahead else 1
        for w in range(waves):
            if w:  # the last wave's new nodes get their priors from the device before this one
                run.host += time.perf_counter() - t0
                self._ready_wave(run, leaves, L * (w - 1) // waves)
                t0 = time.perf_counter()
            for _ in range(L * w // waves, L * (w + 1) // waves):  # descent i of every tree at once
                for members in groups:
                    for t, leaf in zip(members, descend([self.searches[t] for t in members])):
                        leaves[t].append(leaf)
        run.host += time.perf_counter() - t0
        return leaves if any(ls is not None for ls in leaves) else None

    def _submit(self, run: _Progress, pending: _Round | None, leaves: list) -> _Round:
        """Step 2: the round's leaves to the device in one call, packed in order and padded to
        a power of two of trees (copies of the first): a few shapes to compile, no playouts for
        the others."""
        t0 = time.perf_counter()
        played = [t for t, ls in enumerate(leaves) if ls is not None]
        order = played + [played[0]] * (bucket(len(played)) - len(played))
        trees = [self.searches[t] for t in order]
        rows = leaf_rows([leaves[t] for t in order], self.params.rules)
        pools = [s.pools(leaves[t]) for s, t in zip(trees, order)] if self.params.pool_prob > 0 else None
        keys = np.stack([s.key_data for s in trees])
        call = self.simulator.submit(rows, keys, [s.calls for s in trees], pools, self.params.uses_verdicts_ahead)
        round_ = _Round(leaves, call, self._keep(run, pending, leaves) if any(run.exact) else None)
        run.host += time.perf_counter() - t0
        return round_

    def _in_flight(self, pending: _Round | None, t: int) -> int:
        """Simulations of tree t in the round on the device that its backup will count."""
        if pending is None or pending.leaves[t] is None:
            return 0
        if pending.keep is None or pending.keep[t] is None:
            return self.params.batch
        return pending.keep[t]

    def _keep(self, run: _Progress, pending: _Round | None, leaves: list) -> list:
        """Per tree of a new round, how many of its playouts the budget still needs (None: all)."""
        keep: list = [None] * self.size
        for t, ls in enumerate(leaves):
            budget = run.budgets[t]
            if ls is not None and budget is not None and run.exact[t]:
                left = budget - run.done[t] - self._in_flight(pending, t)
                if left < self.params.batch:
                    keep[t] = max(1, left)
        return keep

    def _ready_wave(self, run: _Progress, leaves: list, start: int) -> None:
        """SearchParams.waves: the verdicts of every tree's leaves from descent `start` on, in one
        device call (packed and padded as `_submit` packs a round), and the new nodes among them
        given their legal moves and priors as `_ready` gives a round's."""
        played = [t for t, ls in enumerate(leaves) if ls is not None]
        if not played:
            return
        wave = [None if ls is None else ls[start:] for ls in leaves]
        n = len(wave[played[0]])  # every tree descends once per step
        t0 = time.perf_counter()
        v = self.simulator.verdicts([leaf.board for t in played for leaf in wave[t]], bucket(len(played)) * n)
        run.wait += time.perf_counter() - t0
        t0 = time.perf_counter()
        self._expand_rows(wave, n, v)
        run.host += time.perf_counter() - t0

    def _groups(self, trees: list[int]) -> dict:
        """The trees worked on together (one stack, one params but the seed: Search.batch_key);
        a tree of its own stack is a group of one."""
        groups: dict = {}
        for t in trees:
            key = self.searches[t].batch_key
            groups.setdefault(("own", t) if key is None else id(key), []).append(t)
        return groups

    def _expand(self, run: _Progress, round_: _Round) -> None:
        """Step 3: wait for a round's leaf verdicts (ahead of its playouts) and give its new
        nodes their legal moves and priors, so that the next round's descents find them ready
        (without verdicts ahead, `back_up` does it with the playouts' result)."""
        t0 = time.perf_counter()
        v = round_.call.verdicts.result()  # numpy: the fetch thread waited for the device
        run.wait += time.perf_counter() - t0
        t0 = time.perf_counter()
        self._expand_rows(round_.leaves, self.params.leaves, v)
        run.host += time.perf_counter() - t0

    def _expand_rows(self, leaves: list, per_tree: int, v) -> None:
        """The new nodes among `leaves` (a round's or a wave's, `per_tree` rows a tree in their
        call) given their legal moves and priors from that call's NodeFeatures `v`."""
        for members, starts in self._rows(leaves, per_tree):
            lead = self.searches[members[0]]
            expand([self.searches[t] for t in members], [leaves[t] for t in members], starts,
                   v.legal, v.capture, v.prior, patterns=v.pattern, shapes=self.simulator.shapes_for(lead.params, v, lead.size))

    def _rows(self, leaves: list, per_tree: int):
        """The groups of trees with `leaves` (a round's, or a wave's), each with its trees' first
        rows in their device call, `per_tree` rows a tree in the call's tree order."""
        played = [t for t, ls in enumerate(leaves) if ls is not None]  # the call's tree order
        pos = {t: i for i, t in enumerate(played)}
        return [(members, [pos[t] * per_tree for t in members]) for members in self._groups(played).values()]

    def _back_up(self, run: _Progress, round_: _Round) -> None:
        """Step 4: wait for a round's result and back each tree's rows up into it."""
        t0 = time.perf_counter()
        result = round_.call.result.result()  # numpy: the fetch thread waited for the device
        run.wait += time.perf_counter() - t0
        t0 = time.perf_counter()
        kept, playouts = round_.leaves, None
        if round_.keep is not None and any(n is not None for n in round_.keep):
            result, kept, playouts = self._trim(round_, result)
        for members, starts in self._rows(round_.leaves, self.params.leaves):
            outs = back_up([self.searches[t] for t in members], [kept[t] for t in members], starts, result,
                                 ready=round_.call.verdicts is not None,
                                 playouts=None if playouts is None else np.concatenate([playouts[t] for t in members]))
            for t, (o, c) in zip(members, outs):
                run.own[t] += o
                run.caps[t] += c
                run.done[t] += self.params.batch if playouts is None else int(playouts[t].sum())
        run.host += time.perf_counter() - t0

    def _trim(self, round_: _Round, result):
        """A round whose trees back up fewer playouts than they played (`run`'s `exact`):
        each such tree keeps its first leaves, the last of them only its first r playouts (their
        win, first move, score and cap counts; its AMAF tables, which sum all K, are left out,
        and its ownership is the K playouts' mean).  Returns (the result with those rows
        changed, the kept leaves per tree, the playouts per kept leaf per tree)."""
        k = self.params.playouts_per_leaf
        z, first, score, cap = (np.array(a) for a in (result.z, result.first_move, result.score, result.cap_hit))
        wins, amaf_count, amaf_wins = (np.array(a) for a in (result.wins, result.amaf_count, result.amaf_wins))
        kept, playouts = list(round_.leaves), {}
        pos = {t: i for i, t in enumerate(t for t, ls in enumerate(round_.leaves) if ls is not None)}
        for t, ls in enumerate(round_.leaves):
            if ls is None:
                continue
            n = round_.keep[t]
            if n is None:
                playouts[t] = np.full(len(ls), k, np.float32)
                continue
            leaves = -(-n // k)
            r = n - (leaves - 1) * k  # the last kept leaf's playouts, 1 .. K
            kept[t] = self._drop(t, ls, leaves)
            playouts[t] = np.full(leaves, k, np.float32)
            playouts[t][-1] = r
            if r < k:
                row = pos[t] * self.params.leaves + leaves - 1
                first[row, r:] = NO_MOVE
                score[row, r:] = 0.0
                cap[row, r:] = False
                wins[row] = z[row, :r].sum()
                amaf_count[row] = 0.0
                amaf_wins[row] = 0.0
        return (result.replace(first_move=first, score=score, cap_hit=cap, wins=wins, amaf_count=amaf_count,
                               amaf_wins=amaf_wins), kept, playouts)

    def _drop(self, t: int, leaves: list[Leaf], n: int) -> list[Leaf]:
        """The first n of tree t's leaves; the others' virtual loss taken off their paths (their
        new nodes stay, never visited)."""
        s = self.searches[t]
        for leaf in leaves[n:]:
            if leaf.virtual:
                apply_virtual_loss(s.tree, leaf, leaf.virtual, sign=-1.0)
                refresh_path(s.tree, leaf.nodes, leaf.actions, s.params, s.tree.jitter)
        return leaves[:n]


def _per_tree(setting, g: int) -> list:
    """One setting for all g trees, or one per tree, as a list of g."""
    return list(setting) if isinstance(setting, (list, tuple)) else [setting] * g
