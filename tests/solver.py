"""Exact minimax for tiny endgames: area scoring, positional superko, passes allowed at any
time, two passes end the game.  Exponential: only for positions with a handful of empty points."""

from __future__ import annotations

from kernels.geometry import BLACK
from kernels.host import Board


def black_wins(board: Board, depth: int = 0, max_depth: int = 40) -> float:
    """1.0 if Black wins with perfect play from here, 0.0 if White does, 0.5 for a tie."""
    if board.game_over or depth >= max_depth:
        s = board.score()
        return 1.0 if s > 0 else 0.0 if s < 0 else 0.5
    best = None
    for p in board.legal_points() + [None]:
        child = board.copy()
        child.play(p)
        v = black_wins(child, depth + 1, max_depth)
        if best is None or (v > best if board.to_play == BLACK else v < best):
            best = v
        if best == (1.0 if board.to_play == BLACK else 0.0):
            break
    return best


def winning_moves(board: Board) -> list[int | None]:
    """Moves that keep the mover's perfect-play result."""
    target = black_wins(board)
    out = []
    for p in board.legal_points() + [None]:
        child = board.copy()
        child.play(p)
        if black_wins(child) == target:
            out.append(p)
    return out
