"""bench/game_review.py: what a move costs its player in KataGo's score lead, and the summary."""

from __future__ import annotations

import pytest

from bench.game_review import costs, summary

# Black's lead before each of four moves and after the last: Black's D4 gives up 2 points,
# White's Q16 gains White 3 more, Black's pass costs nothing, White's R3 throws away 6.
GAME = {"id": "m:0", "game": 0, "black": "gojax", "white": "gnugo", "winner_color": "white",
        "colours": "BWBW", "moves_played": ["D4", "Q16", "pass", "R3"],
        "lead": [1.0, -1.0, -4.0, -4.0, 2.0], "winrate": [0.6, 0.4, 0.05, 0.05, 0.08]}


def test_a_moves_cost_is_its_players_drop_in_score_lead():
    assert [(t, who) for t, who, _ in costs(GAME)] == [(0, "gojax"), (1, "gnugo"), (2, "gojax"), (3, "gnugo")]
    assert [c for *_, c in costs(GAME)] == pytest.approx([2.0, -3.0, 0.0, 6.0])


def test_the_summary_counts_contested_moves_and_names_where_the_loser_fell():
    """Moves 2 and 3 come after Black's win rate fell to 5%: only D4 and Q16 count."""
    assert [t for t, *_ in costs(GAME, contested=True)] == [0, 1]
    text = summary([GAME])
    assert "gojax: mean cost 2.00 points per move" in text
    assert "gnugo: mean cost -3.00 points per move" in text
    assert "gojax (B) lost; below 10% for good from move 2" in text
    assert "1. D4 2.0" in text  # its costliest move first
