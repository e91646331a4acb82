"""Heuristic prior knowledge at node creation (seed 000 eq. 48-52, Algorithm 2 NEWNODE).

A new node's actions start with Q = Q~ = H(s,a) and N = N~ = M (the equivalent experience),
so N(s) = sum_a N(s,a).  H is a value for the player to move in [0, 1]:
  none         no prior (N = N~ = 0)
  even         H = 0.5: every move is worth an even game
  grandfather  H = the MC value of the same action two plies up (the same player to move);
               0.5 where that action has no simulations
  shape        a learnt value (search/shape.py): Bradley-Terry gammas of the move's 3x3
               shape, line, distances to the last two moves and the mogo verdict below,
               fitted to gojax's own moves in high-simulation games (gojax/learn.py)
  learnt       the learnt playout policy's model (kernels/learnt.py, --policy-model) as the
               prior: H = sigmoid(log(n p) / T) as for shape, p its move probability
  shape_wins   Pachi's form of a pattern prior, on the MC side: every move M simulations at
               H = 0.5, and c sqrt(p) more, all won, where p is the shape model's probability
               of the move (SearchParams.shape_wins = c; pass: M simulations at its MoGo H).
               Tree.prior holds p; `experience` gives the virtual simulations back.
  mogo         MoGo's handcrafted rules (pass: 0 unless the opponent just passed, then 0.5):
               1 for a capture, a save of own stones in atari
               (the move leaves them with three or more liberties, or with two and the ladder
               reader in search/tactics.py says they get away), or a 3x3 hane/cut pattern next
               to the last move; 0 for filling an own eye, self-atari of more than one stone, or
               an extension that only prolongs a working ladder; 0.5 otherwise.

The features come from the device when they can (kernels/policy.prior_codes): a new node's
position is the start of its leaf's playouts, so the round that plays them returns the prior's
verdicts (ahead of the playouts: search/device.prepare_round) and, for the shape prior, each
point's strength before its verdict (search/shape.ShapeModel.point_tables on the device), and
the host only reads ladders and takes each node's softmax.
A node that a descent reaches before they are back (made earlier in the same round) gets them
from the same compiled code run on the host's CPU (search/device.Simulator.verdicts_now); the
root, and a lone search's such nodes (a call per node would cost it more than it saves:
bench/results/forest/README.md, "A compiled call's fixed cost"), get them from the host version,
`mogo_values`, equal by test.  `initialise` is the one entry.
"""

from __future__ import annotations

import numpy as np

from gojax.kernels.geometry import EMPTY, opponent
from gojax.kernels.host import Board
from gojax.kernels.patterns import matches
from gojax.kernels.policy import PRIOR_BAD, PRIOR_GOOD, PRIOR_LADDER
from gojax.search import compiled, shape
from gojax.search.params import SearchParams
from gojax.search.tactics import extension_escapes
from gojax.search.tree import Tree

GOOD, NEUTRAL, BAD = 1.0, 0.5, 0.0


def mogo_values(board: Board, points: list[int]) -> np.ndarray:
    """H for each of `points` (legal moves of board.to_play), from MoGo's handcrafted rules.

    Vectorised over the points with the neighbour tables and the board's liberty matrix; only
    the ladder reads (an atari save that leaves two liberties) and the pattern look-ups next to
    the last move are per point."""
    g = board.geometry
    me, opp = board.to_play, opponent(board.to_play)
    pts = np.asarray(points, np.int64)
    out = np.full(len(pts), NEUTRAL, np.float32)
    if not len(pts):
        return out
    stones, lab, lib_count = board.chain_arrays()  # padded: index P is off the board
    nb = g.neighbor_table[pts]  # [n, 4]
    ns, nl = stones[nb], lib_count[lab[nb]]
    captures = ((ns == opp) & (nl == 1)).any(1)
    friend = ns == me
    friend_atari = (friend & (nl == 1)).any(1)
    eye = board.eye_mask(me, pts)
    good = captures.copy()
    bad = eye & ~captures
    # Liberties and size of the chain the move would make: its own empty neighbours plus the
    # liberties of every friendly chain it joins, less the point itself.
    friend_roots = np.where(friend, lab[nb], -1)  # [n, 4]; -1 reaches the empty last row
    lib_rows = board.liberty_matrix()[friend_roots].any(1)  # [n, P]
    lib_rows[np.arange(len(pts))[:, None], np.where(ns == EMPTY, nb, pts[:, None])] = True
    lib_rows[np.arange(len(pts)), pts] = False
    libs_after = lib_rows.sum(1)
    sizes = np.append(np.bincount(lab[:-1][lab[:-1] >= 0], minlength=g.num_points), 0)
    first = np.ones_like(friend)  # count each joined chain once
    for i in range(1, 4):
        first[:, i] = ~(friend_roots[:, :i] == friend_roots[:, i:i + 1]).any(1)
    size_after = 1 + np.where(friend & first, sizes[friend_roots], 0).sum(1)
    good |= friend_atari & (libs_after >= 3)  # saves own stones in atari
    bad |= ~captures & (libs_after <= 1) & (size_after > 1)  # self-atari of more than one stone
    for k in np.flatnonzero(friend_atari & (libs_after == 2) & ~captures):
        # Two liberties: a real save only if the chain is not simply run down in a ladder.
        if extension_escapes(board, int(pts[k])):
            good[k] = True
        else:
            bad[k] = True
    last = board.moves[-1][1] if board.moves else None
    if last is not None:
        near = np.zeros(g.num_points, bool)
        near[list(g.neighbors[last]) + list(g.diagonals[last])] = True
        for k in np.flatnonzero(~good & ~bad & near[pts]):  # at most 8 pattern look-ups
            if matches(board.stones, board.size, int(pts[k])):
                good[k] = True
    out[good] = GOOD
    out[bad & ~good] = BAD
    return out


