"""Turning a game clock (main time + Japanese or Canadian byo-yomi) into seconds for one move."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class Clock:
    main: float = 0.0  # main time, seconds
    byo_time: float = 0.0  # byo-yomi period (Canadian: time for byo_stones moves)
    byo_stones: int = 0  # moves per byo-yomi period; 0 with byo_time > 0 means no limit (GTP)
    byo_periods: int = 1  # Japanese byo-yomi periods (kgs-time_settings byoyomi)
    left: dict = dataclasses.field(default_factory=dict)  # colour -> (seconds, stones) from time_left
    margin: float = 0.3  # seconds kept back for the protocol and the host

    @property
    def unlimited(self) -> bool:
        return (self.main <= 0 and self.byo_time <= 0) or (self.byo_time > 0 and self.byo_stones == 0)

    def seconds_for_move(self, color: int, empty_points: int, points: int | None = None) -> float | None:
        """Seconds to spend on this move, or None when there is no time limit.  `points`: the
        board's points, for the game's phase (phase_weight); None spends evenly."""
        if self.unlimited:
            return None
        seconds, stones = self.left.get(color, (self.main if self.main > 0 else self.byo_time,
                                                0 if self.main > 0 else self.byo_stones))
        if stones > 0:  # in byo-yomi: share the period among its remaining stones
            return max(0.05, seconds / stones - self.margin)
        # Main time: spread it over the moves still likely (about half the empty points, at least
        # 15), plus a share of one byo-yomi period once the main time runs low.
        moves_left = max(15, empty_points // 2)
        budget = seconds / moves_left * phase_weight(empty_points, points)
        if self.byo_time > 0 and self.byo_stones > 0:
            budget += 0.5 * self.byo_time / self.byo_stones
        return max(0.05, min(budget, seconds + self.byo_time * 0.5) - self.margin)


# Main time by the game's phase, as a share of the even spread: the opening's moves matter less
# than the middle game's fights, where Monte-Carlo search gains most from more simulations;
# the endgame spreads what is left.  At most 1.4 / 15 of the main time left goes on one move.
OPENING, MIDDLE = 0.15, 0.55  # the board's filled share where the opening and the middle game end
PHASE_WEIGHTS = (0.7, 1.4, 1.0)  # opening, middle game, endgame


def phase_weight(empty_points: int, points: int | None) -> float:
    """The main-time share of a move in the phase that `empty_points` of `points` give."""
    if not points:
        return 1.0
    filled = 1.0 - empty_points / points
    return PHASE_WEIGHTS[0] if filled < OPENING else PHASE_WEIGHTS[1] if filled < MIDDLE else PHASE_WEIGHTS[2]
