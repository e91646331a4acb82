"""One MC-RAVE search: its tree, and the steps of a round on it.

Start at `Search.run`, which runs the search as a forest of one (search/forest.py holds the
loop, search/device.py the device side).  One round: descend L times from the root (virtual
loss keeps the leaves apart, and each new leaf becomes a node at once, as in Algorithm 2's
SIMTREE: `Search.descend`), send the L leaf positions to the device for K playouts each, then
back up the PREVIOUS round's results while the device plays this one (`Search.back_up`).
Both steps are written for many searches at once (`descend_trees`, `back_up_trees`: a forest's
trees in one TreeStack); a search's own `descend` and `back_up` are those for one tree.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from gojax.kernels.geometry import Geometry
from gojax.kernels.host import Board
from gojax.kernels.playout import PlayoutResult
from gojax.search import priors
from gojax.search.backup import Leaf, apply_virtual_loss, backup_round
from gojax.search.device import Simulator
from gojax.search.params import SearchParams
from gojax.search.select import edge_values, per_edge, q_star, refresh, refresh_path
from gojax.search.tree import Tree, set_legal_rows, start_rows


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
        self.params = params
        self.simulator = simulator or Simulator(params)
        self.size = board.size
        if tree is not None and (tree.size, tree.capacity) != (board.size, params.max_nodes):
            raise ValueError("the tree given to a search must have the board's size and max_nodes nodes")
        self.tree = tree or Tree(board.size, params.max_nodes, params.pass_in_tree == "always")
        # Searches whose trees share a stack and whose params differ at most in the seed are
        # backed up together (back_up_trees).
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
        """One descent from the root to a new leaf (added as a node while the budget lasts),
        with virtual loss on its path so that the round's next descents go elsewhere.  Plain
        Python: for one tree, numpy calls on single elements would cost more than they save
        (`descend_trees` does the same for many trees at once; tests/test_forest.py holds the
        two equal)."""
        tree, params = self.tree, self.params
        node = self.root
        nodes, actions = [node], []
        rule = params.in_flight_rule
        while not tree.over[node]:
            if not tree.initialised[node]:
                if rule == "stop" and node != self.root:  # its playouts are on the device: play more from it
                    break
                self._initialise(node)
            a = int(tree.value[node].argmax())
            if rule == "sidestep" and _pending(tree, int(tree.child[node, a])):
                a = int(_sidestep(tree, tree.value[node][None], tree.child[node][None], 0, a)[0])
            actions.append(a)
            child = int(tree.child[node, a])
            if child < 0:
                break
            node = child
            nodes.append(child)
        board = tree.boards[nodes[-1]]
        if len(actions) == len(nodes):  # the last action's child is not in the tree (else: a stop)
            board = board.after(None if a == tree.pass_action else a, plain=tree.plain[nodes[-1], a])
            if not tree.full and tree.sims[nodes[-1]] >= params.expand_after:
                nodes.append(tree.add(board, nodes[-1], a, lazy=True))
        leaf = Leaf(nodes, actions, board)
        if params.virtual_loss:
            leaf.virtual = params.virtual_loss * params.playouts_per_leaf
            apply_virtual_loss(tree, leaf, leaf.virtual)
            refresh_path(tree, leaf.nodes, leaf.actions, params, tree.jitter)  # the round's next leaves see it
        return leaf

    def leaf_boards(self, leaves: list[Leaf]) -> list[Board]:
        """The positions the device plays from: under chinese rules a finished leaf (two passes)
        is played on, so that dead stones come off before it is counted."""
        if self.params.rules != "chinese":
            return [leaf.board for leaf in leaves]
        return [leaf.board.resumed() if leaf.board.game_over else leaf.board for leaf in leaves]

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
        return back_up_trees([self], [leaves], [0], r)[0]

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
        from gojax.search.forest import Forest  # the loop lives there; forest.py imports this module
        if simulations is None and seconds is None:
            raise ValueError("give simulations or seconds")
        budget = None if simulations is None else max(1, simulations)
        return Forest.of([self]).run(budget, stop_early=stop_early, seconds=seconds, exact=exact)[0]

    # --- reporting ---------------------------------------------------------------------------
    def result(self, sims, seconds, host, cpu, wait, ownership, caps) -> SearchResult:
        """The search's answer: root statistics, the move, the principal variation."""
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


