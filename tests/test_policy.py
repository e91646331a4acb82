"""The MoGo playout policy (kernels/policy.py): each rule fires where it must and not where it
must not, the device masks equal the host twin (kernels/policy_host.py) on random positions,
and with every probability at 0 the policy is the uniform one, draw for draw."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gojax.kernels import policy, policy_host, rules
from gojax.kernels.host import Board
from gojax.kernels.patterns import neighbourhood_index, pattern_table
from gojax.kernels.playout import PlayoutConfig, run_playouts
from gojax.kernels.state import batch_from_host, from_host
from tests.helpers import board

MOGO = PlayoutConfig(policy="mogo")
ONLY = dict(save_prob=0.0, pattern_prob=0.0, capture_prob=0.0, nakade_prob=0.0, fill_board_prob=0.0)


def only(**probs) -> PlayoutConfig:
    """The MoGo policy with every rule off except those given."""
    return dataclasses.replace(MOGO, **{**ONLY, **probs})


@functools.partial(jax.jit, static_argnames="config")
def _choose_many(state, words, config):
    legal = rules.legal_mask(state, exclude_eyes=True)
    return jax.vmap(lambda w: policy.choose(state, legal, w, config))(words)


def choices(b: Board, last: str | None, config: PlayoutConfig = MOGO, n: int = 64) -> list[tuple[str, str]]:
    """n draws of the policy on b answering `last`: (vertex or 'pass', rule name)."""
    g = b.geometry
    state = from_host(b).replace(last=jnp.int32(g.point_to_cell[g.from_gtp(last)] if last else 0))
    words = jax.random.bits(jax.random.key(7), (n, 4), jnp.uint32)
    cells, rule = jax.device_get(_choose_many(state, words, config))
    out = []
    for c, r in zip(cells, rule):
        p = int(g.cell_to_point[c])
        out.append(("pass" if p < 0 else g.to_gtp(p), policy.RULES[int(r)]))
    return out


def test_save_extends_a_stone_put_in_atari():
    b = board("""
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . X O X . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, "W")  # Black's last move E4 put O D4 in atari; extending at D3 gives 3 liberties
    assert set(choices(b, "E4")) == {("D3", "save")}


def test_no_save_for_an_extension_that_only_runs_into_a_ladder():
    b = board("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . X O . . .
        . . . X X . .
        . . . . . . .
    """, "W")  # Black D4 ataris O D3; extending at E3 gives 2 liberties and Black ladders it at E4
    g = b.geometry
    host = policy_host.candidate_points(b, g.from_gtp("D4"))
    assert host["save_extend"] == {g.from_gtp("E3")}  # a candidate, rejected by the liberty check
    assert policy_host.liberties_after(b, g.from_gtp("E3"))[0] == 2
    assert "save" not in {r for _, r in choices(b, "D4")}
    # Counting a 2-liberty escape as a save (MoGo's original rule) makes it fire.
    assert {r for _, r in choices(b, "D4", dataclasses.replace(MOGO, save_min_liberties=2))} == {"save"}


def test_save_captures_the_attacker_or_extends():
    b = board("""
        . . . . . . .
        . . . . . . .
        . . . X O . .
        . . X O X O .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, "W")  # Black E4 ataris O D4, but X E4 is itself in atari: capture it at E3, or extend at D3
    g = b.geometry
    host = policy_host.candidate_points(b, g.from_gtp("E4"))
    assert host["save_capture"] == {g.from_gtp("E3")} and host["save_extend"] == {g.from_gtp("D3")}
    assert set(choices(b, "E4")) == {("E3", "save"), ("D3", "save")}


def test_two_lib_extends_a_stone_left_with_two_liberties():
    b = board("""
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . X O . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, "W")  # Black C4 leaves O D4 with D3 and E4; either extension gives four liberties
    assert set(choices(b, "C4", only(two_lib_prob=1.0))) == {("D3", "two_lib"), ("E4", "two_lib")}
    assert "two_lib" not in {r for _, r in choices(b, "C4", only())}  # off by default


def test_two_lib_ataris_a_stone_whose_escape_is_hopeless():
    b = board("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        X X X . . . .
        X O . X . . .
        . . X . . . .
    """, "B")  # O B2 has C2 and B1; escaping at either gains at most A1: atari it at both
    g = b.geometry
    assert policy_host.candidate_points(b, g.from_gtp("B2"))["two_lib_attack"] == {g.from_gtp("C2"), g.from_gtp("B1")}
    assert set(choices(b, "B2", only(two_lib_prob=1.0))) == {("C2", "two_lib"), ("B1", "two_lib")}


