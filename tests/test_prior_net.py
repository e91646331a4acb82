"""The prior net (kernels/prior_net.py, gojax/learn_net.py): its planes say what the board says, an
untrained net is the learnt linear model, a fit learns and saves a net the search reads as its
prior, and a bad net file is a one-line error."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from gojax import learn_net
from gojax.kernels import learnt, prior_net
from gojax.kernels.host import Board
from gojax.kernels.state import from_host
from gojax.search.mcts import Search
from gojax.search.params import AUTO_VALUE_WEIGHT, SearchParams
from tests.helpers import board

KATAGO = Path(__file__).parent / "data" / "teacher_katago_small.npz"  # 32 positions, bench/teacher_policy.py
PLANES = ["mine", "theirs", "empty"] + [f"{slot}{k}" for slot, ks in prior_net.ONE_HOT for k in ks] + \
    ["dist_last", "dist_prev", "legal", "ones", "linear"]

ATARI = """
    . . . . . . .
    . . . . . . .
    . . . X . . .
    . . X O X . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
"""


def test_the_planes_say_what_the_board_says():
    b = board(ATARI, "B")
    g = b.geometry
    linear, _ = learnt.load_model("")
    x, lin = prior_net.planes(from_host(b), jax.numpy.asarray(linear))
    assert x.shape == (7, 7, prior_net.N_PLANES) == (7, 7, len(PLANES))

    def at(vertex, plane):
        row, col = divmod(g.from_gtp(vertex), 7)
        return float(x[row, col, PLANES.index(plane)])
    assert at("D5", "mine") == 1 and at("D4", "theirs") == 1 and at("D3", "empty") == 1
    assert at("D3", "capture1") + at("D3", "capture2") + at("D3", "capture3") == 1  # D3 takes White's D4
    assert at("A1", "capture3") == 0 and at("A1", "legal") == 1 and at("D4", "legal") == 0


def _zero_net(path: Path, linear_path: str = "", width: int = 4) -> None:
    linear, size = learnt.load_model(linear_path)
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(3, 3, prior_net.N_PLANES, width)).astype(np.float32), np.zeros(width, np.float32)),
              (np.zeros((1, 1, width, 1), np.float32), np.zeros(1, np.float32))]
    prior_net.save_net(str(path), layers, linear, size)


def test_an_untrained_net_is_its_linear_model(tmp_path):
    """The last layer at zero: the net's logits are the learnt model's log-strengths."""
    path = tmp_path / "zero.npz"
    _zero_net(path)
    b = Board(9)
    for v in ("E5", "C3", "G7", "D4", "C4"):
        b.play(b.geometry.from_gtp(v))
    state = from_host(b)
    cells = b.geometry.point_to_cell
    legal = np.asarray(learnt.rules.legal_mask(state, exclude_eyes=True))[cells]
    got = np.asarray(prior_net.log_strengths(state, str(path)))[cells]
    want = np.log(np.maximum(np.asarray(learnt.strengths(state, "")), 1e-30))[cells]
    np.testing.assert_allclose(got[legal], want[legal], rtol=1e-4, atol=1e-4)
    assert prior_net.is_net(str(path)) and not prior_net.is_net(learnt.BUNDLED)


def test_a_fit_learns_and_the_search_reads_the_net(tmp_path):
    out = tmp_path / "net.npz"
    args = argparse.Namespace(data=str(KATAGO), linear="", out=str(out), width=8, depth=2, epochs=12, seed=0,
                              schedule="cosine", init="", learning_rate=2e-3)
    learn_net.main(args)
    report = json.loads(str(np.load(out)["report"]))
    assert report["train"]["cross_entropy"] < report["linear"]["cross_entropy"] or \
        report["held_out"]["cross_entropy"] < report["linear"]["cross_entropy"]
    assert prior_net.model_size(str(out)) == 9
    b = Board(9)
    for v in ("E5", "C3"):
        b.play(b.geometry.from_gtp(v))
    params = SearchParams(leaves=4, playouts_per_leaf=2, prior="learnt", prior_model=str(out))
    search = Search(b, params)
    search.run(simulations=64, stop_early=False)
    assert search.tree.node_n[0] >= 64


def test_a_net_fitted_on_another_size_starts_a_fit(tmp_path):
    """`learn-net --init`: a 13x13 net (the convolutions do not depend on the size) starts a fit on
    9x9 positions; the report measures it as it came, the result keeps its shape and says 9x9."""
    start, out = tmp_path / "net13.npz", tmp_path / "net9.npz"
    rng = np.random.default_rng(1)
    linear, _ = learnt.load_model("")
    layers = [(rng.normal(size=(3, 3, prior_net.N_PLANES, 6), scale=0.1).astype(np.float32), np.zeros(6, np.float32)),
              (rng.normal(size=(1, 1, 6, 1), scale=0.1).astype(np.float32), np.zeros(1, np.float32))]
    prior_net.save_net(str(start), layers, linear, 13)
    args = argparse.Namespace(data=str(KATAGO), linear="", out=str(out), width=32, depth=5, epochs=6, seed=0,
                              schedule="constant", init=str(start), learning_rate=2e-3)
    learn_net.main(args)
    report = json.loads(str(np.load(out)["report"]))
    assert report["init"] != report["linear"] and report["init_net"] == str(start)
    assert report["train"]["cross_entropy"] < report["init"]["cross_entropy"] or \
        report["held_out"]["cross_entropy"] < report["init"]["cross_entropy"]
    fitted, _, size = prior_net.load_net(str(out))
    assert size == 9 and [w.shape for w, _ in fitted] == [w.shape for w, _ in layers]
    as_it_is = tmp_path / "as_it_is.npz"  # --epochs 0: the 13x13 net measured and saved for 9x9, unchanged
    learn_net.main(argparse.Namespace(**(vars(args) | {"epochs": 0, "out": str(as_it_is), "measure": str(KATAGO)})))
    kept, _, size = prior_net.load_net(str(as_it_is))
    assert size == 9 and all((w == w0).all() for (w, _), (w0, _) in zip(kept, layers))
    report = json.loads(str(np.load(as_it_is)["report"]))
    assert report["held_out"] == report["init"]
    # --measure: every position of a second teacher file, the start and the fitted net (here the same)
    assert report["measure"]["net"] == report["measure"]["init"] != report["measure"]["linear"]
    assert report["measure"]["net"]["positions"] == 32 > report["held_out"]["positions"]
    with pytest.raises(ValueError, match="--epochs 0 needs --init"):
        learn_net.main(argparse.Namespace(**(vars(args) | {"epochs": 0, "init": ""})))
    run = subprocess.run([sys.executable, "-m", "gojax", "learn-net", str(KATAGO), "--init", str(tmp_path / "none.npz"),
                          "--out", str(tmp_path / "x.npz")], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "none.npz: no such file" in run.stderr


def test_a_bad_net_is_a_one_line_error(tmp_path):
    wrong = tmp_path / "wrong.npz"
    linear, _ = learnt.load_model("")
    prior_net.save_net(str(wrong), [(np.zeros((3, 3, 5, 1), np.float32), np.zeros(1, np.float32))], linear, 9)
    with pytest.raises(learnt.ModelError, match="refit it"):
        prior_net.load_net(str(wrong))
    run = subprocess.run([sys.executable, "-m", "gojax", "gtp", "--prior", "learnt", "--prior-model", str(wrong)],
                         input="quit\n", capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and len(run.stderr.strip().splitlines()) == 1 and "refit it" in run.stderr


def test_the_net_prior_is_the_bundled_net_through_the_learnt_prior():
    """`--prior net` reads kernels/data/net9.npz: the same tree as `--prior learnt` given that file."""
    b = Board(9)
    for v in ("E5", "C3", "G7"):
        b.play(b.geometry.from_gtp(v))
    trees = []
    for params in (SearchParams(leaves=4, playouts_per_leaf=2, prior="net", seed=3),
                   SearchParams(leaves=4, playouts_per_leaf=2, prior="learnt", prior_model=prior_net.BUNDLED, seed=3)):
        search = Search(b, params)
        search.run(simulations=48, stop_early=False)
        trees.append(search.tree)
    np.testing.assert_array_equal(trees[0].prior[:trees[0].num_nodes], trees[1].prior[:trees[1].num_nodes])
    np.testing.assert_array_equal(trees[0].n[:trees[0].num_nodes], trees[1].n[:trees[1].num_nodes])
    assert prior_net.model_size(prior_net.BUNDLED) == 9


def test_gtp_plays_with_the_net_prior_and_refuses_it_on_another_size():
    run = subprocess.run([sys.executable, "-m", "gojax", "gtp", "--prior", "net", "--simulations", "64"],
                         input="genmove b\nboardsize 7\nquit\n", capture_output=True, text=True, timeout=300)
    lines = [x for x in run.stdout.splitlines() if x]
    assert lines[0].startswith("= ") and lines[0] != "= pass"
    assert lines[1] == "? unacceptable size"  # GTP's words; the reason goes to stderr
    assert f"prior model {prior_net.BUNDLED} was fitted on 9x9, not 7x7" in run.stderr


def test_the_default_prior_is_the_net_where_one_is_bundled_and_the_shape_prior_elsewhere():
    """`--prior auto` (the default): the bundled nets on 9x9, 13x13 and 19x19, the shape prior on 7x7."""
    with_value = dict(value_weight=AUTO_VALUE_WEIGHT, value_model=prior_net.BUNDLED)  # the 9x9 net has a value head
    assert SearchParams().for_size(9) == SearchParams(prior="net", prior_model=prior_net.BUNDLED, **with_value)
    net13 = prior_net.bundled(13)  # it has a value head too
    assert SearchParams().for_size(13) == SearchParams(prior="net", prior_model=net13, value_weight=AUTO_VALUE_WEIGHT,
                                                       value_model=net13)
    assert prior_net.model_size(net13) == 13
    net19 = prior_net.bundled(19)  # the 13x13 net and head saved for 19x19
    assert SearchParams().for_size(19) == SearchParams(prior="net", prior_model=net19, value_weight=AUTO_VALUE_WEIGHT,
                                                       value_model=net19)
    assert prior_net.model_size(net19) == 19 and prior_net.bundled(7) is None
    assert SearchParams().for_size(7) == SearchParams(prior="shape", value_weight=0)
    assert SearchParams(prior="net").for_size(7).prior_model_path == prior_net.BUNDLED  # refused by size
    for size, twin in ((9, "net"), (7, "shape")):
        b = Board(size)
        b.play(b.geometry.from_gtp("C3"))
        trees = []
        for prior in ("auto", twin):
            search = Search(b, SearchParams(leaves=4, playouts_per_leaf=2, prior=prior, seed=5))
            search.run(simulations=32, stop_early=False)
            trees.append(search.tree)
        used = trees[0].num_nodes
        assert used == trees[1].num_nodes > 1
        np.testing.assert_array_equal(trees[0].prior[:used], trees[1].prior[:used])
        np.testing.assert_array_equal(trees[0].n[:used], trees[1].n[:used])


def test_gtp_with_the_default_prior_plays_on_a_size_without_a_net():
    """One engine, one simulator: 9x9 with the net, then 7x7 with the shape prior."""
    run = subprocess.run([sys.executable, "-m", "gojax", "gtp", "--simulations", "32", "--leaves", "4",
                          "--playouts-per-leaf", "2"],
                         input="genmove b\nboardsize 7\nclear_board\ngenmove b\nquit\n", capture_output=True,
                         text=True, timeout=300)
    lines = [x for x in run.stdout.splitlines() if x]
    assert lines[0].startswith("= ") and lines[0] != "= pass", run.stderr
    assert lines[1:3] == ["=", "="], run.stderr
    assert lines[3].startswith("= ") and lines[3] != "= pass", run.stderr


def test_the_default_prior_reads_a_given_prior_model_on_any_size(tmp_path):
    """`--prior-model` is not dropped by `auto`: the given model is the prior, and one fitted for
    another size is refused as `--prior net` would refuse it."""
    given = SearchParams(prior_model=prior_net.BUNDLED)
    assert given.for_size(9) == SearchParams(prior="net", prior_model=prior_net.BUNDLED,
                                             value_weight=AUTO_VALUE_WEIGHT, value_model=prior_net.BUNDLED)
    assert given.prior_model_path == prior_net.BUNDLED  # checked before anything starts
    assert given.for_size(13).prior == "net" and given.for_size(13).prior_model_path == prior_net.BUNDLED
    with pytest.raises(learnt.ModelError, match="fitted on 9x9, not 13x13"):
        prior_net.check_model(given.for_size(13).prior_model_path, 13)


def test_teacher_positions_come_from_saved_games_of_any_size(monkeypatch):
    """bench/teacher_policy.py --games: a 13x13 match folder gives its games once each, moves in
    gojax's point numbers, the first player and the player of every move from the SGF."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent / "bench"))
    import teacher_policy
    folder = Path(__file__).parent.parent / "bench" / "results" / "strength" / "gnugo10_13x13_3000" / "games"
    files = sorted(folder.glob("*.sgf"))[:3]
    data = teacher_policy.from_games([str(f) for f in files] + [str(files[0])], 13)
    assert len(data["moves"]) == 3 and int(data["size"]) == 13
    g0 = [m for m in data["moves"][0].tolist() if m != -2]
    assert len(data["game"]) == sum((m != -2).sum() for m in data["moves"])
    board0 = Board(13)
    for m in g0:
        board0.play(m if m >= 0 else None)  # every move legal in order (play raises otherwise)
    names = data["player_names"].tolist()
    first = data["player"][(data["game"] == 0) & (data["move"] == 0)][0]
    assert names[first] in ("env", "gnugo") and not data["first_white"][0]
    ask = teacher_policy.query(data, 0, 4, 13)
    assert [c for c, _ in ask["moves"]] == ["B", "W", "B", "W"] and ask["boardXSize"] == 13
    with pytest.raises(SystemExit, match="no 19x19 games"):
        teacher_policy.from_games([str(files[0])], 19)