def back_up_trees(searches: list[Search], leaves: list[list[Leaf]], starts: list[int],
                  r: PlayoutResult, ready: bool = False, playouts: np.ndarray | None = None) -> list[tuple[np.ndarray, int]]:
    """`Search.back_up` for several searches at once: searches[j]'s leaves are the result's rows
    starts[j] .. starts[j] + len(leaves[j]) - 1.  Several searches must share one TreeStack and
    one `batch_key` (their params differ at most in the seed): the new nodes' priors, the backup
    and the refresh of the touched rows are then one set of array operations over the stack.
    `ready`: the round's new nodes were given their legal moves and priors already (from its
    verdicts ahead of the playouts: `ready_new_nodes`).  `playouts`: float32 [leaves in all], the
    playouts each leaf counts (None: K each; fewer: the result's rows hold only those).
    Every search has one leaf or more.  Returns (ownership summed over the playouts [P],
    playouts stopped by the move cap) per search."""
    store, offs = _store(searches)
    first = searches[0]
    params, k = first.params, first.params.playouts_per_leaf
    if not ready:  # their priors now, all at once (the refresh below covers them: on the paths)
        ready_new_nodes(searches, leaves, starts, r.start_legal, r.start_capture, r.start_prior, refresh_now=False)
    idx = _leaf_rows(leaves, starts)
    counts = np.array([len(ls) for ls in leaves])
    offsets = np.repeat(offs, counts)  # each leaf's tree into the stack
    if playouts is not None:
        k = np.asarray(playouts, np.float32)
    k_leaf = np.broadcast_to(np.asarray(k, np.float32), len(idx))  # playouts per leaf, in idx's order
    touched = backup_round(store, [leaf for ls in leaves for leaf in ls], k, r.wins[idx], r.first_move[idx], r.z[idx],
                           r.amaf_count[idx], r.amaf_wins[idx], params.amaf_rule, r.score[idx].sum(1), offsets)
    refresh(store, touched, params, store.jitter_of(touched))
    cuts = np.cumsum(counts) - counts  # each search's first row of idx: one reduction for all
    own = np.add.reduceat(r.ownership[idx] * k_leaf[:, None], cuts, axis=0)  # ownership: each leaf's mean
    caps = np.add.reduceat(r.cap_hit[idx].sum(axis=1), cuts).tolist()
    for j, search in enumerate(searches):
        if search.move_ownership is not None:  # by each leaf's root action (none: the root is the leaf)
            action = np.fromiter((leaf.actions[0] if leaf.actions else -1 for leaf in leaves[j]), np.int64,
                                 len(leaves[j]))
            part = slice(cuts[j], cuts[j] + counts[j])
            through = action >= 0
            ks = k_leaf[part][through]
            np.add.at(search.move_ownership, action[through], r.ownership[idx[part][through]] * ks[:, None])
            np.add.at(search.move_playouts, action[through], ks)
    return list(zip(own, caps))