def test_two_lib_leaves_a_stone_that_runs_out_and_defends_instead():
    b = board("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . X O . . .
    """, "B")  # O D1 has D2 and E1, and each escape gains two liberties: no atari; X C1 (two
    #             liberties, next to D1) extends instead
    g = b.geometry
    assert policy_host.candidate_points(b, g.from_gtp("D1"))["two_lib_attack"] == set()
    assert set(choices(b, "D1", only(two_lib_prob=1.0))) == {("B1", "two_lib"), ("C2", "two_lib")}


def test_a_rule_turned_off_is_not_computed():
    """The two-liberty masks are about a quarter of a move's choice.  Off (the default), XLA must
    drop them from the compiled kernel: once the pick's check read them whatever the rule's
    probability, and the default playouts ran 25% slower for it."""
    state = rules.with_chains(from_host(board("""
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . X O . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, "W")))
    words = jnp.zeros(4, jnp.uint32)

    def flops(config):
        fn = jax.jit(lambda s, w: policy.propose(s, rules.legal_mask(s, exclude_eyes=True), w, config))
        cost = fn.lower(state, words).compile().cost_analysis()
        return (cost[0] if isinstance(cost, list) else cost)["flops"]

    assert flops(MOGO) < 0.85 * flops(dataclasses.replace(MOGO, two_lib_prob=1.0))


def test_capture_rule_skips_a_snapback():
    b = board("""
        X . O O . O X
        X X O . O . X
        X O X X X O O
        O . O X O . O
        O X O . . O .
        O O . X X O O
        . O X X . . X
    """, "B")  # B4 captures O B5, but then X B4 + B3 have one liberty and O B5 takes both back
    g = b.geometry
    assert policy_host.candidate_points(b, None)["capture"] == {g.from_gtp("B4")}
    assert policy_host.liberties_after(b, g.from_gtp("B4")) == (1, 2, 1)
    assert "capture" not in {r for _, r in choices(b, None, only(capture_prob=1.0))}


def test_capture_rule_takes_a_stone_in_atari():
    b = board("""
        . . . . .
        . . . . .
        . O X O .
        . . O . .
        . . . . .
    """, "W")
    got = choices(b, None, only(capture_prob=1.0))
    assert set(got) == {("C4", "capture")}


def test_pattern_answers_a_hane():
    b = board("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . X O . . .
        . . . X . . .
        . . . . . . .
        . . . . . . .
    """, "W")  # Black D3 hane under O D4; the patterns answer around D3
    g = b.geometry
    want = {g.to_gtp(p) for p in policy_host.candidate_points(b, g.from_gtp("D3"))["pattern"]}
    assert want, "a hane/cut pattern matches next to the last move"
    got = choices(b, "D3", only(pattern_prob=1.0))
    assert {r for _, r in got} == {"pattern"} and {v for v, _ in got} <= want


def test_nakade_plays_the_vital_point():
    b = board("""
        . . . . . . .
        X X X X X . .
        X . . . X . .
        X X X X X . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, "W")
    assert set(choices(b, None, only(nakade_prob=1.0))) == {("C5", "nakade")}


def test_fill_board_plays_in_an_empty_block():
    b = board("""
        X . . . .
        . . . . .
        . . . . .
        . . . . .
        . . . . O
    """)
    g = b.geometry
    want = policy_host.candidate_points(b, None)["fill"]
    assert want == {g.from_gtp(v) for v in ("B2", "B3", "C2", "C3", "C4", "D3", "D4")}
    got = choices(b, None, only(fill_board_prob=1.0))
    assert {r for _, r in got} == {"fill"} and {v for v, _ in got} <= {g.to_gtp(p) for p in want}


