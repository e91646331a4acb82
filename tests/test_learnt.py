"""The learnt playout policy (kernels/learnt.py): its features say what the board says, the
playouts' folded tables give the same strengths as the fit's weights, draws follow the
strengths, a bad model file is a one-line error, and the fit learns from teacher data."""

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

from gojax import learn_policy
from gojax.kernels import learnt, policy, rules
from gojax.kernels.playout import PlayoutConfig, empty_boards, run_playouts
from gojax.kernels.state import batch_from_host, from_host
from tests.helpers import board

DATA = Path(__file__).parent / "data" / "teacher_small.npz"  # 6 games, bench/teacher_data.py's format
VALUES = Path(__file__).parent / "data" / "teacher_small_values.npz"  # KataGo values of 8 of its positions
NAMES = [name for name, _ in learnt.SLOTS]


def slots_at(b, vertex: str, last: str | None = None, prev: str | None = None) -> dict[str, int]:
    """Each slot's value (offset removed) at `vertex` for the side to move on b."""
    g = b.geometry
    cell = lambda v: jnp.int32(g.point_to_cell[g.from_gtp(v)] if v else 0)  # noqa: E731
    state = from_host(b).replace(last=cell(last), prev=cell(prev))
    row = np.asarray(learnt.features(state))[g.point_to_cell[g.from_gtp(vertex)]] - learnt.OFFSETS
    return dict(zip(NAMES, row.tolist()))


ATARI = """
    . . . . . . .
    . . . . . . .
    . . . X . . .
    . . X O X . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
"""


def test_taking_the_last_move_and_escaping_from_atari():
    b = board(ATARI, "B")  # White's D4 has one liberty, D3
    assert slots_at(b, "D3", last="D4")["capture"] == 1  # takes the chain of the last move
    assert slots_at(b, "D3")["capture"] == 3  # a capture, nothing more known
    assert slots_at(b, "C3")["capture"] == 0
    w = board(ATARI, "W")
    s = slots_at(w, "D3", last="E4")  # Black's E4 put D4 in atari: extending gains three liberties
    assert s["escape"] == 6
    assert slots_at(w, "D3")["escape"] == 3  # the same extension, not an answer to the last move


def test_the_shape_slot_has_one_weight_per_class():
    from gojax.kernels.patterns import atari_shape_classes
    classes, n = atari_shape_classes()
    assert n == learnt.SHAPE_CLASSES == classes.max() + 1


def test_the_shape_knows_which_neighbours_are_in_atari():
    b = board(ATARI, "B")
    g = b.geometry
    raw = np.asarray(learnt.rules.embed(learnt.slot_values(from_host(b))[0], 0))
    at = lambda v: int(raw[g.point_to_cell[g.from_gtp(v)]])  # noqa: E731
    assert at("D3") >> 16 == 0b0001  # north of D3: White's D4, whose last liberty D3 is
    assert at("C3") >> 16 == 0  # C3 touches no chain in atari
    from gojax.kernels.patterns import neighbourhood_index
    assert at("D3") & 0xFFFF == neighbourhood_index(b.stones, g.size, g.from_gtp("D3"))


def test_self_atari_of_a_lone_stone_and_of_a_chain():
    lone = board("""
        . . . . .
        . . . . .
        . . . . .
        X . . . .
        . . . . .
    """, "W")
    assert slots_at(lone, "A1")["self_atari"] == 1  # one liberty (B1), nothing captured
    assert slots_at(lone, "B1")["self_atari"] == 0
    chain = board("""
        . . . . .
        . . . . .
        . . . . .
        X . . . .
        O . X . .
    """, "W")
    s = slots_at(chain, "B1")  # A1's escape, but the two stones keep one liberty (B2)
    assert (s["self_atari"], s["escape"]) == (2, 1)
    assert slots_at(chain, "B2")["self_atari"] == 0


def test_distances_and_lines():
    b = board(ATARI, "B")
    s = slots_at(b, "E5", last="D4", prev="E4")
    assert (s["dist_last"], s["dist_prev"]) == (3, 2)  # diagonal: 1 + 1 + 1; next to it: 1 + 0 + 1
    assert slots_at(b, "G1", last="A7")["dist_last"] == 17  # far away
    assert slots_at(b, "C3")["dist_last"] == 0  # no last move
    assert [slots_at(b, v)["line"] for v in ("A1", "B2", "C5", "D3")] == [0, 1, 2, 2]


def random_model(tmp_path, seed=0, size=9) -> str:
    w = np.random.default_rng(seed).normal(0, 1, learnt.N_WEIGHTS).astype(np.float32)
    path = str(tmp_path / f"model{seed}.npz")
    learnt.save_model(path, w, size)
    return path


