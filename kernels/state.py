"""The device board: a frozen pytree of fixed-shape arrays, and conversion from the host twin.

Shapes (one board; batched functions add a leading B):
  M = (N + 2)^2 cells of the padded layout (kernels/geometry.py), P = N^2 points.

Bytes per board: M (colour) + 2M (chain) + 2M (libs) + 18 bytes of scalars; 9x9: 121 + 242 + 242 + 18
= 623 bytes, 19x19: 2,223 bytes.  A playout adds an int8 [M] AMAF record and a move counter.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels.geometry import BORDER, Geometry
from gojax.kernels.host import Board


@chex.dataclass(frozen=True)
class BoardState:
    color: chex.Array  # int8  [M]  0 empty, 1 black, 2 white, 3 border
    chain: chex.Array  # int16 [M]  chain id = one cell of the chain (its "root"); own index off stones
    libs: chex.Array  # int16 [M]  pseudo-liberties of the chain through this cell (0 off stones):
    #                               the number of (stone, empty neighbour) pairs of the chain.  It is
    #                               0 exactly when the chain has no liberty, and a chain next to
    #                               point q has a liberty other than q exactly when libs exceeds the
    #                               number of its stones adjacent to q (kernels/rules.py uses both).
    ko: chex.Array  # int32 []  cell that `to_play` may not take back by simple ko; 0 = none
    to_play: chex.Array  # int8 []  1 black, 2 white
    passes: chex.Array  # int8 []  consecutive passes
    komi: chex.Array  # float32 []
    last: chex.Array  # int32 []  cell of the last move, 0 = pass or none (the MoGo policy answers it)
    prev: chex.Array  # int32 []  cell of the move before it, 0 = pass or none (CMC: the mover's own last)


def geometry_of(state: BoardState) -> Geometry:
    """The board geometry from the (static) shape of a single or batched state."""
    m = state.color.shape[-1]
    return Geometry(int(round(m ** 0.5)) - 2)


def host_arrays(board: Board) -> dict[str, np.ndarray]:
    """One host board -> the numpy fields of its device state (chains from its cached labelling)."""
    g = board.geometry
    color = np.full(g.num_cells, BORDER, np.int8)
    color[g.point_to_cell] = board.stones
    chain = np.arange(g.num_cells, dtype=np.int16)
    libs = np.zeros(g.num_cells, np.int16)
    ko = 0 if board.ko is None else int(g.point_to_cell[board.ko])

    def cell_of(back: int) -> np.int32:
        if len(board.moves) < back or board.moves[-back][1] is None:
            return np.int32(0)
        return np.int32(g.point_to_cell[board.moves[-back][1]])

    stones, root, _ = board.chain_arrays()
    pts = np.flatnonzero(board.stones)
    r = root[pts]
    empty_nbrs = (stones[g.neighbor_table[pts]] == 0).sum(1)
    pseudo = np.bincount(r, weights=empty_nbrs, minlength=g.num_points)  # per root point
    chain[g.point_to_cell[pts]] = g.point_to_cell[r]
    libs[g.point_to_cell[pts]] = pseudo[r]
    return dict(color=color, chain=chain, libs=libs, ko=np.int32(ko), to_play=np.int8(board.to_play),
                passes=np.int8(min(board.passes, 2)), komi=np.float32(board.komi), last=cell_of(1),
                prev=cell_of(2))


def from_host(board: Board) -> BoardState:
    """One host board -> device state."""
    return BoardState(**{k: jnp.asarray(v) for k, v in host_arrays(board).items()})


def batch_from_host(boards: list[Board], chains: bool = True) -> BoardState:
    """Host boards -> one batched device state [B] (one host->device copy per field).  With
    chains=False the chain fields are placeholders: pass the result through `rules.with_chains`."""
    if not chains:
        return jax.tree_util.tree_map(jnp.asarray, numpy_batch(boards))
    arrays = [host_arrays(b) for b in boards]
    return BoardState(**{k: jnp.asarray(np.stack([a[k] for a in arrays])) for k in arrays[0]})


def numpy_batch(boards: list[Board]) -> BoardState:
    """Host boards -> a batched state of NUMPY arrays with placeholder chains (chain = own
    index, libs = 0) for `rules.with_chains`.  Vectorised over the batch; a jitted function
    takes it as it is and copies it to the device in one transfer, which the search relies on
    (one `jnp.asarray` per field costs more than the rest of the conversion)."""
    f = numpy_fields(boards)
    chain = np.broadcast_to(np.arange(f["color"].shape[-1], dtype=np.int16), f["color"].shape)
    return BoardState(chain=chain, libs=np.zeros(f["color"].shape, np.int16), **f)


def numpy_fields(boards: list[Board]) -> dict[str, np.ndarray]:
    """`numpy_batch` less the chain fields, as a plain dict: what a jitted function that builds
    the state itself (`with_placeholder_chains`) takes, without a dataclass to build and flatten
    on the host.  `packed_fields` read back (`unpack_fields`)."""
    return unpack_fields(packed_fields(boards))


# The columns after the cells in `packed_fields`' rows.
_PACKED = ("ko", "to_play", "passes", "komi", "last", "prev")


def packed_fields(boards: list[Board]) -> np.ndarray:
    """The leaf fields as ONE int32 array [B, C + 6]: each board's cells, then ko, to_play,
    passes, komi (float32 bits) and the last two moves' cells.  A jitted call copies each input
    array to the device on its own, at a fixed cost per array that the search pays per round
    and per same-round verdict call; `unpack_fields` undoes it inside jit."""
    g = boards[0].geometry
    n, c = len(boards), g.num_cells
    out = np.empty((n, c + len(_PACKED)), np.int32)
    out[:, :c] = BORDER
    out[:, g.point_to_cell] = np.stack([b.stones for b in boards])
    cells = g.point_to_cell.tolist()

    def cell(p):
        return 0 if p is None else cells[p]
    out[:, c:] = [(cell(b.ko), b.to_play, min(b.passes, 2), 0, cell(b.moves[-1][1]) if b.moves else 0,
                   cell(b.moves[-2][1]) if len(b.moves) > 1 else 0) for b in boards]
    out[:, c + 3] = np.array([b.komi for b in boards], np.float32).view(np.int32)
    return out


def packed_size(packed: np.ndarray) -> int:
    """The board size N of `packed_fields`' rows [..., (N + 2)^2 + 6]."""
    return int(round((packed.shape[-1] - len(_PACKED)) ** 0.5)) - 2


