"""The rules of Go on the device, for ONE board; callers vmap them.

Every function costs O(M) vectorised work with static shapes and no data-dependent loops:
neighbour passes are four contiguous slices of the padded layout (kernels/geometry.py), chains
merge by relabelling ids in one elementwise pass, and pseudo-liberties are recounted with one
scatter-add per move.  Captures before the suicide test; suicide illegal; simple ko.

Read `legal_mask` (which points the side to move may play) and `play` (apply one move).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gojax.kernels.geometry import BLACK, BORDER, EMPTY, WHITE
from gojax.kernels.state import BoardState


def _width(m: int) -> int:
    return int(round(m ** 0.5))


def interior(x: jax.Array, offset: int) -> jax.Array:
    """The cell at `offset` from every cell in [W + 1, M - W - 1): rows 1..N less the two
    outermost border cells, so that all eight neighbours stay inside the array.

    Result shape [R] with R = N * W - 2."""
    m = x.shape[-1]
    w = _width(m)
    return x[..., w + 1 + offset: m - w - 1 + offset]


def embed(region: jax.Array, fill=0) -> jax.Array:
    """[R] region (see interior) -> full [M] array; the cells outside get `fill`."""
    w = 1 + int(round((3 + region.shape[-1]) ** 0.5))  # R = W (W - 2) - 2
    pad = jnp.full(region.shape[:-1] + (w + 1,), fill, region.dtype)
    return jnp.concatenate([pad, region, pad], axis=-1)


def orthogonal(x: jax.Array) -> list[jax.Array]:
    w = _width(x.shape[-1])
    return [interior(x, o) for o in (-w, w, -1, 1)]


def diagonal(x: jax.Array) -> list[jax.Array]:
    w = _width(x.shape[-1])
    return [interior(x, o) for o in (-w - 1, -w + 1, w - 1, w + 1)]


def eye_mask(state: BoardState, color) -> jax.Array:
    """bool [M]: empty cells that are eyes of `color` (SPEC.md): all four neighbours `color` or
    border, at most one opponent diagonal, none on the edge or in the corner."""
    c = state.color
    nb = orthogonal(c)
    dg = diagonal(c)
    opp = (3 - color).astype(c.dtype)
    surrounded = (nb[0] != EMPTY) & (nb[0] != opp)
    for x in nb[1:]:
        surrounded &= (x != EMPTY) & (x != opp)
    on_edge = (nb[0] == BORDER) | (nb[1] == BORDER) | (nb[2] == BORDER) | (nb[3] == BORDER)
    bad = sum((x == opp).astype(jnp.int8) for x in dg) + on_edge.astype(jnp.int8)
    eye = (interior(c, 0) == EMPTY) & surrounded & (bad < 2)
    return embed(eye, False)


def legal_mask(state: BoardState, exclude_eyes: bool = False) -> jax.Array:
    """bool [M]: cells where `state.to_play` may play (not occupied, not suicide, not the ko
    point).  With exclude_eyes, also not the mover's own eyes (the playout rule)."""
    legal = legal_and_capture_masks(state)[0]
    if exclude_eyes:
        legal &= ~eye_mask(state, state.to_play.astype(state.color.dtype))
    return legal


def legal_and_capture_masks(state: BoardState) -> tuple[jax.Array, jax.Array]:
    """(legal, capture) bool [M]: `legal_mask` without the eye rule, and the legal cells that
    take the last liberty of an opponent chain (for those the host's superko check must play
    the move out to know the position after it; see Board.superko_filter)."""
    c, ch, lb = state.color, state.chain, state.libs
    me = state.to_play.astype(c.dtype)
    opp = (3 - me).astype(c.dtype)
    nc, nch, nl = orthogonal(c), orthogonal(ch), orthogonal(lb)
    ok = jnp.zeros(nc[0].shape, bool)
    capture = jnp.zeros(nc[0].shape, bool)
    for i, edges in enumerate(chain_edges(nch)):
        takes = (nc[i] == opp) & (nl[i] == edges)
        ok |= (nc[i] == EMPTY) | ((nc[i] == me) & (nl[i] > edges)) | takes
        capture |= takes
    empty = interior(c, 0) == EMPTY
    not_ko = jnp.arange(c.shape[-1]) != state.ko
    legal = embed(empty & ok, False) & not_ko
    return legal, embed(empty & capture, False) & not_ko


def chain_edges(nch: list[jax.Array]) -> list[jax.Array]:
    """For the chain ids of the 4 neighbours of every interior cell (`orthogonal(chain)`): how
    many of the 4 belong to neighbour i's chain (its stones next to the cell, so its pseudo-liberties
    through it), int16 [R] each.  Six comparisons, each pair's once: they are most of a move step."""
    eq = {(i, j): (nch[i] == nch[j]).astype(jnp.int16) for i in range(4) for j in range(i + 1, 4)}
    return [1 + sum(eq[min(i, j), max(i, j)] for j in range(4) if j != i) for i in range(4)]


