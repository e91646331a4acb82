"""The learnt shape prior (search/shape.py, gojax/learn.py): features that respect the board's
symmetries and the colours, a fit that finds what the chosen moves share, and the `shape`
prior in a search (tests/test_search.py also checks priors at backup = priors at first descent)."""

import json
from pathlib import Path

import numpy as np
import pytest

from gojax import learn
from gojax.kernels.geometry import BLACK, WHITE
from gojax.kernels.host import Board
from gojax.kernels.patterns import neighbourhood_index, neighbourhood_indices, symmetry_classes
from gojax.search import shape
from gojax.search.mcts import Search
from gojax.search.params import SearchParams
from gojax.search.priors import NEUTRAL, _after_pass, _last_moves, mogo_values
from tests.helpers import board

CORNER = """
    . . . . .
    . . . . .
    . . . . .
    X O . . .
    . X . . .
"""


def _features(b: Board, verdict=None):
    v = np.full(b.geometry.num_points, NEUTRAL, np.float32) if verdict is None else verdict
    return shape.features(b.stones, b.size, b.to_play, *shape.last_moves(b), v)


def _flip(text: str) -> str:
    rows = [r.split() for r in text.strip().splitlines()]
    return "\n".join(" ".join(r[::-1]) for r in rows)


def test_the_vectorised_neighbourhoods_equal_the_pattern_matchers_index():
    rng = np.random.default_rng(0)
    stones = rng.integers(0, 3, (4, 49)).astype(np.int8)
    idx = neighbourhood_indices(stones, 7, BLACK)
    assert all(idx[k, p] == neighbourhood_index(stones[k], 7, p) for k in range(4) for p in range(49))


def test_a_shape_and_its_mirror_image_are_one_class_and_colours_are_named_from_the_mover():
    classes, n = symmetry_classes()
    assert 8000 < n < 65536 // 4
    b, m = board(CORNER), board(_flip(CORNER))
    g = b.geometry
    # B2's neighbourhood on the left is D2's on the mirrored board; A3 <-> E3.
    for left, right in (("B2", "D2"), ("A3", "E3"), ("C2", "C2")):
        assert _features(b)[g.from_gtp(left), 0] == _features(m)[g.from_gtp(right), 0]
    # The same position with the colours swapped and White to move: identical features.
    swapped = Board.from_ascii(CORNER.replace("X", "x").replace("O", "X").replace("x", "O"), WHITE)
    np.testing.assert_array_equal(_features(swapped), _features(b))
    # ... but not with Black to move: the stones belong to the other side now.
    assert (_features(board(CORNER.replace("X", "x").replace("O", "X").replace("x", "O")))[:, 0]
            != _features(b)[:, 0]).any()


def test_distance_and_line_classes():
    g = Board(9).geometry
    d = shape.distance_class(9, g.from_gtp("E5"))
    assert d[g.from_gtp("E6")] == 1 and d[g.from_gtp("F6")] == 2 and d[g.from_gtp("E7")] == 3
    assert d[g.from_gtp("G6")] == 4 and d[g.from_gtp("A1")] == 9  # knight's move: 1 + 2 + 2 - 1
    assert (shape.distance_class(9, None) == shape.NO_MOVE).all()
    b = Board(9)
    for v in ("E5", "pass"):
        b.play(g.from_gtp(v))
    f = _features(b)
    assert (f[:, 2] == shape.NO_MOVE).all()  # the opponent passed
    assert f[g.from_gtp("E6"), 3] == 1  # own previous move E5
    assert f[g.from_gtp("A5"), 1] == 0 and f[g.from_gtp("B5"), 1] == 1 and f[g.from_gtp("E5"), 1] == 3


def test_a_uniform_model_keeps_every_move_at_one_half():
    b = board(CORNER)
    pts = np.array([p for p in b.legal_points() if p is not None])
    h = shape.ShapeModel.uniform().values(_features(b), pts)
    np.testing.assert_allclose(h, 0.5)


def test_the_fit_learns_that_the_chosen_moves_touch_the_last_move():
    """Synthetic games: in each position the move played is a random one next to the last move.
    The fitted gamma of distance class 1 dominates, and the model predicts far better than chance."""
    feats, chosen = _synthetic(300, 1)
    model = shape.fit(feats[:200], chosen[:200], iterations=10)
    last = np.exp(model.log_gamma[2])
    assert last[1] > 5 * max(last[2:].max(), 1e-9)
    test = learn.Positions(feats[200:], chosen[200:], ["g"] * len(chosen[200:]))
    r = learn.accuracy(model, test)
    assert r["loglik"] > r["uniform_loglik"] + 1.0


