"""Batched playouts: every recorded playout replayed on the host twin, and the per-position
reductions (wins, ownership, AMAF tables) recomputed by a slow loop over those records."""

import dataclasses

import jax
import numpy as np
import pytest

from gojax.kernels.geometry import BLACK, WHITE
from gojax.kernels.host import Board
from gojax.kernels.playout import MERCY_MIN, PlayoutConfig, empty_boards, run_playouts
from gojax.kernels.state import from_host, stack
from tests.helpers import board


def start_positions():
    """Three 7x7 starts: empty (Black to move), a middle game with White to move, and a ko."""
    mid = board("""
        . . . . . . .
        . X X O . . .
        . X O O . . .
        . X O . . X .
        . . X O O . .
        . . . . . . .
        . . . . . . .""", to_play="W", komi=0.5)
    ko = board("""
        . . . . . . .
        . X O . . . .
        X O . O . . .
        . X O . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    ko.play(ko.geometry.from_gtp("C5"))  # Black takes B5: White starts with a ko it may not retake
    assert ko.ko == ko.geometry.from_gtp("B5")
    return [Board(7), mid, ko]


def replay(start: Board, history: np.ndarray, cap: int, config: PlayoutConfig = PlayoutConfig()):
    """Replay one recorded playout on the host twin, checking the playout rules at every move.
    Returns (final board, {(colour, point): first credited} sets for both AMAF rules, moves,
    whether it ended in a ko cycle: `config.cycle_moves` moves in a row each recreating, by the
    host's own Zobrist hashes, one of the `config.cycle_window` positions before it, and whether
    the mercy rule ended it: one colour `config.mercy` x P captures ahead, by the host's count)."""
    b = start.copy()
    lead = max(MERCY_MIN, round(config.mercy * b.size ** 2)) if config.mercy else 0
    mercy = False
    first_by_any, played_by = {}, {BLACK: set(), WHITE: set()}
    n = run = 0
    hashes = [int(b.hash)] * max(config.cycle_window, 1)
    for p in history:
        if p == -2:
            break
        n += 1
        me = b.to_play
        candidates = [q for q in b.legal_points(superko=False) if not b.is_eye(q, me)]
        if p == -1:
            assert not candidates, f"passed with moves left: {candidates}"
            b.play(None)
        else:
            assert p in candidates, f"illegal or eye-filling playout move {b.geometry.to_gtp(p)}\n{b}"
            first_by_any.setdefault(int(p), me)
            played_by[me].add(int(p))
            b.play(int(p), superko=False)
            if config.cycle_window:
                run = run + 1 if int(b.hash) in hashes[-config.cycle_window:] else 0
        hashes.append(int(b.hash))
        mercy = bool(lead) and abs((b.captures[BLACK] - start.captures[BLACK])
                                   - (b.captures[WHITE] - start.captures[WHITE])) >= lead
        if b.game_over or run >= config.cycle_moves or mercy:
            break
    cycle = bool(config.cycle_window) and run >= config.cycle_moves
    assert b.game_over or n == cap or cycle or mercy
    return b, first_by_any, played_by, n, cycle, mercy


@pytest.mark.parametrize("amaf_rule", ["first", "same_colour"])
def test_reductions_equal_a_slow_loop_over_recorded_playouts(amaf_rule):
    starts = start_positions()
    k = 6
    config = PlayoutConfig(amaf_rule=amaf_rule)
    res = jax.device_get(run_playouts(stack([from_host(b) for b in starts]), jax.random.key(3), k,
                                      config, record_moves=True))
    g = starts[0].geometry
    cap = g.move_cap
    for i, start in enumerate(starts):
        count = np.zeros((2, g.num_points), int)
        wins = np.zeros((2, g.num_points))
        own = np.zeros(g.num_points)
        for j in range(k):
            final, first_by_any, played_by, n, cycle, _ = replay(start, res.history[i, j], cap)
            assert res.moves[i, j] == n and res.cycle_hit[i, j] == cycle and not res.mercy_hit[i, j]
            first = res.history[i, j, 0]
            assert res.first_move[i, j] == first
            score = final.score()
            assert res.score[i, j] == pytest.approx(score)
            z = 1.0 if score > 0 else 0.0 if score < 0 else 0.5
            assert res.z[i, j] == z
            _, _, owner = final.area()
            own += np.where(owner == BLACK, 1, np.where(owner == WHITE, -1, 0))
            for c, row in ((BLACK, 0), (WHITE, 1)):
                pts = ({p for p, who in first_by_any.items() if who == c} if amaf_rule == "first"
                       else played_by[c])
                for p in pts:
                    count[row, p] += 1
                    wins[row, p] += z
        np.testing.assert_array_equal(res.amaf_count[i], count)
        np.testing.assert_allclose(res.amaf_wins[i], wins)
        np.testing.assert_allclose(res.ownership[i], own / k, atol=1e-6)
        assert res.wins[i] == pytest.approx(res.z[i].sum())
    assert not res.cap_hit.any()


def test_move_cap_stops_playouts_and_is_counted():
    res = run_playouts(empty_boards(board(". . . . .\n" * 5).geometry, 4), jax.random.key(0), 2,
                       PlayoutConfig(move_cap=10))
    assert (np.asarray(res.moves) == 10).all() and np.asarray(res.cap_hit).all()


@pytest.mark.parametrize("config", [PlayoutConfig(policy="mogo", mercy=0.25, move_cap=13)])
def test_several_steps_per_loop_test_play_the_same_playouts(config):
    # the loop runs past the last move (and past the cap) by up to two steps: they change nothing
    starts = empty_boards(board(". . . . . . .\n" * 7).geometry, 6)
    one = run_playouts(starts, jax.random.key(4), 3, config, record_moves=True)
    three = run_playouts(starts, jax.random.key(4), 3, dataclasses.replace(config, steps_per_test=3),
                         record_moves=True)
    for field in ("z", "score", "moves", "cap_hit", "mercy_hit", "cycle_hit", "first_move", "amaf_count",
                  "amaf_wins", "rule_counts", "history", "ownership"):
        np.testing.assert_array_equal(np.asarray(getattr(three, field)), np.asarray(getattr(one, field)), err_msg=field)
    with pytest.raises(ValueError, match="steps_per_test"):
        PlayoutConfig(steps_per_test=0)


TRIPLE_KO = """
    . O O X . X X . X
    O . O O X X X X O
    O O O X . O X O O
    O . O X . O X O O
    O . O . X X O . O
    . O . X X X X O O
    O O X X X X O O .
    X X X . X . X X X
    . X X X . X X . ."""  # White to move: the MoGo capture rule keeps taking the three kos in turn


def test_a_triple_ko_ends_the_playout_instead_of_running_to_the_cap():
    start = board(TRIPLE_KO, to_play="W")
    cap = start.geometry.move_cap
    mogo = PlayoutConfig(policy="mogo")
    endless = jax.device_get(run_playouts(stack([from_host(start)]), jax.random.key(0), 8,
                                          PlayoutConfig(policy="mogo", cycle_window=0)))
    assert (endless.moves == cap).all() and endless.cap_hit.all() and not endless.cycle_hit.any()
    res = jax.device_get(run_playouts(stack([from_host(start)]), jax.random.key(0), 8, mogo, record_moves=True))
    assert res.cycle_hit.all() and not res.cap_hit.any()
    assert (res.moves < 6 + mogo.cycle_moves + 10).all()  # one turn of the three kos, then the run
    for j in range(8):  # the host twin's own hashes see the same cycle end at the same move
        final, _, _, n, cycle, _ = replay(start, res.history[0, j], cap, mogo)
        assert cycle and n == res.moves[0, j] and res.score[0, j] == pytest.approx(final.score())


def test_the_cycle_stop_changes_no_playout_that_does_not_cycle():
    """Same key with and without the stop: the random stream is the same, so every playout
    that never cycles is the same playout (uniform from the triple ko: the kos get filled)."""
    starts = stack([from_host(board(TRIPLE_KO, to_play="W")), from_host(Board(9))])
    a = jax.device_get(run_playouts(starts, jax.random.key(1), 8))
    b = jax.device_get(run_playouts(starts, jax.random.key(1), 8, PlayoutConfig(cycle_window=0)))
    assert not a.cycle_hit.any()
    for field in ("z", "moves", "first_move", "amaf_count", "amaf_wins", "ownership"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    with pytest.raises(ValueError, match="cycle_window"):
        PlayoutConfig(cycle_window=-1)


@pytest.mark.parametrize("policy", ["uniform", "mogo"])
def test_the_mercy_rule_stops_a_playout_at_the_capture_lead(policy):
    """With `mercy` a playout ends at the move that puts one colour mercy x P captures ahead
    (the host twin counts the captures), scored as it stands; before that move it is the same
    playout as without the rule."""
    starts = start_positions()
    g = starts[0].geometry
    config = PlayoutConfig(policy=policy, mercy=0.2)  # 10 stones on 7x7
    full = jax.device_get(run_playouts(stack([from_host(b) for b in starts]), jax.random.key(7), 16,
                                       PlayoutConfig(policy=policy), record_moves=True))
    res = jax.device_get(run_playouts(stack([from_host(b) for b in starts]), jax.random.key(7), 16, config,
                                      record_moves=True))
    assert res.mercy_hit.sum() >= 4 and not (res.mercy_hit & (res.cap_hit | res.cycle_hit)).any()
    for i, start in enumerate(starts):
        for j in range(16):
            final, _, _, n, cycle, mercy = replay(start, res.history[i, j], g.move_cap, config)
            assert (n, mercy) == (res.moves[i, j], res.mercy_hit[i, j])
            assert res.score[i, j] == pytest.approx(final.score())
            np.testing.assert_array_equal(res.history[i, j, :n], full.history[i, j, :n])
            if not mercy:
                assert res.moves[i, j] == full.moves[i, j] and res.z[i, j] == full.z[i, j]
    with pytest.raises(ValueError, match="mercy"):
        PlayoutConfig(mercy=1.5)


def test_same_key_same_playouts_and_rows_do_not_interact():
    g = Board(9).geometry
    a = run_playouts(empty_boards(g, 8), jax.random.key(5), 2)
    b = run_playouts(empty_boards(g, 8), jax.random.key(5), 2)
    np.testing.assert_array_equal(np.asarray(a.moves), np.asarray(b.moves))
    # A finished start position (two passes) is scored as it stands, whatever its neighbours do.
    done = Board(9)
    done.play(None)
    done.play(None)
    mixed = stack([from_host(Board(9)), from_host(done)])
    res = run_playouts(mixed, jax.random.key(1), 3)
    assert (np.asarray(res.moves[1]) == 0).all() and (np.asarray(res.z[1]) == 0).all()


def test_compiles_once_per_shape():
    """The real kernel's compile cache grows by one entry per new shape, not per call."""
    g = Board(5).geometry
    before = run_playouts._cache_size()
    for seed in range(3):
        jax.block_until_ready(run_playouts(empty_boards(g, 3), jax.random.key(seed), 2).wins)
    assert run_playouts._cache_size() == before + 1
    jax.block_until_ready(run_playouts(empty_boards(g, 4), jax.random.key(0), 2).wins)
    assert run_playouts._cache_size() == before + 2


def test_a_batch_of_finished_games_plays_nothing():
    """Two passes end the game: no playout moves, no first move (-2, not pass), the score as
    it stands.  With every start over, the loop body never runs at all."""
    over = board("""
        . X O . .
        X X O . .
        . X O O O
        X X O . .
        . X O . .""", komi=0.5)
    over.play(None)
    over.play(None)
    assert over.game_over
    res = jax.device_get(run_playouts(stack([from_host(over)] * 2), jax.random.key(0), 3))
    np.testing.assert_array_equal(res.first_move, -2)
    np.testing.assert_array_equal(res.moves, 0)
    np.testing.assert_array_equal(res.amaf_count, 0)
    assert res.score[0, 0] == pytest.approx(over.score())


@pytest.mark.parametrize("amaf_rule", ["first", "same_colour"])
def test_rule_moves_can_be_kept_out_of_amaf(amaf_rule):
    # AMAF marks never steer a playout: with the same key the games are the same, and leaving
    # the rules' moves out only removes credits (the uniform draws keep theirs).
    starts = stack([from_host(b) for b in start_positions()])
    with_rules = jax.device_get(run_playouts(starts, jax.random.key(5), 8, PlayoutConfig(policy="mogo", amaf_rule=amaf_rule)))
    without = jax.device_get(run_playouts(starts, jax.random.key(5), 8,
                                          PlayoutConfig(policy="mogo", amaf_rule=amaf_rule, amaf_rule_moves=False)))
    np.testing.assert_array_equal(with_rules.z, without.z)
    np.testing.assert_array_equal(with_rules.moves, without.moves)
    assert (without.amaf_count <= with_rules.amaf_count).all()
    assert without.amaf_count.sum() < with_rules.amaf_count.sum()
    assert without.amaf_count.sum() > 0


def test_amaf_horizon_credits_only_the_first_moves():
    # Horizon 1: each playout credits exactly its first move (a pass credits nothing), so the
    # credits of a position are its playouts that opened on a point, and the games are unchanged.
    starts = stack([from_host(b) for b in start_positions()])
    config = PlayoutConfig(policy="mogo")
    every = jax.device_get(run_playouts(starts, jax.random.key(7), 8, config))
    one = jax.device_get(run_playouts(starts, jax.random.key(7), 8, dataclasses.replace(config, amaf_horizon=1)))
    far = jax.device_get(run_playouts(starts, jax.random.key(7), 8, dataclasses.replace(config, amaf_horizon=10_000)))
    np.testing.assert_array_equal(one.z, every.z)
    np.testing.assert_array_equal(far.amaf_count, every.amaf_count)
    np.testing.assert_array_equal(one.amaf_count.sum((1, 2)), (one.first_move >= 0).sum(1))
    assert (one.amaf_count <= every.amaf_count).all()
    with pytest.raises(ValueError, match="amaf_horizon"):
        PlayoutConfig(amaf_horizon=-1)


def test_amaf_decay_weights_each_credit_by_how_early_its_point_was_first_played():
    # Same games as without decay; each credit of a playout of T moves whose point was first
    # played at step t weighs (1 + d (T - t) / T) / (1 + d).
    starts = start_positions()
    d, k = 3.0, 4
    config = PlayoutConfig(policy="mogo", amaf_decay=d)
    batch = stack([from_host(b) for b in starts])
    res = jax.device_get(run_playouts(batch, jax.random.key(11), k, config, record_moves=True))
    plain = jax.device_get(run_playouts(batch, jax.random.key(11), k, PlayoutConfig(policy="mogo")))
    np.testing.assert_array_equal(res.z, plain.z)
    g = starts[0].geometry
    for i, start in enumerate(starts):
        count = np.zeros((2, g.num_points))
        for j in range(k):
            _, first_by_any, _, n, _, _ = replay(start, res.history[i, j], g.move_cap, config)
            steps = {}
            for t, p in enumerate(res.history[i, j, :n].tolist()):
                steps.setdefault(p, t)
            for p, who in first_by_any.items():
                count[0 if who == BLACK else 1, p] += (1 + d * (n - steps[p]) / n) / (1 + d)
        np.testing.assert_allclose(res.amaf_count[i], count, rtol=1e-5)
    assert res.amaf_count.sum() < plain.amaf_count.sum()
    with pytest.raises(ValueError, match="amaf_decay"):
        PlayoutConfig(amaf_decay=1.0, amaf_rule="same_colour")


def test_first_moves_follow_the_given_logits_among_legal_points():
    """first_logits (a search's prior: --prior-reply) choose each playout's first move: the
    favourite where it is legal, never an occupied point or the ko point, both of two equal
    favourites; the moves after it are the policy's."""
    starts = stack([from_host(b) for b in start_positions()])
    g = Board(7).geometry
    point = g.from_gtp
    logits = np.full((3, g.num_points), -1e9, np.float32)
    logits[0, point("D4")] = 10.0  # empty board: D4, always
    logits[1, point("B6")] = 20.0  # occupied: never; the two next ones share the playouts
    logits[1, [point("F2"), point("G2")]] = 5.0
    logits[2, point("B5")] = 20.0  # the ko point White may not retake
    logits[2, point("G7")] = 1.0
    config = PlayoutConfig(policy="mogo")  # test_rule_moves_can_be_kept_out_of_amaf's: one compile fewer
    res = jax.device_get(run_playouts(starts, jax.random.key(5), 8, config, first_logits=logits))
    plain = jax.device_get(run_playouts(starts, jax.random.key(5), 8, config))
    assert (res.first_move[0] == point("D4")).all()
    assert set(res.first_move[1]) == {point("F2"), point("G2")}
    assert (res.first_move[2] == point("G7")).all()
    assert len(set(plain.first_move[0])) > 3  # without them the first moves spread
    learnt_rule = 9  # policy.RULES.index("learnt"): each first move counts there
    assert (res.rule_counts[:, learnt_rule] == 8).all() and (plain.rule_counts[:, learnt_rule] == 0).all()
