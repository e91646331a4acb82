"""The steps of a search round, for one tree or many at once: `descend`, `expand`, `back_up`.

A round (search/loop.py): every tree descends L times from its root (`descend`: virtual loss
keeps the leaves apart, each new leaf becomes a node at once, as in Algorithm 2's SIMTREE), the
leaves go to the device in one call (search/device.py, the `submit` step), the new nodes get
their legal moves and priors from what the device says of them (`expand`: NodeFeatures, ahead
of the playouts or with them), and the playouts' results go back up the paths (`back_up`:
search/backup.py).  Each step is written for many searches whose trees share one TreeStack
(their params differ at most in the seed): array operations over the stack; a lone search is a
forest of one.  The searches are search/mcts.Search objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gojax.kernels.playout import PlayoutResult
from gojax.kernels.state import packed_after_pass, packed_after_plain, packed_fields
from gojax.search import compiled, priors
from gojax.search.backup import Leaf, backup_round
from gojax.search.params import SearchParams
from gojax.search.select import per_edge, refresh
from gojax.search.tree import may_repeat, plain_rows, set_legal_rows, start_rows

if TYPE_CHECKING:  # mcts.py imports this module
    from gojax.search.mcts import Search


def back_up(searches: list[Search], leaves: list[list[Leaf]], starts: list[int],
                  r: PlayoutResult, ready: bool = False, playouts: np.ndarray | None = None) -> list[tuple[np.ndarray, int]]:
    """`Search.back_up` for several searches at once: searches[j]'s leaves are the result's rows
    starts[j] .. starts[j] + len(leaves[j]) - 1.  Several searches must share one TreeStack and
    one `batch_key` (their params differ at most in the seed): the new nodes' priors, the backup
    and the refresh of the touched rows are then one set of array operations over the stack.
    `ready`: the round's new nodes were given their legal moves and priors already (from its
    verdicts ahead of the playouts: `expand`).  `playouts`: float32 [leaves in all], the
    playouts each leaf counts (None: K each; fewer: the result's rows hold only those).
    Every search has one leaf or more.  Returns (ownership summed over the playouts [P],
    playouts stopped by the move cap) per search."""
    store, offs = _store(searches)
    first = searches[0]
    params, k = first.params, first.params.playouts_per_leaf
    if not ready:  # their priors now, all at once (the refresh below covers them: on the paths)
        expand(searches, leaves, starts, r.start_legal, r.start_capture, r.start_prior, refresh_now=False)
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


def expand(searches: list[Search], leaves: list[list[Leaf]], starts: list[int], legal: np.ndarray,
                    capture: np.ndarray, codes: np.ndarray | None, refresh_now: bool = True,
                    patterns: np.ndarray | None = None, shapes: np.ndarray | None = None) -> None:
    """Give the new nodes of a round's leaves (rows as in `back_up`) their legal moves (the
    device's masks `legal`, bool [rows, P], less the superko repeats, which only `capture`d
    points or plain moves that recreate a position can make) and, but under the grandfather
    prior, their priors (the device's MoGo verdicts `codes`, int8 [rows, P], where the prior
    uses them; and the 3x3 neighbourhoods `patterns`, int32 [rows, P], and partial shape
    strengths `shapes`, float32 [rows, P] (NodeFeatures.shape), where the shape prior reads
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
    _legal_from(store, fresh, legal[fresh_rows], capture[fresh_rows], first.tree.pass_always)
    cold = ~store.initialised[fresh]
    fresh, fresh_rows = fresh[cold], fresh_rows[cold]
    if len(fresh) and first._batch_priors(codes):
        priors.initialise(store, fresh, first.params, None if codes is None else codes[fresh_rows],
                          None if patterns is None else patterns[fresh_rows],
                          None if shapes is None else shapes[fresh_rows])
        if refresh_now:
            refresh(store, fresh, first.params, store.jitter_of(fresh))


def _legal_from(store, nodes: np.ndarray, legal: np.ndarray, capture: np.ndarray, pass_always: bool) -> None:
    """The legal masks of store `nodes` from the device's masks (bool [len(nodes), P]: legal
    under simple ko, and capturing), less the superko repeats, which only captures or plain
    moves that recreate a position can make: a node's host board is made only where one can."""
    mask = np.array(legal, bool)  # a copy: the superko repeats come off
    taking: list[list[int]] = [[] for _ in range(len(nodes))]  # each node's legal captures, found at once
    for i, p in zip(*(x.tolist() for x in np.nonzero(mask & capture))):
        taking[i].append(p)
    boards = store.boards
    for i in may_repeat(store, nodes, taking):  # most: no capture yet, or none now and no plain move can repeat
        repeats = boards[int(nodes[i])].superko_repeats(mask[i], capture[i], taking[i])
        if repeats:
            mask[i, list(repeats)] = False
    set_legal_rows(store, nodes, lambda k: boards[int(nodes[k])], mask, pass_always)
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


def descend(searches: list[Search]) -> list[Leaf]:
    """One descent in each search at once (`Search.descend`'s, for each): every level is one
    argmax over the cached value rows of all the searches still descending (`_walk`), then the
    new leaves' nodes and the virtual loss on every path in one set of array operations
    (`_leaves`).  Each search sees exactly what a descent of its own would: the trees do not
    interact."""
    if len(searches) == 1:
        return [_descend_one(searches[0])]
    store, offs = _store(searches)
    own_roots = np.array([s.root for s in searches], np.int64)
    steps = _walk(searches, store, offs, offs + own_roots)
    return _leaves(searches, store, offs, own_roots, steps)


def _walk(searches: list[Search], store, offs: np.ndarray, roots: np.ndarray) -> list[tuple]:
    """The descents' steps from the `roots` (store indices), level by level: per level the
    searches still descending (`live`), their store nodes (`here`), the actions taken and those
    actions' children (own indices, -1 where not in the tree).  A search's steps come in the
    order of its levels."""
    params = searches[0].params
    rule = params.in_flight_rule
    if rule != "sidestep":  # compiled: each search walks to its end or its wait in one call
        return _walk_compiled(searches, store, offs, roots, rule == "stop")
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
    return steps


def _walk_compiled(searches: list[Search], store, offs: np.ndarray, roots: np.ndarray, stop: bool) -> list[tuple]:
    """`_walk` without sidestepping, by compiled.walk: the steps search by search, and the
    searches that wait at a node with no verdicts yet get them all at once (`_initialise_nodes`,
    in the order of the searches) and walk on from there, as `_walk`'s do."""
    who, starts, steps = np.arange(len(searches), dtype=np.int64), roots, []
    while who.size:
        *step, who, starts = compiled.walk(who, starts, roots, offs, store.over, store.initialised, store.value,
                                           store.child, stop)
        steps.append(tuple(step))
        if who.size:
            _initialise_nodes(searches, store, offs, who, starts)
    return steps


def _leaves(searches: list[Search], store, offs: np.ndarray, own_roots: np.ndarray, steps: list[tuple]) -> list[Leaf]:
    """The descents' leaves from their steps (`_walk`): the paths, the leaf positions as the
    device reads them (a plain move's from its parent's row, all at once; a capture's or a
    pass's from a host board), a new node where the tree has room (all made at once), and the
    virtual loss on every path."""
    params = searches[0].params
    stepped, nodes_at, taken, kids = (np.concatenate(x) for x in zip(*steps)) if steps else \
        (np.zeros(0, np.int64),) * 4
    paths, actions = _paths(len(searches), own_roots, stepped, taken, kids)
    ends = np.fromiter((path[-1] for path in paths), np.int64, len(paths))
    rows = store.pos[ends + offs]  # a copy: the leaves that stop on a node play from its position
    moves = np.full(len(searches), -1, np.int64)  # the leaf's last move where it is not a node's (yet)
    boards: list = [None] * len(searches)
    which, nodes = [], []  # the new nodes: search, node
    miss = kids < 0
    if miss.any():  # the leaf's move; a new node where the tree has room
        ex_j, ex_a = stepped[miss], taken[miss]
        at = ends[ex_j] + offs[ex_j]
        pass_action = searches[0].tree.pass_action
        plain, passes = store.plain[at, ex_a], ex_a == pass_action
        moves[ex_j] = ex_a
        if plain.any():
            rows[ex_j[plain]] = packed_after_plain(store.pos[at[plain]], ex_a[plain], searches[0].tree.geometry)
        if passes.any():
            rows[ex_j[passes]] = packed_after_pass(store.pos[at[passes]])
        rough = ~(plain | passes)  # captures: the host board says what the move takes
        for j, a in zip(ex_j[rough].tolist(), ex_a[rough].tolist()):
            boards[j] = searches[j].tree.boards[int(ends[j])].after(a)
        if rough.any():
            rows[ex_j[rough]] = packed_fields([boards[j] for j in ex_j[rough].tolist()])
        grow = store.sims[at] >= params.expand_after
        for j in ex_j[grow].tolist():
            tree = searches[j].tree
            if not tree.full:
                which.append(j)
                nodes.append(tree.reserve(boards[j]))
                paths[j].append(nodes[-1])
    leaves = []
    for j, path, acted, end, move, board in zip(range(len(paths)), paths, actions, ends.tolist(), moves.tolist(),
                                                boards):
        if move >= 0 and len(path) == len(acted):  # its last move made no node: the board after it
            leaves.append(Leaf(path, acted, board, row=rows[j], tree=searches[j].tree, at=end, move=move))
        else:
            leaves.append(Leaf(path, acted, board, row=rows[j], tree=searches[j].tree, at=path[-1]))
    if which:  # Tree.add(..., lazy=True) for all of them at once
        js = np.asarray(which, np.int64)
        off, own = offs[js], np.asarray(nodes, np.int64)
        new_rows = rows[js]
        c = new_rows.shape[1] - 6
        start_rows(store, own + off, new_rows[:, c + 2] >= 2, new_rows[:, c + 1], ends[js], moves[js], own, off)
        store.pos[own + off] = new_rows
        lazy = np.array([boards[j] is None for j in which])  # by a plain move (one stone more) or a pass
        plain_rows(store, (own + off)[lazy], (ends[js] + off)[lazy], moves[js][lazy] != searches[0].tree.pass_action)
        for j, node in zip(js[~lazy].tolist(), own[~lazy].tolist()):
            searches[j].tree.hold(node, boards[j], rows[j])
    if params.virtual_loss and steps:
        _virtual_loss(store, nodes_at, taken, params, leaves, params.virtual_loss * params.playouts_per_leaf)
    return leaves


def leaf_rows(leaves: list[list[Leaf]], rules: str):
    """The positions of each tree's leaves as the device reads them (kernels/state.packed_fields):
    int32 [G, L, C + 6] when every tree has L, else one [n_g, C + 6] per tree; under chinese
    rules a finished leaf (two passes) has its passes cleared, so that its playouts take the
    dead stones off before it is counted (Board.resumed)."""
    rows = np.stack([leaf.row if leaf.row is not None else packed_fields([leaf.board])[0]
                     for ls in leaves for leaf in ls])
    if rules == "chinese":
        passes = rows[:, -4]  # kernels/state._PACKED: ko, to_play, passes, komi, last, prev
        passes[passes >= 2] = 0
    counts = [len(ls) for ls in leaves]
    if len(set(counts)) == 1:
        return rows.reshape(len(leaves), counts[0], -1)
    return np.split(rows, np.cumsum(counts)[:-1])


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
    simulator = searches[0].simulator
    v = simulator.verdicts_now(store.pos[nodes])
    bare = np.flatnonzero(~store.legal_ready[nodes])
    if bare.size:
        _legal_from(store, nodes[bare], v.legal[bare], v.capture[bare], searches[0].tree.pass_always)
    priors.initialise(store, nodes, params, v.prior, v.pattern, simulator.shapes_for(params, v, searches[0].size))
    refresh(store, nodes, params, store.jitter_of(nodes))


def _virtual_loss(store, s: np.ndarray, a: np.ndarray, params: SearchParams, leaves: list[Leaf],
                  amount: float) -> None:
    """Count `amount` lost simulations for the mover on every edge of the leaves' paths (the
    store node `s` and action `a` of each, int [E]) and refresh those edges' values, so that
    the round's next descents see it.  Within a path the nodes are distinct, and paths of
    different trees never meet: no edge is hit twice."""
    for leaf in leaves:
        leaf.virtual = amount
    edges = per_edge(params)  # only the edges changed; else their rows, after
    jitter, rows = compiled.jitter_rows(store, s)
    compiled.virtual_loss(store.n, store.w, store.na, store.wa, store.node_n, store.value, store.to_play,
                          np.asarray(s, np.int64), np.asarray(a, np.int64), np.float32(amount), jitter, rows, edges,
                          4.0 * params.rave_bias ** 2, float(params.fpu))
    if not edges:
        rows = np.unique(s)
        refresh(store, rows, params, store.jitter_of(rows))


def _descend_one(search) -> Leaf:
    """`descend` for one tree: the walk and the virtual loss compiled, the leaf in scalars
    (numpy calls on single elements would cost more than they save).  The same descent, step
    for step (tests/test_forest.py holds the two equal)."""
    tree, params = search.tree, search.params
    nodes, actions = _walk_one(search)
    end = nodes[-1]
    if len(actions) == len(nodes):  # the last action's child is not in the tree (else: a stop)
        a = actions[-1]
        board = None
        plain = bool(tree.plain[end, a])
        if plain or a == tree.pass_action:  # from the parent's row; the host board on first use
            row = _row_after(tree, end, a if plain else -1)
        else:
            board = tree.boards[end].after(a)
            row = packed_fields([board])[0]
        over, to_play = bool(row[-4] >= 2), int(row[-5])  # kernels/state._PACKED: ko, to_play, passes, ...
        if not tree.full and tree.sims[end] >= params.expand_after:
            node = tree.reserve(board)
            start_rows(tree, node, over, to_play, end, a, node)
            if board is None:  # plain_rows for one node, in scalars
                tree.pos[node] = row
                stones = int(tree.stones[end]) + plain
                tree.stones[node] = stones
                tree.peak[node] = max(int(tree.peak[end]), stones)
                tree.emptied[node] = tree.emptied[end]
                tree.anchor[node] = tree.anchor[end]
            else:
                tree.hold(node, board, row)
            nodes.append(node)
            leaf = Leaf(nodes, actions, board, row=row, tree=tree, at=node)
        else:
            leaf = Leaf(nodes, actions, board, row=row, tree=tree, at=end, move=a)
    else:
        leaf = Leaf(nodes, actions, row=tree.pos[end].copy(), tree=tree, at=end)
    if params.virtual_loss:  # the round's next leaves see it: the forest's kernel, on one path
        _virtual_loss(tree, np.array(nodes[:len(actions)], np.int64), np.array(actions, np.int64), params, [leaf],
                      params.virtual_loss * params.playouts_per_leaf)
    return leaf


def _walk_one(search) -> tuple[list[int], list[int]]:
    """A lone descent's path (nodes from the root) and actions: compiled.walk_one, which stops
    where a node waits for its prior (given here, on the host) and walks on from there; in
    Python under in_flight="sidestep"."""
    tree, params = search.tree, search.params
    node = search.root
    nodes, actions = [node], []
    rule = params.in_flight_rule
    if rule != "sidestep":
        while True:
            more, acts, wait = compiled.walk_one(node, search.root, tree.over, tree.initialised, tree.value,
                                                 tree.child, rule == "stop")
            nodes += more.tolist()
            actions += acts.tolist()
            if not wait:
                return nodes, actions
            node = nodes[-1]
            search._initialise(node)
    while not tree.over[node]:
        if not tree.initialised[node]:
            search._initialise(node)
        a = int(tree.value[node].argmax())
        if _pending(tree, int(tree.child[node, a])):
            a = int(_sidestep(tree, tree.value[node][None], tree.child[node][None], 0, a)[0])
        actions.append(a)
        child = int(tree.child[node, a])
        if child < 0:
            break
        node = child
        nodes.append(child)
    return nodes, actions


def _row_after(tree, node: int, point: int) -> np.ndarray:
    """packed_after_plain (point >= 0) or packed_after_pass (-1) of one tree node's row, in
    scalars: for one row, a few element writes cost less than the array operations."""
    row = tree.pos[node].copy()
    c = len(row) - 6  # kernels/state._PACKED: ko, to_play, passes, komi, last, prev
    color = int(row[c + 1])
    row[c + 1] = 3 - color
    row[c] = 0
    row[c + 5] = row[c + 4]
    if point >= 0:
        cell = int(tree.geometry.point_to_cell[point])
        row[cell] = color
        row[c + 2] = 0
        row[c + 4] = cell
    else:
        row[c + 2] = min(int(row[c + 2]) + 1, 2)
        row[c + 4] = 0
    return row