def values_from_codes(board: Board, points: list[int], codes: np.ndarray) -> np.ndarray:
    """`mogo_values` from the device's verdicts (kernels/policy.prior_codes, int8 [P]): only
    the ladder reads stay on the host.  tests/test_priors.py holds the two equal."""
    pts = np.asarray(points, np.int64)
    return _from_codes(codes[pts], lambda k: board, pts)


def _from_codes(c: np.ndarray, board_of, points: np.ndarray) -> np.ndarray:
    """H for verdict codes `c` at `points` (same length); board_of(k) is the k-th one's board."""
    out = np.where(c == PRIOR_GOOD, GOOD, np.where(c == PRIOR_BAD, BAD, NEUTRAL)).astype(np.float32)
    for k in np.flatnonzero(c == PRIOR_LADDER):
        out[k] = GOOD if extension_escapes(board_of(k), int(points[k])) else BAD
    return out


def initialise(tree: Tree, nodes, params: SearchParams, codes: np.ndarray | None = None,
               patterns: np.ndarray | None = None, shapes: np.ndarray | None = None) -> None:
    """Add the heuristic's virtual experience to the nodes' action statistics (eq. 48-52): the
    one way a prior enters the tree.  Every node must have its legal mask.

    The search calls it for a round's new nodes as their playouts come back, with the device's
    MoGo verdicts `codes` (int8 [len(nodes), P], kernels/policy.prior_codes), and with codes=None,
    when the host computes the verdicts (`mogo_values`, equal by test), for a node a descent
    reaches first: the root, a node whose playouts are still on the device (the next round's
    descents run while they play), and every node under the grandfather prior, which reads the
    tree then.  Since a
    prior only adds M * H to sums that backups also add to, either time gives the same
    statistics (counts and win sums are multiples of 1/2, exact in float32)."""
    nodes = np.asarray(nodes, np.int64).reshape(-1)
    tree.initialised[nodes] = True
    if params.prior == "none" or not len(nodes):
        return
    legal = tree.legal[nodes]
    rows, acts = np.nonzero(legal)
    h = _heuristic(tree, nodes, rows, acts, params, codes, patterns, shapes)
    m = params.prior_equiv
    at = nodes[rows]
    m_amaf = m if params.prior_amaf_equiv < 0 else params.prior_amaf_equiv
    if params.prior != "shape_wins":  # compiled: the same adds, pair by pair
        hb = np.where(tree.to_play[at] == 1, h, 1.0 - h).astype(np.float32)
        compiled.add_prior(tree.n, tree.w, tree.na, tree.wa, tree.node_n, tree.prior, nodes, rows, acts, h, hb,
                           np.float32(m), np.float32(m_amaf), tree.pass_action)
        return
    # The statistics are written as whole rows, [len(nodes), A] (zero off the legal moves;
    # the nodes are distinct): a row is contiguous, a (node, action) pair each is not.
    shape = (len(nodes), tree.n.shape[1])

    def dense(values) -> np.ndarray:
        out = np.zeros(shape, np.float32)
        out[rows, acts] = values
        return out

    prior = tree.prior[nodes]
    prior[rows, acts] = h
    tree.prior[nodes] = prior
    # No AMAF prior for pass: playouts never credit it, so a virtual Q~ would never be corrected.
    amaf = acts != tree.pass_action
    # h is p at points: M even simulations and c sqrt(p) won ones
    black = tree.to_play[at] == 1
    counts, wins_black = _shape_wins(h, acts == tree.pass_action, black, params)
    tree.n[nodes] += dense(counts)
    tree.w[nodes] += dense(wins_black)
    hb = np.full(len(acts), 0.5, np.float32)  # the AMAF side: the even part alone
    tree.node_n[nodes] += np.bincount(rows, counts, minlength=len(nodes)).astype(np.float32)
    legal[:, tree.pass_action] = False  # the AMAF side: every legal point, never pass
    tree.na[nodes] += legal * np.float32(m_amaf)
    tree.wa[nodes] += dense(np.where(amaf, m_amaf * hb, 0.0))


