"""Child selection (seed 000 eq. 7, 12, 18, 19, 47), vectorised over actions and nodes.

All statistics are stored from Black's view; the mover's view is taken here (1 - Q for White),
and the mover always maximises.

The tree keeps each node's row of values in `Tree.value` (plus the search's tie-breaking
jitter), so that a descent step is one argmax.  Rows are recomputed together, in one call, for
every node a round's backup touched (`refresh`); a virtual loss changes one edge per node on
the path, and where the value of an edge depends on that edge alone (MC-RAVE with the
minimum-MSE schedule and no exploration term, the default) only those edges are recomputed
(`edge_value` in plain Python for one tree's path, `edge_values` for the paths of many trees
at once); otherwise the paths' rows are."""

from __future__ import annotations

import numpy as np

from gojax.search import compiled
from gojax.search.params import SearchParams
from gojax.search.tree import Tree


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den is 0 (num is 0 there too: counts and win sums grow together)."""
    return num / np.maximum(den, 1e-30)


def _pick(mask: np.ndarray, a: np.ndarray, b) -> np.ndarray:
    """np.where(mask, a, b) for float32 `a` and `b` (an array of a's shape, or a number), as bit
    operations: np.where branches per element, and the tree's masks (which actions have MC or
    AMAF data) are scattered enough to make it several times slower.  The same bits."""
    b = np.float32(b) if np.ndim(b) == 0 else b
    if mask.size < 6000:  # a few dozen rows (a lone search's): np.where's one call is cheaper
        return np.where(mask, a, b)
    bits = mask.view(np.uint8).astype(np.uint32)
    np.negative(bits, out=bits)  # all ones where mask
    kept = a.view(np.uint32) & bits
    np.invert(bits, out=bits)
    bits &= b.view(np.uint32)
    bits |= kept
    return bits.view(np.float32)


def values(tree: Tree, nodes: np.ndarray, params: SearchParams) -> np.ndarray:
    """float32 [len(nodes), A]: the value the tree policy maximises at each node; -inf for
    illegal actions."""
    n, w = tree.n[nodes], tree.w[nodes]
    white = (tree.to_play[nodes] == 2)[:, None]
    has_n = n > 0
    q = _ratio(w, n)
    # White's rows in the mover's view, in place; Q stays 0 where there is no MC data (eq. 47's
    # sum below then gives Q~ exactly).
    np.subtract(1.0, q, out=q, where=white & has_n)
    big_n = np.maximum(tree.node_n[nodes], 1.0)[:, None]
    if params.selection == "uct":  # eq. 7
        explore = np.sqrt(np.log(big_n) / np.maximum(n, 1e-9))
        value = np.where(has_n, q + params.uct_c * explore, params.fpu)
    else:
        na = tree.na[nodes]
        has_na = na > 0
        qa = _ratio(tree.wa[nodes], na)
        np.subtract(1.0, qa, out=qa, where=white)
        if params.schedule == "hand":  # eq. 19
            beta = np.sqrt(params.rave_k / (3.0 * big_n + params.rave_k))
            value = q + beta * (qa - q)
            value = _pick(has_na, value, q)  # Q~ = 0 must not count
            value = _pick(has_n, value, _pick(has_na, qa, params.fpu))
        else:  # eq. 47, and eq. 12 as one sum for every case, bit for bit: with MC data and no
            # AMAF data beta is 0 and the sum is Q; with AMAF data and no MC data beta is 1 and
            # Q is 0, so the sum is Q~; with neither it is 0, and the FPU goes there.
            den = n + na  # n + na + (4 b^2 n) na, in eq. 47's order
            den += (4.0 * params.rave_bias ** 2) * n * na
            beta = _ratio(na, den)
            value = qa - q
            value *= beta
            value += q
            if params.fpu:
                value = _pick(has_n | has_na, value, params.fpu)
        if params.rave_c:  # eq. 18
            explore = np.sqrt(np.log(big_n) / np.maximum(n, 1e-9))
            value = value + np.where(has_n, params.rave_c * explore, 0.0)
    value = value.astype(np.float32, copy=False)
    if params.puct:
        value = value + puct_bonus(tree, nodes, params)
    return _pick(tree.legal[nodes], value, -np.inf)


def prior_probabilities(tree: Tree, nodes: np.ndarray, params: SearchParams) -> np.ndarray:
    """float64 [len(nodes), A]: p(s,a), the prior's probability of each legal move of each node.
    A softmax prior stores H = sigmoid(log(n p) / T) (search/shape.grouped_values), so p is
    proportional to (H / (1 - H))^T and this gives its own p back; any other prior's H is read
    the same way (MoGo's good moves then share nearly all of it).  0 at a node not yet
    initialised."""
    h = np.clip(tree.prior[nodes].astype(np.float64), 1e-6, 1.0 - 1e-6)
    odds = (h / (1.0 - h)) ** params.shape_temperature
    odds *= tree.legal[nodes] & tree.initialised[nodes][:, None]
    total = odds.sum(axis=1, keepdims=True)
    return odds / np.where(total > 0, total, 1.0)


def puct_bonus(tree: Tree, nodes: np.ndarray, params: SearchParams) -> np.ndarray:
    """float32 [len(nodes), A]: AlphaGo's exploration term c p(s,a) sqrt(N(s)) / (1 + N(s,a))
    (Silver et al. 2016, c = params.puct), counting simulations without the prior's virtual ones
    (eq. 48-52): N(s,a) = n - M, N(s) their sum over the legal moves."""
    m = np.where(tree.initialised[nodes], np.float64(params.prior_equiv), 0.0)[:, None]
    real = np.maximum(tree.n[nodes] - m, 0.0) * tree.legal[nodes]
    total = np.sqrt(real.sum(axis=1, keepdims=True))
    return (params.puct * prior_probabilities(tree, nodes, params) * total / (1.0 + real)).astype(np.float32)


def action_values(tree: Tree, node: int, params: SearchParams) -> np.ndarray:
    """[A] `values` at one node (no jitter)."""
    return values(tree, np.array([node]), params)[0]


def per_edge(params: SearchParams) -> bool:
    """Does an edge's value depend on that edge's statistics alone (not on N(s))?"""
    return params.selection == "rave" and params.schedule == "mse" and not params.rave_c and not params.puct


def edge_value(tree: Tree, s: int, a: int, params: SearchParams) -> float:
    """`values` of one legal edge when `per_edge(params)`: eq. 12 with eq. 47, in Python
    floats (a dozen numpy calls on one element would cost ten times more).
    tests/test_search.py holds it equal to the vectorised rows."""
    n, w, na, wa = float(tree.n[s, a]), float(tree.w[s, a]), float(tree.na[s, a]), float(tree.wa[s, a])
    white = tree.to_play[s] == 2
    if n > 0:
        q = w / n
        q = 1.0 - q if white else q
        if na <= 0:
            return q
        qa = wa / na
        qa = 1.0 - qa if white else qa
        beta = na / (n + na + 4.0 * params.rave_bias ** 2 * n * na)
        return q + beta * (qa - q)
    if na > 0:
        qa = wa / na
        return 1.0 - qa if white else qa
    return params.fpu


def edge_values(tree: Tree, s: np.ndarray, a: np.ndarray, params: SearchParams) -> np.ndarray:
    """`edge_value` of many legal edges (s[i], a[i]) at once, float64 [len(s)]: the same
    operations in the same order, so the same numbers."""
    n, w = tree.n[s, a].astype(np.float64), tree.w[s, a].astype(np.float64)
    na, wa = tree.na[s, a].astype(np.float64), tree.wa[s, a].astype(np.float64)
    white = tree.to_play[s] == 2
    q = w / np.where(n > 0, n, 1.0)
    q = np.where(white, 1.0 - q, q)
    qa = wa / np.where(na > 0, na, 1.0)
    qa = np.where(white, 1.0 - qa, qa)
    den = n + na + 4.0 * params.rave_bias ** 2 * n * na
    beta = na / np.where(den > 0, den, 1.0)
    both = q + beta * (qa - q)
    return np.where(n > 0, np.where(na > 0, both, q), np.where(na > 0, qa, params.fpu))


def refresh(tree: Tree, nodes, params: SearchParams, jitter: np.ndarray) -> None:
    """Recompute the cached rows of `nodes` (repeats only cost time) after their statistics
    changed.  `jitter` ([A], tiny, fixed per search; or one row per node) is stored with them:
    it breaks ties without a bias towards A1.  Compiled (search/compiled.py): the same bits as
    `values` + jitter, in one pass over the rows."""
    nodes = np.asarray(nodes, np.int64).reshape(-1)
    bonus = puct_bonus(tree, nodes, params) if params.puct else None
    compiled.refresh(tree, nodes, params, np.asarray(jitter, np.float32), bonus)


def refresh_path(tree: Tree, nodes: list[int], actions: list[int], params: SearchParams,
                 jitter: np.ndarray) -> None:
    """After a change to the edges (nodes[t], actions[t]) of one path alone (a virtual loss)."""
    if not per_edge(params):
        refresh(tree, nodes[:len(actions)], params, jitter)
        return
    for s, a in zip(nodes, actions):
        tree.value[s, a] = edge_value(tree, s, a, params) + jitter[a]


def q_star(tree: Tree, node: int, params: SearchParams) -> np.ndarray:
    """[A] Q* (eq. 12) from the mover's view with no exploration term (for display and
    final_move="value")."""
    plain = SearchParams(**{**params.__dict__, "rave_c": 0.0, "uct_c": 0.0, "fpu": 0.0, "puct": 0.0})
    return action_values(tree, node, plain)
