"""Playout policies beyond uniform, on the device, for ONE board (callers vmap them).

The MoGo policy (seed 000 sec. 3.6; SPEC.md "Playouts") answers the opponent's last move `a`
with the first rule that fires, each rule gated by its own probability (PlayoutConfig):

  save     a put some of the mover's chains in atari: capture an attacker in atari next to such
           a chain (see candidate_masks for which), or extend at its last liberty when that
           leaves it `save_min_liberties`
  two_lib  an own chain next to `a` has two liberties: extend at one, reaching
           `save_min_liberties`; or `a`'s own chain has two liberties: atari it at one where the
           other looks hopeless for the escape (at most one more empty neighbour, no other of its
           chains next to it), the atari not a self-atari.  No ladder is read.
  nakade   play the vital point (middle) of a 3-point empty region enclosed by one colour
  fill     "fill board": play where the whole 3x3 block is empty
  pattern  one of the 8 points around `a` matches a 3x3 hane / cut pattern (kernels/patterns.py),
           or a learnt shape (`playout_patterns`, kernels/data/patterns_learnt9.npy)
  capture  capture any opponent chain in atari
  uniform  uniform over legal points that are not the mover's own eyes; with `self_atari_prob`
           a draw that puts two or more own stones in atari is struck out and drawn once more

Two learned rules from seed 004 sec. IV come first when enabled: poolRave (a move from the k best
by AMAF at the leaf's tree node, travelling with the batch) and contextual Monte-Carlo (the reply
to the mover's own previous move b maximising the learned V_c(a, b)).

Every candidate set is a whole-board mask built from the pseudo-liberties (kernels/state.py):
a chain next to an empty point q is in atari with q its liberty exactly when its pseudo-liberty
count equals the number of its stones next to q, so no flood fill is needed.  One `select` picks
a point in the winning rule's mask, and ONE exact liberty count (`liberties_after`) checks the
pick: an extension must reach `save_min_liberties` (so a stone in a ladder, which only gets 2,
is not "saved"), a pattern or capture move must not be a self-atari (a snapback capture is one;
a ko capture is allowed).  A pick that fails the check falls back to the uniform move.

The host twin of every mask is kernels/policy_host.py; tests/test_policy.py holds them equal.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels import learnt, rules
from gojax.kernels.geometry import BLACK, EMPTY, WHITE
from gojax.kernels.patterns import pattern_table, playout_table
from gojax.kernels.state import BoardState

# Which rule chose the move (returned for tests and statistics).
# learnt / learnt_sure: the learnt policy's draws (kernels/learnt.py), the second those it made with a
# probability above PlayoutConfig.amaf_max_prob
RULES = ("uniform", "pool", "cmc", "save", "nakade", "fill", "pattern", "capture", "two_lib", "learnt", "learnt_sure")
UNIFORM, POOL, CMC, SAVE, NAKADE, FILL, PATTERN, CAPTURE, TWO_LIB, LEARNT, LEARNT_SURE = range(len(RULES))


def _width(m: int) -> int:
    return int(round(m ** 0.5))


def pattern_offsets(w: int) -> np.ndarray:
    """Cell offsets of the 8 neighbours in the pattern index order NW, N, NE, W, E, SW, S, SE
    (kernels/patterns.py); up is +W because row 0 is the bottom row."""
    return np.array([w - 1, w, w + 1, -1, 1, -w - 1, -w, -w + 1], np.int32)


def pattern_index(color: jax.Array, cells: jax.Array) -> jax.Array:
    """int32 [...]: the 3x3 table index of each cell in `cells` (int32 [...]).  Border cells code 3,
    which is the table's off-board code."""
    m = color.shape[-1]
    nb = color[jnp.clip(cells[..., None] + pattern_offsets(_width(m)), 0, m - 1)].astype(jnp.int32)
    return (nb << (2 * jnp.arange(8, dtype=jnp.int32))).sum(-1)


