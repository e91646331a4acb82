"""bench/costly_moves.py: which of a reviewed game's moves are cases, what an answer costs, the summary."""

from __future__ import annotations

import pytest

from bench.costly_moves import answer_cost, cases, paired_difference, summary

# Black's lead before each of five moves and after the last (KataGo's, as bench/game_review.py
# writes it): gojax (Black) gives up 5 points with D4 and 4 with C3, but C3 comes after Black's
# win rate fell to 5%, so only D4 is a contested case.
GAME = {"id": "m:0", "game": 3, "black": "gojax", "white": "gnugo", "winner_color": "white",
        "colours": "BWBWB", "moves_played": ["D4", "Q16", "R4", "D16", "C3"],
        "lead": [2.0, -3.0, -3.0, -2.0, -10.0, -14.0], "winrate": [0.6, 0.3, 0.3, 0.3, 0.05, 0.02]}


def test_a_case_is_a_contested_move_of_the_engine_that_cost_enough():
    assert cases([GAME], "gojax", 3.0, 100) == [
        {"game": 3, "ply": 0, "colour": "B", "played": "D4", "cost": 5.0, "lead": 2.0}]
    assert cases([GAME], "gnugo", 3.0, 100) == []  # D16 raised White's lead from 2 to 10: a gain
    assert cases([GAME], "gojax", 6.0, 100) == []  # D4 cost 5
    assert cases([GAME], "gojax", 3.0, 0) == []  # only moves before move `last`


def test_an_answers_cost_is_seen_from_its_mover():
    black_case = {"colour": "B", "lead": 2.0}
    white_case = {"colour": "W", "lead": -3.0}
    assert answer_cost(black_case, -1.0) == pytest.approx(3.0)  # Black's lead 2 -> -1
    assert answer_cost(white_case, -1.0) == pytest.approx(2.0)  # White's lead 3 -> 1
    assert answer_cost(white_case, -5.0) == pytest.approx(-2.0)  # better than KataGo's first look


def test_the_summary_compares_settings_on_the_searches_they_share():
    row = dict(game=3, ply=0, played="D4", game_cost=5.0, simulations=2000)
    rows = [dict(row, seed=0, settings={}, move="D4", cost=5.0),
            dict(row, seed=1, settings={}, move="Q4", cost=0.5),
            dict(row, seed=0, settings={"puct": 0.25}, move="Q4", cost=0.5),
            dict(row, seed=1, settings={"puct": 0.25}, move="R16", cost=1.5),
            dict(row, seed=2, settings={"puct": 0.25}, move="R16", cost=9.0)]  # seed 2: only one setting has it
    text = summary(rows)
    assert "1 cases searched by every setting (2 searches each)" in text
    assert "the defaults" in text
    lines = {line.split()[0]: line.split() for line in text.splitlines()[2:4]}
    assert lines["the"][-4:] == ["2", "2.75", "0.50", "0.50"]  # mean of 5.0 and 0.5; one under 1; one repeat
    assert lines['{"puct":'][2:6] == ["2", "1.00", "0.50", "0.00"]
    assert lines['{"puct":'][-4:] == ["-1.75", "(-inf", "..", "+inf)"]  # one case: no interval
    assert "the game's moves there cost 5.00" in text


def test_the_difference_to_the_defaults_averages_each_cases_seeds_first():
    """Case (0, 10) has two seeds (differences -4 and -2: -3), case (1, 20) one (-1): the mean of
    -3 and -1 is -2, their spread 1.41, the interval -2 +- 1.96 * 1.41 / sqrt 2."""
    held = {(0, 10, 0): {"cost": 1.0}, (0, 10, 1): {"cost": 2.0}, (1, 20, 0): {"cost": 3.0}}
    base = {(0, 10, 0): {"cost": 5.0}, (0, 10, 1): {"cost": 4.0}, (1, 20, 0): {"cost": 4.0}}
    lo, mid, hi = paired_difference(held, base, set(held))
    assert mid == pytest.approx(-2.0)
    assert (lo, hi) == pytest.approx((-2.0 - 1.96, -2.0 + 1.96))
