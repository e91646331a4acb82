"""Batched Monte-Carlo playouts and their per-position reductions, all on the device.

`run_playouts(starts [L], key, K)` runs K playouts from each of L start positions (L * K boards
at once), then reduces them per start position to what the tree and `gojax.evaluate` need:
win sums, area-score sums, ownership, cap hits and the AMAF tables.  Nothing per move per
playout leaves the device: each board carries one int8 [M] first-play record.

Shape letters: L start positions, K playouts per position, B = L * K boards, M cells, P points.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels import learnt, policy, rng, rules
from gojax.kernels.geometry import BLACK, NO_MOVE, WHITE, Geometry
from gojax.kernels.patterns import playout_table
from gojax.kernels.policy import select_uniform
from gojax.kernels.state import BoardState, geometry_of

AMAF_RULES = ("first", "same_colour")
MERCY_MIN = 10  # captured stones: on small boards a few captures decide nothing (2x2: 25% is one stone)
POLICIES = ("uniform", "mogo", "learnt")


@dataclasses.dataclass(frozen=True)
class PlayoutConfig:
    """Static playout settings (hashable: part of the jit cache key)."""

    # "uniform" (SPEC.md "Playouts"), "mogo": the rule cascade of kernels/policy.py
    # (seed 000 sec. 3.6), each rule gated by its probability below, or "learnt": the softmax
    # over features of kernels/learnt.py (Coulom 2007), weights from `policy_model`.
    policy: str = "uniform"
    policy_model: str = ""  # the learnt policy's .npz (kernels/learnt.save_model); "" = the bundled 9x9 model
    # the learnt policy's logits times this (1 = as fitted; higher plays sharper, lower more randomly)
    policy_scale: float = 1.0
    # A learnt-policy move drawn with a probability above this earns no AMAF credit (with "first"
    # it still blocks later credit at its point; 1 = every move earns it): a move the policy all
    # but forces is played in most playouts whatever it is worth, so its AMAF value says little.
    amaf_max_prob: float = 1.0
    # The learnt policy plays a uniform move (rule "uniform") instead of its own draw with this
    # probability (resolution 1/256), as MoGo's cascade falls through to one about half the time:
    # moves no policy chose keep the AMAF values informative.
    uniform_mix: float = 0.0
    # The MoGo cascade's last rule (policy "mogo"): "uniform", or "learnt" (a draw from the learnt
    # policy, `policy_model` at `policy_scale`, in place of the uniform move; still rule "uniform").
    fallback: str = "uniform"
    # AMAF first-play rule (seed 000 eq. 16-17; SPEC.md "Search"): "first" credits (c, p) when the
    # first play at p after the start was by c (Fuego); "same_colour" when c played p at all
    # (skips only earlier plays by the same colour, as Algorithm 2's pseudocode).
    amaf_rule: str = "first"
    # False: a move chosen by a rule of the policy (anything but the uniform draw, or a learnt
    # draw under amaf_max_prob) earns no AMAF credit (with "first" it still blocks later credit at its point).  A rule that answers the
    # same way in every playout makes "played at some point" a fact about the policy, not the move.
    amaf_rule_moves: bool = True
    # Only the first `amaf_horizon` playout moves earn AMAF credit (0 = all): a move played late,
    # after the fights near the start are settled, says little about playing it now.
    amaf_horizon: int = 0
    # AMAF credit weighted by how early in the playout the first play came: a point first played
    # at step t of a playout of T moves earns (1 + d (T - t) / T) / (1 + d), so 1 at the start
    # (as the tree's own moves) falling to 1 / (1 + d) at the end (0 = every credit 1).  Early
    # moves answer the position the node holds; late ones a board the playout has rebuilt.
    # Needs amaf_rule "first".
    amaf_decay: float = 0.0
    # Move cap per playout; None = 3 N^2 (SPEC.md).
    move_cap: int | None = None
    # Move steps per test of the loop's condition (whether any board still plays): on a GPU each
    # test is a device-to-host read per iteration unless the loop is captured in a CUDA graph,
    # and a small batch's moves are microseconds.  Steps past the end leave the boards as they
    # are (a select), so every value plays the same moves.
    steps_per_test: int = 1
    # A playout also ends after `cycle_moves` moves in a row that each recreate one of the
    # `cycle_window` positions before it (0 = never): a superko cycle such as a triple ko, which
    # the playouts' simple-ko rule allows and the MoGo capture rule keeps replaying.  Without this
    # such a playout runs to the cap, and its whole batch with it (19x19 MoGo from the empty board:
    # one such cycle per ~250 playouts; a batch of 256 with one takes ~1.7x as long).  A few
    # repetitions (a ko taken back and forth) do not stop a playout: 24 moves is four turns of a
    # triple ko.  Periods above the window (five kos at once) still end at the cap.  32-bit
    # Zobrist hashes: false matches are negligible.
    cycle_window: int = 8
    cycle_moves: int = 24
    # Mercy rule (as in Fuego): a playout also ends once one colour has captured more stones than
    # the other since the start by `mercy` times the board's points, and at least MERCY_MIN
    # (0 = never; 0.25: 20 stones on 9x9, 90 on 19x19), scored as it stands.  The random
    # players do not come back from such a lead, and the moves after it (the loser's groups
    # eaten, the space refilled) make the longest playouts, which hold their whole batch.  Off here, because a stopped playout's
    # score and ownership are not final (gojax.evaluate reports them); the search turns it on
    # (SearchParams.mercy), where only the winner counts.
    mercy: float = 0.0
    # --- the MoGo rules (policy="mogo"), in cascade order; resolution 1/256 -------------------
    save_prob: float = 1.0  # rule 1: save own stones the last move put in atari
    save_min_liberties: int = 3  # an extension "saves" only with this many liberties after it
    #                              (2 would count a ladder escape, which only prolongs the ladder)
    nakade_prob: float = 0.0  # the vital point of a 3-point eye space
    fill_board_prob: float = 0.0  # a point whose 3x3 block is empty (MoGo's "fill board")
    # after save: an own chain next to the last move with two liberties extends to three or more;
    # or the last move's chain with two liberties is put in atari where the escape at its other
    # liberty gains at most one empty point and joins nothing (kernels/policy.py)
    two_lib_prob: float = 0.0
    pattern_prob: float = 1.0  # rule 2: a 3x3 hane/cut pattern around the last move
    # the rule's patterns: "" = MoGo's hane and cut shapes; else the path of a uint8 [2, 65536]
    # table (kernels/patterns.playout_table), e.g. the learnt shapes of `gojax export-patterns`
    playout_patterns: str = ""
    capture_prob: float = 1.0  # rule 3: capture an opponent chain in atari anywhere
    # rule 4's uniform move: with this probability a move that puts two or more of the mover's
    # stones in atari (and captures nothing that frees them) is struck out and the uniform draw
    # made once more (Fuego and Pachi reject such self-ataris in their playouts)
    self_atari_prob: float = 0.0
    # --- learned rules, before the policy (seed 004 sec. IV); any policy ------------------------
    pool_prob: float = 0.0  # poolRave p: play a legal move of the leaf's AMAF top-k pool
    cmc_prob: float = 0.0  # CMC p: the reply maximising V_c(a, b) to the mover's previous move b
    cmc_min_count: float = 8.0  # pairs seen fewer times than this are ignored

    def __post_init__(self):
        if self.policy not in POLICIES:
            raise ValueError(f"unknown playout policy {self.policy!r} (have: {', '.join(POLICIES)})")
        if self.fallback not in ("uniform", "learnt"):
            raise ValueError(f"fallback must be uniform or learnt, got {self.fallback!r}")
        if self.policy == "learnt" or self.fallback == "learnt":
            from gojax.kernels.learnt import load_model
            load_model(self.policy_model)  # a bad file fails here (ModelError, a ValueError), not in a playout
            if self.policy == "learnt" and (self.pool_prob or self.cmc_prob):
                raise ValueError("the learnt playout policy takes no poolRave or CMC rule (pool_prob, cmc_prob: 0)")
            if not 0 <= self.uniform_mix <= 1:
                raise ValueError(f"uniform_mix must be in [0, 1], got {self.uniform_mix}")
            if not 0 < self.amaf_max_prob <= 1:
                raise ValueError(f"amaf_max_prob must be in (0, 1], got {self.amaf_max_prob}")
            if self.policy_scale < 0:
                raise ValueError(f"policy_scale must be >= 0, got {self.policy_scale}")
        if self.playout_patterns:
            try:
                playout_table(self.playout_patterns)  # a bad file fails here, not inside a playout
            except OSError as err:
                raise ValueError(f"playout patterns {self.playout_patterns}: {err.strerror or err}") from None
        if not 0.0 <= self.mercy <= 1.0:
            raise ValueError(f"mercy must be in [0, 1] (0 = off), got {self.mercy}")
        if self.steps_per_test < 1:
            raise ValueError(f"steps_per_test must be at least 1, got {self.steps_per_test}")
        if self.cycle_window < 0 or self.cycle_moves < 1:
            raise ValueError(f"need cycle_window >= 0 and cycle_moves >= 1, got {self.cycle_window}, {self.cycle_moves}")
        if self.amaf_rule not in AMAF_RULES:
            raise ValueError(f"amaf_rule must be one of {AMAF_RULES}, got {self.amaf_rule!r}")
        if self.amaf_decay < 0 or (self.amaf_decay and self.amaf_rule != "first"):
            raise ValueError(f"amaf_decay must be >= 0, and needs amaf_rule 'first' (got {self.amaf_decay}, "
                             f"{self.amaf_rule!r})")
        if self.amaf_horizon < 0:
            raise ValueError(f"amaf_horizon must be >= 0 (0 = every move), got {self.amaf_horizon}")
        for name in ("save_prob", "nakade_prob", "fill_board_prob", "pattern_prob", "capture_prob",
                     "self_atari_prob", "two_lib_prob", "pool_prob", "cmc_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")

    @property
    def plain_uniform(self) -> bool:
        """Uniform with no learned rule: the fast path (one random word per move)."""
        return self.policy == "uniform" and self.pool_prob == 0 and self.cmc_prob == 0


@chex.dataclass(frozen=True)
class PlayoutResult:
    z: chex.Array  # float32 [L, K]  1 Black win, 0 White win, 0.5 tie
    score: chex.Array  # float32 [L, K]  Black area - White area - komi
    moves: chex.Array  # int32 [L, K]  moves played (passes included) until two passes, the cap or a ko cycle
    cap_hit: chex.Array  # bool [L, K]  stopped by the move cap
    cycle_hit: chex.Array  # bool [L, K]  stopped in a superko cycle (PlayoutConfig.cycle_window);
    #                        scored as it stands, as at the cap
    mercy_hit: chex.Array  # bool [L, K]  stopped by the mercy rule (PlayoutConfig.mercy), scored as it stands
    first_move: chex.Array  # int16 [L, K]  each playout's first move (point; -1 pass; -2 none, the
    #                         start was already over): Algorithm 2 backs it up as the new node's MC edge
    wins: chex.Array  # float32 [L]  sum of z over the K playouts
    ownership: chex.Array  # float32 [L, P]  mean owner: +1 Black, -1 White, 0 dame
    amaf_count: chex.Array  # float32 [L, 2, P]  playouts crediting (colour, point), each by its weight
    #                         (PlayoutConfig.amaf_decay; 1 without); colour 0 Black, 1 White
    amaf_wins: chex.Array  # float32 [L, 2, P]  sum of z over those playouts
    rule_counts: chex.Array  # int32 [L, R]  moves chosen by each rule of kernels/policy.RULES
    start_legal: chex.Array  # bool [L, P]  points the side to move may play at each START position
    #                          (simple ko, no superko): the search's legal mask for a new node
    start_capture: chex.Array  # bool [L, P]  those of them that capture (the host checks superko there)
    start_prior: chex.Array | None = None  # int8 [L, P]  kernels/policy.prior_codes of each start
    #                                        position; filled by search.mcts.Simulator for the MoGo prior
    history: chex.Array | None = None  # int16 [L, K, cap] points played, -1 pass, -2 after the end;
    #                                    only with record_moves=True (tests, debugging)
    cmc_count: chex.Array | None = None  # float32 [2, P, P] playouts in which colour c played both
    #                                      points (first plays, as AMAF), summed over the batch;
    #                                      only when CMC tables were passed in
    cmc_wins: chex.Array | None = None  # float32 [2, P, P] their sum of outcomes for colour c


def _mark(amaf: jax.Array, cell: jax.Array, mover: jax.Array, amaf_rule: str) -> jax.Array:
    """One board's first-play record with `cell` (0 = pass: no mark) played by `mover`."""
    at = (jnp.arange(amaf.shape[-1]) == cell) & (cell != 0)
    mark = jnp.where(amaf == 0, mover, amaf) if amaf_rule == "first" else amaf | mover
    return jnp.where(at, mark, amaf)


