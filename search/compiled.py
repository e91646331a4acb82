"""The host tree's inner loops compiled with numba: the same float32 operations, in the same
order, as the numpy expressions they replace, so the same bits (bench/search_digest.py).

A round's host work is many small array operations over a few hundred rows of A = P + 1
actions; numpy makes one pass over memory per operation, a compiled loop one per row.  Each
kernel here works in place on a Tree's or TreeStack's arrays (search/tree.py) and is compiled on
first use (`cache=True`: later processes load it from __pycache__).

float32 discipline: numba, like C, widens a float32 to float64 when it meets a Python float, and
numpy (NEP 50) does not; so every constant is made float32 before it meets the statistics.
"""

from __future__ import annotations

import numba
import numpy as np

F32 = np.float32
ONE = F32(1.0)
ZERO = F32(0.0)
TINY = F32(1e-30)  # select._ratio's floor
TINY_N = F32(1e-9)  # the exploration term's floor on n
NEG_INF = F32(-np.inf)

UCT, RAVE_HAND, RAVE_MSE = 0, 1, 2  # `mode` of refresh_rows (SearchParams.selection, .schedule)


@numba.njit(cache=True, nogil=True)
def _explore(log_n, nn):
    """sqrt(log(N(s)) / max(n, 1e-9)) in float32 (eq. 7, 18), log(N(s)) given: numpy's float32
    log and the C library's differ in the last bit."""
    return np.sqrt(log_n / max(nn, TINY_N))


@numba.njit(cache=True, nogil=True)
def refresh_rows(value, nodes, n, w, na, wa, node_n, log_n, to_play, legal, jitter, jitter_row, mode,
                 uct_c, fpu, rave_k, bias4, rave_c, bonus):
    """value[i, :] = the tree policy's value of each action at node i (select.values) + the
    jitter, for i in `nodes` (int64 [R]).  jitter: float32 [J, A]; node nodes[r] takes row
    jitter_row[r]; log_n: float32 [R], log(max(N(s), 1)) of each node (numpy's).  mode: UCT,
    RAVE_HAND or RAVE_MSE; uct_c, fpu, rave_k, rave_c: the params as float32; bias4:
    float32(4 b^2) (eq. 47); bonus: float32 [R, A] added to row r's values (select.puct_bonus),
    or [0, 0] for none.  -inf for illegal actions."""
    num_actions = value.shape[1]
    for r in range(nodes.shape[0]):
        i = nodes[r]
        jr = jitter_row[r]
        white = to_play[i] == 2
        big_n = max(node_n[i], ONE)
        log_big_n = log_n[r]
        for a in range(num_actions):
            if not legal[i, a]:
                value[i, a] = NEG_INF + jitter[jr, a]
                continue
            nn = n[i, a]
            has_n = nn > ZERO
            q = w[i, a] / max(nn, TINY)
            if white and has_n:
                q = ONE - q
            if mode == UCT:
                v = q + uct_c * _explore(log_big_n, nn) if has_n else fpu
            else:
                nav = na[i, a]
                has_na = nav > ZERO
                qa = wa[i, a] / max(nav, TINY)
                if white:
                    qa = ONE - qa
                if mode == RAVE_HAND:  # eq. 19
                    beta = np.sqrt(rave_k / (F32(3.0) * big_n + rave_k))
                    v = q + beta * (qa - q)
                    if not has_na:
                        v = q
                    if not has_n:
                        v = qa if has_na else fpu
                else:  # eq. 47 and eq. 12, in select.values' order
                    den = nn + nav
                    den += bias4 * nn * nav
                    beta = nav / max(den, TINY)
                    v = qa - q
                    v *= beta
                    v += q
                    if fpu != ZERO and not (has_n or has_na):
                        v = fpu
                if rave_c != ZERO:  # eq. 18
                    v = v + (rave_c * _explore(log_big_n, nn) if has_n else ZERO)
            if bonus.shape[0]:
                v = v + bonus[r, a]
            value[i, a] = v + jitter[jr, a]


