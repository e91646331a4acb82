"""SGF through sgfmill: round trips, handicap setup, and clear errors for bad files."""

import pathlib

import pytest

from gojax.kernels.geometry import BLACK, WHITE
from gojax.kernels.host import Board
from gojax.sgf import SgfError, board_to_sgf, load_sgf

DATA = pathlib.Path(__file__).parent / "data"


def test_round_trip_with_captures_and_passes():
    b = Board(5, komi=0.5)
    g = b.geometry
    for v in ["C3", "C4", "B4", "D3", "C5", "B3", "D4", "pass", "E5"]:
        b.play(g.from_gtp(v))
    data = board_to_sgf(b, result="B+3.5", black="x", white="y")
    again, info = load_sgf(data)
    assert again.to_ascii() == b.to_ascii() and info["moves"] == b.moves and info["komi"] == 0.5
    assert info["result"] == "B+3.5"
    part, _ = load_sgf(data, upto=6)
    assert len(part.moves) == 6 and part.to_play == BLACK


def test_handicap_setup_stones():
    b = Board(9)
    b.place([20, 60], BLACK)
    b.to_play = WHITE
    data = board_to_sgf(b, setup={BLACK: [20, 60], WHITE: []})
    again, info = load_sgf(data)
    assert sorted(info["setup"][BLACK]) == [20, 60] and again.to_play == WHITE and info["handicap"] == 2


@pytest.mark.parametrize("data, words", [
    (b"this is not sgf", "unreadable SGF"),
    (b"(;GM[1]SZ[25])", "not supported"),
    (b"(;GM[1]SZ[5];B[cc];W[cc])", "illegal"),
])
def test_bad_files_give_clear_errors(data, words):
    with pytest.raises(SgfError, match=words):
        load_sgf(data)


def test_a_record_replays_a_repetition_its_own_rules_allowed():
    """Japanese rules let White retake the ko after both passed; positional superko would not.
    The record loads and says so."""
    from gojax.evaluate import sgf_positions
    data = (DATA / "superko_japanese.sgf").read_bytes()
    b, info = load_sgf(data)
    assert info["notes"] == ["move 4 (B3): B3 repeats an earlier position; the record's rules allowed it, "
                             "so it is replayed"]
    assert b.to_ascii().replace(" ", "").split() == [".....", ".XO..", "XO.O.", ".XO..", "X...."]
    assert len(list(sgf_positions([str(DATA / "superko_japanese.sgf")]))) == 6