def midgame_states(n=64, moves=30):
    """n 9x9 positions after `moves` random-playout moves from the empty board."""
    from gojax.kernels.geometry import Geometry
    g = Geometry(9)
    r = run_playouts(empty_boards(g, 1), jax.random.key(3), n, PlayoutConfig(policy="mogo"), record_moves=True)
    hist = np.asarray(r.history[0])
    boards = []
    for row in hist:
        b = board("\n".join(". " * 9 for _ in range(9)))
        for p in row[:moves]:
            if p == -2:
                break
            b.play(None if p < 0 else int(p), superko=False)
        boards.append(b)
    return batch_from_host(boards), g


def test_the_playouts_tables_give_the_fits_strengths(tmp_path):
    path = random_model(tmp_path)
    states, g = midgame_states()
    w = jnp.asarray(learnt.load_model(path)[0])
    logits = jax.vmap(learnt.logits, in_axes=(0, None))(states, w)
    strengths = jax.vmap(lambda s: learnt.strengths(s, path, 0.5))(states)
    legal = np.asarray(jax.vmap(rules.legal_mask)(states))
    np.testing.assert_allclose(np.log(np.asarray(strengths)[legal]), 0.5 * np.asarray(logits)[legal], atol=1e-4)


def test_draws_follow_the_strengths(tmp_path):
    path = random_model(tmp_path, seed=1)
    states, _ = midgame_states(n=1)
    state = jax.tree_util.tree_map(lambda x: x[0], states)
    legal = rules.legal_mask(state, exclude_eyes=True)
    words = jax.random.bits(jax.random.key(11), (20000,), jnp.uint32)
    cells, prob = map(np.asarray, jax.vmap(lambda wd: learnt.select(state, legal, wd, path))(words))
    p = np.where(np.asarray(legal), np.asarray(learnt.strengths(state, path)), 0.0)
    p /= p.sum()
    assert np.asarray(legal)[cells].all()
    np.testing.assert_allclose(prob, p[cells], rtol=1e-4)
    freq = np.bincount(cells, minlength=p.size) / len(cells)
    sigma = np.sqrt(p * (1 - p) / len(cells))
    assert (np.abs(freq - p) <= 5 * sigma + 1e-4).all()


def test_learnt_playouts_end_and_repeat(tmp_path):
    path = random_model(tmp_path, seed=2)
    config = PlayoutConfig(policy="learnt", policy_model=path)
    from gojax.kernels.geometry import Geometry
    starts = empty_boards(Geometry(9), 4)
    a = run_playouts(starts, jax.random.key(5), 8, config)
    b = run_playouts(starts, jax.random.key(5), 8, config)
    assert np.array_equal(np.asarray(a.z), np.asarray(b.z))
    assert not np.asarray(a.cap_hit).any()
    counts = np.asarray(a.rule_counts).sum(0)
    assert counts[policy.LEARNT] == counts.sum() > 0


def test_moves_the_policy_all_but_forces_earn_no_amaf_credit(tmp_path):
    path = random_model(tmp_path, seed=4)
    from gojax.kernels.geometry import Geometry
    starts = empty_boards(Geometry(9), 2)
    every = run_playouts(starts, jax.random.key(6), 8, PlayoutConfig(policy="learnt", policy_model=path))
    none = run_playouts(starts, jax.random.key(6), 8, PlayoutConfig(policy="learnt", policy_model=path,
                                                                    amaf_max_prob=1e-9))
    assert np.array_equal(np.asarray(every.z), np.asarray(none.z))  # the same games
    assert np.asarray(every.amaf_count).sum() > 0 and np.asarray(none.amaf_count).sum() == 0
    assert np.asarray(none.rule_counts)[:, policy.LEARNT_SURE].sum() > 0