def refresh(tree, nodes: np.ndarray, params, jitter: np.ndarray, bonus: np.ndarray | None = None) -> None:
    """select.refresh's work: the cached value rows of `nodes` (int64) from their statistics,
    plus `jitter` (float32 [A] for all, or [len(nodes), A] row by row), plus `bonus` (float32
    [len(nodes), A], select.puct_bonus) where given."""
    if jitter.ndim == 1:
        jitter, rows = jitter[None], np.zeros(len(nodes), np.int64)
    else:
        rows = np.arange(len(nodes), dtype=np.int64)
    mode = UCT if params.selection == "uct" else RAVE_HAND if params.schedule == "hand" else RAVE_MSE
    explores = mode == UCT or params.rave_c
    log_n = np.log(np.maximum(tree.node_n[nodes], ONE)) if explores else np.zeros(len(nodes), F32)
    refresh_rows(tree.value, nodes, tree.n, tree.w, tree.na, tree.wa, tree.node_n, log_n, tree.to_play, tree.legal,
                 np.ascontiguousarray(jitter, F32), rows, mode, F32(params.uct_c), F32(params.fpu),
                 F32(params.rave_k), F32(4.0 * params.rave_bias ** 2), F32(params.rave_c),
                 np.zeros((0, 0), F32) if bonus is None else np.ascontiguousarray(bonus, F32))


@numba.njit(cache=True, nogil=True)
def add_amaf(na, wa, s, li, colour, legal, amaf_count, amaf_wins, excl_pair, excl_point, cred_pair, cred_point,
             cred_count, cred_wins):
    """AMAF backup (eq. 16-17) of a round's path nodes: pair i (node s[i], leaf li[i], its mover's
    row colour[i] of the leaf's tables) adds amaf_count / amaf_wins [leaves, 2, P] where the
    action is legal at s[i] and not excluded ((excl_pair, excl_point): played earlier on the path),
    then each credited tree move (cred_pair, cred_point) adds cred_count / cred_wins [credits]
    where legal, pair by pair: each element gets its adds in the order of the pairs, as the
    rows of a numpy backup would."""
    pairs = s.shape[0]
    points = amaf_count.shape[2]
    open_ = np.empty((pairs, points), np.bool_)
    for i in range(pairs):
        for p in range(points):
            open_[i, p] = legal[s[i], p]
    for e in range(excl_pair.shape[0]):
        open_[excl_pair[e], excl_point[e]] = False
    order = np.argsort(cred_pair, kind="mergesort")  # each pair's credits with it, in order
    e = 0
    for i in range(pairs):
        node, leaf, c = s[i], li[i], colour[i]
        for p in range(points):
            if open_[i, p]:
                na[node, p] += amaf_count[leaf, c, p]
                wa[node, p] += amaf_wins[leaf, c, p]
        while e < order.shape[0] and cred_pair[order[e]] == i:
            p = cred_point[order[e]]
            if legal[node, p]:  # excluded at the pair too, so the table added nothing here
                na[node, p] += cred_count[order[e]]
                wa[node, p] += cred_wins[order[e]]
            e += 1


@numba.njit(cache=True, nogil=True)
def walk(who, starts, roots, offs, over, initialised, value, child, stop_at_new):
    """Descents of several searches through their trees (search/steps._walk's steps, search by
    search): search who[i] starts at store node starts[i] and, at each node, takes the argmax of
    its value row, until it leaves the tree (a child of -1), reaches a finished game, or reaches a
    node with no prior yet.  There it waits (the caller gives all waiting nodes their priors at
    once and walks on from them) unless `stop_at_new` and the node is not its root
    (roots[who[i]]): then the descent ends there.  offs[j] turns search j's own node indices into
    store rows.  Returns the steps (search, store node, action, child's own index or -1) and
    the waits (search, store node)."""
    cap = 16 * who.shape[0] + 16
    step_j = np.empty(cap, np.int64)
    step_here = np.empty(cap, np.int64)
    step_a = np.empty(cap, np.int64)
    step_kid = np.empty(cap, np.int64)
    wait_j = np.empty(who.shape[0], np.int64)
    wait_node = np.empty(who.shape[0], np.int64)
    steps, waits = 0, 0
    num_actions = value.shape[1]
    for i in range(who.shape[0]):
        j = who[i]
        node = starts[i]
        while not over[node]:
            if not initialised[node]:
                if not (stop_at_new and node != roots[j]):
                    wait_j[waits] = j
                    wait_node[waits] = node
                    waits += 1
                break
            best, a = value[node, 0], 0
            for b in range(1, num_actions):  # np.argmax: the first of the largest
                if value[node, b] > best:
                    best, a = value[node, b], b
            kid = child[node, a]
            if steps == cap:
                cap *= 2
                step_j = _grown(step_j, cap)
                step_here = _grown(step_here, cap)
                step_a = _grown(step_a, cap)
                step_kid = _grown(step_kid, cap)
            step_j[steps], step_here[steps], step_a[steps], step_kid[steps] = j, node, a, kid
            steps += 1
            if kid < 0:
                break
            node = kid + offs[j]
    return step_j[:steps], step_here[:steps], step_a[:steps], step_kid[:steps], wait_j[:waits], wait_node[:waits]