def random_positions(size: int, count: int, seed: int) -> list[Board]:
    """Positions from random games (uniform over legal non-eye points) of random length."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        b = Board(size)
        for _ in range(int(rng.integers(0, 2 * size * size))):
            pts = sorted(policy_host.playable(b))
            if not pts or rng.random() < 0.02:
                b.play(None)
                if b.passes >= 2:
                    break
                continue
            b.play(int(rng.choice(pts)), superko=False)
        out.append(b)
    return out


@pytest.mark.parametrize("size,count", [(5, 300), (9, 700)])
def test_device_masks_equal_the_host_twin(size, count):
    boards = random_positions(size, count, seed=size)
    states = batch_from_host(boards)
    legal = jax.vmap(functools.partial(rules.legal_mask, exclude_eyes=True))(states)
    masks = jax.device_get(jax.jit(jax.vmap(policy.candidate_masks))(states, legal))
    cells = boards[0].geometry.point_to_cell
    fired = {k: 0 for k in masks}
    for i, b in enumerate(boards):
        host = policy_host.candidate_points(b)
        for k, m in masks.items():
            got = set(np.flatnonzero(m[i][cells]).tolist())
            assert got == host[k], (k, str(b), b.moves[-1:])
            fired[k] += bool(got)
    assert all(v > 0 for k, v in fired.items()), fired  # every rule met a position where it fires


LEARNT = str(Path(policy.__file__).with_name("data") / "patterns_learnt9.npy")


def test_learnt_playout_patterns_match_on_device_and_host():
    """The pattern rule with the learnt table (search/shape.py's export): device = host twin,
    per colour to move, and it differs from MoGo's shapes."""
    boards = random_positions(9, 200, seed=3)
    states = batch_from_host(boards)
    legal = jax.vmap(functools.partial(rules.legal_mask, exclude_eyes=True))(states)
    masks = jax.device_get(jax.jit(jax.vmap(lambda s, m: policy.candidate_masks(s, m, LEARNT)))(states, legal))
    cells = boards[0].geometry.point_to_cell
    differs = 0
    for i, b in enumerate(boards):
        got = set(np.flatnonzero(masks["pattern"][i][cells]).tolist())
        assert got == policy_host.candidate_points(b, patterns=LEARNT)["pattern"], str(b)
        differs += got != policy_host.candidate_points(b)["pattern"]
    assert differs > 10


def test_learnt_playout_patterns_are_the_exported_model(tmp_path):
    from gojax.cli import main
    out = tmp_path / "t.npy"
    assert main(["export-patterns", str(out), "--threshold", "1.0"]) == 0
    np.testing.assert_array_equal(np.load(out), np.load(LEARNT))  # the shipped file is what the command writes
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros(10, np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        PlayoutConfig(policy="mogo", playout_patterns=str(bad))


@pytest.mark.parametrize("size", [7, 19])
def test_device_liberties_after_equal_the_host(size):
    boards = random_positions(size, 40, seed=100 + size)
    f = jax.jit(policy.liberties_after)
    for b in boards:
        state = from_host(b)
        for p in sorted(policy_host.playable(b))[:: max(1, size // 3)]:
            got = tuple(int(x) for x in f(state, jnp.int32(b.geometry.point_to_cell[p])))
            assert got == policy_host.liberties_after(b, p), (str(b), b.geometry.to_gtp(p))


def test_device_pattern_index_equals_the_host_on_random_positions():
    boards = random_positions(9, 200, seed=3)
    g = boards[0].geometry
    states = batch_from_host(boards)
    idx = jax.device_get(jax.vmap(policy.pattern_index, in_axes=(0, None))(
        states.color, jnp.asarray(g.point_to_cell, jnp.int32)))
    table = pattern_table()
    hits = 0
    for i, b in enumerate(boards):
        for p in range(g.num_points):
            assert idx[i, p] == neighbourhood_index(b.stones, 9, p)
            hits += bool(table[idx[i, p]]) and b.stones[p] == 0
    assert hits > 100


@pytest.mark.parametrize("per_board_keys", [False, True])
def test_every_probability_zero_is_the_uniform_policy(per_board_keys):
    starts = batch_from_host(random_positions(7, 4, seed=11))
    key = jax.random.key(5)
    if per_board_keys:
        key = jax.random.split(key, 4)
    a = run_playouts(starts, key, 8, PlayoutConfig(), record_moves=True)
    b = run_playouts(starts, key, 8, only(), record_moves=True)
    np.testing.assert_array_equal(np.asarray(a.history), np.asarray(b.history))
    assert int(b.rule_counts[:, policy.UNIFORM].sum()) == int(b.moves.sum())


def test_mogo_playouts_replay_legally_on_the_host():
    from tests.test_playout import replay
    starts = random_positions(9, 3, seed=2)
    cfg = dataclasses.replace(MOGO, nakade_prob=1.0, fill_board_prob=0.5, two_lib_prob=1.0)
    r = run_playouts(batch_from_host(starts), jax.random.key(1), 4, cfg, record_moves=True)
    cap = starts[0].geometry.move_cap
    for i, s in enumerate(starts):
        for j in range(4):
            final, _, _, moves, cycle, _ = replay(s, np.asarray(r.history[i, j]), cap, cfg)
            assert moves == int(r.moves[i, j]) and cycle == bool(r.cycle_hit[i, j])
            assert final.score() == pytest.approx(float(r.score[i, j]))
    counts = np.asarray(r.rule_counts).sum(0)
    assert counts[policy.SAVE] + counts[policy.PATTERN] + counts[policy.CAPTURE] > 0
    assert counts[policy.TWO_LIB] > 0


def test_pool_rave_plays_from_the_pool_when_legal():
    b = board("""
        . . . . .
        . . . . .
        . . X . .
        . . . . .
        . . . . .
    """, "W")
    g = b.geometry
    state = from_host(b)
    legal = rules.legal_mask(state, exclude_eyes=True)
    cells = [g.point_to_cell[g.from_gtp(v)] for v in ("C3", "B2", "D4")]  # C3 is occupied: never played
    pool = jnp.array([[0, 0, 0], cells], jnp.int32)  # row 1: White's pool
    cfg = dataclasses.replace(only(), pool_prob=1.0)
    words = jax.random.bits(jax.random.key(3), (64, 4), jnp.uint32)
    got = jax.vmap(lambda w: policy.choose(state, legal, w, cfg, pool=pool))(words)
    played = {g.to_gtp(int(g.cell_to_point[c])) for c in np.asarray(got[0])}
    assert played == {"B2", "D4"} and set(np.asarray(got[1]).tolist()) == {policy.POOL}


def test_cmc_replies_with_the_best_learned_answer_to_the_own_previous_move():
    b = board("""
        . . . . .
        . . . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    g = b.geometry
    p = g.num_points
    prev, best, other = (g.from_gtp(v) for v in ("C3", "D4", "B2"))
    state = from_host(b).replace(prev=jnp.int32(g.point_to_cell[prev]))
    counts = np.zeros((2, p, p), np.float32)
    wins = np.zeros((2, p, p), np.float32)
    counts[0, prev, best] = counts[0, prev, other] = 20.0
    wins[0, prev, best], wins[0, prev, other] = 15.0, 5.0  # V_black(D4 | C3) = 0.75 > V(B2 | C3) = 0.25
    wins[1, prev, other] = counts[1, prev, other] = 50.0  # White's table must not be read for Black
    legal = rules.legal_mask(state.replace(color=state.color.at[g.point_to_cell[prev]].set(1)), exclude_eyes=True)
    cfg = dataclasses.replace(only(), cmc_prob=1.0)
    cell, rule = policy.choose(state, legal, jnp.array([1, 2, 3, 4], jnp.uint32), cfg,
                               cmc=(jnp.asarray(wins), jnp.asarray(counts)))
    assert g.to_gtp(int(g.cell_to_point[int(cell)])) == "D4" and int(rule) == policy.CMC
    # Pairs seen fewer than cmc_min_count times are not trusted: the policy decides instead.
    counts[0] *= 0.1
    cell, rule = policy.choose(state, legal, jnp.array([1, 2, 3, 4], jnp.uint32), cfg,
                               cmc=(jnp.asarray(wins), jnp.asarray(counts)))
    assert int(rule) != policy.CMC


def test_cmc_pair_statistics_count_each_colours_played_pairs():
    starts = batch_from_host([Board(5)])
    p = 25
    zero = jnp.zeros((2, p, p), jnp.float32)
    r = run_playouts(starts, jax.random.key(2), 6, PlayoutConfig(cmc_prob=0.5), record_moves=True, cmc=(zero, zero))
    want = np.zeros((2, p, p))
    won = np.zeros((2, p, p))
    for j in range(6):
        firsts = {}
        b = Board(5)
        for q in np.asarray(r.history[0, j]):
            if q == -2:
                break
            if q >= 0:
                firsts.setdefault(int(q), b.to_play)
            b.play(None if q < 0 else int(q), superko=False)
        z = float(r.z[0, j])
        for c in (1, 2):
            pts = [q for q, who in firsts.items() if who == c]
            for a1 in pts:
                for a2 in pts:
                    want[c - 1, a1, a2] += 1
                    won[c - 1, a1, a2] += z if c == 1 else 1 - z
    np.testing.assert_allclose(np.asarray(r.cmc_count), want)
    np.testing.assert_allclose(np.asarray(r.cmc_wins), won)


def test_uniform_policy_with_an_empty_pool_is_still_uniform():
    """poolRave on top of uniform playouts adds only the pool rule, never the MoGo rules."""
    starts = batch_from_host(random_positions(7, 4, seed=12))
    key = jax.random.key(6)
    a = run_playouts(starts, key, 8, PlayoutConfig(), record_moves=True)
    empty = jnp.zeros((4, 2, 5), jnp.int32)
    b = run_playouts(starts, key, 8, PlayoutConfig(pool_prob=1.0), record_moves=True, pool=empty)
    np.testing.assert_array_equal(np.asarray(a.history), np.asarray(b.history))
    assert int(b.rule_counts[:, policy.UNIFORM].sum()) == int(b.moves.sum())



SELF_ATARI = """
    . . . . .
    . . . . .
    O O O . .
    X X . O .
    O . O . .
"""  # X A2 B2 has two liberties, B1 and C2.  Black C2 leaves A2 B2 C2 only B1: a 3-stone
#      self-atari.  Black B1 captures O A1 and keeps two liberties (A1, C2): not one.


def test_self_atari_rule_redraws_a_uniform_move_that_self_ataris_two_stones():
    b = board(SELF_ATARI)
    plain = [v for v, _ in choices(b, None, only(), n=512)]
    assert "C2" in plain and "B1" in plain  # the uniform policy plays both
    guarded = [v for v, r in choices(b, None, only(self_atari_prob=1.0), n=512)]
    assert "C2" not in guarded and "B1" in guarded
    assert set(plain) - {"C2"} == set(guarded)  # everything else is still drawn
    assert [v for v, _ in choices(b, None, only(self_atari_prob=0.0), n=64)] == plain[:64]


def test_the_batched_check_chooses_the_same_moves_as_choose():
    """kernels/playout.py checks the pick's liberties only on the boards that need it, a few
    rows at a time (here one, so the sub-batch loop runs many times): same moves, same rules."""
    from gojax.kernels.playout import _choose_batch
    starts = random_positions(9, 24, seed=5)
    state = batch_from_host(starts)
    words = jax.random.bits(jax.random.key(8), (len(starts), 4), jnp.uint32)
    done = jnp.arange(len(starts)) % 7 == 3  # finished boards pass
    for cfg in (MOGO, dataclasses.replace(MOGO, save_min_liberties=2, pattern_prob=0.5, two_lib_prob=1.0)):
        cells, rule = jax.jit(functools.partial(_choose_batch, config=cfg, check_rows=1))(
            state, done, words, None, None)

        def one(s, w, cfg=cfg):
            return policy.choose(s, rules.legal_mask(s, exclude_eyes=True), w, cfg)
        want_cells, want_rule = jax.vmap(one)(state, words)
        np.testing.assert_array_equal(cells, np.where(done, 0, want_cells))
        live = ~np.asarray(done)  # a finished board's rule is not counted (nor checked)
        np.testing.assert_array_equal(np.asarray(rule)[live], np.asarray(want_rule)[live])
        assert set(np.asarray(rule)[live]) & {policy.SAVE, policy.PATTERN, policy.CAPTURE}
