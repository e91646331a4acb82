"""The search tree: per-node arrays of child statistics, preallocated under a node budget.

Node i, action a (a point 0..P-1, or P for pass), all float32 from BLACK's point of view:
  n[i, a], w[i, a]    MC visits N(s,a) and win sum (Q = w / n), prior counts included (eq. 48-52)
  na[i, a], wa[i, a]  AMAF N~(s,a) and win sum (Q~ = wa / na)
  prior[i, a]         heuristic H(s,a) from the mover's view (for display)
  legal[i, a]         bool: legal under positional superko
  plain[i, a]         bool: legal and known to capture nothing (from the device's masks; False
                      where the host filled legal[i]): the descent's new board then skips the
                      capture test (Board.after)
  value[i, a]         the tree policy's value of the action for the mover, plus the search's
                      tie-breaking jitter: a cache that search/select.py keeps up to date, so
                      that a descent step is one argmax
  child[i, a]         int32 node index, -1 when not expanded
  legal_ready[i]      bool: legal[i] is filled (lazily: see Tree.ensure_legal)
  node_n[i]           N(s) = sum of N(s,a) (eq. 50), used by the schedules and UCT
  sims[i], wins[i]    simulations through the node and Black's wins in them (no priors)
  score[i]            the sum of those playouts' final scores (Black's area - White's - komi)
  over[i]             bool: the node's position ends the game (two passes): descents stop there
  pos[i]              int32 [C + 6]: the node's position as the device reads it
                      (kernels/state.packed_fields); a descent makes a plain move's row from its
                      parent's (packed_after_plain) and sends the leaves' rows to the device
  stones[i], peak[i]  the stones on the board, and the most in any position of its game so far
  emptied[i]          bool: a capture has emptied a point in its game (Board.emptied is not empty)
  anchor[i]           the nearest node on its path (itself included) that holds a host board
                      since it was made: plain moves since then keep that board's emptied points
  (the last four tell a superko test where it is needed without a host board: NodeBoards)
Bytes per node: 30 * (P + 1) + 37 + 4 * (C + 6) (9x9 3,005 B, 19x19 12,685 B), plus the host
board a node keeps once something asks for it (about 1-2 KB; `NodeBoards`).
"""

from __future__ import annotations

import mmap

import numpy as np

from gojax.kernels.geometry import Geometry
from gojax.kernels.host import Board
from gojax.kernels.state import packed_fields

NODE_ARRAYS = ("n", "w", "na", "wa", "prior", "value", "legal", "plain", "child", "node_n", "sims", "wins", "score", "to_play",
               "parent", "parent_action", "initialised", "legal_ready", "over", "pos", "stones", "peak", "emptied",
               "anchor")  # every per-node array, indexed [node, ...]


def _zeros(shape: tuple, dtype) -> np.ndarray:
    """np.zeros on an anonymous mapping in small pages: numpy asks for transparent huge pages on
    large arrays, and then the first node of each tree commits (and zeroes) 2 MB per array."""
    count = int(np.prod(shape))
    block = mmap.mmap(-1, max(count * np.dtype(dtype).itemsize, 1))
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        block.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(block, dtype, count=count).reshape(shape)


def _allocate(rows: int, num_actions: int) -> dict[str, np.ndarray]:
    """Statistics for `rows` nodes (NODE_ARRAYS), all zero: `Tree.add` sets every array of a
    row when the row becomes a node, so the operating system commits memory only for the pages
    of rows in use (zeroed pages are mapped on first touch)."""
    shape = (rows, num_actions)
    cells = Geometry(int(round((num_actions - 1) ** 0.5))).num_cells
    return {
        "n": _zeros(shape, np.float32), "w": _zeros(shape, np.float32),
        "na": _zeros(shape, np.float32), "wa": _zeros(shape, np.float32),
        "prior": _zeros(shape, np.float32), "value": _zeros(shape, np.float32),
        "legal": _zeros(shape, bool), "plain": _zeros(shape, bool), "child": _zeros(shape, np.int32),
        "node_n": _zeros(rows, np.float32), "sims": _zeros(rows, np.float32),
        "wins": _zeros(rows, np.float32), "score": _zeros(rows, np.float32),
        "to_play": _zeros(rows, np.int8),
        # heuristic prior added (at its first backup, or first descent)
        "initialised": _zeros(rows, bool),
        # legal[i] filled: at the node's first backup (from the device's masks for the leaf
        # position) or, if a descent reaches it before that, from the host board.
        "legal_ready": _zeros(rows, bool),
        "over": _zeros(rows, bool),
        "parent": _zeros(rows, np.int32), "parent_action": _zeros(rows, np.int32),
        "pos": _zeros((rows, cells + 6), np.int32),
        "stones": _zeros(rows, np.int16), "peak": _zeros(rows, np.int16), "emptied": _zeros(rows, bool),
        "anchor": _zeros(rows, np.int32),
    }