@numba.njit(cache=True, nogil=True)
def walk_one(node, root, over, initialised, value, child, stop_at_new):
    """One tree's descent from `node` (search/steps._descend_one's loop, compiled): the argmax
    of each node's value row until the descent leaves the tree, reaches a finished game, or
    reaches a node with no prior yet, where it ends (`stop_at_new`, but for the `root`) or
    waits.  Returns the nodes entered after `node`, the actions taken (one more than the nodes
    where the last leaves the tree), and whether it waits at its last node (the caller gives
    it its prior and walks on from there)."""
    cap = 32
    nodes = np.empty(cap, np.int64)
    actions = np.empty(cap, np.int64)
    k, m = 0, 0
    num_actions = value.shape[1]
    while not over[node]:
        if not initialised[node]:
            if not (stop_at_new and node != root):
                return nodes[:k], actions[:m], True
            break
        best, a = value[node, 0], 0
        for b in range(1, num_actions):  # np.argmax: the first of the largest
            if value[node, b] > best:
                best, a = value[node, b], b
        if m == cap:
            cap *= 2
            nodes = _grown(nodes, cap)
            actions = _grown(actions, cap)
        actions[m] = a
        m += 1
        kid = child[node, a]
        if kid < 0:
            break
        nodes[k] = kid
        k += 1
        node = kid
    return nodes[:k], actions[:m], False


@numba.njit(cache=True, nogil=True)
def _grown(a, cap):
    out = np.empty(cap, a.dtype)
    out[:a.shape[0]] = a
    return out


@numba.njit(cache=True, nogil=True)
def virtual_loss(n, w, na, wa, node_n, value, to_play, s, a, amount, jitter, jitter_row, refresh_edges, bias4, fpu):
    """`amount` (float32) lost simulations for the mover on edges (s[e], a[e]) (distinct), and,
    with `refresh_edges` (select.per_edge), each edge's cached value again: select.edge_values
    (float64, the same operations in the same order) + jitter[jitter_row[e], a[e]].  bias4:
    4 b^2 and fpu as float64."""
    for e in range(s.shape[0]):
        i, b = s[e], a[e]
        n[i, b] += amount
        node_n[i] += amount
        white = to_play[i] == 2
        if white:
            w[i, b] += amount
        if not refresh_edges:
            continue
        nn, nav = np.float64(n[i, b]), np.float64(na[i, b])
        q = np.float64(w[i, b]) / (nn if nn > 0 else 1.0)
        qa = np.float64(wa[i, b]) / (nav if nav > 0 else 1.0)
        if white:
            q, qa = 1.0 - q, 1.0 - qa
        den = nn + nav + bias4 * nn * nav
        beta = nav / (den if den > 0 else 1.0)
        if nn > 0:
            v = q + beta * (qa - q) if nav > 0 else q
        else:
            v = qa if nav > 0 else fpu
        value[i, b] = F32(v) + jitter[jitter_row[e], b]


def jitter_rows(store, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float32 [J, A], int64 [len(nodes)]): the jitter rows and which one each of `nodes` (store
    rows) takes: its tree's, in a TreeStack (store.jitter_of, without the copy)."""
    if hasattr(store, "trees"):
        return store.jitter, np.asarray(nodes, np.int64) // store.capacity
    return store.jitter[None], np.zeros(len(nodes), np.int64)


