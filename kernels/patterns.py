"""MoGo's 3x3 hane and cut patterns (seed 000 sec. 3.6; Gelly et al. 2006) as DATA: a table
indexed by the 3x3 neighbourhood of an empty point, built with the 8 symmetries and the colour
swap.  Used by the MoGo prior (search/priors.py) and the MoGo playout policy.

Pattern alphabet (the centre is the empty candidate point):
  X  a stone of one colour          O  a stone of the other colour
  .  empty                          ?  anything (edge included)
  x  not X (O or empty)             o  not O (X or empty)
  #  off the board
Every pattern also matches with X and O swapped, so the table does not depend on whose move it is.

Index of a neighbourhood: 8 two-bit codes (0 empty, 1 black, 2 white, 3 off-board) for the
neighbours NW, N, NE, W, E, SW, S, SE, the first in the lowest bits: 4^8 = 65,536 entries.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from gojax.kernels.geometry import BLACK, EMPTY, WHITE

OFF = 3

# Rows top to bottom; the middle of the middle row is the candidate point.
MOGO_PATTERNS: dict[str, tuple[str, str, str]] = {
    "hane_enclosing": ("XOX",
                       "...",
                       "???"),
    "hane_noncutting": ("XO.",
                        "...",
                        "?.?"),
    "hane_magari": ("XO?",
                    "X..",
                    "x.?"),
    "diagonal_attachment": (".O.",
                            "X..",
                            "..."),
    "cut_unprotected": ("XO?",
                        "O.o",
                        "?o?"),
    "cut_peeped": ("XO?",
                   "O.X",
                   "???"),
    "cut_de": ("?X?",
               "O.O",
               "ooo"),
    "cut_keima": ("OX?",
                  "o.O",
                  "???"),
    "edge_chase": ("X.?",
                   "O.?",
                   "###"),
    "edge_block_cut": ("OX?",
                       "X.O",
                       "###"),
    "edge_block_connection": ("?X?",
                              "x.O",
                              "###"),
    "edge_sagari": ("?XO",
                    "x.x",
                    "###"),
    "edge_cut": ("?OX",
                 "X.O",
                 "###"),
}

_ALLOWED = {  # pattern letter -> codes it accepts, with X = BLACK, O = WHITE
    "X": {BLACK}, "O": {WHITE}, ".": {EMPTY}, "?": {EMPTY, BLACK, WHITE, OFF},
    "x": {EMPTY, WHITE}, "o": {EMPTY, BLACK}, "#": {OFF},
}
# Neighbour order of the index: (row, col) offsets in the 3x3 grid, row 0 at the top.
_ORDER = ((0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2))


def _symmetries(rows: tuple[str, str, str]):
    grid = np.array([list(r) for r in rows])
    for k in range(4):
        g = np.rot90(grid, k)
        yield g
        yield np.fliplr(g)


def _swap(grid: np.ndarray) -> np.ndarray:
    table = str.maketrans("XOxo", "OXox")
    return np.array([[c.translate(table) for c in row] for row in grid])


@functools.cache
def pattern_table() -> np.ndarray:
    """uint8 [65536]: 1 where the neighbourhood matches a MoGo pattern (any symmetry, either colour)."""
    table = np.zeros(4 ** 8, np.uint8)
    for rows in MOGO_PATTERNS.values():
        assert rows[1][1] == ".", "the centre of a pattern is the empty candidate point"
        for sym in _symmetries(rows):
            for grid in (sym, _swap(sym)):
                choices = [sorted(_ALLOWED[grid[r][c]]) for r, c in _ORDER]
                for combo in itertools.product(*choices):
                    table[sum(code << (2 * i) for i, code in enumerate(combo))] = 1
    return table


@functools.cache
def playout_table(path: str = "") -> np.ndarray:
    """uint8 [2, 65536]: the playouts' pattern rule, row c - 1 for colour c to move: MoGo's
    patterns (both rows alike) when `path` is empty, else a table saved with np.save, such as
    the learnt one `gojax export-patterns` writes (search/shape.playout_patterns)."""
    if not path:
        return np.stack([pattern_table()] * 2)
    try:
        table = np.load(path, allow_pickle=False)
    except ValueError:  # numpy's own words would suggest loading it with pickle
        raise ValueError(f"{path}: not a playout pattern table (an .npy file as `gojax export-patterns`"
                         " writes)") from None
    if not isinstance(table, np.ndarray) or table.shape != (2, 4 ** 8) or table.dtype != np.uint8:
        raise ValueError(f"{path}: a playout pattern table is uint8 [2, {4 ** 8}], got"
                         f" {getattr(table, 'dtype', type(table).__name__)} {getattr(table, 'shape', '')}")
    return table


def neighbourhood_index(stones: np.ndarray, size: int, point: int) -> int:
    """Host: the table index of `point`'s 3x3 neighbourhood (stones int8 [P], A1 = 0).

    Rows of the pattern run top to bottom, i.e. from higher board rows to lower ones."""
    off_board = size * size
    return sum((OFF if q == off_board else int(stones[q])) << (2 * i)
               for i, q in enumerate(neighbourhood_table(size)[point].tolist()))


def matches(stones: np.ndarray, size: int, point: int, table: np.ndarray | None = None) -> bool:
    """Host: does the empty `point` match a MoGo 3x3 pattern (or one of `table`'s, uint8 [65536])?"""
    t = pattern_table() if table is None else table
    return stones[point] == EMPTY and bool(t[neighbourhood_index(stones, size, point)])


# --- learned shapes (search/shape.py): every neighbourhood, not only MoGo's ---------------------

@functools.cache
def neighbourhood_table(size: int) -> np.ndarray:
    """int32 [P, 8]: the neighbour points of each point in the index's order (NW, N, NE, W, E,
    SW, S, SE), P (one past the last point) where the neighbour is off the board."""
    out = np.full((size * size, 8), size * size, np.int32)
    for p in range(size * size):
        r, c = divmod(p, size)
        for i, (dr, dc) in enumerate(_ORDER):
            rr, cc = r + 1 - dr, c + dc - 1
            if 0 <= rr < size and 0 <= cc < size:
                out[p, i] = rr * size + cc
    return out


def neighbourhood_indices(stones: np.ndarray, size: int, mover: np.ndarray | int) -> np.ndarray:
    """Host, vectorised: the table index of every point's 3x3 neighbourhood, with the colours
    named from the mover's side (the mover's stones coded as BLACK).  stones int8 [..., P];
    mover int or int [...]; returns int32 [..., P]."""
    s = np.asarray(stones, np.int32)
    pad = np.concatenate([s, np.full(s.shape[:-1] + (1,), OFF, np.int32)], axis=-1)
    swap = np.asarray(mover) == WHITE
    pad = np.where(swap[..., None] & (pad == BLACK), WHITE, np.where(swap[..., None] & (pad == WHITE), BLACK, pad))
    codes = pad[..., neighbourhood_table(size)]  # [..., P, 8]
    return (codes << (2 * np.arange(8, dtype=np.int32))).sum(-1).astype(np.int32)


@functools.cache
def mover_classes() -> np.ndarray:
    """int32 [2, 65536]: the symmetry class of each neighbourhood index as it lies on the board
    (colours as they are), row 0 with Black to move and row 1 with White (whose stones the
    classes name as the mover's)."""
    classes, _ = symmetry_classes()
    idx = np.arange(4 ** 8, dtype=np.int64)
    digits = (idx[:, None] >> (2 * np.arange(8))) & 3
    swapped = np.where(digits == BLACK, WHITE, np.where(digits == WHITE, BLACK, digits))
    return np.stack([classes, classes[(swapped << (2 * np.arange(8))).sum(1)]]).astype(np.int32)


@functools.cache
def symmetry_classes() -> tuple[np.ndarray, int]:
    """(int32 [65536], n): the class of each neighbourhood index under the 8 symmetries of the
    square (colours kept), numbered 0..n-1.  Indices that cannot occur (an off-board code where
    the board cannot end) get classes too; they are never looked up."""
    grid = np.array([[0, 1, 2], [3, -1, 4], [5, 6, 7]])  # index position of each 3x3 cell
    perms = []
    for k in range(4):
        for g in (np.rot90(grid, k), np.fliplr(np.rot90(grid, k))):
            perms.append([int(g[r][c]) for r, c in _ORDER])  # new slot i takes old slot perm[i]
    idx = np.arange(4 ** 8, dtype=np.int64)
    digits = (idx[:, None] >> (2 * np.arange(8))) & 3  # [65536, 8]
    weights = 1 << (2 * np.arange(8))
    canon = np.min(np.stack([(digits[:, p] * weights).sum(1) for p in perms]), axis=0)
    _, classes = np.unique(canon, return_inverse=True)
    return classes.astype(np.int32), int(classes.max()) + 1


# --- 3x3 shapes with the atari status of the four orthogonal neighbours (kernels/learnt.py) ------

ATARI_BITS = (1, 3, 4, 6)  # the index slots (N, W, E, S) whose chains' atari bits follow the 16 colour bits


@functools.cache
def atari_shape_classes() -> tuple[np.ndarray, int]:
    """(int32 [2, 2^20], n): the symmetry class (8 symmetries of the square) of each 3x3 index
    extended by four bits, bit k set when the chain on orthogonal slot ATARI_BITS[k] has the
    centre as its only liberty; row 0 with Black to move, row 1 with White (whose stones the
    classes name as the mover's).  Classes are numbered 0..n-1."""
    grid = np.array([[0, 1, 2], [3, -1, 4], [5, 6, 7]])
    perms = []
    for k in range(4):
        for g in (np.rot90(grid, k), np.fliplr(np.rot90(grid, k))):
            perms.append([int(g[r][c]) for r, c in _ORDER])
    idx = np.arange(1 << 20, dtype=np.int32)
    digits = [(idx >> (2 * i)) & 3 for i in range(8)]
    stone = [(d == BLACK) | (d == WHITE) for d in digits]
    bits = {slot: ((idx >> (16 + k)) & 1) * stone[slot] for k, slot in enumerate(ATARI_BITS)}

    def code(d, perm):  # the index after the symmetry: new slot i takes old slot perm[i]
        out = sum(d[perm[i]] << (2 * i) for i in range(8))
        return out + sum(bits[perm[slot]] << (16 + k) for k, slot in enumerate(ATARI_BITS))
    canon = code(digits, perms[0])
    for perm in perms[1:]:
        canon = np.minimum(canon, code(digits, perm))
    _, classes = np.unique(canon, return_inverse=True)
    swapped = [np.where(d == BLACK, WHITE, np.where(d == WHITE, BLACK, d)) for d in digits]
    swap_idx = code(swapped, list(range(8)))
    return np.stack([classes, classes[swap_idx]]).astype(np.int32), int(classes.max()) + 1