def ready_new_nodes(searches: list[Search], leaves: list[list[Leaf]], starts: list[int], legal: np.ndarray,
                    capture: np.ndarray, codes: np.ndarray | None, refresh_now: bool = True,
                    patterns: np.ndarray | None = None, shapes: np.ndarray | None = None) -> None:
    """Give the new nodes of a round's leaves (rows as in `back_up_trees`) their legal moves (the
    device's masks `legal`, bool [rows, P], less the superko repeats, which only `capture`d
    points or plain moves that recreate a position can make) and, but under the grandfather
    prior, their priors (the device's MoGo verdicts `codes`, int8 [rows, P], where the prior
    uses them; and the 3x3 neighbourhoods `patterns`, int32 [rows, P], and partial shape
    strengths `shapes`, float32 [rows, P] (LeafVerdicts.shape), where the shape prior reads
    them: None, the host finds them) and, with `refresh_now`, their values.  Nodes
    already given them are left alone.  The forest calls it with a round's verdicts before the
    playouts end (verdicts_ahead), the backup with the playouts' result."""
    store, offs = _store(searches)
    first = searches[0]
    flat = [leaf for ls in leaves for leaf in ls]
    n = len(flat)
    last = np.fromiter((leaf.nodes[-1] for leaf in flat), np.int64, n) + np.repeat(offs, [len(ls) for ls in leaves])
    made = np.fromiter((len(leaf.nodes) > len(leaf.actions) for leaf in flat), bool, n)
    cand = np.flatnonzero(made & ~store.legal_ready[last])
    if not cand.size:
        return
    # A node two leaves of the round end at (a descent stopped there) starts once: its first leaf.
    first_leaf: dict[int, int] = {}
    for i, node in zip(cand.tolist(), last[cand].tolist()):
        first_leaf.setdefault(node, i)
    cand = list(first_leaf.values())
    fresh = last[cand]
    fresh_rows = _leaf_rows(leaves, starts)[cand]
    _legal_from(store, fresh, [flat[i].board for i in cand], legal[fresh_rows], capture[fresh_rows],
                first.tree.pass_always)
    cold = ~store.initialised[fresh]
    fresh, fresh_rows = fresh[cold], fresh_rows[cold]
    if len(fresh) and first._batch_priors(codes):
        priors.initialise(store, fresh, first.params, None if codes is None else codes[fresh_rows],
                          None if patterns is None else patterns[fresh_rows],
                          None if shapes is None else shapes[fresh_rows])
        if refresh_now:
            refresh(store, fresh, first.params, store.jitter_of(fresh))


def _legal_from(store, nodes: np.ndarray, boards: list[Board], legal: np.ndarray, capture: np.ndarray,
                pass_always: bool) -> None:
    """The legal masks of store `nodes` (positions `boards`) from the device's masks (bool
    [len(nodes), P]: legal under simple ko, and capturing), less the superko repeats, which
    only captures or plain moves that recreate a position can make."""
    mask = np.array(legal, bool)  # a copy: the superko repeats come off
    taking: list[list[int]] = [[] for _ in boards]  # each board's legal captures, found at once
    for i, p in zip(*(x.tolist() for x in np.nonzero(mask & capture))):
        taking[i].append(p)
    for i, board in enumerate(boards):  # most: no capture yet, or none now and no plain move can repeat
        if board.emptied and (taking[i] or not board.plain_moves_are_new()):
            repeats = board.superko_repeats(mask[i], capture[i], taking[i])
            if repeats:
                mask[i, list(repeats)] = False
    set_legal_rows(store, nodes, boards, mask, pass_always)
    store.plain[nodes, :store.pass_action] = mask & ~capture


def _leaf_rows(leaves: list[list[Leaf]], starts: list[int]) -> np.ndarray:
    """int [leaves in all]: each leaf's row of the round's device result (searches[j]'s leaves are
    rows starts[j] ..), in the order of the leaves' flat list."""
    return np.concatenate([np.arange(start, start + len(ls)) for ls, start in zip(leaves, starts)])


def _store(searches: list[Search]):
    """The arrays several searches are worked on through (their stack), or a lone search's tree;
    and each search's offset into them."""
    first = searches[0]
    if len(searches) == 1:
        return first.tree, np.zeros(1, np.int64)
    if first.batch_key is None or any(s.batch_key is not first.batch_key for s in searches):
        raise ValueError("searches worked on together share a tree stack and their params but the seed")
    return first.tree.stack, np.array([s.tree.offset for s in searches], np.int64)