def packed_komi(packed: np.ndarray) -> float:
    """The komi of the first of `packed_fields`' rows [B, C + 6]."""
    return float(packed[0, -len(_PACKED) + _PACKED.index("komi")].view(np.float32))


def as_packed(boards) -> np.ndarray:
    """`packed_fields` of a list of host boards; rows already packed (int32 [B, C + 6]) as they are."""
    return boards if isinstance(boards, np.ndarray) else packed_fields(boards)


def packed_after_plain(parents: np.ndarray, points: np.ndarray, geometry: Geometry) -> np.ndarray:
    """`packed_fields`' rows of the positions after the side to move of each of `parents` (int32
    [B, C + 6]) plays at `points` (int [B]) a plain move: legal and capturing nothing, which the
    search knows from the device's masks (Tree.plain).  The stone goes down, no ko, no passes,
    the other side to move, and the last move becomes the one before it: what
    `packed_fields(Board.after(p, plain=True))` gives, with no host board made."""
    c = geometry.num_cells
    ko, to_play, passes, _, last, prev = range(c, c + len(_PACKED))
    out = parents.copy()
    n = np.arange(len(out))
    cells = geometry.point_to_cell[np.asarray(points, np.int64)]
    out[n, cells] = parents[:, to_play]
    out[:, to_play] = 3 - parents[:, to_play]
    out[:, ko] = 0
    out[:, passes] = 0
    out[:, prev] = parents[:, last]
    out[:, last] = cells
    return out


def packed_after_pass(parents: np.ndarray) -> np.ndarray:
    """`packed_fields`' rows of the positions after the side to move of each of `parents` (int32
    [B, C + 6]) passes: what `packed_fields(Board.after(None))` gives, with no host board made."""
    c = parents.shape[-1] - len(_PACKED)
    ko, to_play, passes, _, last, prev = range(c, c + len(_PACKED))
    out = parents.copy()
    out[:, to_play] = 3 - parents[:, to_play]
    out[:, ko] = 0
    out[:, passes] = np.minimum(parents[:, passes] + 1, 2)
    out[:, prev] = parents[:, last]
    out[:, last] = 0
    return out


def unpack_fields(packed) -> dict:
    """`packed_fields`' rows as the dict `numpy_fields` gives: numpy on the host, or a jax
    array inside jit (array methods only, so either works)."""
    c = packed.shape[-1] - len(_PACKED)
    col = {name: packed[:, c + i] for i, name in enumerate(_PACKED)}
    return dict(color=packed[:, :c].astype(np.int8), ko=col["ko"], to_play=col["to_play"].astype(np.int8),
                passes=col["passes"].astype(np.int8), komi=col["komi"].view(np.float32), last=col["last"],
                prev=col["prev"])


def with_placeholder_chains(fields: dict) -> BoardState:
    """Inside jit: the batched state of `numpy_fields` with placeholder chains (for
    `rules.with_chains`)."""
    color = fields["color"]
    chain = jnp.broadcast_to(jnp.arange(color.shape[-1], dtype=jnp.int16), color.shape)
    return BoardState(chain=chain, libs=jnp.zeros(color.shape, jnp.int16), **fields)


def stack(states: list[BoardState]) -> BoardState:
    """A list of single-board states -> one batched state [B, ...]."""
    return BoardState(**{k: jnp.stack([getattr(s, k) for s in states]) for k in BoardState.__dataclass_fields__})