@numba.njit(cache=True, nogil=True)
def add_prior(n, w, na, wa, node_n, prior, nodes, rows, acts, h, hb, m, m_amaf, pass_action):
    """The prior's virtual experience (eq. 48-52) on legal pairs (nodes[rows[k]], acts[k]): H =
    h[k] for display, M (float32 m) simulations at Black's value hb[k] on the MC side, M~
    (m_amaf) on the AMAF side but for pass, and N(s) += M per pair (one add per node, as
    priors.initialise's rows).  The nodes are distinct; every other element is left as it is."""
    count = np.zeros(nodes.shape[0], np.int64)
    for k in range(rows.shape[0]):
        i, a = nodes[rows[k]], acts[k]
        count[rows[k]] += 1
        prior[i, a] = h[k]
        n[i, a] += m
        w[i, a] += m * hb[k]
        if a != pass_action:
            na[i, a] += m_amaf
            wa[i, a] += m_amaf * hb[k]
    for r in range(nodes.shape[0]):
        node_n[nodes[r]] += m * F32(count[r])


@numba.njit(cache=True, nogil=True)
def back_up_first(node_n, sims, wins_node, score_node, n, w, na, wa, legal, to_play, s, m, t_edges, actions,
                  k_leaf, wins, virtual, score, keep_score, first_moves, z, amaf_count, amaf_wins, pass_action,
                  no_move):
    """backup.backup_round with the AMAF rule "first", for a round's leaves, in its order of adds
    (totals, then MC edges leaf by leaf, then the new nodes' first moves, then AMAF pair by pair):
    the same bits.  s: each leaf's path nodes end to end (store rows), m [L] how many per leaf,
    t_edges [L] its tree actions (`actions`, end to end); k_leaf, wins, virtual, score [L] float32
    per leaf; first_moves, z [L, K]; amaf_count, amaf_wins [L, 2, P]."""
    leaves = m.shape[0]
    points = amaf_count.shape[2]
    base = np.zeros(leaves + 1, np.int64)
    abase = np.zeros(leaves + 1, np.int64)
    for li in range(leaves):
        base[li + 1] = base[li] + m[li]
        abase[li + 1] = abase[li] + t_edges[li]
    for li in range(leaves):  # totals: every node on a path
        for i in range(base[li], base[li + 1]):
            node_n[s[i]] += k_leaf[li]
            sims[s[i]] += k_leaf[li]
            wins_node[s[i]] += wins[li]
            if keep_score:
                score_node[s[i]] += score[li]
    for li in range(leaves):  # MC edges (eq. 13-15), less the virtual loss
        ev = virtual[li]
        for t in range(t_edges[li]):
            node, a = s[base[li] + t], actions[abase[li] + t]
            node_n[node] += -ev
            n[node, a] += k_leaf[li] - ev
            w[node, a] += wins[li] - (ev if to_play[node] == 2 else ZERO)
    for li in range(leaves):  # a new node: each playout's own first move
        if m[li] <= t_edges[li]:
            continue
        node = s[base[li] + m[li] - 1]
        for j in range(first_moves.shape[1]):
            fm = first_moves[li, j]
            act = pass_action if fm < 0 else fm
            if fm != no_move and legal[node, act]:
                n[node, act] += ONE
                w[node, act] += z[li, j]
    stamp = np.full(points + 1, -1, np.int64)
    credit = np.empty(pass_action + 1, np.int64)
    for li in range(leaves):  # AMAF (eq. 16-17), pair by pair
        for t in range(m[li]):
            i = base[li] + t
            node = s[i]
            c = 1 if to_play[node] == 2 else 0
            credits = 0
            for u in range(t, t_edges[li]):  # the tree moves after s_t, each point's first play
                a = actions[abase[li] + u]
                if a == pass_action or stamp[a] == i:
                    continue
                stamp[a] = i  # excluded here
                if (u - t) % 2 == 0:  # s_t's mover played it
                    credit[credits] = a
                    credits += 1
            for p in range(points):
                if legal[node, p] and stamp[p] != i:
                    na[node, p] += amaf_count[li, c, p]
                    wa[node, p] += amaf_wins[li, c, p]
            for e in range(credits):
                a = credit[e]
                if legal[node, a]:
                    na[node, a] += k_leaf[li]
                    wa[node, a] += wins[li]
