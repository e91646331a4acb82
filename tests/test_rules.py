"""The rules on ASCII positions, checked on the host twin and on the device kernels alike."""

import numpy as np
import pytest

from gojax.kernels.geometry import BLACK, CoordinateError, Geometry
from gojax.kernels.host import IllegalMove
from gojax.kernels.state import from_host
from tests.helpers import board, device_fns, device_legal, device_play


def play_both(b, vertex):
    """Play on host and device, assert they agree, return the host board after the move."""
    after_device = device_play(b, vertex)
    h = b.copy()
    h.play(h.geometry.from_gtp(vertex))
    assert h.to_ascii() == after_device.to_ascii(), f"device differs after {vertex}"
    assert h.ko == after_device.ko
    return h


def same(b, text):
    return b.to_ascii() == board(text).to_ascii()


def test_gtp_coordinates_skip_i():
    g = Geometry(19)
    assert g.from_gtp("A1") == 0 and g.from_gtp("j1") == 8 and g.from_gtp("T19") == 360
    assert g.to_gtp(8) == "J1" and g.from_gtp("pass") is None and g.to_gtp(None) == "pass"
    for bad in ("I5", "Z1", "A20", "A0", "", "5A", "AA"):
        with pytest.raises(CoordinateError):
            g.from_gtp(bad)


def test_single_stone_capture():
    b = board("""
        . . . . .
        . . X . .
        . X O . .
        . . X . .
        . . . . .""")
    after = play_both(b, "D3")
    assert same(after, """
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . .""")
    assert after.captures[BLACK] == 1


def test_multi_stone_capture_on_the_edge():
    b = board("""
        . . . . .
        . . . . .
        X X X . .
        O O O X .
        . . . . .""")
    after = b
    for vertex in ("A1", "pass", "B1", "pass"):
        after = play_both(after, vertex)
    assert after.to_ascii().count("O") == 3  # A1-B1 is not yet the last liberty
    after = play_both(after, "C1")
    assert after.to_ascii().count("O") == 0 and after.captures[BLACK] == 3


def test_capture_comes_before_the_suicide_test():
    b = board("""
        . . . .
        O O O .
        X X O .
        . X O .""", to_play="W")
    assert "A1" in device_legal(b) and b.is_legal(b.geometry.from_gtp("A1"))
    after = play_both(b, "A1")  # no liberty of its own, but it takes the black chain
    assert same(after, """
        . . . .
        O O O .
        . . O .
        O . O .""")


def test_suicide_is_illegal():
    b = board("""
        . O . .
        O . . .
        . . . .
        . . . .""")
    assert "A4" not in device_legal(b)
    with pytest.raises(IllegalMove) as err:
        b.copy().play(b.geometry.from_gtp("A4"))
    assert err.value.reason == "suicide"
    # Filling the last liberty of one's own five stones captures nothing: suicide too.
    b = board("""
        X X O .
        . X O .
        X X O .
        O O . .""")
    assert "A3" not in device_legal(b)
    assert not b.is_legal(b.geometry.from_gtp("A3"))


def test_snapback():
    b = board("""
        . . . . .
        X X . . .
        O O X . .
        . O X . .
        . O X . .""")
    after = play_both(b, "A1")  # throw-in: self-atari, and White is in atari too
    after = play_both(after, "A2")  # White takes one stone...
    assert after.ko is None  # ... with a stone that joins a chain: no ko
    after = play_both(after, "A1")  # ... and Black takes back five
    assert same(after, """
        . . . . .
        X X . . .
        . . X . .
        . . X . .
        X . X . .""")
    assert after.captures[BLACK] == 5


KO = """
    . . . . .
    . X O . .
    X O . O .
    . X O . .
    . . . . ."""