def descend_trees(searches: list[Search]) -> list[Leaf]:
    """One descent in each search at once (`Search.descend`): every level is one argmax over
    the cached value rows of all the searches still descending, then the new leaves' nodes,
    and the virtual loss on every path in one set of array operations.  Each search sees
    exactly what a descent of its own would: the trees do not interact."""
    if len(searches) == 1:
        return [searches[0].descend()]
    store, offs = _store(searches)
    params = searches[0].params
    rule = params.in_flight_rule
    own_roots = np.array([s.root for s in searches], np.int64)
    roots = offs + own_roots  # store indices
    # Per level: the searches still descending (`live`), their store nodes (`here`), the actions
    # taken and those actions' children (own indices, -1 where not in the tree).  A search's
    # steps come in the order of its levels: the paths, the new leaves and the virtual loss are
    # read off these arrays at the end, not built step by step.
    steps = []
    live = np.flatnonzero(~store.over[roots])
    here = roots[live]
    # Searches that reached a node with no verdicts yet (its playouts are still on the device, or
    # an earlier descent of this round made it) wait there until no other search can step: then
    # all their nodes get verdicts in one call, which costs about as much as a call for one.
    waiting = []
    while live.size or waiting:
        if not live.size:
            live, here = (np.concatenate(x) for x in zip(*waiting))
            order = np.argsort(live)
            live, here = live[order], here[order]
            waiting = []
            _initialise_nodes(searches, store, offs, live, here)
        ready = store.initialised[here]
        if not ready.all():
            cold = ~ready
            if rule == "stop":  # only roots wait; the rest end their descent there
                cold &= here == roots[live]
            if cold.any():
                waiting.append((live[cold], here[cold]))
            live, here = live[ready], here[ready]
            continue
        rows = store.value[here]
        a = rows.argmax(1)
        child = store.child[here, a]
        if rule == "sidestep":
            off = offs[live]
            hit = np.flatnonzero(_pending(store, np.where(child >= 0, child + off, -1)))
            if hit.size:
                a[hit] = _sidestep(store, rows[hit], store.child[here[hit]], off[hit][:, None], a[hit])
                child[hit] = store.child[here[hit], a[hit]]
        steps.append((live, here, a, child))
        has = child >= 0
        if not has.all():
            live, child = live[has], child[has]
        here = child + offs[live]  # store indices
        over = store.over[here]
        if over.any():
            live, here = live[~over], here[~over]
    stepped, nodes_at, taken, kids = (np.concatenate(x) for x in zip(*steps)) if steps else \
        (np.zeros(0, np.int64),) * 4
    paths, actions = _paths(len(searches), own_roots, stepped, taken, kids)
    ends = [path[-1] for path in paths]
    boards = [s.tree.boards[end] for s, end in zip(searches, ends)]
    which, nodes, parents, acts = [], [], [], []  # the new nodes: search, node, parent, action
    miss = kids < 0
    if miss.any():  # the leaf's move on a copy of its board; a new node where the tree has room
        ex_j, ex_a = stepped[miss], taken[miss]
        order = np.argsort(ex_j)
        ex_j, ex_a = ex_j[order], ex_a[order]
        at = np.asarray(ends, np.int64)[ex_j] + offs[ex_j]
        pass_action = searches[0].tree.pass_action
        for j, a, plain, grow in zip(ex_j.tolist(), ex_a.tolist(), store.plain[at, ex_a].tolist(),
                                     (store.sims[at] >= params.expand_after).tolist()):
            tree = searches[j].tree
            boards[j] = board = boards[j].after(None if a == pass_action else a, plain=plain)
            if grow and not tree.full:
                which.append(j)
                parents.append(ends[j])
                acts.append(a)
                nodes.append(tree.reserve(board))
                paths[j].append(nodes[-1])
    leaves = [Leaf(path, acted, board) for path, acted, board in zip(paths, actions, boards)]
    if which:  # Tree.add(..., lazy=True) for all of them at once
        off, own = offs[which], np.asarray(nodes, np.int64)
        start_rows(store, own + off, [leaves[j].board for j in which], np.asarray(parents, np.int64),
                   np.asarray(acts, np.int64), own, off)
    if params.virtual_loss and steps:
        _virtual_loss(store, nodes_at, taken, params, leaves, params.virtual_loss * params.playouts_per_leaf)
    return leaves


