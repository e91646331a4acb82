"""Board geometry and GTP coordinates, shared by the host twin and the device kernels.

Two index spaces:
  * point  p = row * N + col, row 0 at the bottom (GTP row 1), so A1 = 0.  Used in every
    public array (ownership, AMAF tables, legal masks): shape [P] with P = N * N.
  * cell   c = (row + 1) * W + (col + 1) with W = N + 2: the device layout, a one-cell border
    around the board so that the four neighbours of every point are the cells c +- 1, c +- W
    and whole-board neighbour passes are contiguous slices (no gathers, no bounds checks).
    M = W * W cells.  Cell 0 (a border corner) doubles as "no point" (no ko, pass).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # GTP skips the letter I
EMPTY, BLACK, WHITE, BORDER = 0, 1, 2, 3  # a cell's colour (int8)
PASS_CELL = 0  # the device's cell for pass and "no point" (no ko, no last move): a border corner
PASS_POINT = -1  # pass in point-indexed move records (histories, PlayoutResult.first_move)
NO_MOVE = -2  # no move in those records: the playout had already ended
MIN_SIZE, MAX_SIZE = 2, 19


class CoordinateError(ValueError):
    """A vertex string that is not a point of the board."""


def opponent(color: int) -> int:
    return 3 - color


@dataclasses.dataclass(frozen=True)
class Geometry:
    """Static facts about an N x N board (hashable: usable as a jit static argument)."""

    size: int

    def __post_init__(self):
        if not MIN_SIZE <= self.size <= MAX_SIZE:
            raise ValueError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, got {self.size}")

    @property
    def num_points(self) -> int:  # P
        return self.size * self.size

    @property
    def width(self) -> int:  # W: padded row length
        return self.size + 2

    @property
    def num_cells(self) -> int:  # M
        return self.width * self.width

    @property
    def move_cap(self) -> int:
        """Playout move cap, about 3 N^2 (SPEC.md)."""
        return 3 * self.num_points

    # --- index maps (numpy, cached per size) -------------------------------------------------
    @functools.cached_property
    def point_to_cell(self) -> np.ndarray:  # [P] int32
        rows, cols = np.divmod(np.arange(self.num_points), self.size)
        return ((rows + 1) * self.width + cols + 1).astype(np.int32)

    @functools.cached_property
    def cell_to_point(self) -> np.ndarray:  # [M] int32, PASS_POINT on the border (PASS_CELL included)
        out = np.full(self.num_cells, PASS_POINT, np.int32)
        out[self.point_to_cell] = np.arange(self.num_points, dtype=np.int32)
        return out

    def _around(self, offsets) -> tuple[tuple[int, ...], ...]:
        n = self.size
        out = []
        for p in range(n * n):
            r, c = divmod(p, n)
            out.append(tuple((r + dr) * n + c + dc for dr, dc in offsets if 0 <= r + dr < n and 0 <= c + dc < n))
        return tuple(out)

    @functools.cached_property
    def neighbors(self) -> tuple[tuple[int, ...], ...]:
        """Orthogonal neighbour points of each point (host twin)."""
        return self._around(((-1, 0), (1, 0), (0, -1), (0, 1)))

    @functools.cached_property
    def diagonals(self) -> tuple[tuple[int, ...], ...]:
        return self._around(((-1, -1), (-1, 1), (1, -1), (1, 1)))

    @functools.cached_property
    def neighbor_table(self) -> np.ndarray:
        """[P, 4] int32 orthogonal neighbours, P (a sentinel "off-board" index) where missing."""
        return _pad_table(self.neighbors, self.num_points)

    @functools.cached_property
    def diagonal_table(self) -> np.ndarray:
        """[P, 4] int32 diagonal neighbours, P where missing."""
        return _pad_table(self.diagonals, self.num_points)

    # --- GTP coordinates ---------------------------------------------------------------------
    def to_gtp(self, point: int | None) -> str:
        """Point index -> 'D4'; None -> 'pass'."""
        if point is None:
            return "pass"
        r, c = divmod(int(point), self.size)
        return f"{GTP_COLUMNS[c]}{r + 1}"

    def from_gtp(self, vertex: str) -> int | None:
        """'D4' / 'd4' -> point index; 'pass' -> None.  Raises CoordinateError."""
        v = vertex.strip().upper()
        if v == "PASS":
            return None
        if len(v) < 2 or v[0] not in GTP_COLUMNS or not v[1:].isdigit():
            raise CoordinateError(f"invalid vertex {vertex!r}")
        col = GTP_COLUMNS.index(v[0])
        row = int(v[1:]) - 1
        if not (0 <= col < self.size and 0 <= row < self.size):
            raise CoordinateError(f"vertex {vertex!r} is off a {self.size}x{self.size} board")
        return row * self.size + col


def _pad_table(rows, sentinel: int) -> np.ndarray:
    out = np.full((len(rows), 4), sentinel, np.int32)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out
