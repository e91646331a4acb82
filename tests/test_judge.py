"""End of game: dead stones, seki and the count (gojax/judge.py), and the pass decision on them."""

import io

import jax
import pytest

from gojax import judge
from gojax.kernels.geometry import BLACK, WHITE
from gojax.player import Player, PlayerOptions
from gojax.search.params import SearchParams
from tests.helpers import board, vertices

# Black owns A-E, White F-J; the white stone at C7 is dead inside Black's area.
DEAD_INSIDE = """
    . . . . X O . . .
    . . . . X O . . .
    . . O . X O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . .
    . . . . X O . . ."""

# The white chain D9-F8 and the black chains A8-C8 and B9 share liberties that neither side can
# fill (GNU Go: seki for the thirteen stones around them, nothing dead, B+52.5).
SEKI = """
    . X . O . O X . .
    X X X O O O X . .
    O O O O X X X . .
    X X X X X . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . ."""


def judged(text, rules="chinese", to_play="B"):
    b = board(text, to_play)
    return b, judge.judge(b, jax.random.key(0), rules, playouts=256)


def test_a_stone_inside_the_opponents_area_is_dead_and_counted_for_the_opponent():
    b, j = judged(DEAD_INSIDE)
    assert vertices(b, j.dead) == {"C7"} and j.seki == ()
    assert j.score == 45 - 36 - 7.5
    assert judge.dead_of(j, b, WHITE) == list(j.dead) and judge.dead_of(j, b, BLACK) == []


def test_tromp_taylor_counts_the_board_as_it_stands():
    b, j = judged(DEAD_INSIDE, rules="tromp-taylor")
    assert j.dead == ()
    assert j.score == b.score() == 9 - 37 - 7.5  # A-D touch both colours: nobody's


def test_seki_stones_live_and_their_shared_liberties_count_for_nobody():
    b, j = judged(SEKI)
    assert j.dead == ()
    assert vertices(b, j.seki) == {"B9", "A8", "B8", "C8", "D9", "F9", "D8", "E8", "F8", "A7", "B7", "C7", "D7"}
    assert j.score == 52.5  # GNU Go's count of this position


def test_unknown_rules_are_refused():
    with pytest.raises(ValueError, match="rules"):
        judge.judge_ownership(board(DEAD_INSIDE), judge.play_out(board(DEAD_INSIDE), jax.random.key(0), 8), "japanese")


def player_after_a_pass(text, to_play, rules="chinese"):
    params = SearchParams(leaves=4, playouts_per_leaf=8, seed=1, rules=rules)
    p = Player(9, 7.5, params, PlayerOptions(simulations=64, resign=False, log=io.StringIO()))
    b = board(text, to_play)
    b.passes = 1  # the opponent has just passed
    p.load(b, {BLACK: [], WHITE: []})
    return p


def test_after_a_pass_the_winner_on_the_judged_count_passes():
    p = player_after_a_pass(DEAD_INSIDE, "B")
    assert p.genmove(BLACK) is None
    assert p.final_score() == 1.5


def test_after_a_pass_a_raw_count_win_that_the_dead_stones_lose_is_played_on():
    p = player_after_a_pass(DEAD_INSIDE, "W")  # White's raw count wins by 35.5, the judged one loses
    assert p.board.score() < 0 < p.final_score()
    move = p.genmove(WHITE)
    assert move is not None


def test_under_tromp_taylor_the_raw_count_decides_the_pass():
    p = player_after_a_pass(DEAD_INSIDE, "W", rules="tromp-taylor")
    assert p.genmove(WHITE) is None and p.final_score() == -35.5


def test_final_status_list_splits_the_stones():
    p = player_after_a_pass(DEAD_INSIDE, "B")
    assert vertices(p.board, p.status("dead")) == {"C7"}
    assert len(p.status("alive")) == 18 and p.status("seki") == []


def test_a_lost_position_is_resigned_even_below_resign_min_simulations():
    # White to move, Black given 81.5 points: no count can win it for White.
    text = "\n".join([". . . . . . . . ."] * 4 + [". . . . X . . . ."] + [". . . . . . . . ."] * 3
                     + [". . . . . . . . O"])
    params = SearchParams(leaves=4, playouts_per_leaf=8, seed=1, resign_threshold=0.1)
    for simulations in (128, 256):
        p = Player(9, -81.5, params, PlayerOptions(simulations=simulations, log=io.StringIO()))
        p.load(board(text, "W", komi=-81.5), {BLACK: [], WHITE: []})
        assert simulations < params.resign_min_simulations
        assert p.genmove(WHITE) == "resign"


def test_the_principal_variation_reads_as_moves():
    p = player_after_a_pass(DEAD_INSIDE, "B")
    result = p.think(BLACK, simulations=64)
    assert result.pv_vertices and all(v == "pass" or v[0] in "ABCDEFGHJ" for v in result.pv_vertices)
    assert len(result.pv_vertices) == len(result.pv)