def test_the_diamond_of_a_shape_is_the_same_in_a_mirror_and_with_the_colours_named_from_the_mover():
    b, m = board(CORNER), board(_flip(CORNER))
    g = b.geometry
    keys = shape.diamond_keys(b.stones, b.size, b.to_play)
    mirrored = shape.diamond_keys(m.stones, m.size, m.to_play)
    for left, right in (("B2", "D2"), ("A3", "E3"), ("C3", "C3")):
        assert keys[g.from_gtp(left)] == mirrored[g.from_gtp(right)]
    swapped = Board.from_ascii(CORNER.replace("X", "x").replace("O", "X").replace("x", "O"), WHITE)
    np.testing.assert_array_equal(shape.diamond_keys(swapped.stones, 5, WHITE), keys)
    # The diamond reaches two points away, where the 3x3 pattern does not: C3 and C4 share the
    # 3x3 class on an empty board's edge only when the stone two points away is not there.
    assert keys[g.from_gtp("C3")] != shape.diamond_keys(Board(5).stones, 5, BLACK)[g.from_gtp("C3")]


def test_a_diamond_model_learns_a_shape_and_round_trips(tmp_path):
    """Moves that always answer a stone two points above them (out of the 3x3's sight): the
    diamond group learns them; saved and loaded, the model gives the same strengths."""
    rng = np.random.default_rng(2)
    feats, chosen = [], []
    for _ in range(150):
        b = Board(7)
        for _ in range(int(rng.integers(1, 3))):
            b.play(int(rng.choice([p for p in b.legal_points() if p is not None])))
        pts = [p for p in b.legal_points() if p is not None]
        v = np.full(49, NEUTRAL, np.float32)
        f = shape.features(b.stones, 7, b.to_play, *shape.last_moves(b), v, diamond=True)[pts]
        under = [i for i, p in enumerate(pts) if p + 14 < 49 and b.stones[p + 14] != 0 and b.stones[p + 7] == 0]
        if under:
            feats.append(f)
            chosen.append(int(rng.choice(under)))
    model = shape.fit(feats[:100], chosen[:100], iterations=10)
    assert model.uses_diamond and len(model.log_gamma[5]) == len(model.diamonds) + 1
    test = learn.Positions(feats[100:], chosen[100:], ["g"] * len(chosen[100:]))
    plain = shape.fit([f[:, :5] for f in feats[:100]], chosen[:100], iterations=10)
    assert learn.accuracy(model, test)["loglik"] > learn.accuracy(plain, test)["loglik"]
    model.save(tmp_path / "d.npz")
    again = shape.ShapeModel.load(tmp_path / "d.npz")
    np.testing.assert_array_equal(again.log_strength(feats[120]), model.log_strength(feats[120]))


def test_learning_from_a_match_folder_takes_only_gojax_moves_at_enough_simulations(tmp_path):
    """A real record (gojax Black at 3,000 simulations vs GNU Go): only Black's moves are learnt,
    one position per non-pass move, each with the played move among the candidates."""
    from gojax.sgf import board_to_sgf
    b = Board(9)
    for v in ("E5", "C3", "G3", "pass", "D7"):
        b.play(b.geometry.from_gtp(v))
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "game0000.sgf").write_bytes(board_to_sgf(b, black="gojax", white="gnugo10"))
    row = {"game": 0, "black": "gojax", "white": "gnugo10", "size": 9, "sgf": "games/game0000.sgf",
           "commands": {"gojax": "python -m gojax gtp --simulations 3000 --quiet", "gnugo10": "gnugo --mode gtp"}}
    (tmp_path / "results.jsonl").write_text(json.dumps(row) + "\n")
    pos = learn.collect([tmp_path], min_simulations=2000)
    assert len(pos.chosen) == 3  # E5, G3, D7 (White's C3 and pass are GNU Go's)
    assert learn.collect([tmp_path], min_simulations=5000).chosen == []
    first = pos.feats[0][pos.chosen[0]]
    assert first[2] == shape.NO_MOVE and first[1] == 3  # E5: no last move, the centre
    # The command line: a model file that `--shape-model` loads, or a clear error.
    from gojax.cli import main
    out = tmp_path / "shape.npz"
    assert main(["learn-prior", str(tmp_path), "--out", str(out), "--holdout-every", "0", "--no-progress",
                 "--iterations", "3"]) == 0
    assert shape.ShapeModel.load(out).moves == 3
    with pytest.raises(SystemExit, match="no 9x9 moves by gojax"):
        main(["learn-prior", str(tmp_path), "--out", str(out), "--min-simulations", "5000", "--no-progress"])