def atari_here(state: BoardState):
    """For every interior cell (see `interior`) and direction i: does the chain of the neighbour
    in direction i have this cell as its ONLY liberty?  Returns (nc, nch, atari) with atari a list
    of 4 bool [R]; meaningful where the cell is empty."""
    c, ch, lb = state.color, state.chain, state.libs
    nc, nch, nl = orthogonal(c), orthogonal(ch), orthogonal(lb)
    atari = []
    for i, edges in enumerate(chain_edges(nch)):
        stone = (nc[i] == BLACK) | (nc[i] == WHITE)
        atari.append(stone & (nl[i] == edges))
    return nc, nch, atari


def any_chain_in_atari(state: BoardState) -> jax.Array:
    """bool []: does a chain of either colour have exactly one liberty (a capture either side
    could make next, ko and legality aside)?"""
    _, _, atari = atari_here(state)
    return ((atari[0] | atari[1] | atari[2] | atari[3]) & (interior(state.color, 0) == EMPTY)).any()


def with_chains(state: BoardState) -> BoardState:
    """The state with chain ids and pseudo-liberties rebuilt from its colours alone (the
    search ships leaf boards as colours and lets the device label them).  Min-label
    propagation with pointer jumping: each round takes the smallest id among same-colour
    neighbours, then follows the id one step; it stops when nothing changes (a few rounds, more
    for long snakes).  Ids are the lowest cell of each chain, as `state.host_arrays` gives."""
    c = state.color
    m = c.shape[-1]
    w = _width(m)
    idx = jnp.arange(m, dtype=jnp.int32)
    stone = (c == BLACK) | (c == WHITE)
    same = [(x == interior(c, 0)) & interior(stone, 0) for x in orthogonal(c)]

    def body(carry):
        lab, _ = carry
        new = interior(lab, 0)
        for s, x in zip(same, orthogonal(lab)):
            new = jnp.where(s, jnp.minimum(new, x), new)
        new = lab.at[w + 1: m - w - 1].set(new)
        new = new[new]  # pointer jumping: ids always name a cell of the same chain
        return new, jnp.any(new != lab)

    lab, _ = jax.lax.while_loop(lambda carry: carry[1], body, (idx, jnp.bool_(True)))
    chain = lab.astype(jnp.int16)
    return state.replace(chain=chain, libs=recount_liberties(c, chain))


def recount_liberties(color: jax.Array, chain: jax.Array) -> jax.Array:
    """int16 [M]: pseudo-liberties of the chain through each stone (0 elsewhere)."""
    empty_nbrs = sum((x == EMPTY).astype(jnp.int16) for x in orthogonal(color))
    stone = (color == BLACK) | (color == WHITE)
    contrib = jnp.where(stone, embed(empty_nbrs, 0), 0).astype(jnp.int16)
    per_chain = jnp.zeros_like(contrib).at[chain.astype(jnp.int32)].add(contrib, mode="promise_in_bounds")
    return jnp.where(stone, per_chain[chain.astype(jnp.int32)], 0).astype(jnp.int16)


def play_stale(state: BoardState, cell: jax.Array) -> tuple[BoardState, jax.Array]:
    """`state.to_play` plays `cell` (int32 scalar; 0 = pass), updating pseudo-liberties
    incrementally with elementwise selects.  Returns (state, captured stone count).

    Exact except after a capture: then the chains next to the removed stones miss the liberties
    they gained, and the caller must `recount_liberties` (see `play` and `play_batch`).  Splitting
    it out lets a batch recount only the boards that captured, about one move in ten.

    The move must be legal (legal_mask); an illegal cell gives an unspecified board."""
    c, ch, lb = state.color, state.chain, state.libs
    m = c.shape[-1]
    w = _width(m)
    me = state.to_play.astype(c.dtype)
    opp = (3 - me).astype(c.dtype)
    is_pass = cell == 0
    # On a pass every mask below is False, so the arrays come out unchanged without a select.
    p = jnp.where(is_pass, -1, cell).astype(jnp.int32)
    nbr = jnp.where(is_pass, w + 1, cell) + jnp.array([-w, w, -1, 1], jnp.int32)
    nc, nch, nl = c[nbr], ch[nbr], lb[nbr]
    same = nch[:, None] == nch[None, :]  # [4, 4]
    edges = same.sum(1).astype(lb.dtype)  # stones of nbr i's chain next to p
    left = nl - edges  # pseudo-liberties each neighbour chain keeps once p is filled
    is_friend, is_opp = (nc == me) & ~is_pass, (nc == opp) & ~is_pass
    first = ~(same & jnp.tri(4, k=-1, dtype=bool)).any(1)  # first occurrence of each chain id
    merged_libs = jnp.where(is_friend & first, left, 0).sum() + (nc == EMPTY).sum()
    cells = jnp.arange(m, dtype=jnp.int32)
    # What happens to each neighbour's chain, one code each: 1 it merges with p, 2 it is captured
    # (p was its last liberty), 3 + L an opponent chain left with L > 0 pseudo-liberties, 0 nothing.
    # A cell belongs to at most one of those chains and neighbours of one chain share a code, so
    # one max over the four tells every cell its chain's fate in a single pass.
    code = jnp.where(is_friend, 1, jnp.where(is_opp, jnp.where(left == 0, 2, 3 + left), 0)).astype(jnp.int16)
    fate = jnp.where(ch[:, None] == nch[None, :], code[None, :], jnp.int16(0)).max(1)  # [M]
    removed = fate == 2
    merged = (fate == 1) | (cells == p)
    libs = jnp.where(fate >= 3, fate - 3, lb)
    libs = jnp.where(merged, merged_libs.astype(lb.dtype), jnp.where(removed, 0, libs)).astype(lb.dtype)
    color = jnp.where(cells == p, me, jnp.where(removed, EMPTY, c))
    chain = jnp.where(merged, p.astype(ch.dtype), jnp.where(removed, cells.astype(ch.dtype), ch))

    n_captured = removed.sum(dtype=jnp.int32)
    # Simple ko: a lone stone (no friendly or empty neighbours before) that took exactly one stone.
    lone = ~(is_friend | (nc == EMPTY)).any()
    ko = jnp.where(lone & (n_captured == 1), jnp.argmax(removed).astype(jnp.int32), 0)

    passes = jnp.where(is_pass, jnp.minimum(state.passes + 1, 2), 0).astype(jnp.int8)
    out = BoardState(color=color, chain=chain, libs=libs, ko=ko, to_play=opp.astype(jnp.int8),
                     passes=passes, komi=state.komi, last=jnp.asarray(cell, jnp.int32), prev=state.last)
    return out, n_captured


