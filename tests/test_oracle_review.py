"""bench/oracle_review.py: what a move's loss is, and what the tags say a move did."""

from __future__ import annotations

import numpy as np
import pytest

from bench.oracle_review import losses, oracle_report, tactics
from tests.helpers import board


def test_loss_is_the_movers_drop_in_win_rate():
    # Before ply 10 Black has 0.60; after Black's move White (to move) has 0.55, so Black has 0.45.
    rows = [{"game": 0, "ply": 10, "played": "C3", "value": 0.60},
            {"game": 0, "ply": 11, "played": "D4", "value": 0.55},
            {"game": 0, "ply": 12, "played": None, "value": 0.30}]  # the last position: no move
    out = losses(rows)
    assert [m["ply"] for m in out] == [10, 11]
    assert out[0]["loss"] == pytest.approx(0.60 - 0.45)
    assert out[1]["loss"] == pytest.approx(0.55 - 0.70)  # White gained: a negative loss


def test_a_missing_oracle_value_drops_the_move_not_the_game():
    rows = [{"game": 3, "ply": 0, "played": "E5", "value": None},
            {"game": 3, "ply": 1, "played": "C3", "value": 0.5},
            {"game": 3, "ply": 2, "played": "G7", "value": 0.5}]
    assert [m["ply"] for m in losses(rows)] == [1]


def test_oracle_report_takes_the_last_final_report():
    text = "\n".join(['{"frame": {"playouts": 100}}', 'garbage {"move"',
                      '{"move": {"playouts": 30000, "choice": "E5", "can": []}}'])
    assert oracle_report(text)["choice"] == "E5"
    assert oracle_report("no json here") is None


POSITION = """
    . . . . . . . . .
    . X . . . . . . .
    X O . . . . . . .
    . . . . . . O . .
    . . . . . O X O .
    . . . . . . . . .
    . . . X . . . . .
    . . X O X . . . .
    . . . . . . . . .
"""


def test_tags_read_the_move_like_a_go_player():
    b = board(POSITION, "B")
    last = b.geometry.from_gtp("F5")  # White's last move put G5 in atari
    assert tactics(b, "G4", last) == {"saves", "local"}  # G4-G5 then has three liberties
    assert tactics(b, "D1", last) == {"captures", "edge"}  # D2's last liberty
    assert tactics(b, "C7", last) == {"ataris", "opp_2lib"}  # B7 had two liberties, now one
    assert tactics(b, "PASS", last) == set()


def test_pair_order_counts_only_pairs_the_oracle_separates():
    from bench.playout_accuracy import pair_order
    oracle = np.array([0.70, 0.50, 0.48])
    # Pairs beyond 0.05: (0.70, 0.50) and (0.70, 0.48); (0.50, 0.48) is too close to count.
    assert pair_order(oracle, np.array([0.9, 0.1, 0.2]), 0.05) == 1.0
    assert pair_order(oracle, np.array([0.5, 0.9, 0.2]), 0.05) == 0.5  # one right, one wrong
    assert pair_order(oracle, np.array([0.1, 0.9, 0.2]), 0.05) == 0.0
    assert pair_order(oracle, np.array([0.5, 0.5, np.nan]), 0.05) == 0.5  # ties and NaN count half
    assert np.isnan(pair_order(np.array([0.5, 0.52]), np.array([0.1, 0.9]), 0.05))


def test_amaf_rank_puts_uncredited_points_last_and_splits_ties():
    from bench.playout_accuracy import amaf_rank
    value = np.full(81, np.nan)
    value[[10, 20, 30]] = [0.7, 0.4, 0.4]
    legal = [10, 20, 30, 40, 50]  # 40 and 50 were never credited
    assert amaf_rank(value, legal, 10) == 1.0
    assert amaf_rank(value, legal, 20) == 2.5  # tied with 30 for second and third
    assert amaf_rank(value, legal, 40) == 4.5  # after every credited point, tied with 50


def test_root_parallel_summary_counts_oracle_moves_and_losses():
    """bench/root_parallel.py: a choice the oracle valued with enough playouts costs the oracle's
    best value less its own; an unvalued one is left out of the mean, not counted as zero."""
    from bench.root_parallel import loss, summarise
    top = [["E5", 0.60, 9000], ["D4", 0.55, 800], ["C3", 0.10, 20]]
    rows = [dict(oracle_move="E5", oracle_top=top, trees=["E5", "D4"], one="E5", merged="E5", big="E5",
                 simulations=10, tree_count=2),
            dict(oracle_move="E5", oracle_top=top, trees=["D4", "C3"], one="D4", merged="C3", big="E5",
                 simulations=10, tree_count=2)]
    assert loss(rows[0], "D4", 500) == pytest.approx(0.05) and loss(rows[0], "C3", 500) is None
    s = summarise(rows, 500)
    assert s["one"] == dict(oracle_move=0.5, stderr=0.3536, valued=2, mean_loss_where_valued=0.025)
    assert s["merged"]["valued"] == 1 and s["merged"]["mean_loss_where_valued"] == 0.0
    assert s["big"]["oracle_move"] == 1.0 and s["trees_all_agree"] == 0.0
    assert s["merged_differs_from_tree0"] == 1
    assert s["where_they_differ"] == dict(merged_is_oracle=0, tree0_is_oracle=0)