def _paths(n: int, roots: np.ndarray, stepped: np.ndarray, taken: np.ndarray, kids: np.ndarray):
    """Each of n searches' path (own node indices from its root) and actions, as lists, from a
    descent's steps: search `stepped[i]` took action `taken[i]` to child `kids[i]` (-1: not in
    the tree, its last step), each search's steps in the order of its levels.  Appends in plain
    Python: a few hundred of them cost less than the numpy calls per step that an array of paths
    needs."""
    paths, acts = [[r] for r in roots.tolist()], [[] for _ in range(n)]
    for j, a, c in zip(stepped.tolist(), taken.tolist(), kids.tolist()):
        acts[j].append(a)
        if c >= 0:
            paths[j].append(c)
    return paths, acts


def _pending(store, nodes):
    """Which of `nodes` (store indices, -1 for none) wait for their playouts and prior: made by a
    descent, not yet backed up (a finished game's node is never descended through, so it is not
    pending)."""
    nodes = np.asarray(nodes)
    safe = np.maximum(nodes, 0)
    return (nodes >= 0) & ~store.initialised[safe] & ~store.over[safe]


def _sidestep(store, rows: np.ndarray, kids: np.ndarray, off, best: np.ndarray) -> np.ndarray:
    """in_flight="sidestep": for each node's value row [n, A] and children [n, A] (its tree's
    indices, `off` to the store's), the best action whose child is not pending; the old choice
    `best` where every legal action's child is pending (the descent then gives it its prior on
    the host)."""
    rows = np.where(_pending(store, np.where(kids >= 0, kids + off, -1)), -np.inf, rows)
    alt = rows.argmax(1)
    return np.where(np.isfinite(rows[np.arange(len(rows)), alt]), alt, best)


def _initialise_nodes(searches: list[Search], store, offs: np.ndarray, which: np.ndarray, nodes: np.ndarray) -> None:
    """`Search._initialise` of one node (store index) in each search `which` at once: one
    prior call and one refresh for all (the grandfather prior reads each tree's parents by
    the tree's own indices: node by node)."""
    params = searches[0].params
    if params.prior == "grandfather":
        for j, n in zip(which.tolist(), nodes.tolist()):
            searches[j]._initialise(n - int(offs[j]))
        return
    # Their verdicts from compiled code on the host's CPU (Simulator.verdicts_now), as the device
    # gives a round's new nodes theirs: the same legal masks and priors as the host twin's.
    boards = [store.boards[n] for n in nodes.tolist()]
    simulator = searches[0].simulator
    v = simulator.verdicts_now(boards)
    bare = np.flatnonzero(~store.legal_ready[nodes])
    if bare.size:
        _legal_from(store, nodes[bare], [boards[i] for i in bare.tolist()], v.legal[bare], v.capture[bare],
                    searches[0].tree.pass_always)
    priors.initialise(store, nodes, params, v.prior, v.pattern, simulator.shapes_for(params, v))
    refresh(store, nodes, params, store.jitter_of(nodes))


def _virtual_loss(store, s: np.ndarray, a: np.ndarray, params: SearchParams, leaves: list[Leaf],
                  amount: float) -> None:
    """Count `amount` lost simulations for the mover on every edge of the leaves' paths (the
    store node `s` and action `a` of each, int [E]) and refresh those edges' values, so that
    the round's next descents see it.  Within a path the nodes are distinct, and paths of
    different trees never meet: no edge is hit twice."""
    for leaf in leaves:
        leaf.virtual = amount
    store.n[s, a] += amount
    store.node_n[s] += amount
    white = store.to_play[s] == 2
    store.w[s[white], a[white]] += amount
    if per_edge(params):  # only the edges changed
        store.value[s, a] = edge_values(store, s, a, params).astype(np.float32) + store.jitter_at(s, a)
    else:
        rows = np.unique(s)
        refresh(store, rows, params, store.jitter_of(rows))
