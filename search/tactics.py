"""Small host-side tactical readers used by the heuristic priors.

`extension_escapes`: does extending a chain out of atari get it away, or does it only prolong a
ladder?  Read by playing the ladder out on host-twin copies: after the extension the chain must
reach three liberties, or capture an attacking stone, before the attacker runs it into the edge
or its own stones.  A read that goes past `budget` moves is called an escape (unknown).
"""

from __future__ import annotations

from gojax.kernels.geometry import opponent
from gojax.kernels.host import Board, IllegalMove


def _libs(board: Board, p: int) -> set[int]:
    return board.group(p)[1]


def _can_capture_attacker(board: Board, chain_point: int) -> bool:
    """Is a stone touching the defender's chain in atari (so the defender can take it)?"""
    stones, _ = board.group(chain_point)
    attacker = opponent(board.stones[chain_point])
    for s in stones:
        for q in board.geometry.neighbors[s]:
            if board.stones[q] == attacker and len(_libs(board, q)) == 1:
                return True
    return False


def extension_escapes(board: Board, p: int, budget: int = 60) -> bool:
    """The side to move extends at p (the last liberty of one of its chains).  True when the
    chain gets away: three or more liberties, or a capture of an attacker, at some point."""
    moves = [0]

    def defend(b: Board, q: int) -> bool:
        moves[0] += 1
        if moves[0] > budget:
            return True
        b = b.copy()
        try:
            b.play(q, superko=False)
        except IllegalMove:
            return False
        libs = _libs(b, q)
        if len(libs) >= 3:
            return True
        if len(libs) <= 1:
            return False
        # Two liberties: the attacker (now to move) tries an atari on each.
        for a in libs:
            other = next(iter(libs - {a}))
            after = b.copy()
            try:
                after.play(a, superko=False)
            except IllegalMove:
                continue
            if len(_libs(after, q)) != 1:
                continue
            if _can_capture_attacker(after, q):
                continue  # the defender takes the atari stone (or another attacker) and lives on
            if not defend(after, other):
                return False
        return True

    return defend(board, p)