def _choose_batch(state: BoardState, done: jax.Array, words: jax.Array, pool, cmc, config: PlayoutConfig,
                  check_rows: int):
    """Boards [B]: (the playout moves (0 = pass; done boards pass, which leaves the stones alone),
    the rules that chose them).  words: uint32 [B] (plain uniform) or [B, 4] (kernels/policy.choose).

    The MoGo policy is kernels/policy.choose split in three: the cascade on every board, then
    the exact liberty check of the pick (an O(M) pass per board) only on the boards whose pick
    needs it and is not sure to pass, gathered `check_rows` at a time into a dense sub-batch,
    then the choice.  The same moves as policy.choose on each board (tests/test_policy.py)."""
    legal = jax.vmap(functools.partial(rules.legal_mask, exclude_eyes=True))(state)
    if config.policy == "learnt":
        drawn = words if words.ndim == 1 else words[:, 0]
        cells, prob = jax.vmap(lambda st, lg, wd: learnt.select(st, lg, wd, config.policy_model,
                                                                 config.policy_scale))(state, legal, drawn)
        rule = jnp.where(prob > config.amaf_max_prob, policy.LEARNT_SURE, policy.LEARNT)
        if config.uniform_mix:  # the gate is words[:, 1]'s low byte, which select_uniform does not read
            uniform = (words[:, 1] & 0xFF) < jnp.uint32(int(round(config.uniform_mix * 256)))
            cells = jnp.where(uniform, jax.vmap(select_uniform)(legal, words[:, 1]), cells)
            rule = jnp.where(uniform, policy.UNIFORM, rule)
        return jnp.where(done, 0, cells), rule
    if config.plain_uniform:
        return jnp.where(done, 0, jax.vmap(select_uniform)(legal, words)), jnp.full(done.shape, policy.UNIFORM)
    b = done.shape[0]
    prop = jax.vmap(lambda st, lg, wd, pl, cm: policy.propose(st, lg, wd, config, pl, cm),
                    in_axes=(0, 0, 0, None if pool is None else 0, None))(state, legal, words, pool, cmc)
    todo = prop["checked"] & ~prop["sure"] & ~done

    def check(i):
        sub = jax.tree_util.tree_map(lambda x: x[i], state)
        sub_prop = {k: v[i] for k, v in prop.items()}
        return policy.check_passes(sub_prop, *jax.vmap(policy.liberties_after)(sub, sub_prop["pick"]))

    ok = rules.on_flagged_rows(check, todo, check_rows, jnp.ones(b, bool))
    cells, rule = policy.finish(prop, ok)
    return jnp.where(done, 0, cells), rule


