"""Child selection at one node, vectorised over its actions (seed 000 eq. 7, 12, 18, 19, 47).

All statistics are stored from Black's view; the mover's view is taken here (1 - Q for White),
and the mover always maximises."""

from __future__ import annotations

import numpy as np

from search.params import SearchParams
from search.tree import Tree


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def action_values(tree: Tree, node: int, params: SearchParams) -> np.ndarray:
    """[A] the value the tree policy maximises at `node`; -inf for illegal actions."""
    n, w = tree.n[node], tree.w[node]
    white = tree.to_play[node] == 2
    q = _ratio(w, n)
    if white:
        q = 1.0 - q
    big_n = max(float(tree.node_n[node]), 1.0)
    explore = np.sqrt(np.log(big_n) / np.maximum(n, 1e-9))
    if params.selection == "uct":  # eq. 7
        value = np.where(n > 0, q + params.uct_c * explore, params.fpu)
    else:
        na = tree.na[node]
        qa = _ratio(tree.wa[node], na)
        if white:
            qa = 1.0 - qa
        if params.schedule == "hand":  # eq. 19
            beta = np.full_like(n, np.sqrt(params.rave_k / (3.0 * big_n + params.rave_k)))
        else:  # eq. 47
            b2 = params.rave_bias ** 2
            beta = _ratio(na, n + na + 4.0 * n * na * b2)
        mixed = (1.0 - beta) * q + beta * qa  # eq. 12
        value = np.where(n > 0, np.where(na > 0, mixed, q), np.where(na > 0, qa, params.fpu))
        if params.rave_c:  # eq. 18
            value = value + np.where(n > 0, params.rave_c * explore, 0.0)
    return np.where(tree.legal[node], value, -np.inf)


def select_action(tree: Tree, node: int, params: SearchParams, jitter: np.ndarray) -> int:
    """argmax of action_values; `jitter` ([A], tiny, fixed per search) breaks ties without a bias
    towards A1."""
    return int(np.argmax(action_values(tree, node, params) + jitter))


def q_star(tree: Tree, node: int, params: SearchParams) -> np.ndarray:
    """[A] Q* (eq. 12) from the mover's view with no exploration term (for display and
    final_move="value")."""
    plain = SearchParams(**{**params.__dict__, "rave_c": 0.0, "uct_c": 0.0, "fpu": 0.0})
    return action_values(tree, node, plain)
