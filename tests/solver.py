"""Exact minimax for tiny endgames: area scoring, passes allowed at any time, two passes end
the game.  Memoised on (stones, side to move, passes); a move that repeats a position of the
current line is refused (superko along the line).  That ignores how earlier history outside
the line would restrict moves, so use it only on positions where no ko can arise."""

from __future__ import annotations

from gojax.kernels.geometry import BLACK
from gojax.kernels.host import Board


def black_wins(board: Board) -> float:
    """1.0 if Black wins with perfect play from here, 0.0 if White does, 0.5 for a tie."""
    memo: dict = {}

    def solve(b: Board, line: frozenset) -> float:
        key = (b.stones.tobytes(), b.to_play, b.passes)
        if key in memo:
            return memo[key]
        if b.game_over:
            s = b.score()
            return 1.0 if s > 0 else 0.0 if s < 0 else 0.5
        best = None
        for p in b.legal_points(superko=False) + [None]:
            child = b.copy()
            child.play(p, superko=False)
            if p is not None and child.stones.tobytes() in line:
                continue
            v = solve(child, line | {child.stones.tobytes()})
            if best is None or (v > best if b.to_play == BLACK else v < best):
                best = v
            if best == (1.0 if b.to_play == BLACK else 0.0):
                break
        memo[key] = best
        return best

    return solve(board, frozenset({board.stones.tobytes()}))