def test_the_bundled_model_loads_and_prefers_a_capture_to_a_first_line_move():
    b = board("""
        . . . . .
        . . . . .
        . X O X .
        . . X . .
        . . . . .
    """, "B")
    b.moves = [(WHITE, b.geometry.from_gtp("C3"))]
    pts = [p for p in b.legal_points() if p is not None]
    verdict = np.full(25, NEUTRAL, np.float32)
    verdict[pts] = mogo_values(b, pts)
    h = dict(zip(pts, shape.load_model().values(_features(b, verdict), np.array(pts))))
    g = b.geometry
    assert h[g.from_gtp("C4")] == max(h.values()) and h[g.from_gtp("C4")] > 0.8
    assert h[g.from_gtp("A1")] < 0.5


def test_hard_verdicts_keep_mogos_ladder_knowledge():
    """The escape E5 from a ladder: MoGo's reader calls it good with the breaker at G2, bad
    without.  With --shape-hard-verdicts the prior keeps exactly 1 and 0; without, the verdict is
    one feature among five and the learnt value only leans the same way."""
    from tests.test_search import LADDER
    for breaker, want in (("O", 1.0), (".", 0.0)):
        got = {}
        for hard in (True, False):
            b = board(LADDER.format(breaker=breaker), "W", komi=-2.5)
            params = SearchParams(prior="shape", shape_hard_verdicts=hard, leaves=4, playouts_per_leaf=4, seed=0)
            r = Search(b, params).run(simulations=64, stop_early=False)
            got[hard] = next(m for m in r.moves if m.move == b.geometry.from_gtp("E5")).prior
        assert got[True] == want
        assert 0.0 < got[False] < 1.0 and (got[False] > 0.5) == (want == 1.0)


def test_learning_takes_moves_only_from_the_engines_asked_for():
    from gojax.learn import learnt_players
    row = {"black": "gojax3000", "white": "pachi3000",
           "commands": {"gojax3000": "env -C /x python -m gojax gtp --simulations 3000 --seed 4",
                        "pachi3000": "/opt/pachi/pachi -s 5 -r chinese threads=1 -t =3000"}}
    assert learnt_players(row, 2000) == {"black"}
    assert learnt_players(row, 2000, ("pachi",)) == {"white"}
    assert learnt_players(row, 2000, ("gojax", "pachi")) == {"black", "white"}
    assert learnt_players(row, 5000, ("gojax", "pachi")) == set()
    timed = dict(row, commands={**row["commands"], "pachi3000": "/opt/pachi/pachi -t 1.2 threads=1"})
    assert learnt_players(timed, 100, ("pachi",)) == set()  # a time budget, not a fixed number of playouts


@pytest.mark.parametrize("diamond", [False, True])
def test_candidate_features_are_the_full_features_at_the_candidates(diamond):
    """The search's prior computes features at the legal moves of its new nodes only: the same
    rows as the whole board's features there."""
    rng = np.random.default_rng(5)
    boards = []
    for _game in range(6):
        b = Board(7)
        for _ in range(int(rng.integers(0, 30))):
            legal = b.legal_points()
            b.play(int(rng.choice(legal)) if legal and rng.random() > 0.1 else None)
        boards.append(b)
    stones = np.stack([b.stones for b in boards])
    mover = np.array([b.to_play for b in boards])
    last, prev = zip(*(shape.last_moves(b) for b in boards))
    verdict = rng.choice([0.0, 0.5, 1.0], (len(boards), 49)).astype(np.float32)
    rows, points = np.nonzero(rng.random((len(boards), 49)) < 0.5)
    full = shape.features(stones, 7, mover, list(last), list(prev), verdict, diamond)
    at = shape.candidate_features(stones, 7, mover, shape.move_rows(last, 7), shape.move_rows(prev, 7), rows, points,
                                  verdict[rows, points], diamond)
    np.testing.assert_array_equal(at, full[rows, points])


