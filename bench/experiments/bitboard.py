"""The second board layout of the foundation issue, measured against the per-point layout of
kernels/state.py: bitboards.  Uniform playouts only; the search does not use it (see
bench/layouts.py for the comparison and bench/results/layouts.md for the figures).

Layout, one board (vmapped over the batch):
  black, white  uint32 [W]  one bit per point, rows of N + 1 bits (bit r * (N + 1) + c; column N
                            is a guard that stays 0, so a shift by one never wraps a row);
                            W = ceil(N (N + 1) / 32): 3 words for 9x9, 12 for 19x19
  to_play       int32       1 Black, 2 White
  ko            int32       the bit the side to move may not play, -1 for none
  passes        int32       consecutive passes
That is 2 * 4 * W + 12 bytes: 36 B per 9x9 board (the per-point layout: 625 B).

Neighbours are four multi-word shifts.  There are no chain ids: a move's captures come from ONE
flood fill over all the opponent's stones at once (the stones connected to a liberty live; the
rest are captured), and suicide from one more over the mover's stones.  A flood fill repeats
"dilate within the stones" until nothing changes, so its cost is the longest distance from a
liberty inside a chain: data-dependent, a while loop that the whole batch runs as long as its
slowest board.  Legality of every point at once would need per-chain liberty counts, which
bitboards do not keep; so a playout draws among the empty non-eye points and checks only the
point it drew.  A suicide is struck out and the same player draws again on the next trip of the
one flat playout loop (a retry loop nested inside each move measured 3.7x slower on the CPU:
under vmap every nested while loop runs as long as its slowest board).
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels.geometry import BLACK


@chex.dataclass(frozen=True)
class BitBoards:
    black: chex.Array  # uint32 [B, W]
    white: chex.Array  # uint32 [B, W]
    to_play: chex.Array  # int32 [B]
    ko: chex.Array  # int32 [B], -1 none
    passes: chex.Array  # int32 [B]


class Layout:
    """Static facts for one board size: word count, on-board mask, bit <-> point maps."""

    def __init__(self, size: int):
        self.size = size
        self.row = size + 1  # bits per row, guard column included
        self.bits = size * self.row
        self.words = -(-self.bits // 32)
        on = np.zeros(self.words * 32, bool)
        rows, cols = np.divmod(np.arange(self.bits), self.row)
        on[:self.bits] = cols < size
        self.onboard_bits = on
        self.point_to_bit = (np.arange(size * size) // size) * self.row + np.arange(size * size) % size
        self.bit_to_point = np.full(self.words * 32, -1, np.int32)
        self.bit_to_point[self.point_to_bit] = np.arange(size * size)

    def pack(self, mask: np.ndarray) -> np.ndarray:
        """bool [W * 32] -> uint32 [W]."""
        m = mask.reshape(self.words, 32).astype(np.uint64)
        return (m << np.arange(32, dtype=np.uint64)).sum(1).astype(np.uint32)

    @functools.cached_property
    def onboard(self) -> np.ndarray:
        return self.pack(self.onboard_bits)


def _shl(x: jax.Array, s: int, fill: jax.Array) -> jax.Array:
    """Bit i of the result is bit i - s of x (bits below s come from `fill`'s top word)."""
    prev = jnp.concatenate([fill[None], x[:-1]])
    return (x << s) | (prev >> (32 - s))


def _shr(x: jax.Array, s: int, fill: jax.Array) -> jax.Array:
    """Bit i of the result is bit i + s of x (bits past the end come from `fill`)."""
    nxt = jnp.concatenate([x[1:], fill[None]])
    return (x >> s) | (nxt << (32 - s))


def _neighbours(x: jax.Array, row: int, onboard: jax.Array) -> jax.Array:
    """Points with at least one neighbour in x (x: uint32 [W], guard bits 0)."""
    zero = jnp.uint32(0)
    out = _shl(x, 1, zero) | _shr(x, 1, zero) | _shl(x, row, zero) | _shr(x, row, zero)
    return out & onboard


def _flood(seed: jax.Array, within: jax.Array, row: int, onboard: jax.Array) -> jax.Array:
    """The part of `within` connected to `seed` (seed within `within`)."""
    def body(c):  # (unrolling three dilations per convergence test measured slower on the CPU)
        g, _ = c
        grown = (g | _neighbours(g, row, onboard)) & within
        return grown, jnp.any(grown != g)
    g, _ = jax.lax.while_loop(lambda c: c[1], body, (seed, jnp.bool_(True)))
    return g


def _eyes(own: jax.Array, opp: jax.Array, row: int, onboard: jax.Array) -> jax.Array:
    """SPEC eyes of the owner of `own`: empty, every neighbour own or off the board, and at most
    one opponent diagonal (none on the edge)."""
    ones = jnp.uint32(0xFFFFFFFF)
    wall = own | ~onboard  # own stone or off the board (guard column and past the end)
    sur = (_shl(wall, 1, ones) & _shr(wall, 1, ones) & _shl(wall, row, ones) & _shr(wall, row, ones))
    off = ~onboard
    edge = _shl(off, 1, ones) | _shr(off, 1, ones) | _shl(off, row, ones) | _shr(off, row, ones)
    zero = jnp.uint32(0)
    diag = [_shl(_shl(opp, row, zero), 1, zero), _shl(_shr(opp, row, zero), 1, zero),
            _shr(_shl(opp, row, zero), 1, zero), _shr(_shr(opp, row, zero), 1, zero)]
    any1 = diag[0] | diag[1] | diag[2] | diag[3]
    two = zero
    for i in range(4):
        for j in range(i + 1, 4):
            two = two | (diag[i] & diag[j])
    empty = onboard & ~(own | opp)
    return empty & sur & ~two & ~(edge & any1)


def _bit(index: jax.Array, words: int) -> jax.Array:
    """uint32 [W] with only bit `index` set (none for index < 0)."""
    w = jnp.arange(words)
    return jnp.where((w == index // 32) & (index >= 0), jnp.uint32(1) << (index % 32).astype(jnp.uint32),
                     jnp.uint32(0))


def _lowest_bit(x: jax.Array) -> jax.Array:
    """Index of the lowest set bit of x (uint32 [W]), or a large number if none."""
    low = x & (~x + jnp.uint32(1))
    ctz = jax.lax.population_count(low - jnp.uint32(1)).astype(jnp.int32)
    idx = jnp.where(x != 0, jnp.arange(x.shape[0]) * 32 + ctz, 1 << 30)
    return idx.min()


def _play(black, white, to_play, point_bit, lay: Layout):
    """One board: the mover plays bit `point_bit` (>= 0).  Returns (black, white, ko, legal);
    when not legal (suicide) the stones come back unchanged."""
    onboard = jnp.asarray(lay.onboard)
    own = jnp.where(to_play == BLACK, black, white)
    opp = jnp.where(to_play == BLACK, white, black)
    stone = _bit(point_bit, lay.words)
    own2 = own | stone
    empty = onboard & ~(own2 | opp)
    opp2 = _flood(opp & _neighbours(empty, lay.row, onboard), opp, lay.row, onboard)
    captured = opp & ~opp2
    empty2 = onboard & ~(own2 | opp2)
    alive = _flood(own2 & _neighbours(empty2, lay.row, onboard), own2, lay.row, onboard)
    legal = jnp.any((alive & stone) != 0)
    popcount = lambda x: jax.lax.population_count(x).astype(jnp.int32).sum()
    around = _neighbours(stone, lay.row, onboard)
    ko_shape = (popcount(captured) == 1) & (popcount(around & own2) == 0) & (popcount(around & empty2) == 1)
    ko = jnp.where(ko_shape, _lowest_bit(captured), -1)
    own2 = jnp.where(legal, own2, own)
    opp2 = jnp.where(legal, opp2, opp)
    black2 = jnp.where(to_play == BLACK, own2, opp2)
    white2 = jnp.where(to_play == BLACK, opp2, own2)
    return black2, white2, jnp.where(legal, ko, -1), legal


def _unpack(x: jax.Array, lay: Layout) -> jax.Array:
    """uint32 [W] -> bool [W * 32]."""
    bits = jnp.arange(lay.words * 32)
    return ((x[bits // 32] >> (bits % 32).astype(jnp.uint32)) & 1).astype(bool)


def _attempt(black, white, to_play, ko, banned, key, lay: Layout):
    """One board, one attempt: draw among the empty non-eye points other than the ko point and
    the points struck out since the last move; play it if legal.  Returns (black, white, ko,
    bit played (-1 pass, -2 a suicide was struck out: same mover tries again), banned)."""
    onboard = jnp.asarray(lay.onboard)
    own = jnp.where(to_play == BLACK, black, white)
    opp = jnp.where(to_play == BLACK, white, black)
    cand = onboard & ~(own | opp) & ~_eyes(own, opp, lay.row, onboard) & ~_bit(ko, lay.words) & ~banned
    flags = _unpack(cand, lay)
    total = flags.sum(dtype=jnp.int32)
    r = jax.random.randint(key, (), 0, jnp.maximum(total, 1))
    pick = (jnp.cumsum(flags.astype(jnp.int32)) <= r).sum(dtype=jnp.int32)
    b2, w2, ko2, legal = _play(black, white, to_play, jnp.where(total > 0, pick, -1), lay)
    played = jnp.where(total == 0, -1, jnp.where(legal, pick, -2))
    banned = jnp.where(played == -2, banned | _bit(pick, lay.words), jnp.uint32(0))
    return b2, w2, jnp.where(played >= 0, ko2, jnp.where(played == -1, -1, ko)), played, banned


def _area(black, white, lay: Layout):
    """Black's area minus White's (Tromp-Taylor: stones plus empty regions reaching only that colour)."""
    onboard = jnp.asarray(lay.onboard)
    empty = onboard & ~(black | white)
    reach_b = _flood(_neighbours(black, lay.row, onboard) & empty, empty, lay.row, onboard)
    reach_w = _flood(_neighbours(white, lay.row, onboard) & empty, empty, lay.row, onboard)
    count = lambda x: jax.lax.population_count(x).astype(jnp.int32).sum()
    return count(black | (reach_b & ~reach_w)) - count(white | (reach_w & ~reach_b))


def empty_bitboards(size: int, batch: int) -> BitBoards:
    w = Layout(size).words
    return BitBoards(black=jnp.zeros((batch, w), jnp.uint32), white=jnp.zeros((batch, w), jnp.uint32),
                     to_play=jnp.full(batch, BLACK, jnp.int32), ko=jnp.full(batch, -1, jnp.int32),
                     passes=jnp.zeros(batch, jnp.int32))


@functools.partial(jax.jit, static_argnames=("size", "record_moves"))
def bitboard_playouts(boards: BitBoards, key: jax.Array, size: int, komi: float = 7.5,
                      record_moves: bool = False):
    """Uniform playouts (eye rule, simple ko, pass only when nothing else, cap 3 N^2) from each
    board.  Returns (z float32 [B], moves int32 [B], history int32 [B, cap] of points or -1
    pass, -2 after the end (only with record_moves))."""
    lay = Layout(size)
    cap = 3 * size * size
    b = boards.black.shape[0]
    to_point = jnp.asarray(lay.bit_to_point)
    attempt = jax.vmap(functools.partial(_attempt, lay=lay))

    def body(c):  # one attempt per board per trip; a struck-out suicide does not end the turn
        s, banned, moves, done, t, hist = c
        keys = jax.random.split(jax.random.fold_in(key, t), b)
        black, white, ko, played, banned2 = attempt(s.black, s.white, s.to_play, s.ko, banned, keys)
        moved = (played != -2) & ~done
        passes = jnp.where(played >= 0, 0, s.passes + 1)
        keep = lambda new, old: jnp.where(moved.reshape((-1,) + (1,) * (new.ndim - 1)), new, old)
        s2 = BitBoards(black=keep(black, s.black), white=keep(white, s.white),
                       to_play=keep(3 - s.to_play, s.to_play), ko=keep(ko, s.ko), passes=keep(passes, s.passes))
        if record_moves:
            pt = jnp.where(played >= 0, to_point[jnp.maximum(played, 0)], -1).astype(jnp.int32)
            slot = (jnp.arange(b), jnp.minimum(moves, cap - 1))
            hist = hist.at[slot].set(jnp.where(moved, pt, hist[slot]))
        moves = moves + moved.astype(jnp.int32)
        done = done | (s2.passes >= 2) | (moves >= cap)
        return s2, jnp.where(done[:, None], jnp.uint32(0), banned2), moves, done, t + 1, hist

    hist = jnp.full((b, cap if record_moves else 0), -2, jnp.int32)
    init = (boards, jnp.zeros_like(boards.black), jnp.zeros(b, jnp.int32), boards.passes >= 2, jnp.int32(0), hist)
    final, _, moves, _, _, hist = jax.lax.while_loop(lambda c: ~c[3].all(), body, init)
    diff = jax.vmap(functools.partial(_area, lay=lay))(final.black, final.white)
    score = diff.astype(jnp.float32) - komi
    z = jnp.where(score > 0, 1.0, jnp.where(score < 0, 0.0, 0.5))
    return z, moves, hist, final


def to_points(x: np.ndarray, size: int) -> np.ndarray:
    """uint32 [W] -> bool [P] in point order (for tests)."""
    lay = Layout(size)
    bits = ((np.asarray(x, np.uint64)[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(bool).reshape(-1)
    return bits[lay.point_to_bit]
