"""The host twin's fast legality (one chain labelling) against its slow move-by-move check."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gojax.kernels.geometry import BLACK, EMPTY, WHITE
from gojax.kernels.host import Board, History, IllegalMove


@settings(max_examples=25, deadline=None, derandomize=True)
@given(size=st.sampled_from([3, 5, 7, 9]), seed=st.integers(0, 2**31 - 1), moves=st.integers(0, 120))
def test_fast_legal_points_equal_the_slow_check(size, seed, moves):
    rng = np.random.default_rng(seed)
    b = Board(size)
    for _ in range(moves):
        legal = b.legal_points()
        b.play(int(rng.choice(legal)) if legal and rng.random() > 0.05 else None)
    # The chain arrays (and the liberty matrix) equal the chains of the flood fill.
    _, root, libs = b.chain_arrays()
    matrix = b.liberty_matrix()
    label, chains = b.chains()
    for p in range(size * size):
        if label[p] < 0:
            assert root[p] == -1
        else:
            stones, liberties = chains[label[p]]
            assert root[p] == min(stones) and libs[root[p]] == len(liberties)
            assert set(np.flatnonzero(matrix[root[p]]).tolist()) == set(liberties)
    for color in (BLACK, WHITE):
        np.testing.assert_array_equal(b.eye_mask(color), [b.is_eye(p, color) for p in range(size * size)])
        some = np.arange(0, size * size, 3)
        np.testing.assert_array_equal(b.eye_mask(color, some), [b.is_eye(int(p), color) for p in some])
        for superko in (True, False):
            slow = [p for p in range(size * size) if b.is_legal(p, color, superko)]
            assert b.legal_points(color, superko) == slow


@settings(max_examples=20, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31 - 1), moves=st.integers(0, 60))
def test_after_is_copy_then_play(seed, moves):
    """`after` (the search's one-copy child) gives what copy + play give, and leaves the parent
    as it was; an illegal move raises as play does.  With `plain` (a move the device's masks
    say captures nothing: the tree's `plain` rows) it gives the same board without the tests."""
    rng = np.random.default_rng(seed)
    b = Board(5)
    for _ in range(moves):
        legal = b.legal_points()
        b.play(int(rng.choice(legal)) if legal and rng.random() > 0.1 else None)
    before = (b.stones.copy(), set(b.seen), list(b.moves), dict(b.captures), b.ko, b.passes, b.to_play)
    for p in b.legal_points() + [None]:
        want = b.copy()
        captured = want.play(p)
        children = [b.after(p)] + ([b.after(p, plain=True)] if p is not None and not captured else [])
        for child in children:
            assert child.to_ascii() == want.to_ascii() and child.moves == want.moves and child.seen == want.seen
            assert (child.ko, child.passes, child.to_play, child.captures, child.hash, child.peak_stones,
                    child.emptied) == (want.ko, want.passes, want.to_play, want.captures, want.hash,
                                       want.peak_stones, want.emptied)
            assert child.stones is not b.stones  # captures may be shared: play replaces it (checked below)
    assert (b.stones.tolist(), b.seen, b.moves, b.captures, b.ko, b.passes, b.to_play) == \
        (before[0].tolist(),) + before[1:]


def test_after_an_illegal_move_raises_and_changes_nothing():
    b = Board.from_ascii("""
        . X .
        X . .
        . . .""", to_play=WHITE)
    with pytest.raises(IllegalMove, match="suicide"):
        b.after(b.geometry.from_gtp("A3"))
    with pytest.raises(IllegalMove, match="occupied"):
        b.after(b.geometry.from_gtp("B3"))
    assert b.to_ascii() == ". X .\nX . .\n. . ." and b.moves == []


def test_copy_does_not_share_history():
    b = Board(5)
    c = b.copy()
    c.play(0)
    assert b.stones[0] == 0 and len(b.seen) == 1 and b.moves == []


def test_a_history_grows_without_changing_the_ones_it_came_from():
    """Boards share their History (one per leaf of a search, none copied): `plus` makes a new
    one, past the hashes it keeps apart from the shared set as well."""
    root = History((0,))
    line = [root]
    for h in range(1, 3 * History.RECENT):
        line.append(line[-1].plus(h))
    branch = line[10].plus(10_000)
    for n, hist in enumerate(line):
        assert hist == set(range(n + 1)) and len(hist) == n + 1
        assert n in hist and n + 1 not in hist and 10_000 not in hist
    assert branch == set(range(11)) | {10_000} and 10_000 in branch and 11 not in branch


def test_a_move_that_captures_nothing_can_still_repeat_a_position():
    """3x3, found by random play: after these 18 moves Black's A1 captures nothing yet recreates
    an earlier position (the stone count had fallen by captures), so it breaks positional
    superko.  The superko filter's shortcut (plain moves skip the hash test while no earlier
    position had more stones) must not let it through."""
    b = Board(3, komi=0.5)
    for v in "A1 A2 B1 A3 pass C3 B3 pass B2 pass C1 A2 A3 pass C2 pass C3 A2".split():
        b.play(None if v == "pass" else b.geometry.from_gtp(v))
    assert b.to_ascii() == ". . .\nO . .\n. . ."
    a1 = b.geometry.from_gtp("A1")
    assert b.is_legal(a1, superko=False) and not b.is_legal(a1)
    assert not b.plain_moves_are_new()
    simple = np.zeros(9, bool)
    simple[b.legal_points(superko=False)] = True
    assert a1 not in b.superko_filter(simple, np.zeros(9, bool))
    assert b.superko_filter(simple, np.zeros(9, bool)) == b.legal_points()
    fresh = Board(3)
    fresh.play(0)
    assert fresh.plain_moves_are_new()


def test_a_stone_taken_off_by_hand_counts_as_emptied_for_superko():
    """Board.place(points, EMPTY) takes stones off without a capture; playing there again can
    still repeat a position, so the superko test must look there."""
    b = Board(3)
    b.play(0)  # Black A1: the position "A1 black" is in `seen`
    b.place([0], EMPTY)
    b.play(None)  # White passes; Black to move on the empty board
    assert b.emptied == {0}
    assert 0 not in b.legal_points() and not b.is_legal(0)
    legal = np.ones(9, bool)
    assert b.superko_repeats(legal, np.zeros(9, bool)) == {0}


def test_superko_repeats_equal_playing_each_move_out():
    """The repeats the search strikes from a new node's device masks (captures replayed on a
    list, plain moves by one XOR) are the moves whose position after play is an earlier one;
    small boards and long random games make captures that repeat a position.  Only points a
    capture has emptied are tested (Board.emptied): the equality holds over every move."""
    rng = np.random.default_rng(11)
    capture_repeats = 0
    for size in (3, 4):
        for _game in range(12):
            b = Board(size, komi=0.5)
            emptied = set()
            for _ in range(80):
                assert b.emptied == emptied
                legal_pts = b.legal_points(superko=False)
                stones, root, libs = b.chain_arrays()
                nb = b.geometry.neighbor_table
                takes = ((stones[nb] == 3 - b.to_play) & (libs[root[nb]] == 1)).any(1)
                legal = np.zeros(size * size, bool)
                legal[legal_pts] = True
                want = {p for p in legal_pts if int(b.try_move(p, b.to_play)[2]) in b.seen}
                got = b.superko_repeats(legal, takes & legal)
                assert got == want, f"\n{b}"
                capture_repeats += len(want & set(np.flatnonzero(takes).tolist()))
                ok = [p for p in legal_pts if p not in want]
                emptied.update(b.play(int(rng.choice(ok)) if ok and rng.random() > 0.1 else None))
    assert capture_repeats > 0