def test_branched_lines_are_packed_replayed_and_held_out_with_their_games(monkeypatch, tmp_path):
    """bench/teacher_policy.py --branch: the positions after moves drawn from the teacher's policy
    pack as lines of their own, replay to the boards asked for, and carry their source game, so
    that learn-net holds a game out with all its lines; learn-net fits several files at once,
    each split on its own."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent / "bench"))
    import teacher_policy
    folder = Path(__file__).parent.parent / "bench" / "results" / "strength" / "pachi_3000_prior_net_katago" / "games"
    data = teacher_policy.from_games([str(f) for f in sorted(folder.glob("*.sgf"))[:3]], 9)
    rows, boards = [], {}
    for g, k in ((0, 10), (1, 12), (2, 5), (0, 30)):
        b = Board(9)
        b.to_play = 2 if data["first_white"][g] else 1
        for p in data["moves"][g][:k].tolist():
            b.play(p)
        branch = ()
        for _ in range(3):  # what collect() writes: a root and two drawn moves, each drawn from its policy
            policy = np.full(81, -1.0, np.float32)
            legal = b.legal_points()
            policy[legal] = 1.0 / len(legal)
            drawn = teacher_policy.draw(policy, 2.0, 1, g, k, branch)
            assert drawn in legal and drawn == teacher_policy.draw(policy, 2.0, 1, g, k, branch)
            boards[(g, k, branch)] = b.copy()
            rows.append({"game": g, "move": k, "branch": list(branch), "drawn": drawn, "value": 0.5,
                         "policy": policy.tolist()})
            b.play(drawn)
            branch += (drawn,)
    assert teacher_policy.children(rows[:1], 2) == [(0, 10, (rows[0]["drawn"],))]
    assert teacher_policy.children(rows[2:3], 2) == []  # two drawn moves deep: the line ends
    teacher_policy.pack_lines(data, 9, tmp_path, rows[::-1], "three games", (0, 80), "--branch 2", 2.0)
    with np.load(tmp_path / "positions.npz") as f:
        packed = {k: f[k] for k in f.files}
    assert packed["family"].tolist() == [0, 0, 1, 2] and len(packed["game"]) == 12
    from gojax import learn_policy
    replayed = learn_policy.replay(packed)
    for i, (line, move) in enumerate(zip(packed["game"].tolist(), packed["move"].tolist())):
        g, k = [(0, 10), (0, 30), (1, 12), (2, 5)][line]
        depth = move - k
        branch = tuple(packed["moves"][line][k:k + depth].tolist())
        assert replayed[i].same_position(boards[(g, k, branch)]) and packed["next"][i] == rows[
            rows.index(next(r for r in rows if (r["game"], r["move"], tuple(r["branch"])) == (g, k, branch)))]["drawn"]
    assert learn_policy.build(str(tmp_path / "positions.npz")).game.tolist() == [0] * 6 + [1] * 3 + [2] * 3
    out = tmp_path / "net.npz"
    learn_net.main(argparse.Namespace(data=[str(KATAGO), str(tmp_path / "positions.npz")], linear="", out=str(out),
                                      width=8, depth=2, epochs=1, seed=0, schedule="cosine", init="",
                                      learning_rate=2e-3))
    report = json.loads(str(np.load(out)["report"]))
    by_data = report["held_out_by_data"]
    assert list(by_data) == [str(KATAGO), str(tmp_path / "positions.npz")]
    assert sum(r["positions"] for r in by_data.values()) == report["held_out"]["positions"]
    assert by_data[str(tmp_path / "positions.npz")]["positions"] in (3, 6)  # one game of three, with its lines


def test_nodes_of_a_search_tree_pack_as_lines_that_replay_to_them(monkeypatch, tmp_path):
    """bench/tree_lines.py: the nodes of a real search below a game position, by their paths; then
    teacher_policy.py --lines packs each asked node as a line of its own that replays to it, ended
    by the teacher's favourite, with its source game as its family."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent / "bench"))
    import teacher_policy
    import tree_lines
    folder = Path(__file__).parent.parent / "bench" / "results" / "strength" / "pachi_3000_prior_net_katago" / "games"
    data = teacher_policy.from_games([str(f) for f in sorted(folder.glob("*.sgf"))[:2]], 9)
    rows, boards = [], {}
    for g, k in ((0, 10), (1, 7)):
        root = tree_lines.position(data, g, k, 9)
        search = Search(root, SearchParams(leaves=4, playouts_per_leaf=2, seed=g))
        search.run(simulations=96, stop_early=False)
        nodes = tree_lines.tree_nodes(search, min_visits=4, max_depth=3)
        assert all(search.tree.sims[i] >= 4 for _, i in nodes)
        paths = [p for p, _ in nodes]
        assert paths and all(1 <= len(p) <= 3 for p in paths) and len({tuple(p) for p in paths}) == len(paths)
        for path in paths[:3]:
            b = root.copy()
            for p in path:
                b.play(p)  # a legal line from the game position (play raises otherwise)
            boards[(g, k, tuple(path))] = b
            policy = np.full(81, -1.0, np.float32)
            policy[b.legal_points()] = 0.01
            policy[b.legal_points()[0]] = 0.5
            rows.append({"game": g, "move": k, "branch": path, "value": 0.5, "policy": policy.tolist()})
    teacher_policy.pack_tree(data, 9, tmp_path, rows[::-1], "two games", "--games G")
    with np.load(tmp_path / "positions.npz") as f:
        packed = {k: f[k] for k in f.files}
    from gojax import learn_policy
    replayed = learn_policy.replay(packed)
    assert len(replayed) == len(rows) and sorted(set(packed["family"].tolist())) == [0, 1]
    for i, line in enumerate(packed["game"].tolist()):
        g = [0, 1][packed["family"][line]]
        k = [10, 7][g]
        branch = tuple(packed["moves"][line][k:packed["move"][i]].tolist())
        assert replayed[i].same_position(boards[(g, k, branch)])
        assert packed["next"][i] == boards[(g, k, branch)].legal_points()[0]
    assert "depth 1" in (tmp_path / "CARD.md").read_text() or "depth 2" in (tmp_path / "CARD.md").read_text()