def _zobrist(m: int) -> np.ndarray:
    """uint32 [3, M]: a fixed random word per (colour, cell); row 0 (empty) is zero, so a
    position's hash is the XOR of its stones' words."""
    words = np.random.default_rng(0x60_1A_C5).integers(1, 2 ** 32, size=(3, m), dtype=np.uint32)
    words[0] = 0
    return words


def _position_hash_change(before: jax.Array, after: jax.Array) -> jax.Array:
    """uint32 [B]: XOR of the Zobrist words of the cells whose colour changed (int8 [B, M])."""
    table = _zobrist(before.shape[-1])

    def words(c):
        return jnp.where(c == BLACK, table[BLACK], jnp.where(c == WHITE, table[WHITE], jnp.uint32(0)))
    return jax.lax.reduce(words(before) ^ words(after), np.uint32(0), jax.lax.bitwise_xor, (1,))


class _LoopState(NamedTuple):
    """The playout loop's carry: B boards, one row each."""
    state: BoardState  # the boards as they stand
    amaf: jax.Array  # int8 [B, M]  first-play marks (_mark)
    moves: jax.Array  # int32 [B]  moves played so far (passes included)
    done: jax.Array  # bool [B]  the playout has ended (it passes from then on)
    t: jax.Array  # int32 []  loop step
    history: jax.Array  # int16 [B, cap or 0]  points played (record_moves)
    first: jax.Array  # int16 [B]  the first move (PlayoutResult.first_move)
    rule_counts: jax.Array  # int32 [B, R]  moves chosen by each policy rule
    pos_hash: jax.Array  # uint32 [B]  Zobrist hash relative to the start
    recent: jax.Array  # uint32 [B, cycle_window]  the last hashes, a ring
    run: jax.Array  # int32 [B]  consecutive moves that repeated a recent position
    lead: jax.Array  # int32 [B]  stones captured by Black minus by White (mercy rule)
    when: jax.Array  # int16 [B, M or 0]  loop step of each cell's first mark (amaf_decay)