def play(state: BoardState, cell: jax.Array) -> tuple[BoardState, jax.Array]:
    """One board: `state.to_play` plays `cell` (0 = pass).  Returns (state, captured count).
    Under vmap prefer `play_batch`, which recounts only where a capture happened."""
    out, n = play_stale(state, cell)
    libs = jax.lax.cond(n > 0, recount_liberties, lambda c, ch: out.libs, out.color, out.chain)
    return out.replace(libs=libs), n


def play_batch(states: BoardState, cells: jax.Array, recount_rows: int) -> tuple[BoardState, jax.Array]:
    """Batched play: states [B], cells int32 [B].  Returns (states, captured counts [B]).

    Only the boards that captured are recounted (`on_flagged_rows`, `recount_rows` at a time),
    so the scatter-add of `recount_liberties` costs recount_rows / B of a full recount."""
    out, n = jax.vmap(play_stale)(states, cells)
    libs = on_flagged_rows(lambda i: jax.vmap(recount_liberties)(out.color[i], out.chain[i]), n > 0,
                           recount_rows, out.libs)
    return out.replace(libs=libs), n


def on_flagged_rows(fn, flagged: jax.Array, rows: int, out: jax.Array) -> jax.Array:
    """`out` [B, ...] with row i replaced by fn's value for it wherever flagged[i] (bool [B]).

    fn: int32 [rows] board indices -> [rows, ...] values.  The flagged rows are gathered `rows`
    at a time into a dense sub-batch (a while loop that usually runs once), so a costly per-board
    step runs on those boards only: fixed shapes, no host round trip."""
    b = flagged.shape[0]

    def body(carry):
        out, need = carry
        idx = jnp.nonzero(need, size=rows, fill_value=b)[0]  # b: padding, dropped below
        out = out.at[idx].set(fn(jnp.minimum(idx, b - 1)), mode="drop")
        return out, need.at[idx].set(False, mode="drop")

    return jax.lax.while_loop(lambda carry: carry[1].any(), body, (out, flagged))[0]


def area(color: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Tromp-Taylor area for one final board.  Returns (owner int8 [M]: 1 black, 2 white,
    0 dame/border; black minus white area, int32).

    Empty regions are flooded from each colour's stones by repeated one-step dilation until
    nothing changes (at most N^2 steps, usually 1-2 after a playout): done once per playout,
    never per move."""
    empty = interior(color, 0) == EMPTY

    def reach(stone_color):
        seed = color == stone_color

        def body(carry):
            r, _ = carry
            grown = embed(empty & (orthogonal(r)[0] | orthogonal(r)[1] | orthogonal(r)[2]
                                    | orthogonal(r)[3]), False) | r
            return grown, (grown != r).any()

        r, _ = jax.lax.while_loop(lambda carry: carry[1], body, (seed, jnp.bool_(True)))
        return r

    black, white = reach(BLACK), reach(WHITE)
    owner = jnp.where(black & ~white, BLACK, jnp.where(white & ~black, WHITE, EMPTY)).astype(jnp.int8)
    owner = jnp.where(color == BORDER, EMPTY, owner)
    diff = (owner == BLACK).sum(dtype=jnp.int32) - (owner == WHITE).sum(dtype=jnp.int32)
    return owner, diff
