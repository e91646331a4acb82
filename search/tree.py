"""The search tree: per-node arrays of child statistics, preallocated under a node budget.

Node i, action a (a point 0..P-1, or P for pass), all float32 from BLACK's point of view:
  n[i, a], w[i, a]    MC visits N(s,a) and win sum (Q = w / n), prior counts included (eq. 48-52)
  na[i, a], wa[i, a]  AMAF N~(s,a) and win sum (Q~ = wa / na)
  prior[i, a]         heuristic H(s,a) from the mover's view (for display)
  legal[i, a]         bool: legal under positional superko
  value[i, a]         the tree policy's value of the action for the mover, plus the search's
                      tie-breaking jitter: a cache that search/select.py keeps up to date, so
                      that a descent step is one argmax
  child[i, a]         int32 node index, -1 when not expanded
  legal_ready[i]      bool: legal[i] is filled (lazily: see Tree.ensure_legal)
  node_n[i]           N(s) = sum of N(s,a) (eq. 50), used by the schedules and UCT
  sims[i], wins[i]    simulations through the node and Black's wins in them (no priors)
  score[i]            the sum of those playouts' final scores (Black's area - White's - komi)
Bytes per node: 29 * (P + 1) + 27, plus the host board the node keeps (about 1-2 KB):
9x9 2,405 B + board, 19x19 10,525 B + board.
"""

from __future__ import annotations

import numpy as np

from gojax.kernels.host import Board

NODE_ARRAYS = ("n", "w", "na", "wa", "prior", "value", "legal", "child", "node_n", "sims", "wins", "score", "to_play",
               "parent", "parent_action", "initialised", "legal_ready")  # every per-node array, indexed [node, ...]


class Tree:
    def __init__(self, size: int, capacity: int, pass_always: bool = True):
        """pass_always: pass is a legal tree action at every node (SearchParams.pass_in_tree)."""
        self.size = size
        self.num_actions = size * size + 1  # A
        self.pass_action = size * size
        self.capacity = capacity
        shape = (capacity, self.num_actions)
        self.n = np.zeros(shape, np.float32)
        self.w = np.zeros(shape, np.float32)
        self.na = np.zeros(shape, np.float32)
        self.wa = np.zeros(shape, np.float32)
        self.prior = np.full(shape, 0.5, np.float32)
        self.value = np.full(shape, -np.inf, np.float32)
        self.legal = np.zeros(shape, bool)
        self.child = np.full(shape, -1, np.int32)
        self.node_n = np.zeros(capacity, np.float32)
        self.sims = np.zeros(capacity, np.float32)
        self.wins = np.zeros(capacity, np.float32)
        self.score = np.zeros(capacity, np.float32)
        self.to_play = np.zeros(capacity, np.int8)
        self.initialised = np.zeros(capacity, bool)  # heuristic prior added (at its first backup, or first descent)
        # legal[i] filled: at the node's first backup (from the device's masks for the leaf
        # position) or, if a descent reaches it before that, from the host board.
        self.legal_ready = np.zeros(capacity, bool)
        self.parent = np.full(capacity, -1, np.int32)
        self.parent_action = np.full(capacity, -1, np.int32)
        self.boards: list[Board | None] = [None] * capacity
        self.num_nodes = 0
        self.pass_always = pass_always

    @property
    def full(self) -> bool:
        return self.num_nodes >= self.capacity

    def bytes_per_node(self) -> int:
        return sum(getattr(self, name).nbytes for name in NODE_ARRAYS) // self.capacity

    def add(self, board: Board, parent: int, action: int, lazy: bool = False) -> int:
        """A new node for `board` (statistics zero).  Caller checks `full`.  With `lazy` the
        legal mask is left for `set_legal` / `ensure_legal`: most leaves get it from the device."""
        i = self.num_nodes
        self.num_nodes += 1
        for arr in (self.n, self.w, self.na, self.wa):
            arr[i] = 0.0
        self.prior[i] = 0.5
        self.value[i] = -np.inf
        self.child[i] = -1
        self.node_n[i] = self.sims[i] = self.wins[i] = self.score[i] = 0.0
        self.initialised[i] = False
        self.legal[i] = False
        self.legal_ready[i] = False
        self.boards[i] = board
        if not lazy:
            self.ensure_legal(i)
        self.to_play[i] = board.to_play
        self.parent[i] = parent
        self.parent_action[i] = action
        if parent >= 0:
            self.child[parent, action] = i
        return i

    def ensure_legal(self, i: int) -> None:
        """Fill node i's legal mask from its host board, unless already filled."""
        if not self.legal_ready[i]:
            self.set_legal(i, self.boards[i].legal_points())

    def set_legal(self, i: int, points: list[int]) -> None:
        board = self.boards[i]
        self.legal[i] = False
        self.legal[i, points] = True
        # Without pass_always, pass joins the tree only where it can end the game or every legal
        # move fills an own eye (the playout policy's rule): it saves the simulations spent on
        # pass nodes, but the tree then cannot see that passing beats a self-atari.
        if self.pass_always or board.passes >= 1 or board.eye_mask(board.to_play)[points].all():
            self.legal[i, self.pass_action] = True
        self.legal_ready[i] = True

    def visits(self, i: int, prior_count: float) -> np.ndarray:
        """[A] MC visits of node i's actions without the prior's equivalent experience."""
        return np.maximum(self.n[i] - prior_count, 0.0)

    def reroot(self, new_root: int) -> int:
        """Keep only the subtree under `new_root`, compacted to the front; returns its index (0)."""
        keep = [new_root]
        for i in keep:  # breadth-first; the list grows while we walk it
            kids = self.child[i][self.child[i] >= 0]
            keep.extend(int(k) for k in kids)
        order = np.asarray(keep, np.int32)
        remap = np.full(self.capacity, -1, np.int32)
        remap[order] = np.arange(len(order), dtype=np.int32)
        for name in NODE_ARRAYS:
            arr = getattr(self, name)
            arr[:len(order)] = arr[order]
        k = len(order)
        self.child[:k] = np.where(self.child[:k] >= 0, remap[np.maximum(self.child[:k], 0)], -1)
        self.parent[:k] = np.where(self.parent[:k] >= 0, remap[np.maximum(self.parent[:k], 0)], -1)
        self.parent[0] = -1
        self.parent_action[0] = -1
        boards = [self.boards[i] for i in order]
        self.boards = boards + [None] * (self.capacity - k)
        self.num_nodes = k
        return 0