# The counter's first word for the first-move draw (`first_moves`); the loop's own words use the
# move step, which stays below the move cap.
_FIRST_COUNTER = np.uint32(0xFFFF_FF00)


def first_moves(starts: BoardState, keys: jax.Array, logits: jax.Array) -> jax.Array:
    """int32 [B]: a cell per board drawn from softmax(logits) (float32 [B, P], point order) over
    its legal points that are not its mover's eyes, by Gumbel-max on words of its own (keys
    uint32 [B, 2], rng.board_keys); 0 where no such point exists (the policy chooses there)."""
    g = geometry_of(starts)
    b, p = logits.shape
    words, _ = rng.threefry2x32(keys[:, :1], keys[:, 1:], _FIRST_COUNTER, jnp.arange(p, dtype=jnp.uint32)[None])
    u = ((words >> np.uint32(8)).astype(jnp.float32) + 0.5) * np.float32(2.0 ** -24)  # in (0, 1)
    legal = jax.vmap(functools.partial(rules.legal_mask, exclude_eyes=True))(starts)[:, g.point_to_cell]
    score = jnp.where(legal, logits - jnp.log(-jnp.log(u)), -jnp.inf)
    cells = jnp.asarray(g.point_to_cell, jnp.int32)[jnp.argmax(score, axis=1)]
    return jnp.where(legal.any(1), cells, 0)