@pytest.mark.parametrize("k", [1, 4, 6])
def test_the_net_averaged_over_all_eight_symmetries_turns_with_the_board(k):
    """--prior-symmetries 8: the prior of a turned board is the turned prior; the net alone is not
    symmetric, so the average is what makes it so."""
    moves = ("E5", "C3", "G7", "D4", "C4", "F3")
    grid = np.arange(81).reshape(9, 9)  # row 0 the bottom row, as the points are numbered
    where = np.asarray(prior_net.turn(grid, k))  # where[r, c]: the point that symmetry k puts at (r, c)
    plain, turned = Board(9), Board(9)
    for v in moves:
        p = plain.geometry.from_gtp(v)
        plain.play(p)
        turned.play(int(np.argwhere(where == p)[0] @ (9, 1)))
    cells = plain.geometry.point_to_cell

    def prior(b, symmetries):
        return np.asarray(prior_net.log_strengths(from_host(b), prior_net.BUNDLED, symmetries))[cells].reshape(9, 9)
    legal = np.asarray(learnt.rules.legal_mask(from_host(turned), exclude_eyes=True))[cells].reshape(9, 9)
    want = np.asarray(prior_net.turn(prior(plain, 8), k))
    np.testing.assert_allclose(prior(turned, 8)[legal], want[legal], atol=1e-4)
    assert np.abs(prior(turned, 1)[legal] - np.asarray(prior_net.turn(prior(plain, 1), k))[legal]).max() > 1e-2


def test_a_search_reads_the_symmetric_prior_and_refuses_a_count_that_is_no_subgroup():
    b = Board(9)
    for v in ("E5", "C3", "G7"):
        b.play(b.geometry.from_gtp(v))
    priors = []
    for s in (1, 4):
        search = Search(b, SearchParams(leaves=4, playouts_per_leaf=2, prior="net", prior_symmetries=s, seed=3))
        search.run(simulations=48, stop_early=False)
        priors.append(np.asarray(search.tree.prior[:search.tree.num_nodes]))
    assert priors[0].shape == priors[1].shape and not np.array_equal(priors[0], priors[1])
    with pytest.raises(ValueError, match="prior_symmetries must be 1, 2, 4 or 8"):
        SearchParams(prior_symmetries=3)
