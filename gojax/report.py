"""A search result in the fields analysis clients read, computed once for every protocol: GTP's
lz-analyze and kata-analyze (gojax/gtp_commands.py) and KataGo's JSON analysis protocol
(gojax/analysis.py).  Each protocol only formats these (units, orientation, whose view)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from gojax.search.mcts import SearchResult


@dataclasses.dataclass(frozen=True)
class MoveLine:
    """One candidate move of a search, from the mover's view unless `flipped`."""
    move: int | None  # point, None for pass
    visits: int
    winrate: float  # MC value (eq. 12's q* where the move has no MC value yet)
    half_width: float  # 1.96 standard errors of the winrate over its visits
    prior: float  # the move's share of the heuristic prior over the legal moves (the shares sum to 1)
    score_lead: float  # mean final score of the playouts through the move's node; NaN without one
    order: int  # rank by visits, 0 first

    @property
    def lcb(self) -> float:
        """The winrate's lower 95% bound (not clamped: KataGo's clients read it as it is)."""
        return self.winrate - self.half_width

    def flipped(self) -> MoveLine:
        """The same line from the other side's view."""
        return dataclasses.replace(self, winrate=1.0 - self.winrate, score_lead=-self.score_lead)


def prior_shares(r: SearchResult) -> list[tuple[int | None, float]]:
    """(move, its share of the heuristic prior) for every legal move of the root of `r`."""
    total = sum(m.prior for m in r.moves) or 1.0
    return [(m.move, m.prior / total) for m in r.moves]


def move_lines(r: SearchResult, limit: int | None = None) -> list[MoveLine]:
    """The visited moves of `r`, most visited first (at most `limit`)."""
    total = sum(m.prior for m in r.moves) or 1.0
    lines: list[MoveLine] = []
    for m in r.moves:
        if limit is not None and len(lines) >= limit:
            break
        if m.visits <= 0:
            continue
        q = m.q if not math.isnan(m.q) else m.q_star
        half = 1.96 * math.sqrt(max(q * (1 - q), 1e-6) / m.visits)
        lines.append(MoveLine(m.move, int(m.visits), q, half, m.prior / total, m.score_lead, len(lines)))
    return lines


def top_rows_first(values: np.ndarray, size: int) -> np.ndarray:
    """[P] in gojax's order (row 1 first, A1 = 0) -> the order KataGo and its clients use (the
    top row first, each from column A)."""
    return np.asarray(values).reshape(size, size)[::-1].ravel()
