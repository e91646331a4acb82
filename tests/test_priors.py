"""The MoGo handcrafted prior (search/priors.py, seed 000 sec. 5 eq. 48-52): good moves (captures,
atari saves that gain liberties, 3x3 hane/cut patterns next to the last move), bad moves (own
eye fills, self-atari of more than one stone, a ladder run), neutral everything else."""

from __future__ import annotations

import os

import numpy as np
import pytest

from gojax.kernels.geometry import BLACK, WHITE
from gojax.kernels.host import Board
from gojax.search.priors import BAD, GOOD, NEUTRAL, mogo_values
from tests.helpers import board


def prior(b, last: str | None = None) -> dict[str, float]:
    """{vertex: H} over the legal moves of the side to move, answering `last`."""
    g = b.geometry
    if last:
        b.moves = [(WHITE if b.to_play == BLACK else BLACK, g.from_gtp(last))]
    points = b.legal_points()
    return {g.to_gtp(p): float(h) for p, h in zip(points, mogo_values(b, points))}


def test_capture_is_good():
    h = prior(board("""
        . . . . .
        . X . . .
        X O X . .
        . . . . .
        . . . . .
    """))
    assert h["B2"] == GOOD  # takes O B3's last liberty
    assert h["D4"] == NEUTRAL


LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . X X . . . .
    . . X O . . . . .
    . . . X . . . . .
    . . . . . . . . .
    . . . . . . {breaker} . .
    . . . . . . . . ."""  # O D5 in atari; its last liberty E5 gives two liberties


def test_saving_a_stone_in_atari_is_good_and_a_ladder_run_is_bad():
    h = prior(board(LADDER.format(breaker="."), "W"), last="D6")
    assert h["E5"] == BAD  # Black runs it down the ladder
    h = prior(board(LADDER.format(breaker="O"), "W"), last="D6")
    assert h["E5"] == GOOD  # the ladder breaker at G2 lets it escape
    h = prior(board("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . O . . . .
        . O X O . . .
        . . . . . . .
        . . . . . . .
    """), last="D3")
    assert h["C2"] == GOOD  # X C3 extends to three liberties (B2, D2, C1)


def test_filling_an_own_eye_is_bad():
    h = prior(board("""
        . X . X .
        X X X X X
        . . . . .
        . . . . .
        . . . . .
    """))
    assert h["A5"] == BAD and h["C5"] == BAD and h["E5"] == BAD
    assert h["C3"] == NEUTRAL


def test_self_atari_of_more_than_one_stone_is_bad_of_one_stone_is_not():
    h = prior(board("""
        . . . . . .
        . . . . . .
        . O O O . .
        O X X . . O
        . O O O O .
        . . . . . .
    """))
    assert h["D3"] == BAD  # joins X B3 C3 into three stones with one liberty (E3)
    h = prior(board("""
        . . . . .
        . O . . .
        O . O . .
        . . . . .
        . . . . .
    """))
    assert h["B3"] == NEUTRAL  # a lone stone in atari: a throw-in is allowed