def test_the_prior_reads_the_last_two_moves_from_the_tree_as_the_boards_hold_them():
    """Below the root's children a node's last two moves come from the tree's actions; they
    must be the moves its board holds (passes included)."""
    b = Board(5)
    b.play(b.geometry.from_gtp("C3"))
    b.play(None)
    search = Search(b, SearchParams(leaves=4, playouts_per_leaf=2, seed=1, pass_in_tree="always"))
    search.run(simulations=400, stop_early=False)
    nodes = np.arange(search.tree.num_nodes)
    boards = [search.tree.boards[n] for n in nodes]
    last, prev = _last_moves(search.tree, nodes)
    want = [shape.move_rows(shape.last_moves(board), 5) for board in boards]
    assert [(int(x), int(y)) for x, y in zip(last, prev)] == [(int(x), int(y)) for x, y in want]
    assert search.tree.parent[nodes].min() == -1 and (search.tree.parent[search.tree.parent[nodes[1:]]] >= 0).any()


def test_the_pass_prior_reads_whether_a_node_follows_a_pass_from_the_tree_as_the_boards_hold_it():
    """A pass is worth 0.5 only right after a pass: the tree's action into a node must say what
    its board's pass count says, for the root (a pass just played) and for nodes below it."""
    b = Board(5)
    b.play(b.geometry.from_gtp("C3"))
    b.play(None)
    # prior="even": the search tries passes (the MoGo prior makes them bad and it never does)
    search = Search(b, SearchParams(leaves=4, playouts_per_leaf=2, seed=1, pass_in_tree="always", prior="even"))
    search.run(simulations=400, stop_early=False)
    nodes = np.arange(search.tree.num_nodes)
    want = [search.tree.boards[n].passes >= 1 for n in nodes]
    assert _after_pass(search.tree, nodes).tolist() == want
    assert any(want[1:]) and not all(want)


def _synthetic(n: int, seed: int):
    """Positions on 7x7 whose move is a random one next to the last move."""
    rng = np.random.default_rng(seed)
    feats, chosen = [], []
    while len(feats) < n:
        b = Board(7)
        for _ in range(int(rng.integers(1, 12))):
            b.play(int(rng.choice([p for p in b.legal_points() if p is not None])))
        pts = [p for p in b.legal_points() if p is not None]
        f = _features(b)[pts]
        near = np.flatnonzero(f[:, 2] == 1)
        if len(near):
            feats.append(f)
            chosen.append(int(rng.choice(near)))
    return feats, chosen


def test_a_teacher_sure_of_one_move_fits_as_that_move_chosen():
    feats, chosen = _synthetic(60, 2)
    one_hot = [np.eye(len(f))[c] for f, c in zip(feats, chosen)]
    a = shape.fit(feats, chosen, iterations=5)
    b = shape.fit(feats, chosen, iterations=5, targets=one_hot)
    for x, y in zip(a.log_gamma, b.log_gamma):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)


KATAGO = Path(__file__).parent / "data" / "teacher_katago_small.npz"  # 32 positions, bench/teacher_policy.py


def test_learning_from_katagos_policy(tmp_path):
    """`learn-prior --teacher`: every position of KataGo's labels, its distribution over the legal
    points as the target and its favourite as the chosen move; a model `--shape-model` loads."""
    pos = learn.from_teacher(str(KATAGO))
    data = np.load(KATAGO)
    assert len(pos.chosen) == len(data["game"]) == 32
    for f, t, c in zip(pos.feats, pos.targets, pos.chosen):
        assert len(t) == len(f) and abs(t.sum() - 1) < 1e-9 and c == t.argmax()
    from gojax.cli import main
    out = tmp_path / "shape.npz"
    assert main(["learn-prior", "--teacher", str(KATAGO), "--out", str(out), "--holdout-every", "4",
                 "--no-progress", "--iterations", "3"]) == 0
    assert shape.ShapeModel.load(out).moves == 24  # every 4th of the 32 games held out
    for bad, words in [([], "give match folders or --teacher"), ([str(tmp_path), "--teacher", str(KATAGO)],
                       "one of the two"), (["--teacher", str(tmp_path / "no.npz")], "no such file")]:
        with pytest.raises(SystemExit, match=words):
            main(["learn-prior", *bad, "--out", str(out), "--no-progress"])