class Tree:
    """One search tree.  Its arrays are its own, or rows [offset, offset + capacity) of a
    `TreeStack`'s (a forest's trees side by side, so that a round's backups are one set of
    array operations for all of them).  Node indices (child, parent, a search's paths) are the
    tree's own; `offset` turns them into the stack's."""

    def __init__(self, size: int, capacity: int, pass_always: bool = True, stack: TreeStack | None = None,
                 slot: int = 0):
        """pass_always: pass is a legal tree action at every node (SearchParams.pass_in_tree)."""
        self.size = size
        self.geometry = Geometry(size)
        self.num_actions = size * size + 1  # A
        self.pass_action = size * size
        self.capacity = capacity
        if stack is None:
            arrays, self.offset = _allocate(capacity, self.num_actions), 0
        else:
            self.offset = slot * capacity
            arrays = {name: getattr(stack, name)[self.offset: self.offset + capacity] for name in NODE_ARRAYS}
        for name, arr in arrays.items():
            setattr(self, name, arr)
        # float32 [A]: the search's tie-breaking jitter, added to every value row (search/select.py);
        # in a stack, row `slot` of the stack's, so that a round's refresh reads all trees' at once.
        self.jitter = np.zeros(self.num_actions, np.float32) if stack is None else stack.jitter[slot]
        self.stack = stack
        self.boards = NodeBoards(self, capacity)
        self.num_nodes = 0
        self.pass_always = pass_always

    @property
    def full(self) -> bool:
        return self.num_nodes >= self.capacity

    def jitter_of(self, rows: np.ndarray) -> np.ndarray:
        """What to add to the value rows of `rows`: float32 [A], the one tree's jitter (it
        broadcasts; TreeStack.jitter_of gives a row per node)."""
        return self.jitter

    def jitter_at(self, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """float32 [len(rows)]: the jitter of each (row, action) pair."""
        return self.jitter[actions]

    def bytes_per_node(self) -> int:
        return sum(getattr(self, name).nbytes for name in NODE_ARRAYS) // self.capacity

    def add(self, board: Board, parent: int, action: int, lazy: bool = False) -> int:
        """A new node for `board` (statistics zero).  Caller checks `full`.  With `lazy` the
        legal mask is left for `set_legal` / `ensure_legal`: most leaves get it from the device."""
        i = self.reserve(board)
        start_rows(self, i, board.game_over, board.to_play, parent, action, i)
        self.hold(i, board)
        if not lazy:
            self.ensure_legal(i)
        return i

    def reserve(self, board: Board | None) -> int:
        """The next free node, holding `board` (None: a plain move's, made on first use from its
        parent's: `NodeBoards`); `start_rows` then sets its statistics and the caller its `pos`."""
        i = self.num_nodes
        self.num_nodes += 1
        self.boards[i] = board
        return i

    def hold(self, i: int, board: Board, row: np.ndarray | None = None) -> None:
        """Node i's position is `board` (its host board from now on): its packed row (`row`
        where the caller has it) and what a superko test asks of it."""
        self.boards[i] = board
        self.pos[i] = packed_fields([board])[0] if row is None else row
        self.stones[i] = np.count_nonzero(board.stones)
        self.peak[i] = board.peak_stones
        self.emptied[i] = bool(board.emptied)
        self.anchor[i] = i

    def ensure_legal(self, i: int) -> None:
        """Fill node i's legal mask from its host board, unless already filled."""
        if not self.legal_ready[i]:
            self.set_legal(i, self.boards[i].legal_points())

    def set_legal(self, i: int, points: list[int]) -> None:
        mask = np.zeros((1, self.pass_action), bool)
        mask[0, points] = True
        set_legal_rows(self, np.array([i]), lambda _: self.boards[i], mask, self.pass_always)

    def visits(self, i: int, prior_count) -> np.ndarray:
        """[A] MC visits of node i's actions without the prior's simulations (a number, or [A]: priors.experience)."""
        return np.maximum(self.n[i] - prior_count, 0.0)

    def reroot(self, new_root: int) -> int:
        """Keep only the subtree under `new_root`, compacted to the front; returns its index (0)."""
        root_board = self.boards[new_root]  # made while its path is still in the tree
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
        # An anchor above the new root: plain moves lead from it to the root, whose board keeps its emptied points.
        self.anchor[:k] = np.maximum(remap[self.anchor[:k]], 0)
        self.boards.keep(order)
        self.hold(0, root_board)
        self.truncate(k)
        return 0

    def truncate(self, k: int) -> None:
        """Keep nodes 0 .. k-1: the rows after them go back to zero (what `start_rows` expects of
        a new node's row) and their boards are let go."""
        for name in NODE_ARRAYS:
            getattr(self, name)[k:self.num_nodes] = 0
        self.boards[k:self.num_nodes] = [None] * max(self.num_nodes - k, 0)
        self.num_nodes = k


def plain_rows(store, rows, parents, added=1) -> None:
    """The superko fields (stones, peak, emptied, anchor) of new store `rows`, each made by a
    plain move (`added` 1) or a pass (0) from store node `parents` (same length; or ints):
    `added` stones more, the parent's emptied points and anchor."""
    stones = store.stones[parents] + added
    store.stones[rows] = stones
    store.peak[rows] = np.maximum(store.peak[parents], stones)
    store.emptied[rows] = store.emptied[parents]
    store.anchor[rows] = store.anchor[parents]


def start_rows(store, rows, over, to_play, parent, action, own, offset=0) -> None:
    """Rows `rows` of a Tree's or TreeStack's arrays become new nodes with zero statistics: node
    `own` (its tree's index) is the child by `action` of its tree's node `parent` (-1 for a
    root), its position over (two passes) or not, `to_play` to move; `offset` turns a tree's
    indices into the store's.  All of them are ints or bools (one node: scalar writes, the lone
    search's path) or arrays of one length (a round's new nodes in several trees).  The rows
    are zero (fresh, or let go by `Tree.truncate`): only what is not zero is written; the
    caller writes `pos`."""
    store.prior[rows] = 0.5
    store.value[rows] = -np.inf
    store.child[rows] = -1
    one = isinstance(rows, int)
    store.over[rows] = over
    store.to_play[rows] = to_play
    store.parent[rows] = parent
    store.parent_action[rows] = action
    if one:
        if parent >= 0:
            store.child[parent + offset, action] = own
    else:
        has = parent >= 0
        store.child[(parent + offset)[has], action[has]] = own[has]


def may_repeat(store, nodes: np.ndarray, taking: list[list[int]]) -> list[int]:
    """Which of store `nodes` (positions `i` of it) can have a legal move that repeats an
    earlier position (positional superko): `board.emptied and (a capture at an emptied point or
    not board.plain_moves_are_new())`, asked of the tree's arrays and the anchor's board, so that
    no host board is made for the rest (`taking[i]`: node i's legal capturing points)."""
    nodes = np.asarray(nodes, np.int64)
    out = []
    for i in np.flatnonzero(store.emptied[nodes]).tolist():
        node = int(nodes[i])
        if store.stones[node] + 1 <= store.peak[node]:  # a plain move can match an earlier count
            out.append(i)
        elif taking[i]:
            emptied = store.boards[int(store.anchor[node]) + node - node % store.capacity].emptied
            if any(p in emptied for p in taking[i]):
                out.append(i)
    return out


def set_legal_rows(store, rows: np.ndarray, board_of, points: np.ndarray, pass_always: bool) -> None:
    """Fill the legal masks of store rows `rows` from `points`, bool [len(rows), P]: the legal
    points of each (board_of(k): the host board of rows[k], asked for only without pass_always).
    Without pass_always, pass joins the tree only where it can end the game or every legal move
    fills an own eye (the playout policy's rule): it saves the simulations spent on pass nodes,
    but the tree then cannot see that passing beats a self-atari."""
    store.legal[rows, :store.pass_action] = points
    if pass_always:
        store.legal[rows, store.pass_action] = True
    else:
        boards = [board_of(k) for k in range(len(rows))]
        store.legal[rows, store.pass_action] = [b.passes >= 1 or b.eye_mask(b.to_play)[m].all()
                                                for b, m in zip(boards, points)]
    store.legal_ready[rows] = True


class TreeStack:
    """The node arrays of `count` trees of one size and capacity in one block: tree g owns rows
    g * capacity .. (g + 1) * capacity - 1.  Functions that take a tree and node indices
    (search/backup.py, search/priors.py, search/select.py) take a stack and stack indices alike,
    so one call serves every tree of a forest."""

    def __init__(self, size: int, capacity: int, count: int, pass_always: bool = True):
        self.size = size
        self.num_actions = size * size + 1
        self.pass_action = size * size
        self.capacity = capacity
        for name, arr in _allocate(capacity * count, self.num_actions).items():
            setattr(self, name, arr)
        self.jitter = np.zeros((count, self.num_actions), np.float32)  # tree g's is row g (Tree.jitter)
        self.trees = [Tree(size, capacity, pass_always, self, g) for g in range(count)]
        self.boards = _StackBoards(self)
        self._keys: dict = {}

    def jitter_of(self, rows: np.ndarray) -> np.ndarray:
        """float32 [len(rows), A]: the jitter of the tree that owns each of `rows`."""
        return self.jitter[np.asarray(rows) // self.capacity]

    def jitter_at(self, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """float32 [len(rows)]: the jitter of each (row, action) pair, by the row's tree."""
        return self.jitter[np.asarray(rows) // self.capacity, actions]

    def intern(self, key):
        """The one object equal to `key` among those asked for: its users compare keys by identity."""
        return self._keys.setdefault(key, key)


class NodeBoards:
    """tree.boards[i]: the host Board of node i.  A node that a descent made by a plain move
    (Tree.plain: legal, captures nothing) or a pass holds none until something asks (a superko test, a
    ladder, GTP): then it is made from its parent's (Board.after(plain=True)) and kept.  The
    search itself reads positions as the tree's packed rows (Tree.pos): most nodes never need one."""

    __slots__ = ("_tree", "_list")

    def __init__(self, tree: Tree, capacity: int):
        self._tree = tree
        self._list: list[Board | None] = [None] * capacity

    def __len__(self) -> int:
        return len(self._list)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._list)))]
        board = self._list[i]
        if board is None and 0 <= i < self._tree.num_nodes:
            board = self._made(i)
        return board

    def __setitem__(self, i, value) -> None:
        self._list[i] = value

    def held(self, i: int) -> Board | None:
        """Node i's board if it has one now (none made)."""
        return self._list[i]

    def _made(self, i: int) -> Board:
        """Node i's board from its nearest ancestor that has one, by the plain moves between."""
        tree, lst, todo = self._tree, self._list, []
        while lst[i] is None:
            todo.append(i)
            i = int(tree.parent[i])
            if i < 0:
                raise ValueError("a node with no board and no parent")
        board, pass_action = lst[i], tree.pass_action
        for j in reversed(todo):
            a = int(tree.parent_action[j])
            board = lst[j] = board.after(None) if a == pass_action else board.after(a, plain=True)
        return board

    def keep(self, order: np.ndarray) -> None:
        """Tree.reroot: the boards of nodes `order` become those of 0 .. len(order) - 1 (the new
        root's is then set by `Tree.hold`: its parent goes)."""
        kept = [self._list[i] for i in order.tolist()]
        self._list = kept + [None] * (len(self._list) - len(kept))


class _StackBoards:
    """stack.boards[i]: the host board of stack node i (each tree keeps its own `NodeBoards`)."""

    def __init__(self, stack: TreeStack):
        self._stack = stack

    def __getitem__(self, i) -> Board | None:
        g, node = divmod(int(i), self._stack.capacity)
        return self._stack.trees[g].boards[node]
