"""Small host-side tactical readers used by the heuristic priors.

`extension_escapes`: does extending a chain out of atari get it away, or does it only prolong a
ladder?  Read by playing the ladder out: after the extension the chain must reach three
liberties, or capture an attacking stone, before the attacker runs it into the edge or its own
stones.  A read that goes past `budget` moves is called an escape (unknown).

The read plays on plain lists of stones with the host board's rules (occupied, suicide, simple
ko; no superko, as a read never repeats a position worth forbidding): a Board copy per move
(its superko history, its record) cost most of a read.  tests/test_priors.py holds it equal to
the same read played with `Board.play`.
"""

from __future__ import annotations

from gojax.kernels.geometry import EMPTY, opponent
from gojax.kernels.host import Board, captures_by, chain_of


def _play(stones: list[int], ko: int | None, color: int, p: int, nbrs) -> tuple[list[int], int | None] | None:
    """`Board.play(p, superko=False)` for the side to move on a list: the stones after the move
    and the new simple-ko point, or None when the move is illegal (occupied, ko, suicide)."""
    if stones[p] != EMPTY or p == ko:
        return None
    after = stones.copy()
    after[p] = color
    captured = captures_by(after, nbrs, p)
    if captured is None:
        return None  # suicide
    for q in captured:
        after[q] = EMPTY
    new_ko = None
    if len(captured) == 1:
        group, libs = chain_of(after, nbrs, p)
        if len(group) == 1 and len(libs) == 1:
            new_ko = captured[0]
    return after, new_ko


def _can_capture_attacker(stones: list[int], nbrs, chain: set[int]) -> bool:
    """Is a stone touching the defender's `chain` (its points) in atari (so the defender can
    take it)?"""
    attacker, seen = opponent(stones[next(iter(chain))]), set()
    for s in chain:
        for q in nbrs[s]:
            if stones[q] == attacker and q not in seen:
                group, libs = chain_of(stones, nbrs, q, most=2)
                if len(libs) == 1:
                    return True
                seen |= group  # each attacking chain is read once (or the part read of it)
    return False


def extension_escapes(board: Board, p: int, budget: int = 60) -> bool:
    """The side to move extends at p (the last liberty of one of its chains).  True when the
    chain gets away: three or more liberties, or a capture of an attacker, at some point."""
    nbrs = board.geometry.neighbors
    defender = board.to_play
    attacker = opponent(defender)
    moves = [0]

    def defend(stones: list[int], ko: int | None, q: int) -> bool:
        moves[0] += 1
        if moves[0] > budget:
            return True
        played = _play(stones, ko, defender, q, nbrs)
        if played is None:
            return False
        b, b_ko = played
        libs = chain_of(b, nbrs, q, most=3)[1]
        if len(libs) >= 3:
            return True
        if len(libs) <= 1:
            return False
        # Two liberties: the attacker (now to move) tries an atari on each.
        for a in libs:
            other = next(iter(libs - {a}))
            tried = _play(b, b_ko, attacker, a, nbrs)
            if tried is None:
                continue
            after, after_ko = tried
            chain, chain_libs = chain_of(after, nbrs, q, most=2)  # the whole chain when in atari
            if len(chain_libs) != 1:
                continue
            if _can_capture_attacker(after, nbrs, chain):
                continue  # the defender takes the atari stone (or another attacker) and lives on
            if not defend(after, after_ko, other):
                return False
        return True

    return defend(board.stones.tolist(), board.ko, p)