def test_ko_and_its_retake_a_move_later():
    after = play_both(board(KO), "C3")  # Black takes B3
    assert after.ko == after.geometry.from_gtp("B3")
    assert "B3" not in device_legal(after)
    with pytest.raises(IllegalMove) as err:
        after.copy().play(after.geometry.from_gtp("B3"))
    assert err.value.reason == "ko"
    after = play_both(after, "E5")  # a ko threat elsewhere
    after = play_both(after, "E1")  # and an answer
    assert after.ko is None and "B3" in device_legal(after)
    after = play_both(after, "B3")  # White retakes
    assert after.ko == after.geometry.from_gtp("C3")


def test_positional_superko_on_the_host():
    b = board(KO)
    g = b.geometry
    b.play(g.from_gtp("C3"))
    b.play(None)  # the passes clear the simple-ko point ...
    b.play(None)
    assert b.ko is None
    assert b.is_legal(g.from_gtp("B3"), superko=False)
    with pytest.raises(IllegalMove) as err:  # ... but the retake repeats the first position
        b.copy().play(g.from_gtp("B3"))
    assert err.value.reason == "superko"


def test_real_and_false_eyes():
    b = board("""
        . X . X .
        X X X X X
        X . X . X
        X X X X O
        . X . X .""")
    g = b.geometry
    host = {g.to_gtp(p) for p in range(25) if b.is_eye(p, BLACK)}
    # D3 keeps one opponent diagonal (E2) away from the edge: still an eye; E1 touches White.
    assert host == {"A5", "C5", "E5", "B3", "D3", "A1", "C1"}
    dev = np.asarray(device_fns()["eyes"](from_host(b), np.int8(BLACK)))[g.point_to_cell]
    assert {g.to_gtp(p) for p in np.flatnonzero(dev)} == host


@pytest.mark.parametrize("text, vertex, is_eye", [
    ("""
     . X . . .
     X O . . .
     . . . . .
     . . . . .
     . . . . .""", "A5", False),  # corner with its one diagonal taken: false
    ("""
     . . . . .
     X X X . .
     X . X . .
     O X X . .
     . . . . .""", "B3", True),  # centre with one opponent diagonal: real
    ("""
     . . . . .
     . . . . .
     . . . . .
     O X X . .
     X . X . .""", "B1", False),  # edge with one opponent diagonal: false
    ("""
     . . . . .
     . . . . .
     . . . . .
     X X X . .
     X . X . .""", "B1", True),
])
def test_eyes_on_the_edge_and_in_the_corner(text, vertex, is_eye):
    b = board(text)
    g = b.geometry
    assert b.is_eye(g.from_gtp(vertex), BLACK) is is_eye
    dev = np.asarray(device_fns()["eyes"](from_host(b), np.int8(BLACK)))[g.point_to_cell]
    np.testing.assert_array_equal(dev, [b.is_eye(p, BLACK) for p in range(25)])
    assert (vertex in device_legal(b, exclude_eyes=True)) is (not is_eye)


@pytest.mark.parametrize("komi, winner", [(7.5, "W"), (-5.5, "B"), (-5.0, "tie")])
def test_area_scoring_with_komi_and_ties(komi, winner):
    b = board("""
        . X O . .
        X X O . .
        . X O O O
        X X O . .
        . X O . .""", komi=komi)
    black, white, owner = b.area()
    assert (black, white) == (10, 15)  # 7 stones + 3 points; 7 stones + 8 points
    diff = b.score()
    assert {"W": diff < 0, "B": diff > 0, "tie": diff == 0}[winner]
    dev_owner, dev_diff = device_fns()["area"](from_host(b).color)
    assert int(dev_diff) == black - white
    np.testing.assert_array_equal(np.asarray(dev_owner)[b.geometry.point_to_cell], owner)


def test_dame_scores_for_nobody():
    b = board("""
        X . O
        X . O
        X . O""", komi=0)
    black, white, owner = b.area()
    assert (black, white) == (3, 3) and list(owner[[1, 4, 7]]) == [0, 0, 0]
    dev_owner, dev_diff = device_fns()["area"](from_host(b).color)
    assert int(dev_diff) == 0
    np.testing.assert_array_equal(np.asarray(dev_owner)[b.geometry.point_to_cell], owner)
