"""Backups: MC (seed 000 eq. 13-15) and AMAF (eq. 16-17), for a batch of leaves at once.

A simulation path is s_0 .. s_T (nodes; s_T the node created for the leaf, if there was room)
with tree actions a_0 .. a_{T'-1} leading to the leaf position, followed by K playouts.
`backup_round` applies what the device reduced for those K playouts (win sum, first moves, AMAF
tables) for all L leaves of a device call at once; `reference_backup` follows Algorithm 2
(seed 001) literally, one playout at a time, from the recorded move list, and exists to test
the first against.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from gojax.kernels.geometry import NO_MOVE
from gojax.search import compiled
from gojax.search.tree import Tree


class Leaf:
    """One selected leaf: its path through the tree and the position to play out from.

    nodes: s_0 .. s_T; actions: a_0 .. a_{T'-1}, the tree moves from s_0 to the leaf position;
    virtual: the virtual loss applied along the path (removed at backup); row: the leaf position
    as the device reads it (int32 [C + 6], kernels/state.packed_fields), None where only the board
    is given.  The host Board (`board`) is made on first use: node `at` of `tree`'s board, after
    `move` where the leaf's last move made no node (-1: none)."""

    __slots__ = ("nodes", "actions", "virtual", "row", "_board", "_tree", "_at", "_move")

    def __init__(self, nodes: list[int], actions: list[int], board=None, virtual: float = 0.0,
                 row: np.ndarray | None = None, tree: Tree | None = None, at: int = -1, move: int = -1):
        self.nodes, self.actions, self.virtual, self.row = nodes, actions, virtual, row
        self._board, self._tree, self._at, self._move = board, tree, at, move

    @property
    def board(self):
        """The host Board of the leaf position."""
        if self._board is None and self._tree is not None:
            board = self._tree.boards[self._at]
            if self._move >= 0:  # a plain move's or a pass's
                board = board.after(None) if self._move == self._tree.pass_action else board.after(self._move, plain=True)
            self._board = board
        return self._board

    def __repr__(self) -> str:
        return f"Leaf(nodes={self.nodes}, actions={self.actions}, virtual={self.virtual})"


def _path_credits(actions: list[int], m: int, rule: str, pass_action: int):
    """For the nodes s_0 .. s_{m-1} of one path: the tree moves a_u (u >= t, s_t's mover) that
    AMAF credits at s_t, and the points its playouts must not credit there (already played
    after s_t, per `rule`).  Returns (credited, excluded), each a pair of index lists (t, point)."""
    credited, excluded = ([], []), ([], [])
    later: dict[int, int] = {}  # point -> first u >= t where it is played (rule "first")
    same = ({}, {})  # by parity of u: points played by one colour at u >= t (rule "same_colour")
    for t in range(len(actions) - 1, -1, -1):  # s_t with t = len(actions) credits nothing
        a = actions[t]
        if a != pass_action:
            later[a] = t
            same[t % 2][a] = t
        if t >= m:
            continue
        if rule == "first":
            for point, u in later.items():
                excluded[0].append(t)
                excluded[1].append(point)
                if (u - t) % 2 == 0:
                    credited[0].append(t)
                    credited[1].append(point)
        else:  # credited once each and excluded: same colour, so the same points
            for point in same[t % 2]:
                for out in (credited, excluded):
                    out[0].append(t)
                    out[1].append(point)
    return credited, excluded


def apply_virtual_loss(tree: Tree, leaf: Leaf, amount: float, sign: float = 1.0) -> None:
    """Count `amount` lost simulations for the mover on every tree edge of the path."""
    for s, a in zip(leaf.nodes, leaf.actions):
        loss_for_black = tree.to_play[s] == 1
        tree.n[s, a] += sign * amount
        tree.node_n[s] += sign * amount
        if not loss_for_black:
            tree.w[s, a] += sign * amount


def _add(target: np.ndarray, rows: np.ndarray, cols: np.ndarray, values) -> None:
    """target[rows, cols] += values, repeats summed (the root is on every path).  np.add.at
    on the flat view with the values cast to the target's dtype first: numpy's fast path (a
    mixed-dtype or 2-D add.at is many times slower)."""
    at = rows * target.shape[1] + cols
    values = np.asarray(values, target.dtype)
    if values.shape != at.shape:
        values = np.broadcast_to(values, at.shape)
    np.add.at(target.reshape(-1), at.ravel(), values.ravel())


class _Pairs(NamedTuple):
    """A round's paths laid out flat: one pair per (leaf, node on its path), leaf by leaf, and
    one edge per tree action on a path."""
    s: np.ndarray  # int [pairs] the node of each pair (store rows: offsets added)
    li: np.ndarray  # int [pairs] its leaf
    edge_node: np.ndarray  # int [edges] the node each tree action leaves (store rows)
    edge_action: np.ndarray  # int [edges] the action
    edge_leaf: np.ndarray  # int [edges] its leaf
    new_leaf: np.ndarray  # int [leaves with a new node] those leaves
    new_node: np.ndarray  # int [same] their new node (store rows)
    m: np.ndarray  # int [leaves] path nodes per leaf
    t_edges: np.ndarray  # int [leaves] tree actions per leaf
    base: np.ndarray  # int [leaves] each leaf's first pair: s_t of leaf i is pair base[i] + t


def _flat_paths(leaves: list[Leaf]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """int64 arrays: path nodes per leaf [L], tree actions per leaf [L], the nodes end to end
    (the leaves' own indices) and the actions end to end."""
    n = len(leaves)
    m = np.fromiter((len(leaf.nodes) for leaf in leaves), np.int64, n)
    t_edges = np.fromiter((len(leaf.actions) for leaf in leaves), np.int64, n)
    s = np.fromiter(itertools.chain.from_iterable(leaf.nodes for leaf in leaves), np.int64, int(m.sum()))
    actions = np.fromiter(itertools.chain.from_iterable(leaf.actions for leaf in leaves), np.int64, int(t_edges.sum()))
    return m, t_edges, s, actions


def _pairs(leaves: list[Leaf], offsets: np.ndarray | None) -> _Pairs:
    """The leaves' paths as flat arrays, each leaf's node indices shifted by its offset (a
    tree's own indices into a stack's rows; None: none)."""
    m, t_edges, s, edge_action = _flat_paths(leaves)
    li = np.repeat(np.arange(len(leaves)), m)
    base = np.cumsum(m) - m
    on_edge = np.arange(len(s)) - base[li] < t_edges[li]  # s_t with an edge a_t on the path
    new_leaf = np.flatnonzero(m > t_edges)  # the new node: its edge is each playout's own first move
    new_node = s[base[new_leaf] + m[new_leaf] - 1]
    edge_node, edge_leaf = s[on_edge], li[on_edge]
    if offsets is not None:
        off = np.asarray(offsets, np.int64)
        s, edge_node, new_node = s + off[li], edge_node + off[edge_leaf], new_node + off[new_leaf]
    return _Pairs(s, li, edge_node, edge_action, edge_leaf, new_leaf, new_node, m, t_edges, base)


def backup_round(tree: Tree, leaves: list[Leaf], k: int | np.ndarray, wins: np.ndarray, first_moves: np.ndarray,
                 z: np.ndarray, amaf_count: np.ndarray, amaf_wins: np.ndarray, rule: str,
                 score: np.ndarray | None = None, offsets: np.ndarray | None = None) -> np.ndarray:
    """Back up K playouts of each of the leaves at once (k: K, or float32 [len(leaves)], the
    playouts each leaf counts), removing their virtual loss: node totals, MC edges (eq. 13-15),
    AMAF (eq. 16-17).

    wins [L] (Black's wins among each leaf's K playouts), first_moves [L, K] (point, -1 pass,
    -2 none), z [L, K], amaf_count / amaf_wins [L, 2, P] (row 0 Black, 1 White) as the device
    reduced them, score [L] (the sum of the K final scores; None: not kept); rows beyond
    len(leaves) are padding; offsets (int [len(leaves)], or None for zeros) is added to each
    leaf's node indices (a tree's own, into a stack's rows).  Returns the nodes whose statistics
    changed (each once)."""
    if rule == "first":  # compiled, in the same order of adds
        return _back_up_compiled(tree, leaves, k, wins, first_moves, z, amaf_count, amaf_wins, score, offsets)
    pairs = _pairs(leaves, offsets)
    wins = np.asarray(wins, np.float32)
    # The playouts per leaf as float32 (with a Python float, np.add.at leaves its fast path).
    k_leaf = np.asarray(k, np.float32) if np.ndim(k) > 0 else None
    _back_up_totals(tree, pairs, k_leaf, k, wins, score)
    virtual = np.array([leaf.virtual for leaf in leaves], np.float32)
    _back_up_mc_edges(tree, pairs, k_leaf, k, wins, virtual, first_moves, z)
    _back_up_amaf(tree, pairs, leaves, k_leaf, k, wins, amaf_count, amaf_wins, rule)
    return np.unique(pairs.s)


def _back_up_compiled(tree: Tree, leaves: list[Leaf], k, wins, first_moves, z, amaf_count, amaf_wins, score,
                      offsets) -> np.ndarray:
    """backup_round by compiled.back_up_first: the leaves' paths end to end, and one call."""
    n = len(leaves)
    m, t_edges, s, actions = _flat_paths(leaves)
    if offsets is not None:
        s += np.repeat(np.asarray(offsets, np.int64), m)
    k_leaf = np.broadcast_to(np.asarray(k, np.float32), n).copy()
    keep = score is not None
    compiled.back_up_first(tree.node_n, tree.sims, tree.wins, tree.score, tree.n, tree.w, tree.na, tree.wa,
                           tree.legal, tree.to_play, s, m, t_edges, actions, k_leaf,
                           np.asarray(wins, np.float32)[:n], np.array([leaf.virtual for leaf in leaves], np.float32),
                           np.asarray(score, np.float32)[:n] if keep else k_leaf, keep,
                           np.asarray(first_moves)[:n], np.asarray(z, np.float32)[:n],
                           np.asarray(amaf_count, np.float32)[:n], np.asarray(amaf_wins, np.float32)[:n],
                           tree.pass_action, NO_MOVE)
    return np.unique(s)


def _back_up_totals(tree: Tree, pairs: _Pairs, k_leaf, k, wins: np.ndarray, score) -> None:
    """Every node on a path: its simulations, Black's wins and the summed final score."""
    s, li = pairs.s, pairs.li
    k_pair = k_leaf[li] if k_leaf is not None else np.float32(k)
    np.add.at(tree.node_n, s, k_pair)
    np.add.at(tree.sims, s, k_pair)
    np.add.at(tree.wins, s, wins[li])
    if score is not None:
        np.add.at(tree.score, s, np.asarray(score, np.float32)[li])


def _back_up_mc_edges(tree: Tree, pairs: _Pairs, k_leaf, k, wins: np.ndarray, virtual: np.ndarray,
                      first_moves: np.ndarray, z: np.ndarray) -> None:
    """MC edges (eq. 13-15): each tree action on a path, less the virtual loss put on it
    (Leaf.virtual); at a new node, each playout's own first move."""
    p = tree.pass_action
    if len(pairs.edge_node):
        es, ea, el = pairs.edge_node, pairs.edge_action, pairs.edge_leaf
        ev = virtual[el]
        white = tree.to_play[es] == 2
        np.add.at(tree.node_n, es, -ev)
        _add(tree.n, es, ea, (k_leaf[el] if k_leaf is not None else k) - ev)
        _add(tree.w, es, ea, wins[el] - np.where(white, ev, 0.0))
    if len(pairs.new_node):
        nn, nl = pairs.new_node, pairs.new_leaf
        fm = np.asarray(first_moves)[nl]
        acts = np.where(fm < 0, p, fm).astype(np.int64)  # PASS_POINT (and NO_MOVE, masked below)
        rows = np.broadcast_to(nn[:, None], acts.shape)
        ok = tree.legal[rows, acts] & (fm != NO_MOVE)
        _add(tree.n, rows[ok], acts[ok], np.float32(1.0))
        _add(tree.w, rows[ok], acts[ok], np.asarray(z, np.float32)[nl][ok])


def _back_up_amaf(tree: Tree, pairs: _Pairs, leaves: list[Leaf], k_leaf, k, wins: np.ndarray,
                  amaf_count: np.ndarray, amaf_wins: np.ndarray, rule: str) -> None:
    """AMAF (eq. 16-17): the playouts' tables where not excluded, plus the tree moves that
    `rule` credits; both only where the action is legal at s_t."""
    p = tree.pass_action
    s, li, base = pairs.s, pairs.li, pairs.base
    cred_pair, cred_point, excl_pair, excl_point = [], [], [], []
    for i, leaf in enumerate(leaves):
        (ct, ca), (et, ea) = _path_credits(leaf.actions, len(leaf.nodes), rule, p)
        b = int(base[i])
        cred_pair += [b + t for t in ct]
        cred_point += ca
        excl_pair += [b + t for t in et]
        excl_point += ea
    ci, cp = np.asarray(cred_pair, np.int64), np.asarray(cred_point, np.int64)
    cred_count = (k_leaf[li][ci] if k_leaf is not None else np.full(len(ci), k, np.float32)).astype(np.float32)
    compiled.add_amaf(tree.na, tree.wa, s, li, (tree.to_play[s] == 2).astype(np.int64), tree.legal,
                      np.asarray(amaf_count, np.float32), np.asarray(amaf_wins, np.float32),
                      np.asarray(excl_pair, np.int64), np.asarray(excl_point, np.int64), ci, cp, cred_count,
                      np.asarray(wins, np.float32)[li[ci]])


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
