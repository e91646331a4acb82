"""Backups: MC (seed 000 eq. 13-15) and AMAF (eq. 16-17), for a batch of leaves at once.

A simulation path is s_0 .. s_T (nodes; s_T the node created for the leaf, if there was room)
with tree actions a_0 .. a_{T'-1} leading to the leaf position, followed by K playouts.
`backup_leaf` applies what the device reduced for those K playouts (win sum, first moves, AMAF
tables); `reference_backup` follows Algorithm 2 (seed 001) literally, one playout at a time,
from the recorded move list, and exists to test the first against.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from search.tree import Tree


@dataclasses.dataclass
class Leaf:
    """One selected leaf: its path through the tree and the position to play out from."""

    nodes: list[int]  # s_0 .. s_T
    actions: list[int]  # a_0 .. a_{T'-1}: the tree moves from s_0 to the leaf position
    board: object  # host Board of the leaf position
    virtual: float = 0.0  # virtual loss applied along the path (removed at backup)


def _tree_credits(actions: list[int], t: int, rule: str, pass_action: int) -> tuple[list[int], set[int]]:
    """For node s_t: the tree moves a_u (u >= t, same colour as s_t's mover) that AMAF credits,
    and the points the playouts must not credit (already played after s_t, per `rule`)."""
    credited, seen_any, seen_same = [], set(), set()
    for u in range(t, len(actions)):
        a = actions[u]
        same = (u - t) % 2 == 0
        if a != pass_action:
            blocked = a in seen_any if rule == "first" else (same and a in seen_same)
            if same and not blocked:
                credited.append(a)
            seen_any.add(a)
            if same:
                seen_same.add(a)
    excluded = seen_any if rule == "first" else seen_same
    return credited, excluded


def apply_virtual_loss(tree: Tree, leaf: Leaf, amount: float, sign: float = 1.0) -> None:
    """Count `amount` lost simulations for the mover on every tree edge of the path."""
    for s, a in zip(leaf.nodes, leaf.actions):
        loss_for_black = tree.to_play[s] == 1
        tree.n[s, a] += sign * amount
        tree.node_n[s] += sign * amount
        if not loss_for_black:
            tree.w[s, a] += sign * amount


def backup_leaf(tree: Tree, leaf: Leaf, k: int, wins: float, first_moves: np.ndarray, z: np.ndarray,
                amaf_count: np.ndarray, amaf_wins: np.ndarray, rule: str) -> None:
    """Back up K playouts of one leaf.  first_moves [K] (point, -1 pass, -2 none), z [K],
    amaf_count / amaf_wins [2, P] (row 0 Black, 1 White) as the device reduced them."""
    if leaf.virtual:
        apply_virtual_loss(tree, leaf, leaf.virtual, sign=-1.0)
    p = tree.pass_action
    for t, s in enumerate(leaf.nodes):
        tree.node_n[s] += k
        tree.sims[s] += k
        tree.wins[s] += wins
        if t < len(leaf.actions):
            a = leaf.actions[t]
            tree.n[s, a] += k
            tree.w[s, a] += wins
        else:  # the new node: its edge is each playout's own first move (Algorithm 2's a_T)
            acts = np.where(first_moves < 0, p, first_moves).astype(np.int64)
            ok = tree.legal[s, acts] & (first_moves != -2)
            np.add.at(tree.n[s], acts[ok], 1.0)
            np.add.at(tree.w[s], acts[ok], z[ok])
        credited, excluded = _tree_credits(leaf.actions, t, rule, p)
        for a in credited:
            if tree.legal[s, a]:
                tree.na[s, a] += k
                tree.wa[s, a] += wins
        row = 0 if tree.to_play[s] == 1 else 1
        mask = tree.legal[s, :p].copy()
        if excluded:
            mask[list(excluded)] = False
        tree.na[s, :p] += np.where(mask, amaf_count[row], 0)
        tree.wa[s, :p] += np.where(mask, amaf_wins[row], 0.0)


def reference_backup(tree: Tree, leaf: Leaf, playout_moves: list[int], z: float, rule: str) -> None:
    """Algorithm 2's BACKUP for ONE simulation: moves = tree actions + this playout's moves
    (points, P for pass), z its outcome.  Slow and literal."""
    p = tree.pass_action
    moves = list(leaf.actions) + [p if m < 0 else m for m in playout_moves]
    for t, s in enumerate(leaf.nodes):
        tree.node_n[s] += 1
        tree.sims[s] += 1
        tree.wins[s] += z
        if t < len(moves) and tree.legal[s, moves[t]]:
            tree.n[s, moves[t]] += 1
            tree.w[s, moves[t]] += z
        for u in range(t, len(moves), 2):
            a = moves[u]
            if a == p or not tree.legal[s, a]:
                continue
            earlier = moves[t:u] if rule == "first" else moves[t:u:2]
            if a not in earlier:
                tree.na[s, a] += 1
                tree.wa[s, a] += z