def select_uniform(legal: jax.Array, word: jax.Array) -> jax.Array:
    """One board: the cell of a uniformly chosen True in `legal` (bool [M]), 0 if none.

    One random uint32 per move.  Two levels (count per row, then within the row) keep the
    prefix sums short: N + W elements instead of M."""
    m = legal.shape[-1]
    w = int(round(m ** 0.5))
    n_rows = w - 2
    rows = legal[w: m - w].reshape(n_rows, w)
    per_row = rows.sum(1, dtype=jnp.int32)
    total = per_row.sum()
    u = (word >> 8).astype(jnp.float32) * jnp.float32(2.0 ** -24)
    r = jnp.minimum((u * total.astype(jnp.float32)).astype(jnp.int32), total - 1)
    cum = jnp.cumsum(per_row)
    i = (cum <= r).sum(dtype=jnp.int32)
    i = jnp.minimum(i, n_rows - 1)
    rank_in_row = r - (cum[i] - per_row[i])
    j = (jnp.cumsum(rows[i].astype(jnp.int32)) <= rank_in_row).sum(dtype=jnp.int32)
    return jnp.where(total > 0, w + i * w + j, 0).astype(jnp.int32)


def candidate_masks(state: BoardState, legal: jax.Array, patterns: str = "") -> dict[str, jax.Array]:
    """bool [M] candidate masks of the MoGo rules for the side to move, each within `legal`
    (legal, not an own eye); `patterns` names the pattern rule's table (kernels/patterns.
    playout_table).  "save_extend" is the liberties of own chains next to the last move that
    are in atari (before the liberty check); "save_capture" the last liberties of opponent
    chains in atari that touch such a chain; "two_lib_defend" / "two_lib_attack" the two_lib
    rule's points (module docstring)."""
    c, ch = state.color, state.chain
    m = c.shape[-1]
    w = _width(m)
    me = state.to_play.astype(c.dtype)
    opp = (3 - me).astype(c.dtype)
    centre = rules.interior(c, 0)
    empty = centre == EMPTY
    nc, nch, atari = rules.atari_here(state)
    cells = jnp.arange(m, dtype=jnp.int32)
    a = state.last
    has_last = a > 0
    n_empty = sum((x == EMPTY).astype(jnp.int8) for x in nc)  # [R] empty neighbours

    # --- save: own chains next to `a` left with one liberty ----------------------------------
    a_nbrs = jnp.clip(a + jnp.array([-w, w, -1, 1], jnp.int32), 0, m - 1)
    a_ids = jnp.where(has_last & (c[a_nbrs] == me), ch[a_nbrs], -1).astype(jnp.int32)  # [4]
    # Each of those chains' liberties counted exactly (its stones' empty neighbours): one
    # comparison per cell and chain, where a test of every neighbour's atari against every chain takes four.
    stones4 = ch[None, :] == a_ids[:, None]  # [4, M]; chain ids are cells of their chains, so -1 matches none
    libs4 = empty[None, :] & _any4(rules.orthogonal(stones4))  # [4, R]
    in_atari = libs4.sum(-1, dtype=jnp.int32) == 1  # [4]
    extend = (libs4 & in_atari[:, None]).any(0)
    in_a = (stones4 & in_atari[:, None]).any(0)  # [M] stones of those chains
    touches = sum(x.astype(jnp.int8) for x in rules.orthogonal(in_a)) > 0
    # An attacker: an opponent chain in atari that is the last move's own chain, or that has a
    # stone next to both the chain in atari and its own last liberty (every one-stone attacker).
    # A chain-wide "touches" flag would need a scatter per board per move, 4x this rule's cost.
    attacker = rules.embed((centre == opp) & touches, False) | ((c == opp) & (ch == ch[a]) & in_atari.any())
    attacker_nb = rules.orthogonal(attacker)
    opp_atari = [(nc[i] == opp) & atari[i] for i in range(4)]
    capture_attacker = empty & _any4(opp_atari[i] & attacker_nb[i] for i in range(4))

    # --- two liberties: chains at `a` (its own and the 4 next to it) left with exactly two ------
    ids5 = jnp.concatenate([a[None], a_nbrs])
    col5 = c[ids5]
    stones5 = (ch[None, :] == ch[ids5][:, None]) & (c[None, :] == col5[:, None]) & \
        ((col5 == BLACK) | (col5 == WHITE))[:, None] & has_last  # [5, M]
    libs5 = rules.embed(empty[None, :] & (sum(x.astype(jnp.int8) for x in rules.orthogonal(stones5)) > 0), False)
    two5 = libs5.sum(-1) == 2  # [5]
    defend = (libs5[1:] & (two5 & (col5 == me))[1:, None]).any(0)
    # Atari the last move's chain at x only where the escape at its other liberty y looks hopeless:
    # y has at most one empty neighbour besides x and joins no other opponent chain.
    lib_a = libs5[0] & two5[0] & (col5[0] == opp)
    lib_a_nb = sum(x.astype(jnp.int8) for x in rules.orthogonal(lib_a))
    other_opp = sum(((nc[i] == opp) & (nch[i] != ch[a])).astype(jnp.int8) for i in range(4)) > 0
    weak = lib_a & rules.embed((n_empty - lib_a_nb <= 1) & ~other_opp, False)
    attack = lib_a & (weak.sum() - weak.astype(jnp.int32) >= 1)

    # --- capture anywhere ----------------------------------------------------------------------
    capture = empty & _any4(opp_atari)

    # --- fill board: the 3x3 block around the point is empty ------------------------------------
    around = rules.orthogonal(c) + rules.diagonal(c)
    fill = empty & (sum((x != EMPTY).astype(jnp.int8) for x in around) == 0)

    # --- nakade: the middle of a 3-point empty region enclosed by one colour ---------------------
    bits = _or4(nc)  # [R] colours next to the point
    nb_n = rules.orthogonal(rules.embed(jnp.where(empty, n_empty, 0).astype(jnp.int8), 0))
    nb_bits = rules.orthogonal(rules.embed(jnp.where(empty, bits, 0).astype(jnp.int8), 0))
    ends = sum(((nc[i] == EMPTY) & (nb_n[i] == 1)).astype(jnp.int8) for i in range(4))
    region_bits = bits
    for i in range(4):
        region_bits = region_bits | jnp.where(nc[i] == EMPTY, nb_bits[i], 0).astype(jnp.int8)
    # Two empty neighbours whose only empty neighbour is this point: the region is exactly 3.
    nakade = empty & (n_empty == 2) & (ends == 2) & ((region_bits == 1) | (region_bits == 2))

    # --- patterns on the 8 points around `a` ---------------------------------------------------
    ring = jnp.clip(a + pattern_offsets(w), 0, m - 1)  # [8]
    row = jnp.clip(state.to_play.astype(jnp.int32) - 1, 0, 1)  # gather 8 entries, not a 65,536-entry row
    hit = (jnp.asarray(playout_table(patterns))[row, pattern_index(c, ring)] > 0) & legal[ring] & has_last
    pattern = jnp.zeros(m, bool).at[ring].max(hit)  # 8 writes, not a comparison of every cell with the 8

    def full(x):
        return rules.embed(x, False) & legal

    return dict(save_extend=full(extend), save_capture=full(capture_attacker), capture=full(capture),
                fill=full(fill), nakade=full(nakade), pattern=pattern & (cells > 0),
                two_lib_defend=defend & legal, two_lib_attack=attack & legal)


