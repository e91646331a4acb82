"""A learnt playout policy: a softmax over whole-board features, for ONE board (callers vmap).

The model is Coulom (2007)'s generalised Bradley-Terry form: each feature value v has a
strength gamma_v = exp(w_v), a move's strength is the product over its features, and a move is
drawn with probability proportional to its strength.  Here the weights are fitted by maximum
likelihood to a teacher's move distribution (gojax/learn_policy.py) rather than by MM.

Every feature is a whole-board mask or index built from the pseudo-liberties (kernels/state.py),
O(M) per board, no flood fill; a point gets one value in each slot of SLOTS:

  shape       the 3x3 neighbourhood with the atari status of its four orthogonal chains, as a
              symmetry class with colours named from the mover's side (patterns.atari_shape_classes)
  capture     1 takes the last move's chain, 2 takes an attacker of an own chain in atari next to
              the last move, 3 any other capture
  escape      an own chain in atari extended at its last liberty, by the liberties it may have
              after (1: one, 2: two, 3: three or more), +3 when the chain touches the last move
  self_atari  the move is left with at most one liberty and captures nothing: 1 a lone stone,
              2 it joins own stones (both sound: counted from an upper bound of the liberties)
  atari       an opponent chain next to the point surely has two liberties (so this ataris it):
              1 the last move's chain, 2 another
  own_two     an own chain next to the point surely has two liberties: 1 the move leaves three
              or more, 2 fewer
  dist_last   Coulom's distance dx + dy + max(dx, dy) to the last move, 2..17 (17 = farther);
              0 with no last move
  dist_prev   the same to the mover's own previous move
  line        distance to the edge, first line .. fifth and beyond
  nakade      the vital point of a 3-point eye space (kernels/policy.candidate_masks)

Sampling draws one uniform per move and inverts the cumulative strengths: the same distribution
as Gumbel-max over the logits, with one random word, not M.  The playouts never take an exp or a
sum of weights: the slots are folded into four tables of gammas (`strengths`).
"""

from __future__ import annotations

import functools
import zipfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels import rules
from gojax.kernels.geometry import BLACK, EMPTY, WHITE
from gojax.kernels.patterns import ATARI_BITS, atari_shape_classes
from gojax.kernels.state import BoardState

# len(patterns.atari_shape_classes()), written out so that importing the playouts does not build
# the 2^20-entry class table (tests/test_learnt.py holds the two equal)
SHAPE_CLASSES = 42_990
SLOTS: tuple[tuple[str, int], ...] = (
    ("shape", SHAPE_CLASSES), ("capture", 4), ("escape", 7), ("self_atari", 3), ("atari", 3),
    ("own_two", 3), ("dist_last", 18), ("dist_prev", 18), ("line", 5), ("nakade", 2))
OFFSETS = np.cumsum([0] + [n for _, n in SLOTS])[:-1].astype(np.int32)
N_WEIGHTS = int(sum(n for _, n in SLOTS))
FORMAT = 2  # bump when SLOTS change: a model file names the format it was fitted for
BUNDLED = str(Path(__file__).parent / "data" / "policy9.npz")


class ModelError(ValueError):
    """A policy model file that cannot be used (missing, corrupt, another feature format)."""


@functools.cache
def load_model(path: str = "") -> tuple[np.ndarray, int]:
    """(float32 [N_WEIGHTS] weights, the board size they were fitted on) from an .npz written by
    `save_model`; "" = the bundled 9x9 model.  Raises ModelError with one line on any fault."""
    path = path or BUNDLED
    try:
        with np.load(path, allow_pickle=False) as f:
            weights, fmt, size = f["weights"], int(f["format"]), int(f["size"])
    except FileNotFoundError:
        raise ModelError(f"policy model {path}: no such file") from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
        why = f"no {err.args[0].split()[0]} in it" if isinstance(err, KeyError) else "not an .npz archive"
        raise ModelError(f"policy model {path}: not a gojax policy model ({why})") from None
    if fmt != FORMAT or weights.shape != (N_WEIGHTS,):
        raise ModelError(f"policy model {path}: feature format {fmt} with {weights.shape} weights; this gojax "
                         f"reads format {FORMAT} with {N_WEIGHTS}: refit it (gojax learn-policy)")
    if not np.isfinite(weights).all():
        raise ModelError(f"policy model {path}: weights are not all finite")
    return weights.astype(np.float32), size


def check_model(path: str, size: int) -> None:
    """Raise ModelError unless the model at `path` loads and was fitted for `size` x `size`."""
    _, fitted = load_model(path)
    if fitted != size:
        raise ModelError(f"policy model {path or BUNDLED} was fitted on {fitted}x{fitted}, not {size}x{size}: "
                         f"fit one on {size}x{size} positions (gojax learn-policy) or use --policy mogo")


def save_model(path: str, weights: np.ndarray, size: int, **info) -> None:
    np.savez_compressed(path, weights=np.asarray(weights, np.float32), format=FORMAT, size=size,
                        slots=np.array([f"{name}:{n}" for name, n in SLOTS]), **info)