def _shape_wins(h: np.ndarray, is_pass: np.ndarray, black: np.ndarray, params: SearchParams):
    """The shape_wins prior's simulations on MC edges: counts M + c sqrt(p) and Black's wins among
    them, from h (p at points; pass: its H, with M simulations only)."""
    m = params.prior_equiv
    extra = np.where(is_pass, 0.0, params.shape_wins * np.sqrt(np.where(is_pass, 0.0, h)))
    mover = m * np.where(is_pass, h, 0.5) + extra
    counts = (m + extra).astype(np.float32)
    return counts, np.where(black, mover, counts - mover).astype(np.float32)


def experience(tree: Tree, node: int, params: SearchParams) -> tuple[np.ndarray, np.ndarray]:
    """What `initialise` added to node's MC edges, float32 [A]: the prior's simulations and
    Black's wins among them (zero without a prior); a node not yet initialised gets the same
    numbers, which its statistics do not reach."""
    h = tree.prior[node]
    black = bool(tree.to_play[node] == 1)
    if params.prior == "none":
        return np.zeros_like(h), np.zeros_like(h)
    if params.prior == "shape_wins":
        is_pass = np.arange(len(h)) == tree.pass_action
        return _shape_wins(h, is_pass, np.full(len(h), black), params)
    m = params.prior_equiv
    return np.full_like(h, m), m * (h if black else 1 - h)


def _heuristic(tree: Tree, nodes: np.ndarray, rows: np.ndarray, acts: np.ndarray, params: SearchParams,
               codes: np.ndarray | None, patterns: np.ndarray | None = None,
               shapes: np.ndarray | None = None) -> np.ndarray:
    """H (the mover's view, float32) of each legal (node row, action) pair; `codes`, `patterns`
    and `shapes` as `initialise` takes them."""
    p = tree.pass_action
    h = np.full(len(acts), NEUTRAL, np.float32)
    if params.prior == "grandfather":
        for r, node in enumerate(nodes):
            at = rows == r
            h[at] = _grandfather(tree, int(node), acts[at], params)
    elif params.uses_mogo_verdicts:
        point = acts != p
        rp, ap = rows[point], acts[point]
        if codes is None:  # the host's verdicts, node by node
            hp = np.concatenate([mogo_values(tree.boards[n], ap[rp == r].tolist()) for r, n in enumerate(nodes)])
        else:
            at = nodes[rp]
            hp = _from_codes(codes[rp, ap], lambda k: tree.boards[at[k]], ap)
        near = None if patterns is None else patterns[rp, ap]
        partial = None if shapes is None else shapes[rp, ap]
        if params.prior == "shape" and len(hp):
            hp = _keep_verdicts(_shape_values(tree, nodes, rp, ap, hp, params, near=near, partial=partial), hp, params)
        elif params.prior == "shape_wins" and len(hp):
            hp = _shape_values(tree, nodes, rp, ap, hp, params, probabilities=True, near=near, partial=partial)
        elif params.prior_model_path is not None and len(hp):
            ls = partial if partial is not None else _host_learnt(tree, nodes, params.prior_model_path)[rp, ap]
            hp = _keep_verdicts(shape.grouped_values(ls, rp, len(nodes), params.shape_temperature), hp, params)
        h[point] = hp
        h[~point] = np.where(_after_pass(tree, nodes)[rows[~point]], NEUTRAL, BAD)  # pass: bad unless it can end the game
    return h


def _after_pass(tree: Tree, nodes: np.ndarray) -> np.ndarray:
    """bool [len(nodes)]: was the move into each node a pass (board.passes >= 1)?  From the tree's
    action into the node; from the board for a node without a parent (a root)."""
    out = tree.parent_action[nodes] == tree.pass_action
    for i in np.flatnonzero(tree.parent[nodes] < 0).tolist():
        out[i] = tree.boards[nodes[i]].passes >= 1
    return out


