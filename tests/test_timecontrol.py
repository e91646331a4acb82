"""The clock: main time spread by the game's phase, byo-yomi shared among its stones, never more
than is left."""

from gojax.kernels.geometry import BLACK
from gojax.search.timecontrol import Clock


def spend(clock: Clock, filled: int, points: int = 81) -> float:
    return clock.seconds_for_move(BLACK, points - filled, points)


def mean(spent: list[tuple[float, float]], lo: float, hi: float) -> float:
    """The mean seconds of the moves made with lo <= filled share < hi."""
    share = [t for filled, t in spent if lo <= filled < hi]
    return sum(share) / len(share)


def test_main_time_goes_more_to_the_middle_game_than_to_the_opening_or_the_endgame():
    """A game played out on the clock, one stone more on the board each ply: the middle game's
    moves get the most, and the main time lasts the game."""
    for size, plies in ((9, 90), (19, 330)):
        points, left, spent = size * size, 300.0, []
        clock = Clock(main=300.0)
        for ply in range(0, plies, 2):
            clock.left[BLACK] = (left, 0)
            seconds = clock.seconds_for_move(BLACK, max(points - ply, 0), points)
            assert 0 < seconds <= left * 1.4 / 15
            spent.append((ply / points, seconds))
            left -= seconds

        opening, middle, endgame = (mean(spent, lo, hi) for lo, hi in ((0, 0.15), (0.15, 0.55), (0.55, 2)))
        assert middle > opening and middle > endgame, (size, opening, middle, endgame)
        assert left > 0


def test_no_board_size_spends_evenly():
    clock = Clock(main=300.0)
    assert clock.seconds_for_move(BLACK, 77) == 300.0 / 38 - clock.margin


def test_byo_yomi_shares_the_period_among_its_stones_and_never_spends_what_is_not_left():
    clock = Clock(main=60.0, byo_time=30.0, byo_stones=5)
    clock.left[BLACK] = (12.0, 3)  # in byo-yomi: 12 s for 3 stones
    assert spend(clock, 30) == 4.0 - clock.margin
    clock.left[BLACK] = (1.0, 0)  # main time nearly gone: a little of it plus half a byo-yomi share
    assert spend(clock, 30) <= 1.0 + 30.0 * 0.5
    for filled in range(0, 81, 5):  # sudden death: always less than what is left
        clock = Clock(main=10.0)
        clock.left[BLACK] = (10.0, 0)
        assert 0 < spend(clock, filled) < 10.0


def test_no_time_settings_or_byo_yomi_without_stones_is_no_limit():
    assert Clock().seconds_for_move(BLACK, 81, 81) is None
    assert Clock(main=0.0, byo_time=30.0, byo_stones=0).seconds_for_move(BLACK, 81, 81) is None