def _playout_loop(starts: BoardState, key: jax.Array, config: PlayoutConfig, record_moves: bool, pool, cmc,
                  first_logits=None):
    """Batched boards [B] -> (final states, amaf [B, M], moves [B], cap_hit [B], cycle_hit [B],
    mercy_hit [B], history, first, rule counts [B, R], first-mark steps [B, M or 0]).
    first_logits: float32 [B, P] or None (run_playouts)."""
    g = geometry_of(starts)
    cap = config.move_cap or g.move_cap
    b, m = starts.color.shape
    choose = functools.partial(_choose_batch, config=config, check_rows=max(1, b // 4))
    mark = jax.vmap(functools.partial(_mark, amaf_rule=config.amaf_rule))
    recount_rows = max(1, b // 8)
    extra = 0 if config.plain_uniform or (config.policy == "learnt" and not config.uniform_mix) else \
        1 if config.policy == "learnt" else 3  # words beyond the first

    to_point = jnp.asarray(g.cell_to_point, jnp.int16)
    keys = rng.board_keys(key, b)  # uint32 [B, 2], once: the loop hashes (key, move) itself
    first_pick = None if first_logits is None else first_moves(starts, keys, first_logits)

    window = config.cycle_window
    mercy = max(MERCY_MIN, round(config.mercy * g.num_points)) if config.mercy else 0  # captured stones

    def cond(s: _LoopState):
        return (s.t < cap) & ~s.done.all()

    def body(s: _LoopState) -> _LoopState:
        for i in range(config.steps_per_test):
            if i == 0:
                s = step(s)
            else:  # past the end a step must change nothing: `t` and the passes would count on
                s = jax.tree_util.tree_map(functools.partial(jnp.where, cond(s)), step(s), s)
        return s

    def step(s: _LoopState) -> _LoopState:
        state = s.state
        words = rng.step_words(keys, s.t, 1 + extra)  # [B, 1 + extra]
        if not extra:
            words = words[:, 0]
        cells, rule = choose(state, s.done, words, pool, cmc)
        if first_pick is not None:  # the prior's answer to the leaf's move, counted as a learnt draw
            take = (s.t == 0) & (first_pick > 0) & ~s.done
            cells = jnp.where(take, first_pick, cells)
            rule = jnp.where(take, policy.LEARNT, rule)
        if config.amaf_rule_moves and config.amaf_max_prob >= 1:
            amaf = mark(s.amaf, cells, state.to_play)
        else:  # 3 matches neither colour's credit; under "same_colour" a 0 leaves no mark at all
            no_credit = jnp.int8(3 if config.amaf_rule == "first" else 0)
            credit = rule != policy.LEARNT_SURE
            if not config.amaf_rule_moves:
                credit = (rule == policy.UNIFORM) | (rule == policy.LEARNT)
            amaf = mark(s.amaf, cells, jnp.where(credit, state.to_play.astype(jnp.int8), no_credit))
        if config.amaf_horizon:  # past the horizon nothing is marked, so nothing is credited or blocked
            amaf = jnp.where(s.t < config.amaf_horizon, amaf, s.amaf)
        when = jnp.where(amaf != s.amaf, s.t.astype(jnp.int16), s.when) if config.amaf_decay else s.when
        counts = s.rule_counts + (jax.nn.one_hot(rule, s.rule_counts.shape[1], dtype=jnp.int32) * (~s.done)[:, None])
        first = jnp.where(s.t == 0, jnp.where(s.done, jnp.int16(NO_MOVE), to_point[cells]), s.first)
        mover = jnp.where(state.to_play == BLACK, 1, -1).astype(jnp.int32)
        after, taken = rules.play_batch(state, cells, recount_rows)
        lead, history, pos_hash, recent, run = s.lead, s.history, s.pos_hash, s.recent, s.run
        if mercy:  # stones captured by Black minus by White in this playout
            lead = lead + mover * taken
        if record_moves:
            played = jnp.where(s.done, jnp.int16(NO_MOVE), to_point[cells])  # PASS_CELL maps to PASS_POINT
            history = jax.lax.dynamic_update_slice(history, played[:, None], (0, s.t))
        if window:
            # Hashes relative to the start (0); `recent` starts full of 0s, so coming back to
            # the start position counts too.  A pass repeats the position: it neither counts
            # nor breaks a run.
            pos_hash = pos_hash ^ _position_hash_change(state.color, after.color)
            repeat = (recent == pos_hash[:, None]).any(1)
            recent = recent.at[:, s.t % window].set(pos_hash)
            run = jnp.where(cells == 0, run, jnp.where(repeat, run + 1, 0))
        moves = s.moves + (~s.done).astype(jnp.int32)
        done = s.done | (after.passes >= 2) | (moves >= cap) | (run >= config.cycle_moves)
        if mercy:
            done = done | (jnp.abs(lead) >= mercy)
        return _LoopState(after, amaf, moves, done, s.t + 1, history, first, counts, pos_hash, recent, run, lead, when)

    # first starts at NO_MOVE: when every start is already over the loop body never runs.
    init = _LoopState(
        state=starts, amaf=jnp.zeros((b, m), jnp.int8), moves=jnp.zeros(b, jnp.int32), done=starts.passes >= 2,
        t=jnp.int32(0), history=jnp.full((b, cap if record_moves else 0), NO_MOVE, jnp.int16),
        first=jnp.full(b, NO_MOVE, jnp.int16), rule_counts=jnp.zeros((b, len(policy.RULES)), jnp.int32),
        pos_hash=jnp.zeros(b, jnp.uint32), recent=jnp.zeros((b, window), jnp.uint32), run=jnp.zeros(b, jnp.int32),
        lead=jnp.zeros(b, jnp.int32), when=jnp.zeros((b, m if config.amaf_decay else 0), jnp.int16))
    end = jax.lax.while_loop(cond, body, init)
    state, moves, lead, run = end.state, end.moves, end.lead, end.run
    cycle = run >= config.cycle_moves
    # (no passes test here: a board that stopped passes from then on while the others play)
    mercy_hit = (jnp.abs(lead) >= mercy) & ~cycle if mercy else jnp.zeros(b, bool)
    cap_hit = (moves >= cap) & (state.passes < 2) & ~cycle & ~mercy_hit
    return state, end.amaf, moves, cap_hit, cycle, mercy_hit, end.history, end.first, end.rule_counts, end.when


@functools.partial(jax.jit, static_argnames=("playouts_per_position", "config", "record_moves"))
def run_playouts(starts: BoardState, key: jax.Array, playouts_per_position: int,
                 config: PlayoutConfig = PlayoutConfig(), record_moves: bool = False,
                 pool: jax.Array | None = None, cmc: tuple[jax.Array, jax.Array] | None = None,
                 first_logits: jax.Array | None = None) -> PlayoutResult:
    """K = playouts_per_position playouts from each of the L boards of `starts` ([L] batched).

    `key` is one PRNG key for the whole batch, or an [L] array of keys, one per start position
    (playout j of position l then draws from fold_in(key[l], j), so a position's results do not
    depend on which batch or device it is evaluated in).

    pool: int32 [L, 2, k] poolRave cells per position and colour (row 0 Black; 0 = empty slot),
    used with probability config.pool_prob.  cmc: (wins, counts) float32 [2, P, P], the CMC
    tables V_c(a, b) = wins / counts, used with probability config.cmc_prob; the result then
    carries this batch's pair statistics to add to them (PlayoutResult.cmc_count / cmc_wins).
    first_logits: float32 [L, P] (point order) or None: each playout's first move is drawn from
    softmax(first_logits[l]) over the legal points that are not the mover's eyes (`first_moves`),
    not by the policy: a search's prior answering the leaf's move (SearchParams.prior_reply).

    Playouts keep going from the start states as they are (a state whose `passes` is already 2 is
    scored as it stands).  Compiles once per (board size, L, K, config, pool size)."""
    g = geometry_of(starts)
    k = playouts_per_position
    l = starts.color.shape[0]
    boards = jax.tree_util.tree_map(lambda x: jnp.repeat(x, k, axis=0), starts)
    if key.ndim:
        key = jax.vmap(lambda kl: jax.vmap(lambda j: jax.random.fold_in(kl, j))(jnp.arange(k)))(key).reshape(l * k)
    if pool is not None:
        pool = jnp.repeat(jnp.asarray(pool, jnp.int32), k, axis=0)
    if first_logits is not None:
        first_logits = jnp.repeat(jnp.asarray(first_logits, jnp.float32), k, axis=0)
    final, amaf, moves, cap_hit, cycle, mercy, history, first, counts, when = _playout_loop(
        boards, key, config, record_moves, pool, cmc, first_logits)

    owner, diff = jax.vmap(rules.area)(final.color)
    score = diff.astype(jnp.float32) - final.komi
    z = jnp.where(score > 0, 1.0, jnp.where(score < 0, 0.0, 0.5)).astype(jnp.float32)

    to_points = jnp.asarray(g.point_to_cell)
    owner_p = owner[:, to_points]  # [B, P]
    signed = jnp.where(owner_p == BLACK, 1.0, jnp.where(owner_p == WHITE, -1.0, 0.0))
    amaf_p = amaf[:, to_points]
    if config.amaf_rule == "first":
        credit = jnp.stack([amaf_p == BLACK, amaf_p == WHITE], axis=1)  # [B, 2, P]
    else:
        credit = jnp.stack([(amaf_p & BLACK) != 0, (amaf_p & WHITE) != 0], axis=1)

    def per_position(x):
        return x.reshape((l, k) + x.shape[1:])

    pair_count = pair_wins = None
    if cmc is not None:  # V_c(a1, a2): playouts in which colour c played both (first plays)
        played = credit.astype(jnp.float32)  # [B, 2, P]
        reward = jnp.stack([z, 1.0 - z], 1)  # [B, 2] outcome for each colour
        pair_count = jnp.einsum("bcp,bcq->cpq", played, played)
        pair_wins = jnp.einsum("bcp,bcq->cpq", played * reward[:, :, None], played)
    credit = credit.astype(jnp.float32)
    if config.amaf_decay:
        d = config.amaf_decay
        length = jnp.maximum(moves, 1).astype(jnp.float32)[:, None]  # [B, 1]
        early = (length - when[:, to_points].astype(jnp.float32)) / length  # 1 at the start .. 1/T at the end
        credit = credit * ((1.0 + d * early) / (1.0 + d))[:, None, :]
    credit = per_position(credit)
    zk = per_position(z)
    start_legal, start_capture = jax.vmap(rules.legal_and_capture_masks)(starts)
    return PlayoutResult(
        z=zk, score=per_position(score), moves=per_position(moves), cap_hit=per_position(cap_hit),
        cycle_hit=per_position(cycle), mercy_hit=per_position(mercy),
        first_move=per_position(first),
        wins=zk.sum(1),
        ownership=per_position(signed).mean(1),
        amaf_count=credit.sum(1),
        amaf_wins=(credit * zk[:, :, None, None]).sum(1),
        rule_counts=per_position(counts).sum(1),
        start_legal=start_legal[:, to_points], start_capture=start_capture[:, to_points],
        history=per_position(history) if record_moves else None,
        cmc_count=pair_count, cmc_wins=pair_wins,
    )


def empty_boards(geometry: Geometry, batch: int, komi: float = 7.5) -> BoardState:
    """[batch] empty boards with Black to move."""
    from gojax.kernels.host import Board
    from gojax.kernels.state import from_host
    one = from_host(Board(geometry.size, komi))
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch,) + x.shape), one)