def _grandfather(tree: Tree, node: int, legal: np.ndarray, params: SearchParams) -> np.ndarray:
    """The MC value of each action two plies up (the same player to move); 0.5 where it has no
    simulations or the grandparent has no prior yet."""
    parent = tree.parent[node]
    grand = tree.parent[parent] if parent >= 0 else -1
    if grand < 0 or not tree.initialised[grand]:
        return np.full(len(legal), NEUTRAL, np.float32)
    n = tree.visits(grand, params.prior_equiv)[legal]
    sims_w = tree.w[grand, legal] - params.prior_equiv * _black_view(tree.prior[grand, legal], tree.to_play[grand])
    q_black = np.where(n > 0, sims_w / np.maximum(n, 1e-9), np.nan)
    q_mover = q_black if tree.to_play[grand] == 1 else 1.0 - q_black
    return np.where(np.isnan(q_mover), NEUTRAL, np.clip(q_mover, 0.0, 1.0)).astype(np.float32)


def _shape_values(tree: Tree, nodes: np.ndarray, rows: np.ndarray, acts: np.ndarray, verdict: np.ndarray,
                  params: SearchParams, probabilities: bool = False, near: np.ndarray | None = None,
                  partial: np.ndarray | None = None) -> np.ndarray:
    """The shape prior's H for candidate (rows, acts) of `nodes`, given their MoGo verdicts
    (and from the device, where given: their 3x3 neighbourhood indices `near`, or their
    strengths before the verdict `partial`; None: read off the boards and the tree): features
    for all the nodes' candidates at once, then a softmax per node (search/shape.py); with
    `probabilities`, the softmax's p itself."""
    model = shape.load_model(params.shape_model)
    if partial is not None and not model.uses_diamond:
        ls = model.with_verdicts(partial, verdict)
    else:
        last, prev = _last_moves(tree, nodes)
        stones = np.stack([tree.boards[n].stones for n in nodes]) if near is None or model.uses_diamond else None
        feats = shape.candidate_features(stones, tree.size, tree.to_play[nodes], last, prev, rows, acts, verdict,
                                         model.uses_diamond, near)
        ls = model.log_strength(feats)
    if probabilities:
        return shape.grouped_probs(ls, rows, len(nodes))
    return shape.grouped_values(ls, rows, len(nodes), params.shape_temperature)


def _host_learnt(tree: Tree, nodes: np.ndarray, path: str) -> np.ndarray:
    """float32 [len(nodes), P]: the learnt prior's log-strengths of the nodes' points, from the
    round's own verdict code (search/device.leaf_verdicts) run on the host's CPU (the root, and
    nodes a descent reaches first)."""
    import jax

    from gojax.search.device import bucket, leaf_verdicts
    rows = tree.pos[nodes]
    padded = np.concatenate([rows, np.repeat(rows[:1], bucket(len(rows)) - len(rows), axis=0)])  # few shapes
    with jax.default_device(jax.local_devices(backend="cpu")[0]):
        packed = np.asarray(leaf_verdicts(padded, False, False, None, path))
    return packed[-1, :len(rows)]  # the fields legal, capture, shape: the last


def _last_moves(tree: Tree, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The opponent's last and the mover's previous move of each node, as shape.move_rows gives
    them: the actions into its parent and into itself (pass, P, is shape's "no move" row), read
    from the tree; from the board where the tree does not reach that far (the root and its
    children)."""
    par = tree.parent[nodes]
    base = nodes - nodes % tree.capacity  # a stack's tree offset (0 for a tree of its own)
    has_parent = par >= 0
    grand = np.where(has_parent, par + base, 0)
    has_grand = has_parent & (tree.parent[grand] >= 0)
    last = tree.parent_action[nodes].astype(np.int64)
    prev = tree.parent_action[grand].astype(np.int64)
    for i in np.flatnonzero(~has_grand).tolist():
        board = tree.boards[nodes[i]]
        last[i], prev[i] = shape.move_rows(shape.last_moves(board), board.size)
    return last, prev


def _keep_verdicts(learnt: np.ndarray, verdict: np.ndarray, params: SearchParams) -> np.ndarray:
    """`shape_hard_verdicts`: MoGo's good and bad moves keep H = 1 and 0 over the learnt value."""
    return np.where(verdict != NEUTRAL, verdict, learnt).astype(np.float32) if params.shape_hard_verdicts else learnt


def _black_view(h_mover: np.ndarray, to_play: int) -> np.ndarray:
    return h_mover if to_play == 1 else 1.0 - h_mover