def test_hane_pattern_next_to_the_last_move_is_good_and_far_away_is_not():
    b = board("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . X O . . .
        . . . X . . .
        . . . . . . .
        . . . . . . .
    """, "W")
    h = prior(b, last="D3")
    near = {v for v, x in h.items() if x == GOOD}
    assert near and all(abs(ord(v[0]) - ord("D")) <= 1 and abs(int(v[1:]) - 3) <= 1 for v in near)
    b.moves = []
    assert all(x == NEUTRAL for x in prior(b).values())  # no last move: no pattern bonus


@pytest.mark.parametrize("size", [5, 7, 9, 13])
def test_device_prior_codes_equal_the_host_prior(size):
    """kernels/policy.prior_codes (+ the host's ladder reads) = mogo_values, on random games."""
    import jax

    from gojax.kernels import policy
    from gojax.kernels.state import batch_from_host
    from gojax.search.priors import values_from_codes
    codes_of = jax.jit(jax.vmap(policy.prior_codes))
    rng = np.random.default_rng(size)
    boards = []
    for _ in range(12):
        b = Board(size)
        for _ in range(int(rng.integers(0, size * size))):
            pts = b.legal_points()
            b.play(None if not pts or rng.random() < 0.03 else int(rng.choice(pts)))
        boards.append(b)
    codes = np.asarray(codes_of(batch_from_host(boards)))[:, boards[0].geometry.point_to_cell]
    kinds = set()
    for b, c in zip(boards, codes):
        pts = b.legal_points()
        np.testing.assert_array_equal(values_from_codes(b, pts, c), mogo_values(b, pts), err_msg=str(b))
        kinds |= set(c[pts].tolist())
    assert {policy.PRIOR_BAD, policy.PRIOR_NEUTRAL, policy.PRIOR_GOOD} <= kinds


def test_the_amaf_side_of_the_prior_can_carry_its_own_weight():
    # C(s,a) = M on the MC side, C~(s,a) = M~ on the AMAF side, both at H (eq. 48-52).
    from gojax.search.mcts import Search
    from gojax.search.params import SearchParams
    b = Board(5)
    p = b.geometry.num_points
    same = Search(b, SearchParams(prior="mogo", prior_equiv=25)).tree
    apart = Search(b, SearchParams(prior="mogo", prior_equiv=25, prior_amaf_equiv=100)).tree
    np.testing.assert_array_equal(apart.n[0], same.n[0])
    np.testing.assert_array_equal(apart.w[0], same.w[0])
    np.testing.assert_array_equal(apart.na[0, :p], 4 * same.na[0, :p])
    np.testing.assert_allclose(apart.wa[0, :p], 4 * same.wa[0, :p])
    assert same.na[0, :p].max() == 25


def test_shape_wins_gives_each_move_even_simulations_and_won_ones_by_its_probability():
    # Pachi's form: M simulations at H = 0.5 and c sqrt(p) won ones on the MC side, none of
    # them counted as the search's own visits.
    from gojax.search.mcts import Search
    from gojax.search.params import SearchParams
    b = board("""
        . . . . . . .
        . . . . . . .
        . . X O . . .
        . . X O . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        """)
    params = SearchParams(prior="shape_wins", prior_equiv=14, prior_amaf_equiv=0, shape_wins=210, leaves=4,
                          playouts_per_leaf=4, seed=3)
    search = Search(b, params)
    t, pa = search.tree, search.tree.pass_action
    legal = np.flatnonzero(t.legal[0, :pa])
    p = t.prior[0, legal]
    assert abs(p.sum() - 1) < 1e-5 and p.max() > 3 * p.min()  # the model's probabilities, not values
    black = t.to_play[0] == 1  # Black to move: its wins are Black's
    assert black
    np.testing.assert_allclose(t.n[0, legal], 14 + 210 * np.sqrt(p), rtol=1e-6)
    np.testing.assert_allclose(t.w[0, legal], 7 + 210 * np.sqrt(p), rtol=1e-6)
    assert t.n[0, pa] == 14 and t.na[0].max() == 0  # pass: M at its H; no AMAF prior at C~ = 0
    result = search.run(simulations=64, stop_early=False)
    assert sum(m.visits for m in result.moves) == 64
    best = max(result.moves, key=lambda m: m.prior)
    assert best.visits > 0  # the likeliest move is tried first


def test_puct_reads_a_softmax_priors_own_probabilities_and_spends_visits_by_them():
    # The shape prior stores H = sigmoid(log(n p)); shape_wins stores p itself: the p that
    # PUCT reads back from H is the model's own.  The term explores: a search with it tries
    # more of the moves, the likeliest still the most visited.
    from gojax.search.mcts import Search
    from gojax.search.params import SearchParams
    from gojax.search.select import prior_probabilities
    b = board("""
        . . . . . . .
        . . . . . . .
        . . X O . . .
        . . X O . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        """)
    kw = dict(leaves=4, playouts_per_leaf=4, seed=3)
    probs = Search(b, SearchParams(prior="shape_wins", **kw)).tree.prior[0]
    search = Search(b, SearchParams(prior="shape", **kw))
    t, pa = search.tree, search.tree.pass_action
    legal = np.flatnonzero(t.legal[0, :pa])
    got = prior_probabilities(t, np.array([0]), search.params)[0]
    np.testing.assert_allclose(got[legal], probs[legal], rtol=1e-4)
    assert got[pa] < 1e-5  # pass: H = 0 unless the opponent passed
    top = int(legal[np.argmax(probs[legal])])

    def visited(puct: float) -> dict:
        result = Search(b, SearchParams(prior="shape", puct=puct, **kw)).run(simulations=256, stop_early=False)
        return {m.move: m.visits for m in result.moves if m.visits}

    plain, explored = visited(0.0), visited(4.0)
    assert len(explored) >= 2 * len(plain)
    assert max(explored, key=explored.get) == top
    with pytest.raises(ValueError, match="puct"):
        SearchParams(prior="shape_wins", puct=1.0)
    with pytest.raises(ValueError, match="puct"):
        SearchParams(puct=-1.0)


def _escapes_on_boards(board: Board, p: int, budget: int = 60) -> bool:
    """The ladder read of search/tactics.extension_escapes played with Board copies and
    Board.play: the obviously correct version the list-based reader must equal."""
    from gojax.kernels.host import IllegalMove
    moves = [0]

    def libs(b, q):
        return b.group(q)[1]

    def attacker_in_atari(b, q):
        attacker = WHITE if b.stones[q] == BLACK else BLACK
        return any(b.stones[r] == attacker and len(libs(b, r)) == 1
                   for s in b.group(q)[0] for r in b.geometry.neighbors[s])

    def defend(b, q):
        moves[0] += 1
        if moves[0] > budget:
            return True
        b = b.copy()
        try:
            b.play(q, superko=False)
        except IllegalMove:
            return False
        ls = libs(b, q)
        if len(ls) != 2:
            return len(ls) >= 3
        for a in sorted(ls):  # the attacker's ataris in the order of the points, as the reader tries them
            other = next(iter(ls - {a}))
            after = b.copy()
            try:
                after.play(a, superko=False)
            except IllegalMove:
                continue
            if len(libs(after, q)) == 1 and not attacker_in_atari(after, q) and not defend(after, other):
                return False
        return True

    return defend(board, p)


@pytest.mark.parametrize("size", [7, 9, 13])
def test_the_ladder_reader_equals_the_read_on_host_boards(size):
    """Every extension out of atari in random games reads the same, at full and tiny budgets."""
    from gojax.search.tactics import extension_escapes
    rng = np.random.default_rng(100 + size)
    reads = outcomes = 0
    seen_outcomes = set()
    for _ in range(40):
        b = Board(size)
        for _ in range(int(rng.integers(size * size // 2, 2 * size * size))):
            pts = b.legal_points()
            if not pts:
                break
            for p in np.flatnonzero(b.stones == 0).tolist():  # extend a chain in atari at its last liberty
                libs = [b.group(q)[1] for q in b.geometry.neighbors[p] if b.stones[q] == b.to_play]
                if any(ls == {p} for ls in libs):
                    for budget in (60, 3):
                        got = extension_escapes(b, p, budget)
                        assert got == _escapes_on_boards(b, p, budget), (str(b), p, budget)
                        seen_outcomes.add(got)
                    reads += 1
            b.play(int(rng.choice(pts)))
    outcomes = len(seen_outcomes)
    assert reads >= 50 and outcomes == 2


def test_the_compiled_ladder_reader_loads_from_numba_s_cache_in_a_new_process(tmp_path):
    """The reader is compiled once and cached; a later process loads it (a compiled recursive
    function crashed there): two fresh processes read the same ladder, the second from the cache."""
    import subprocess
    import sys
    code = ("from gojax.kernels.host import Board; from gojax.search.tactics import extension_escapes\n"
            f"b = Board.from_ascii('''{LADDER.format(breaker='.')}''', to_play=2)\n"
            "print(extension_escapes(b, b.geometry.from_gtp('E5')))")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "False"  # Black runs it down the ladder
    assert any(tmp_path.rglob("*.nbi"))  # the second process had a cache to load
