"""The MoGo handcrafted prior (search/priors.py, seed 000 sec. 5 eq. 48-52): good moves (captures,
atari saves that gain liberties, 3x3 hane/cut patterns next to the last move), bad moves (own
eye fills, self-atari of more than one stone, a ladder run), neutral everything else."""

from __future__ import annotations

from kernels.geometry import BLACK, WHITE
from search.priors import BAD, GOOD, NEUTRAL, mogo_values
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
