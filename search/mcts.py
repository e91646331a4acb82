"""One MC-RAVE search: its tree from one position, tree reuse between moves, and its results.

`Search.run` runs it as a forest of one through the loop of search/loop.py (descend, submit,
expand, back up: search/steps.py holds the tree side of each step, for one tree or many;
search/device.py the device side).  `descend` and `back_up` are those steps for this tree
alone, for tests and tools.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from gojax.kernels.geometry import Geometry
from gojax.kernels.host import Board
from gojax.kernels.playout import PlayoutResult
from gojax.search import priors
from gojax.search.backup import Leaf
from gojax.search.device import Simulator
from gojax.search.loop import Rounds
from gojax.search.params import SearchParams
from gojax.search.select import q_star, refresh
from gojax.search.steps import back_up, descend, leaf_rows
from gojax.search.tree import Tree


@dataclasses.dataclass
class MoveStats:
    move: int | None  # point, None for pass
    visits: int  # MC simulations through the move (prior's equivalent experience excluded)
    q: float  # MC value for the mover (NaN if unvisited)
    q_amaf: float  # AMAF value for the mover (NaN without AMAF data)
    q_star: float  # eq. 12 combination the tree policy uses (mover's view)
    prior: float  # heuristic H (mover's view)
    score_lead: float = float("nan")  # mean final score of the playouts through the move's node, for
    #                                   the mover (its area minus the opponent's, komi included); NaN
    #                                   when the move has no node with playouts


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
    device_wait_seconds: float  # blocked waiting for the device (in a forest, also for the same-round
    #                             verdicts, Simulator.verdicts_now, which on a CPU backend queue
    #                             behind the playouts)
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
    """MC-RAVE (or UCT) search from one position; `advance` reuses the tree after moves.

    `run` searches; the steps of a round (`descend`, `pools`, `leaf_boards`, `back_up`) are
    public for the forest that runs them (search/forest.py) and for tests."""

    def __init__(self, board: Board, params: SearchParams = SearchParams(), simulator: Simulator | None = None,
                 tree: Tree | None = None):
        """`tree`: an empty tree to search in (a forest's trees share one TreeStack), else its own."""
        params = self.params = params.for_size(board.size)  # the prior `auto` picks for this size
        self.simulator = simulator or Simulator(params)
        self.size = board.size
        if tree is not None and (tree.size, tree.capacity) != (board.size, params.max_nodes):
            raise ValueError("the tree given to a search must have the board's size and max_nodes nodes")
        self.tree = tree or Tree(board.size, params.max_nodes, params.pass_in_tree == "always")
        # Searches whose trees share a stack and whose params differ at most in the seed are
        # backed up together (search/steps.py).
        # One key object per stack and params (TreeStack.intern): compared by identity per round.
        self.batch_key = self.tree.stack.intern((id(self.tree.stack), dataclasses.replace(params, seed=0))) \
            if self.tree.stack else None
        rng = np.random.default_rng(params.seed)
        self.tree.jitter[:] = rng.uniform(0, 1e-6, self.tree.num_actions).astype(np.float32)
        self._new_root(board)
        # Raw PRNG key data, uint32 [2]: round r's leaf i plays with fold_in(fold_in(key, r), i).
        self.key_data = np.asarray(jax.random.key_data(jax.random.key(params.seed)), np.uint32)
        self.calls = 0  # rounds sent to the device
        # Per root action: ownership summed over the playouts through it, float64 [A, P], and
        # those playouts, [A]; None until `track_move_ownership` (KataGo's movesOwnership).
        self.move_ownership: np.ndarray | None = None
        self.move_playouts: np.ndarray | None = None

    # --- tree management --------------------------------------------------------------------
    def _new_root(self, board: Board) -> None:
        self.tree.truncate(0)
        self.root = self.tree.add(board.copy(), -1, -1)
        self._initialise(self.root)

    def _initialise(self, node: int) -> None:
        """Before the first descent through a node that has no prior yet (the root; a node whose
        playouts are still on the device; every node under the grandfather prior, which reads
        the tree then): its legal moves, its prior from the host, its cached values."""
        self.tree.ensure_legal(node)
        priors.initialise(self.tree, [node], self.params)
        refresh(self.tree, [node], self.params, self.tree.jitter)

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
            # Not when one colour moved twice: the node's legal masks, statistics and plain moves
            # are the other side's then.
            if node >= 0 and self.tree.boards[node].same_position(board):
                self.tree.boards[node] = board.copy()  # same position; keep the game's own record
                self.root = self.tree.reroot(node)
                self.tree.ensure_legal(self.root)
                return True
        self._new_root(board)
        return False

    def restrict_root(self, allowed: np.ndarray) -> None:
        """Search only the root actions in `allowed` (bool [A]): KataGo's avoidMoves and
        allowMoves at depth 0.  Pass stays legal where no point would be."""
        tree = self.tree
        keep = tree.legal[self.root] & np.asarray(allowed, bool)
        if not keep[:tree.pass_action].any():
            keep[tree.pass_action] = True
        tree.legal[self.root] = keep
        refresh(tree, [self.root], self.params, tree.jitter)

    def track_move_ownership(self) -> None:
        """From the next backup on, sum the ownership of the playouts through each root action."""
        if self.move_ownership is None:
            self.move_ownership = np.zeros((self.tree.num_actions, self.size * self.size))
            self.move_playouts = np.zeros(self.tree.num_actions)

    def owned_after(self, action: int) -> np.ndarray | None:
        """[P] mean final owner (+1 Black) of the playouts through root `action` (P: pass), or
        None when none went through it or ownership is not tracked."""
        if self.move_ownership is None or self.move_playouts[action] == 0:
            return None
        return self.move_ownership[action] / self.move_playouts[action]

    # --- the steps of one round --------------------------------------------------------------
    def descend(self) -> Leaf:
        """One descent from the root to a new leaf (search/steps.descend for one tree)."""
        return descend([self])[0]

    def leaf_boards(self, leaves: list[Leaf]) -> list[Board]:
        """The positions the device plays from: under chinese rules a finished leaf (two passes)
        is played on, so that dead stones come off before it is counted."""
        if self.params.rules != "chinese":
            return [leaf.board for leaf in leaves]
        return [leaf.board.resumed() if leaf.board.game_over else leaf.board for leaf in leaves]

    def leaf_rows(self, leaves: list[Leaf]) -> np.ndarray:
        """`leaf_boards` as the device reads them, int32 [len(leaves), C + 6] (steps.leaf_rows)."""
        return leaf_rows([leaves], self.params.rules)[0]

    def pools(self, leaves: list[Leaf]) -> np.ndarray | None:
        """poolRave (seed 004 sec. IV.A), None when it is off: for each leaf, the k actions with
        the best AMAF value Q~ for each colour, from the deepest node on the leaf's path with
        `pool_min_visits` simulations (the colour to move there) and its parent (the other
        colour).  Cells int32 [L, 2, k], 0 for an empty slot; pass never enters a pool."""
        tree, p = self.tree, self.params
        if p.pool_prob == 0:
            return None
        k = p.pool_size
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

    def back_up(self, leaves: list[Leaf], r: PlayoutResult) -> tuple[np.ndarray, int]:
        """Back a round's results (numpy, this tree's rows) up the leaves' paths, give the new
        nodes their legal moves and priors, and return (ownership summed over the playouts
        [P], playouts stopped by the move cap)."""
        return back_up([self], [leaves], [0], r)[0]

    def _batch_priors(self, codes: np.ndarray | None) -> bool:
        """Whether a round's new nodes take their prior from the device's answer (ahead of the
        playouts or with them): every prior but the grandfather's, which reads the tree when the
        node is first descended through; the MoGo and shape priors given the verdicts `codes`."""
        return self.params.prior in ("none", "even") or (self.params.uses_mogo_verdicts and codes is not None)

    def decided(self, remaining: int) -> bool:
        """True when no remaining simulation budget can change the most visited root move."""
        v = np.sort(self.tree.visits(self.root, self._prior_count(self.root))[self.tree.legal[self.root]])
        return len(v) < 2 or v[-1] - v[-2] > remaining

    def _prior_count(self, node: int) -> np.ndarray:
        """[A] the prior's simulations on node's MC edges (priors.experience)."""
        return priors.experience(self.tree, node, self.params)[0]

    # --- the public entry point ------------------------------------------------------------
    def run(self, simulations: int | None = None, seconds: float | None = None,
            stop_early: bool = True, exact: bool = False) -> SearchResult:
        """Search until `simulations` playouts (rounded up to whole rounds of L * K; with
        `exact`, not rounded) or `seconds` of wall time, whichever comes first.  At least one
        round always runs."""
        if simulations is None and seconds is None:
            raise ValueError("give simulations or seconds")
        budget = None if simulations is None else max(1, simulations)
        return Rounds([self]).run(budget, stop_early=stop_early, seconds=seconds, exact=exact)[0]

    # --- reporting ---------------------------------------------------------------------------
    def result(self, *, simulations: int, seconds: float, host: float, cpu: float, wait: float,
               ownership: np.ndarray, cap_hits: int) -> SearchResult:
        """The search's answer: root statistics, the move, the principal variation; the run's
        counts and clocks (SearchResult's fields of the same names) as given."""
        tree, params, root = self.tree, self.params, self.root
        mover_black = tree.to_play[root] == 1
        pc, prior_wins_black = priors.experience(tree, root, params)
        visits = tree.visits(root, pc)
        legal = np.flatnonzero(tree.legal[root])
        q_mc_black = np.divide(tree.w[root] - prior_wins_black, visits,
                               out=np.full(tree.num_actions, np.nan, np.float32), where=visits > 0)
        q_am_black = np.divide(tree.wa[root], tree.na[root], out=np.full(tree.num_actions, np.nan, np.float32),
                               where=tree.na[root] > 0)
        mine = (lambda x: x) if mover_black else (lambda x: 1.0 - x)
        qs = q_star(tree, root, params)
        # Score per move: over the playouts through its child node (Black's view, then the mover's).
        kids = tree.child[root]
        kid_sims = np.where(kids >= 0, tree.sims[np.maximum(kids, 0)], 0.0)
        lead_black = np.divide(tree.score[np.maximum(kids, 0)], kid_sims,
                               out=np.full(tree.num_actions, np.nan, np.float32), where=kid_sims > 0)
        sign = 1.0 if mover_black else -1.0
        columns = zip(legal.tolist(), np.rint(visits[legal]).astype(np.int64).tolist(), mine(q_mc_black[legal]).tolist(),
                      mine(q_am_black[legal]).tolist(), np.asarray(qs)[legal].tolist(), tree.prior[root, legal].tolist(),
                      (sign * lead_black[legal]).tolist())
        stats = [MoveStats(None if a == tree.pass_action else a, *rest) for a, *rest in columns]
        stats.sort(key=lambda m: (-m.visits, -m.q_star))
        if params.final_move == "value":
            best = max(stats, key=lambda m: m.q_star)
        else:
            best = stats[0]
        root_black = tree.wins[root] / tree.sims[root] if tree.sims[root] else 0.5
        return SearchResult(
            move=best.move, value=best.q if best.visits else best.q_star,
            root_value=float(mine(root_black)), simulations=simulations, seconds=seconds,
            host_seconds=host, host_cpu_seconds=cpu, device_wait_seconds=wait, nodes=tree.num_nodes, max_depth=self._depth(),
            moves=stats, pv=self._pv(), ownership=ownership.astype(np.float32), cap_hits=cap_hits)

    def variation(self, action: int, max_len: int = 20) -> list[int | None]:
        """The line starting with root `action` (point, or P for pass), then most visited."""
        node = int(self.tree.child[self.root, action])
        first = None if action == self.tree.pass_action else action
        return [first] + (self._pv(max_len - 1, node) if node >= 0 else [])

    def _pv(self, max_len: int = 20, start: int | None = None) -> list[int | None]:
        pv, node = [], self.root if start is None else start
        while node >= 0 and len(pv) < max_len:
            v = self.tree.visits(node, self._prior_count(node))
            v = np.where(self.tree.legal[node], v, -1)
            a = int(np.argmax(v))
            if v[a] <= 0:
                break
            pv.append(None if a == self.tree.pass_action else a)
            node = int(self.tree.child[node, a])
        return pv

    def _depth(self) -> int:
        n = self.tree.num_nodes
        parent = self.tree.parent[:n]
        depth = np.zeros(n, np.int32)
        for _ in range(n):  # one level more per pass, until no depth changes
            deeper = np.where(parent >= 0, depth[np.maximum(parent, 0)] + 1, 0)
            if np.array_equal(deeper, depth):
                break
            depth = deeper
        return int(depth.max()) if n else 0