def _any4(masks) -> jax.Array:
    """bool [R]: any of the masks (an OR, where a sum of them converted to integers costs more)."""
    masks = list(masks)
    return (masks[0] | masks[1]) | (masks[2] | masks[3])


def _or4(nc: list[jax.Array]) -> jax.Array:
    """int8 [R]: bit 1 if any neighbour is black, bit 2 if any is white."""
    bits = jnp.zeros(nc[0].shape, jnp.int8)
    for x in nc:
        bits = bits | jnp.where(x == BLACK, 1, jnp.where(x == WHITE, 2, 0)).astype(jnp.int8)
    return bits


def liberties_after(state: BoardState, cell: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """If `state.to_play` plays the empty `cell`: (liberties of the chain through it, its stones,
    opponent stones captured), exact, all int32.  O(M) elementwise work, no flood fill."""
    c, ch, lb = state.color, state.chain, state.libs
    m = c.shape[-1]
    w = _width(m)
    me = state.to_play.astype(c.dtype)
    opp = (3 - me).astype(c.dtype)
    q = jnp.clip(cell + jnp.array([-w, w, -1, 1], jnp.int32), 0, m - 1)
    qc, qch, ql = c[q], ch[q], lb[q]
    edges = (qch[:, None] == qch[None, :]).sum(1).astype(lb.dtype)
    friend = qc == me
    taken = (qc == opp) & (ql == edges)  # opponent chains whose last liberty is `cell`
    cells = jnp.arange(m, dtype=jnp.int32)
    same = ch[:, None] == qch[None, :]  # [M, 4]
    group = (cells == cell) | ((c == me) & (same & friend[None, :]).any(1))
    captured = (c == opp) & (same & taken[None, :]).any(1)
    free = ((c == EMPTY) | captured) & (cells != cell)
    touching = rules.embed(sum(x.astype(jnp.int8) for x in rules.orthogonal(group)) > 0, False)
    return ((free & touching).sum(dtype=jnp.int32), group.sum(dtype=jnp.int32),
            captured.sum(dtype=jnp.int32))


def _gate(byte: jax.Array, prob: float) -> jax.Array:
    """True with probability `prob` (resolution 1/256) from a uint8-range value."""
    return byte < jnp.uint32(int(round(prob * 256)))


def propose(state: BoardState, legal: jax.Array, words: jax.Array, config, pool: jax.Array | None = None,
            cmc: tuple[jax.Array, jax.Array] | None = None) -> dict[str, jax.Array]:
    """One board: the rule cascade up to the exact liberty check of its pick (see `choose`).

    Returns int32 scalars "uniform" (the uniform move), "pick" and "rule" (the winning rule's
    move and id), "need" (liberties the pick must reach), bool "checked" (the pick needs the
    check) and "sure" (it passes for certain: it has `need` empty neighbours itself, each a
    liberty of its chain, so the check could only agree).  A batched caller runs the check only
    where checked & ~sure (kernels/playout.py); `choose` runs it everywhere."""
    m = legal.shape[-1]
    w = _width(m)
    if config.policy == "mogo" and config.fallback == "learnt":  # the cascade's last rule draws from the learnt policy
        uniform = learnt.select(state, legal, words[0], config.policy_model, config.policy_scale)[0]
    else:
        uniform = select_uniform(legal, words[0])
    masks = candidate_masks(state, legal, config.playout_patterns)
    gates = [(words[2 + i // 4] >> (8 * (i % 4))) & 0xFF for i in range(8)]
    save = masks["save_extend"] | masks["save_capture"]
    # The rule cascade, first firing rule wins.  Each rule: (id, gate, mask).
    cascade = []
    cells = jnp.arange(m, dtype=jnp.int32)
    if pool is not None and config.pool_prob > 0:
        row = pool[jnp.clip(state.to_play.astype(jnp.int32) - 1, 0, 1)]  # [k]
        in_pool = ((cells[:, None] == row[None, :]) & (row[None, :] > 0)).any(1) & legal
        cascade.append((POOL, _gate(gates[5], config.pool_prob), in_pool))
    if cmc is not None and config.cmc_prob > 0:
        cascade.append((CMC, _gate(gates[6], config.cmc_prob), _cmc_best(state, legal, *cmc, config)))
    if config.policy == "mogo":  # a rule whose probability is 0 is left out (XLA drops its mask)
        # two_lib's gate is the low byte of words[1], which select_uniform does not read
        rules_ = [(SAVE, gates[0], config.save_prob, save),
                  (TWO_LIB, words[1] & 0xFF, config.two_lib_prob, masks["two_lib_defend"] | masks["two_lib_attack"])]
        rules_ += [(rid, gates[i + 1], prob, mask) for i, (rid, prob, mask) in enumerate((
            (NAKADE, config.nakade_prob, masks["nakade"]),
            (FILL, config.fill_board_prob, masks["fill"]),
            (PATTERN, config.pattern_prob, masks["pattern"]),
            (CAPTURE, config.capture_prob, masks["capture"])))]
        cascade += [(rid, _gate(gate, prob), mask) for rid, gate, prob, mask in rules_ if prob > 0]
    rule = jnp.int32(UNIFORM)
    mask = jnp.zeros(m, bool)
    for rid, gate, cand in reversed(cascade):  # later rules first so earlier ones overwrite
        fire = gate & cand.any()
        rule = jnp.where(fire, rid, rule)
        mask = jnp.where(fire, cand, mask)
    pick = select_uniform(mask, words[1])
    # Read a rule's masks only when it is in the cascade: else XLA would keep them alive.
    on = {rid for rid, _, _ in cascade}
    is_extension = jnp.bool_(False)
    if SAVE in on:
        is_extension |= (rule == SAVE) & ~masks["save_capture"][pick]
    if TWO_LIB in on:
        is_extension |= (rule == TWO_LIB) & ~masks["two_lib_attack"][pick]
    need = jnp.where(is_extension, config.save_min_liberties, 2).astype(jnp.int32)
    checked = (rule == SAVE) | (rule == TWO_LIB) | (rule == PATTERN) | (rule == CAPTURE)
    around = jnp.clip(pick + jnp.array([-w, w, -1, 1], jnp.int32), 0, m - 1)
    sure = (state.color[around] == EMPTY).sum(dtype=jnp.int32) >= need
    if config.policy == "mogo" and config.self_atari_prob > 0:
        # The uniform move must not put two or more own stones in atari: strike it out and draw
        # once more (from a re-mixed words[0]; the second draw is taken as it is).
        u_libs, u_stones, _ = liberties_after(state, uniform)
        bad = (u_libs <= 1) & (u_stones >= 2) & (uniform > 0) & _gate(gates[7], config.self_atari_prob)
        again = select_uniform(legal & (cells != uniform), words[0] * jnp.uint32(0x9E3779B1) + jnp.uint32(0x7F4A7C15))
        uniform = jnp.where(bad & (again > 0), again, uniform)
    return dict(uniform=uniform, pick=pick, rule=rule, need=need, checked=checked, sure=sure,
                extension=is_extension)


def check_passes(proposal: dict[str, jax.Array], libs: jax.Array, stones: jax.Array, taken: jax.Array) -> jax.Array:
    """Does the pick pass its check, given `liberties_after` of it (any leading shape)?  An
    extension must reach `need` liberties, a pattern or capture move must not be a self-atari
    (a snapback capture is one); a ko capture is allowed."""
    ko_capture = (taken == 1) & (stones == 1) & ~proposal["extension"]
    return ~proposal["checked"] | proposal["sure"] | (libs >= proposal["need"]) | ko_capture


def finish(proposal: dict[str, jax.Array], ok: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(cell, rule): the pick if it passed its check, else the uniform move (rule UNIFORM)."""
    rule = jnp.where(ok, proposal["rule"], UNIFORM)
    return jnp.where(rule == UNIFORM, proposal["uniform"], proposal["pick"]).astype(jnp.int32), rule


def choose(state: BoardState, legal: jax.Array, words: jax.Array, config, pool: jax.Array | None = None,
           cmc: tuple[jax.Array, jax.Array] | None = None) -> tuple[jax.Array, jax.Array]:
    """One board: (cell to play, rule id in RULES).  0 = pass when nothing is legal.

    legal: bool [M], legal and not an own eye.  words: uint32 [4]: words[0] picks the uniform
    move (so that with every probability 0 this IS the uniform policy, draw for draw), words[1]
    picks within the winning rule, words[2:4] hold eight one-byte gates.
    pool: int32 [2, k] cells (0 = empty slot) per colour (row 0 Black), or None.
    cmc: (wins, counts) float32 [2, P, P] per colour, or None.

    `propose`, then ONE exact check of the pick (`liberties_after`; see the module docstring),
    then `finish`.  The playout loop runs the same three steps with the check batched over only
    the boards that need it; the moves are the same."""
    proposal = propose(state, legal, words, config, pool, cmc)
    return finish(proposal, check_passes(proposal, *liberties_after(state, proposal["pick"])))


def _cmc_best(state: BoardState, legal: jax.Array, wins: jax.Array, counts: jax.Array, config) -> jax.Array:
    """bool [M]: the legal cell a maximising the mover's V_c(a, b), b its own previous move
    (state.prev), among pairs seen at least `cmc_min_count` times; all False if none."""
    m = legal.shape[-1]
    w = _width(m)
    n = w - 2
    b = state.prev
    col = jnp.clip(state.to_play.astype(jnp.int32) - 1, 0, 1)
    bp = (b // w - 1) * n + (b % w - 1)  # b's point index (valid when b > 0)
    row_w = wins[col, jnp.clip(bp, 0, n * n - 1)]
    row_n = counts[col, jnp.clip(bp, 0, n * n - 1)]
    cells = jnp.arange(m, dtype=jnp.int32)
    pts = jnp.clip((cells // w - 1) * n + (cells % w - 1), 0, n * n - 1)
    seen = row_n[pts] >= config.cmc_min_count
    value = jnp.where(legal & seen & (b > 0), row_w[pts] / jnp.maximum(row_n[pts], 1.0), -1.0)
    best = jnp.argmax(value)
    return (cells == best) & (value[best] >= 0)


# Codes of `prior_codes` (the MoGo prior's verdict per point, seed 000 sec. 5.3 / eq. 48-52).
PRIOR_BAD, PRIOR_NEUTRAL, PRIOR_GOOD, PRIOR_LADDER = 0, 1, 2, 3


def prior_codes(state: BoardState) -> jax.Array:
    """int8 [M]: the MoGo prior of search/priors.py for every cell the side to move may play
    (PRIOR_NEUTRAL elsewhere), so that the search's host need not compute it per new node:

      GOOD     a capture; an extension of an own chain out of atari to three or more liberties;
               otherwise, a 3x3 hane / cut pattern on one of the 8 points around the last move
      BAD      filling an own eye (not capturing); a non-capturing move that leaves a chain of
               two or more stones with at most one liberty
      LADDER   an extension out of atari to exactly two liberties: GOOD if the chain escapes the
               ladder, else BAD; the host reads the ladder (search/tactics.py), for these alone

    One exact liberty count per point (`liberties_after`, vmapped: O(M^2) per board)."""
    c = state.color
    m = c.shape[-1]
    w = _width(m)
    me = state.to_play.astype(c.dtype)
    legal, capture = rules.legal_and_capture_masks(state)
    nc, _, atari = rules.atari_here(state)
    friend_atari = rules.embed(sum(((nc[i] == me) & atari[i]).astype(jnp.int8) for i in range(4)) > 0, False)
    eye = rules.eye_mask(state, me)
    cells = jnp.arange(m, dtype=jnp.int32)
    libs, size, _ = jax.vmap(lambda cell: liberties_after(state, cell))(cells)
    good = capture | (friend_atari & (libs >= 3))
    bad = (eye & ~capture) | (~capture & (libs <= 1) & (size > 1))
    ladder = friend_atari & (libs == 2) & ~capture
    a = state.last
    ring = jnp.clip(a + pattern_offsets(w), 0, m - 1)  # [8]
    hit = (jnp.asarray(pattern_table())[pattern_index(c, ring)] > 0) & (a > 0) & (c[ring] == EMPTY)
    pattern = jnp.zeros(m, bool).at[ring].max(hit)
    code = jnp.where(ladder, PRIOR_LADDER, jnp.where(good, PRIOR_GOOD, jnp.where(
        bad, PRIOR_BAD, jnp.where(pattern, PRIOR_GOOD, PRIOR_NEUTRAL))))
    return jnp.where(legal, code, PRIOR_NEUTRAL).astype(jnp.int8)