def _distance(cells: jax.Array, target: jax.Array, w: int) -> jax.Array:
    """int32: slot value of Coulom's distance from each of `cells` to `target` (0 = no target)."""
    dy = jnp.abs(cells // w - target // w)
    dx = jnp.abs(cells % w - target % w)
    d = dx + dy + jnp.maximum(dx, dy)
    return jnp.where(target > 0, jnp.clip(d, 2, 17), 0)


def slot_values(state: BoardState) -> tuple[jax.Array, ...]:
    """The value of every interior cell (rules.interior, shape [R]) in each slot of SLOTS, in
    order, int32 [R] each; the shape slot holds the raw 3x3 index (patterns.py), not yet its class.
    Meaningful at empty cells."""
    c, ch, lb = state.color, state.chain, state.libs
    m = c.shape[-1]
    w = int(round(m ** 0.5))
    n = w - 2
    me = state.to_play.astype(c.dtype)
    opp = (3 - me).astype(c.dtype)
    a, b = state.last, state.prev
    cells = rules.interior(jnp.arange(m, dtype=jnp.int32), 0)
    nc, nch, nl = rules.orthogonal(c), rules.orthogonal(ch), rules.orthogonal(lb)
    stone = [(x == BLACK) | (x == WHITE) for x in nc]
    edges = [sum((nch[i] == nch[j]).astype(lb.dtype) for j in range(4)) for i in range(4)]
    atari = [stone[i] & (nl[i] == edges[i]) for i in range(4)]  # q is that chain's only liberty
    two = [stone[i] & (nl[i] == edges[i] + 1) for i in range(4)]  # exactly one other pseudo-liberty
    of_last = [(nch[i] == ch[a]) & (a > 0) for i in range(4)]

    def any_of(terms):
        return sum(t.astype(jnp.int8) for t in terms) > 0

    empty = [x == EMPTY for x in nc]
    n_empty = sum(e.astype(jnp.int32) for e in empty)
    mine, theirs = [x == me for x in nc], [x == opp for x in nc]
    captures = any_of(theirs[i] & atari[i] for i in range(4))
    takes_last = any_of(theirs[i] & atari[i] & of_last[i] for i in range(4))
    own_other = sum((mine[i] & (nl[i] > edges[i])).astype(jnp.int32) for i in range(4))
    # An upper bound of the liberties after the move: shared liberties counted twice, a capture one.
    most = n_empty + own_other + captures.astype(jnp.int32)

    # Own chains next to the last move that it put in atari (kernels/policy.candidate_masks' save).
    a_nbrs = jnp.clip(a + jnp.array([-w, w, -1, 1], jnp.int32), 0, m - 1)
    a_ids = jnp.where((a > 0) & (c[a_nbrs] == me), ch[a_nbrs], -1).astype(ch.dtype)  # [4]
    near_last = [any_of(nch[i] == a_ids[k] for k in range(4)) for i in range(4)]
    escapes = any_of(mine[i] & atari[i] for i in range(4))
    saves = any_of(mine[i] & atari[i] & near_last[i] for i in range(4))
    # A capture that frees such a chain: the captured chain touches it (a stone of it is next to q
    # on one side while the chain in atari is on another: the common one-stone attacker).
    frees = saves | any_of(theirs[i] & atari[i] for i in range(4)) & any_of(mine[i] & near_last[i] & (nl[i] <= 2)
                                                                           for i in range(4))
    capture = jnp.where(takes_last, 1, jnp.where(captures & frees, 2, jnp.where(captures, 3, 0)))
    escape = jnp.where(escapes, jnp.clip(most, 1, 3) + 3 * saves.astype(jnp.int32), 0)
    self_atari = jnp.where((most <= 1) & ~captures, jnp.where(any_of(mine), 2, 1), 0)
    atari_ = jnp.where(any_of(theirs[i] & two[i] & of_last[i] for i in range(4)), 1,
                       jnp.where(any_of(theirs[i] & two[i] for i in range(4)), 2, 0))
    own_two = jnp.where(any_of(mine[i] & two[i] for i in range(4)), jnp.where(most >= 3, 1, 2), 0)

    # nakade: two empty neighbours, each with this point as its only empty neighbour, and one
    # colour around the three (kernels/policy.candidate_masks).
    nb_bits = jnp.zeros(n_empty.shape, jnp.int8)
    for x in nc:
        nb_bits = nb_bits | jnp.where(x == BLACK, 1, jnp.where(x == WHITE, 2, 0)).astype(jnp.int8)
    here = rules.interior(c, 0) == EMPTY
    nb_n = rules.orthogonal(rules.embed(jnp.where(here, n_empty, 0).astype(jnp.int8), 0))
    nb_nb = rules.orthogonal(rules.embed(jnp.where(here, nb_bits, 0).astype(jnp.int8), 0))
    ends = sum((empty[i] & (nb_n[i] == 1)).astype(jnp.int8) for i in range(4))
    region = nb_bits
    for i in range(4):
        region = region | jnp.where(empty[i], nb_nb[i], 0).astype(jnp.int8)
    nakade = (n_empty == 2) & (ends == 2) & ((region == 1) | (region == 2))

    # The 3x3 index from shifted views (no gather): NW, N, NE, W, E, SW, S, SE; up is +W.
    ring = [rules.interior(c, o) for o in (w - 1, w, w + 1, -1, 1, -w - 1, -w, -w + 1)]
    shape = sum(x.astype(jnp.int32) << (2 * k) for k, x in enumerate(ring))
    orth = {1: 1, 3: 2, 4: 3, 6: 0}  # index slot -> its direction in rules.orthogonal (S, N, W, E)
    shape = shape + sum(atari[orth[slot]].astype(jnp.int32) << (16 + k) for k, slot in enumerate(ATARI_BITS))
    r, col = cells // w, cells % w
    line = jnp.clip(jnp.minimum(jnp.minimum(r, col), jnp.minimum(n + 1 - r, n + 1 - col)) - 1, 0, 4)
    return (shape, capture, escape, self_atari, atari_, own_two, _distance(cells, a, w), _distance(cells, b, w),
            line, nakade.astype(jnp.int32))


def features(state: BoardState) -> jax.Array:
    """int32 [M, S]: each cell's value in every slot of SLOTS as an index into the flat weight
    vector (OFFSETS added; the shape slot as its symmetry class from the mover's side).  Border
    cells get each slot's value 0.  What the fit reads; the playouts use `strengths`."""
    values = list(slot_values(state))
    row = jnp.clip(state.to_play.astype(jnp.int32) - 1, 0, 1)
    values[0] = jnp.asarray(atari_shape_classes()[0])[row, values[0]]
    return rules.embed(jnp.stack(values, -1).T, 0).T + jnp.asarray(OFFSETS)


# Slots folded into one table each for the playouts: (shape), (capture .. own_two, nakade),
# (dist_last, line), (dist_prev).
_TACTICS = (1, 2, 3, 4, 5, 9)


@functools.cache
def _tables(path: str, scale: float) -> tuple[np.ndarray, ...]:
    """The model's gammas exp(scale * w) folded into four lookup tables (see `strengths`)."""
    w = load_model(path)[0] * scale
    part = [w[o:o + k] for o, (_, k) in zip(OFFSETS, SLOTS)]
    shape = np.exp(part[0][atari_shape_classes()[0]])  # [2, 2^20]
    tactics = np.zeros(1)
    for s in _TACTICS:
        tactics = (tactics[:, None] + part[s][None, :]).reshape(-1)
    last_line = (part[6][:, None] + part[8][None, :]).reshape(-1)
    return (shape.astype(np.float32), np.exp(tactics).astype(np.float32), np.exp(last_line).astype(np.float32),
            np.exp(part[7]).astype(np.float32))


def strengths(state: BoardState, path: str = "", scale: float = 1.0) -> jax.Array:
    """float32 [M]: each cell's strength exp(scale * logit), 0 on the border: the product of
    four table lookups per cell (the slots folded together by `_tables`)."""
    check_model(path, int(round(state.color.shape[-1] ** 0.5)) - 2)  # at trace time: before any playout
    v = slot_values(state)
    shape, tactics, last_line, prev = (jnp.asarray(t) for t in _tables(path, scale))
    row = jnp.clip(state.to_play.astype(jnp.int32) - 1, 0, 1)
    t = jnp.zeros_like(v[0])
    for s in _TACTICS:
        t = t * SLOTS[s][1] + v[s]
    out = shape[row, v[0]] * tactics[t] * last_line[v[6] * SLOTS[8][1] + v[8]] * prev[v[7]]
    return rules.embed(out, 0.0)


def logits(state: BoardState, weights: jax.Array) -> jax.Array:
    """float32 [M]: each cell's log-strength under `weights` (float32 [N_WEIGHTS])."""
    return weights[features(state)].sum(-1)


def select(state: BoardState, legal: jax.Array, word: jax.Array, path: str = "", scale: float = 1.0
           ) -> tuple[jax.Array, jax.Array]:
    """One board: (a cell drawn with probability proportional to its strength among `legal`
    (bool [M]), from one uint32 `word`, 0 (pass) when nothing is legal; float32 the probability
    it had).  Two levels of sums
    (per row, then within the row) keep the prefix sums short, as policy.select_uniform."""
    m = legal.shape[-1]
    w = int(round(m ** 0.5))
    p = jnp.where(legal, strengths(state, path, scale), 0.0)
    rows = p[w: m - w].reshape(w - 2, w)
    per_row = rows.sum(1)
    cum = jnp.cumsum(per_row)
    u = (word >> 8).astype(jnp.float32) * jnp.float32(2.0 ** -24) * cum[-1]
    i = jnp.minimum((cum <= u).sum(dtype=jnp.int32), w - 3)
    inner = jnp.cumsum(rows[i])
    j = jnp.minimum((inner <= u - (cum[i] - per_row[i])).sum(dtype=jnp.int32), w - 1)
    cell = w + i * w + j
    cell = jnp.where(legal[cell], cell, jnp.argmax(p))  # rounding at a row's end
    return jnp.where(legal.any(), cell, 0).astype(jnp.int32), p[cell] / jnp.maximum(cum[-1], 1e-30)
