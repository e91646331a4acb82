"""Forests: G searches from G positions, searched together by the loop of search/loop.py (one
device call per round), and root parallelisation's merge of several trees' root statistics.

`gojax bench --search --trees G` reports the host's cost per leaf beside the aggregate rate;
`bench/host_replay.py --trees G` measures it without the device.
"""

from __future__ import annotations

import dataclasses
import math

from gojax.kernels.host import Board
from gojax.search.device import Simulator
from gojax.search.loop import Rounds
from gojax.search.mcts import MoveStats, Search, SearchResult
from gojax.search.params import SearchParams
from gojax.search.tree import TreeStack


class Forest(Rounds):
    """G searches, one device call per round.  `searches[g]` is an ordinary `Search`: advance
    it, read its tree, or run it alone; `run` searches them all together."""

    def __init__(self, boards: list[Board], params: SearchParams | list[SearchParams],
                 simulator: Simulator | None = None):
        """Searches from `boards`, one SearchParams per board (or one for all).  When the params
        differ at most in the seed (the usual case), the trees share one TreeStack and each
        round's backups are one set of array operations for all of them."""
        plist = list(params) if isinstance(params, (list, tuple)) else [params] * len(boards)
        if len(plist) != len(boards) or not boards:
            raise ValueError("a forest needs one or more boards and one SearchParams per board (or one for all)")
        plist = [p.for_size(b.size) for b, p in zip(boards, plist)]
        simulator = simulator or Simulator(plist[0])
        first = plist[0]
        trees = [None] * len(boards)
        if len(boards) > 1 and len({b.size for b in boards}) == 1 and \
                all(dataclasses.replace(p, seed=0) == dataclasses.replace(first, seed=0) for p in plist):
            trees = TreeStack(boards[0].size, first.max_nodes, len(boards), first.pass_in_tree == "always").trees
        self._setup([Search(b, p, simulator, tree) for b, p, tree in zip(boards, plist, trees)])

    @classmethod
    def of(cls, searches: list[Search]) -> Forest:
        """A forest of existing searches (their trees, keys and round counters carry on); it
        plays on the first search's simulator."""
        forest = cls.__new__(cls)
        Rounds.__init__(forest, searches)
        return forest


def merge_roots(results: list[SearchResult], searches: list[Search]) -> tuple[SearchResult, int]:
    """Root parallelisation (seed 003, sec. 4.3): the trees' root statistics summed move by move
    (visits added, values averaged by visits); returns the merged result and the index of the
    tree whose principal variation it reports (the one that visited the chosen move most)."""
    merged: dict = {}
    for r in results:
        for m in r.moves:
            acc = merged.setdefault(m.move, [0, 0.0, 0.0, 0.0, m.prior, 0, 0.0, 0])
            acc[0] += m.visits
            acc[1] += m.visits * (0.0 if math.isnan(m.q) else m.q)
            acc[2] += m.q_star
            acc[3] += 0.0 if math.isnan(m.q_amaf) else m.q_amaf
            acc[5] += 1
            if not math.isnan(m.score_lead):
                acc[6] += m.visits * m.score_lead
                acc[7] += m.visits
    stats = []
    for move, (visits, wq, qs, qa, prior, n, ws, vs) in merged.items():
        stats.append(MoveStats(move, int(visits), wq / visits if visits else float("nan"), qa / n, qs / n, prior,
                               ws / vs if vs else float("nan")))
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