@functools.cache
def sharded_playouts(n_devices: int, playouts_per_position: int, config: PlayoutConfig = PlayoutConfig(),
                     local: bool = False):
    """run_playouts split over the first n_devices of jax.devices() (with `local`, of this
    process's own, jax.local_devices(): work that other processes do not share) along the
    position axis.

    Returns (fn, sharding): fn(starts [L], keys [L], pool [L, 2, k] or None, first_logits [L, P]
    or None) -> PlayoutResult,
    L a multiple of n_devices (pad_to_multiple), one key per position (so the numbers do not
    depend on n_devices); callable inside jit.  Each device runs its own playout loop on its
    slice (shard_map): no cross-device traffic inside a playout, and a device whose boards finish
    early does not wait for the others' moves.  No CMC tables: they would need a sum over devices."""
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    mesh = Mesh(np.array((jax.local_devices() if local else jax.devices())[:n_devices]), ("d",))
    spec = PartitionSpec("d")

    def fn(states, keys, pool=None, first_logits=None):
        given = {name: x for name, x in (("pool", pool), ("first_logits", first_logits)) if x is not None}

        def local(states, keys, *rest):
            return run_playouts(states, keys, playouts_per_position, config, **dict(zip(given, rest)))
        args = (states, keys, *given.values())
        return jax.shard_map(local, mesh=mesh, in_specs=(spec,) * len(args), out_specs=spec, check_vma=False)(*args)

    return fn, NamedSharding(mesh, spec)


def pad_to_multiple(states: BoardState, keys: jax.Array, multiple: int, *rows: jax.Array | None):
    """Repeat the first position (its key, and its row of each of `rows`: a pool, first-move
    logits, or None) until L is a multiple of `multiple`; returns (states, keys, *rows)."""
    args = (states, keys, *rows)
    pad = (-states.color.shape[0]) % multiple
    if not pad:
        return args
    return jax.tree_util.tree_map(lambda x: jnp.concatenate([x, jnp.repeat(x[:1], pad, 0)]), args)
