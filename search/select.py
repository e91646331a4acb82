"""Child selection at one node, vectorised over its actions (seed 000 eq. 7, 12, 18, 19, 47).

All statistics are stored from Black's view; the mover's view is taken here (1 - Q for White),
and the mover always maximises."""

from __future__ import annotations

import numpy as np

from search.params import SearchParams
from search.tree import Tree


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den is 0 (num is 0 there too: counts and win sums grow together)."""
    return num / np.maximum(den, 1e-30)


def action_values(tree: Tree, node: int, params: SearchParams) -> np.ndarray:
    """[A] the value the tree policy maximises at `node`; -inf for illegal actions.

    Called once per tree level per simulation round on arrays of P + 1 floats, so it is
    written as few whole-array numpy operations (their fixed cost dominates at this size)."""
    n, w = tree.n[node], tree.w[node]
    white = tree.to_play[node] == 2
    q = _ratio(w, n)
    if white:
        q = 1.0 - q
    big_n = max(float(tree.node_n[node]), 1.0)
    if params.selection == "uct":  # eq. 7
        explore = np.sqrt(np.log(big_n) / np.maximum(n, 1e-9))
        value = np.where(n > 0, q + params.uct_c * explore, params.fpu)
    else:
        na = tree.na[node]
        qa = _ratio(tree.wa[node], na)
        if white:
            qa = 1.0 - qa
        if params.schedule == "hand":  # eq. 19
            beta = np.float32(np.sqrt(params.rave_k / (3.0 * big_n + params.rave_k)))
        else:  # eq. 47
            beta = _ratio(na, n + na + (4.0 * params.rave_bias ** 2) * n * na)
        # eq. 12; with no MC data beta is 1 (eq. 47) and with no AMAF data Q~ = 0 must not
        # count, so both edge cases are set apart below.
        value = q + beta * (qa - q)
        has_n, has_na = n > 0, na > 0
        value = np.where(has_n, np.where(has_na, value, q), np.where(has_na, qa, params.fpu))
        if params.rave_c:  # eq. 18
            explore = np.sqrt(np.log(big_n) / np.maximum(n, 1e-9))
            value = value + np.where(has_n, params.rave_c * explore, 0.0)
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