def test_bad_model_files_are_one_line_errors(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_text("not a model")
    other = tmp_path / "other.npz"
    np.savez(other, something=np.zeros(3))
    short = tmp_path / "short.npz"
    np.savez(short, weights=np.zeros(5, np.float32), format=learnt.FORMAT, size=9)
    nan = tmp_path / "nan.npz"
    np.savez(nan, weights=np.full(learnt.N_WEIGHTS, np.nan, np.float32), format=learnt.FORMAT, size=9)
    for path, words in [(tmp_path / "missing.npz", "no such file"), (junk, "not an .npz archive"),
                        (other, "no weights"), (short, "refit"), (nan, "not all finite")]:
        with pytest.raises(learnt.ModelError, match=words) as err:
            learnt.load_model(str(path))
        assert "\n" not in str(err.value)
        with pytest.raises(ValueError):
            PlayoutConfig(policy="learnt", policy_model=str(path))
    with pytest.raises(learnt.ModelError, match="fitted on 9x9, not 13x13"):
        learnt.check_model(random_model(tmp_path), 13)
    with pytest.raises(ValueError, match="poolRave"):
        PlayoutConfig(policy="learnt", pool_prob=0.5)


def test_gtp_refuses_a_bad_model_before_it_starts(tmp_path):
    missing = str(tmp_path / "missing.npz")
    run = subprocess.run([sys.executable, "-m", "gojax", "gtp", "--policy", "learnt", "--policy-model", missing],
                         input="quit\n", capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert run.stderr.strip() == f"gojax: policy model {missing}: no such file"


def test_the_trees_prior_takes_its_own_model(tmp_path):
    """--prior-model is the prior's, --policy-model the playouts': a 7x7 prior model stops a 9x9
    engine as it starts, naming the option."""
    seven = tmp_path / "seven.npz"
    learnt.save_model(str(seven), np.zeros(learnt.N_WEIGHTS), 7)
    run = subprocess.run([sys.executable, "-m", "gojax", "gtp", "--prior", "learnt", "--prior-model", str(seven)],
                         input="genmove b\nquit\n", capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and run.stdout == ""
    assert run.stderr.strip() == (f"gojax gtp: prior model {seven} was fitted on 7x7, not 9x9: fit one on 9x9 "
                                  "positions (gojax learn-policy, learn-net) or use --prior shape")


def test_the_bundled_model_loads_for_9x9():
    weights, size = learnt.load_model("")
    assert size == 9 and weights.shape == (learnt.N_WEIGHTS,)


def test_fit_learns_the_teacher_and_saves_a_usable_model(tmp_path):
    out = tmp_path / "fitted.npz"
    args = argparse.Namespace(data=str(DATA), out=str(out), epochs=40, learning_rate=0.05, l2=1e-5, seed=0)
    learn_policy.main(args)
    report = json.loads(str(np.load(out)["report"]))
    ds = learn_policy.build(str(DATA))
    _, test = learn_policy.split(ds, 0.1, 0)
    uniform_ce = float(np.mean(np.log(ds.legal[test].sum(1))))
    assert report["held_out"]["cross_entropy"] < uniform_ce - 1.0  # far better than a uniform guess
    assert report["train"]["top1_teacher"] > 0.3
    PlayoutConfig(policy="learnt", policy_model=str(out))  # loads as a playout policy


def test_the_fit_sees_the_features_the_playouts_see():
    """The fit's feature indices are the kernel's, slot for slot (they run past int16: a narrower
    copy once sent every slot after the shape to the wrong weights), and a fit moves the weights
    of every slot the data shows, the tactical ones included."""
    ds = learn_policy.build(str(KATAGO))
    boards = learn_policy.replay(dict(np.load(KATAGO)))
    g = boards[0].geometry
    want = np.asarray(jax.vmap(learnt.features)(batch_from_host(boards)))[:, g.point_to_cell]
    np.testing.assert_array_equal(ds.feats, want)
    assert ds.feats[..., 0].max() > 2 ** 15 and (ds.feats[..., 1:] >= learnt.OFFSETS[1]).all()
    w = learn_policy.fit(ds, np.arange(len(ds.game)), learn_policy.FitConfig(epochs=2, batch=16))
    for name, n in learnt.SLOTS:
        o = learnt.OFFSETS[NAMES.index(name)]
        if (ds.feats[..., NAMES.index(name)] != o).any():  # the data shows more than one value
            assert np.abs(w[o:o + n]).max() > 0.01, name


def test_the_balancing_gradient_is_the_gradient_of_the_log_probability():
    states, _ = midgame_states(n=1)
    state = jax.tree_util.tree_map(lambda x: x[0], states)
    base = jnp.asarray(learnt.load_model("")[0])
    off = int(learnt.OFFSETS[1])
    theta = jnp.concatenate([base[off:], jnp.array([0.8])])

    def log_prob(th, cell):
        w = jnp.concatenate([base[:off] * th[-1], th[:-1]])
        legal = rules.legal_mask(state, exclude_eyes=True)
        x = jnp.where(legal, w[learnt.features(state)].sum(-1), -jnp.inf)
        return jax.nn.log_softmax(x)[cell]
    w = jnp.concatenate([base[:off] * theta[-1], theta[:-1]])
    cell, psi = learn_policy._draw_and_score(state, jax.random.key(2), w, base[:off], learnt.N_WEIGHTS - off)
    np.testing.assert_allclose(np.asarray(psi), np.asarray(jax.grad(log_prob)(theta, cell)), atol=1e-5)


def test_balancing_runs_and_keeps_the_shape_classes(tmp_path):
    packed, target, size = learn_policy.balance_positions(str(DATA), str(VALUES))
    w, _ = learnt.load_model("")
    config = learn_policy.BalanceConfig(iterations=1, positions_per_call=4, playouts=4, held_out=0.25)
    out, history = learn_policy.balance(w, packed, target, size, config)
    off = int(learnt.OFFSETS[1])
    assert np.isfinite(out).all() and out.shape == w.shape
    ratio = out[:off][w[:off] != 0] / w[:off][w[:off] != 0]
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-4)  # one scale on every shape weight
    assert not np.array_equal(out[off:], w[off:])
    assert [h["iteration"] for h in history] == [0, 1] and 0 <= history[0]["held_out_mse"] <= 1


def test_a_uniform_mix_replaces_about_that_share_of_the_draws(tmp_path):
    path = random_model(tmp_path, seed=5)
    from gojax.kernels.geometry import Geometry
    starts = empty_boards(Geometry(9), 2)
    counts = {}
    for mix in (0.0, 0.5, 1.0):
        r = run_playouts(starts, jax.random.key(8), 8, PlayoutConfig(policy="learnt", policy_model=path, uniform_mix=mix))
        c = np.asarray(r.rule_counts).sum(0)
        counts[mix] = c[policy.UNIFORM] / c.sum()
    assert counts[0.0] == 0 and counts[1.0] == 1 and 0.4 < counts[0.5] < 0.6


@pytest.mark.parametrize("command", ["learn-policy", "balance-policy", "learn-net"])
def test_the_fitting_commands_name_a_bad_input_in_one_line(tmp_path, command):
    junk = tmp_path / "junk.npz"
    junk.write_text("not an archive")
    args = [str(junk), "--out", str(tmp_path / "out.npz")]
    if command == "balance-policy":
        args += ["--positions", str(DATA)]
    run = subprocess.run([sys.executable, "-m", "gojax", command, *args], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert run.stderr.strip() == f"gojax {command}: {junk}: not an .npz archive"
    assert not (tmp_path / "out.npz").exists()


def test_a_model_for_another_size_stops_the_playouts_before_they_start():
    from gojax.kernels.geometry import Geometry
    with pytest.raises(learnt.ModelError, match="fitted on 9x9, not 7x7"):
        run_playouts(empty_boards(Geometry(7), 1), jax.random.key(0), 2, PlayoutConfig(policy="learnt"))


KATAGO = Path(__file__).parent / "data" / "teacher_katago_small.npz"  # 32 positions, bench/teacher_policy.py


def test_katago_labels_sit_on_the_right_points():
    """KataGo numbers its policy from the top row, gojax from the bottom: KataGo's 'illegal' (-1)
    must fall on exactly the points gojax finds illegal."""
    data = dict(np.load(KATAGO))
    for b, pol in zip(learn_policy.replay(data), data["policy"]):
        legal = np.asarray(rules.legal_mask(from_host(b)))[b.geometry.point_to_cell]
        np.testing.assert_array_equal(pol >= 0, legal)  # stones, suicides and a ko point: -1
        assert abs(pol[legal].sum() - 1) < 0.1  # the rest is a pass


def test_the_fit_reads_katagos_exact_policy():
    ds = learn_policy.build(str(KATAGO))
    data = dict(np.load(KATAGO))
    p = np.where(ds.legal, np.where(data["policy"] >= 0, data["policy"], 0.001), 0)
    np.testing.assert_allclose(ds.target, p / p.sum(1, keepdims=True), atol=1e-6)


def test_a_fit_from_a_starting_model_is_pulled_towards_it(tmp_path):
    init, _ = learnt.load_model("")
    ds = learn_policy.build(str(KATAGO))
    train = np.arange(len(ds.game))
    held = learn_policy.fit(ds, train, learn_policy.FitConfig(epochs=3, batch=16, l2=10.0), init=init)
    free = learn_policy.fit(ds, train, learn_policy.FitConfig(epochs=3, batch=16, l2=0.0), init=init)
    assert np.abs(held - init).max() < np.abs(free - init).max() / 5
    before = learn_policy.evaluate(ds, train, init)["cross_entropy"]
    assert learn_policy.evaluate(ds, train, free)["cross_entropy"] < before


def test_a_model_fitted_on_another_size_starts_this_ones_fit(tmp_path):
    """The features are the same on every board: a 7x7 model may start a 9x9 fit, which is
    saved as a 9x9 model pulled towards the starting weights."""
    seven = tmp_path / "seven.npz"
    start = np.random.default_rng(3).normal(0, 0.1, learnt.N_WEIGHTS).astype(np.float32)
    learnt.save_model(str(seven), start, 7)
    out = tmp_path / "o.npz"
    run = subprocess.run([sys.executable, "-m", "gojax", "learn-policy", str(KATAGO), "--out", str(out),
                          "--init", str(seven), "--epochs", "1", "--l2", "1.0"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert f"from {seven} (7x7): held out" in run.stderr
    weights, size = learnt.load_model(str(out))
    assert size == 9
    assert 0 < np.abs(weights - start).max() < 0.1
