"""The value head (kernels/prior_net.py, `gojax learn-value`) and its place in the search
(--value-weight: search/device.mix_value): it speaks for the side to move, a fit saves a net the
search reads, each playout's outcome is mixed with it but for games already over, it is off at
another komi, and a net without one is a one-line error."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gojax import learn_net
from gojax.kernels import learnt, prior_net, rules
from gojax.kernels.host import Board
from gojax.kernels.playout import PlayoutConfig, run_playouts
from gojax.kernels.state import packed_fields, unpack_fields, with_placeholder_chains
from gojax.player import Player, PlayerOptions
from gojax.search.device import PriorPlan, Simulator, mix_value
from gojax.search.mcts import Search
from gojax.search.params import AUTO_VALUE_WEIGHT, SearchParams
from tests.helpers import board

KATAGO = Path(__file__).parent / "data" / "teacher_katago_small.npz"  # 32 positions with KataGo's values


def _states(boards):
    return jax.vmap(rules.with_chains)(with_placeholder_chains(unpack_fields(packed_fields(boards))))


def _constant_value_net(path: Path, p_mover: float, komi: float = 7.5) -> None:
    """A net whose value head says `p_mover` for the side to move, whatever the board."""
    linear, size = learnt.load_model("")
    layers = [(np.zeros((1, 1, prior_net.N_PLANES, 1), np.float32), np.zeros(1, np.float32))]
    trunk = ((np.zeros((3, 3, prior_net.N_PLANES, 2), np.float32), np.zeros(2, np.float32)),)
    logit = np.log(p_mover / (1 - p_mover))
    head = prior_net.ValueHead(trunk, np.zeros((4, 3), np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32),
                               np.float32(logit), komi)
    prior_net.save_net(str(path), layers, linear, size, value=head)


def test_the_value_speaks_for_the_side_to_move(tmp_path):
    path = tmp_path / "v.npz"
    _constant_value_net(path, 0.8)
    b = Board(9)
    b.play(b.geometry.from_gtp("E5"))  # White to move
    states = _states([Board(9), b])
    np.testing.assert_allclose(np.asarray(prior_net.black_value(states, str(path))), [0.8, 0.2], atol=1e-6)
    assert prior_net.has_value(str(path)) and not prior_net.has_value(learnt.BUNDLED)


def test_each_playout_is_mixed_with_the_value_amaf_too_but_a_finished_game_is_not(tmp_path):
    over = board("""
        . X O . .
        X X O . .
        . X O O .
        X X O . O
        . X O O .
    """, "B")
    over.passes = 2
    b = Board(5)
    states = _states([b, over])
    res = run_playouts(states, jax.random.split(jax.random.key(3), 2), 4, PlayoutConfig())
    value = jnp.asarray([0.9, 0.9])
    mixed = mix_value(res, value, 0.25)
    z, zm = np.asarray(res.z), np.asarray(mixed.z)
    np.testing.assert_allclose(zm[0], 0.75 * z[0] + 0.25 * 0.9, atol=1e-6)
    np.testing.assert_allclose(zm[1], z[1])  # the game is over: its exact outcome
    assert (np.asarray(res.first_move)[1] == -2).all()
    np.testing.assert_allclose(np.asarray(mixed.wins), zm.sum(1), atol=1e-6)
    amaf, count = np.asarray(res.amaf_wins), np.asarray(res.amaf_count)
    np.testing.assert_allclose(np.asarray(mixed.amaf_wins)[0], 0.75 * amaf[0] + 0.25 * 0.9 * count[0], atol=1e-5)
    np.testing.assert_allclose(np.asarray(mixed.amaf_wins)[1], amaf[1])


def test_a_round_with_the_value_weight_one_backs_up_the_value_alone(tmp_path):
    """Weight 1: every playout of a leaf counts as the value head's estimate, from Black's side."""
    path = tmp_path / "v.npz"
    _constant_value_net(path, 0.7)
    sim = Simulator(SearchParams(leaves=2, playouts_per_leaf=3, value_weight=1.0, value_model=str(path)))
    white_to_move = Board(9)
    white_to_move.play(white_to_move.geometry.from_gtp("E5"))
    res = jax.device_get(sim.dispatch([[Board(9), white_to_move]], np.zeros((1, 2), np.uint32), [1]))
    np.testing.assert_allclose(res.wins, [3 * 0.7, 3 * 0.3], atol=1e-5)
    # (a search reads the value: test_a_value_fit_learns_and_saves_a_net_the_search_reads)


def test_the_value_is_off_at_another_komi(tmp_path, capsys):
    path = tmp_path / "v.npz"
    _constant_value_net(path, 0.7, komi=7.5)
    params = SearchParams(value_weight=0.5, value_model=str(path))
    sim = Simulator(params)
    plan = sim.plan(9)
    assert plan == PriorPlan.of(params.for_size(9)) and plan.value_model == str(path)
    assert sim.value_applies(plan, 7.5)
    assert not sim.value_applies(plan, 6.5) and not sim.value_applies(plan, 6.5)
    assert capsys.readouterr().err.count("fitted at komi 7.5; at komi 6.5 the playouts count alone") == 1


def test_a_net_without_a_value_head_is_a_one_line_error(tmp_path):
    plain = tmp_path / "plain.npz"
    linear, size = learnt.load_model("")
    prior_net.save_net(str(plain), [(np.zeros((1, 1, prior_net.N_PLANES, 1), np.float32), np.zeros(1, np.float32))],
                       linear, size)
    with pytest.raises(learnt.ModelError, match="has no value head"):
        Player(9, 7.5, SearchParams(value_weight=0.5, value_model=str(plain)))
    with pytest.raises(ValueError, match="no net is bundled for 7x7"):
        Player(7, 7.5, SearchParams(value_weight=0.5))
    with pytest.raises(ValueError, match="value_weight must be in"):
        SearchParams(value_weight=1.5)
    with pytest.raises(learnt.ModelError, match="value model .* was fitted on 9x9, not 13x13: .* --value-weight 0"):
        Player(13, 7.5, SearchParams(prior="shape", value_model=prior_net.BUNDLED))
    run = subprocess.run([sys.executable, "-m", "gojax", "gtp", "--value-weight", "0.5", "--value-model",
                          str(plain)], input="quit\n", capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0 and "has no value head" in run.stderr and "Traceback" not in run.stderr


def test_a_value_fit_learns_and_saves_a_net_the_search_reads(tmp_path):
    out = tmp_path / "net.npz"
    args = argparse.Namespace(data=str(KATAGO), net=prior_net.BUNDLED, out=str(out), width=4, depth=1, epochs=3,
                              seed=0, learning_rate=2e-3)
    learn_net.value_main(args)
    report = json.loads(str(np.load(out)["value_report"]))
    assert report["komi"] == 7.5 and report["train_positions"] + report["held_out"]["all"]["positions"] == 32
    head = prior_net.load_value(str(out))
    assert head.komi == 7.5 and len(head.trunk) == 1 and head.trunk[0][0].shape == (3, 3, prior_net.N_PLANES, 4)
    kept, _, _ = prior_net.load_net(str(out))  # the policy part is the net's, unchanged
    assert all((w == w0).all() for (w, _), (w0, _) in zip(kept, prior_net.load_net(prior_net.BUNDLED)[0]))
    player = Player(9, 7.5, SearchParams(leaves=4, playouts_per_leaf=2, value_weight=0.5, value_model=str(out)),
                    PlayerOptions(exact=True))  # no early stop: the whole budget runs through the head
    assert player.think(1, simulations=32).simulations == 32
    no_values = tmp_path / "no_values.npz"
    with np.load(KATAGO) as f:
        np.savez(no_values, **{k: f[k] for k in f.files if k != "value"})
    with pytest.raises(ValueError, match="no teacher values"):
        learn_net.value_main(argparse.Namespace(**(vars(args) | {"data": str(no_values)})))


def test_a_value_fit_can_start_from_another_nets_head(tmp_path):
    """--init: the bundled 9x9 head as it is (0 epochs) scores what the search's own reading of it
    scores, and a refit from it keeps its shape; a head that reads other planes is one line."""
    out = tmp_path / "as_is.npz"
    args = argparse.Namespace(data=str(KATAGO), net=prior_net.BUNDLED, out=str(out), width=4, depth=1, epochs=0,
                              seed=0, learning_rate=2e-4, init=prior_net.BUNDLED)
    learn_net.value_main(args)
    report = json.loads(str(np.load(out)["value_report"]))
    assert report["init"] == report["held_out"] and report["init_head"] == prior_net.BUNDLED
    bundled, saved = prior_net.load_value(prior_net.BUNDLED), prior_net.load_value(str(out))
    assert all((a == b).all() for (a, _), (b, _) in zip(bundled.trunk, saved.trunk))
    assert (bundled.out_w == saved.out_w).all() and saved.komi == 7.5
    refit = tmp_path / "refit.npz"
    learn_net.value_main(argparse.Namespace(**(vars(args) | {"out": str(refit), "epochs": 1})))
    head = prior_net.load_value(str(refit))
    assert [w.shape for w, _ in head.trunk] == [w.shape for w, _ in bundled.trunk]
    assert not all((a == b).all() for (a, _), (b, _) in zip(bundled.trunk, head.trunk))
    with pytest.raises(ValueError, match="needs --init"):
        learn_net.value_main(argparse.Namespace(**(vars(args) | {"init": ""})))
    other = tmp_path / "other_linear.npz"
    layers, linear, size = prior_net.load_net(prior_net.BUNDLED)
    prior_net.save_net(str(other), layers, linear + 1, size, bundled)
    with pytest.raises(ValueError, match="reads another linear model's planes"):
        learn_net.value_main(argparse.Namespace(**(vars(args) | {"init": str(other)})))


def test_a_leaf_with_a_chain_in_atari_keeps_the_playouts_alone(tmp_path):
    """The head misreads captures, so a leaf where either side can take a chain is left to the
    playouts (search/device.prepare_round); a quiet leaf is mixed."""
    path = tmp_path / "v.npz"
    _constant_value_net(path, 0.7)
    quiet = Board(9)
    tactical = board("""
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . X . . . .
        . . . X O X . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
    """, "B")
    states = _states([quiet, tactical])
    assert list(np.asarray(jax.vmap(rules.any_chain_in_atari)(states))) == [False, True]
    sim = Simulator(SearchParams(leaves=2, playouts_per_leaf=3, value_weight=1.0, value_model=str(path)))
    res = jax.device_get(sim.dispatch([[quiet, tactical]], np.zeros((1, 2), np.uint32), [1]))
    assert res.wins[0] == pytest.approx(3 * 0.7, abs=1e-5)  # mixed: the value alone at weight 1
    assert np.isin(res.z[1], [0.0, 1.0]).all() and res.wins[1] == res.z[1].sum()  # the playouts' own


def test_the_default_mixes_the_bundled_value_heads_and_plays_without_one_elsewhere(tmp_path):
    """`--value-weight` auto (the default): 0.25 with the bundled 9x9, 13x13 and 19x19 nets' heads;
    7x7 (no net) and a prior net without a head keep the playouts alone; 0 turns it off; a given
    --value-model gets 0.25 too (Player then checks its size)."""
    assert Simulator(SearchParams()).plan(9)[-3:] == (prior_net.BUNDLED, 1, AUTO_VALUE_WEIGHT)
    assert Simulator(SearchParams()).plan(13)[-3:] == (prior_net.bundled(13), 1, AUTO_VALUE_WEIGHT)
    assert Simulator(SearchParams()).plan(19)[-3:] == (prior_net.bundled(19), 1, AUTO_VALUE_WEIGHT)
    assert Simulator(SearchParams()).plan(7).value_model is None
    headless = Path(__file__).parent.parent / "bench" / "results" / "teacher" / "katago13_branch" / "net48x6_13.npz"
    assert SearchParams(prior_model=str(headless)).for_size(13).value_weight == 0
    assert Simulator(SearchParams(value_weight=0)).plan(9).value_model is None
    given = tmp_path / "v.npz"
    _constant_value_net(given, 0.7)
    assert SearchParams(value_model=str(given)).for_size(13).value_weight == AUTO_VALUE_WEIGHT
    b = Board(9)
    b.play(b.geometry.from_gtp("E5"))
    wins = []
    for weight in (-1.0, 0.0):  # the same seed: the same playouts, the default backs up a mix
        search = Search(b, SearchParams(leaves=4, playouts_per_leaf=2, value_weight=weight, seed=3))
        search.run(simulations=16, stop_early=False)
        wins.append(search.tree.wins[:search.tree.num_nodes].copy())
    assert not np.array_equal(*wins)
    assert np.array_equal(wins[1], np.round(wins[1])) and not np.array_equal(wins[0], np.round(wins[0]))
