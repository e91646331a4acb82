"""Host twin of the MoGo playout rules (kernels/policy.py): the same candidate sets, found with
flood fills on a host Board, slow and obviously correct.  Tests hold the device masks equal to
these on thousands of random positions.

Start at `candidate_points`.
"""

from __future__ import annotations

import numpy as np

from gojax.kernels.geometry import EMPTY, opponent
from gojax.kernels.host import Board
from gojax.kernels.patterns import matches, playout_table


def last_point(board: Board) -> int | None:
    """The last move's point, None after a pass or at the start."""
    return board.moves[-1][1] if board.moves else None


def playable(board: Board) -> set[int]:
    """Legal for the side to move (simple ko, no superko: the playout rules) and not its own eye."""
    eyes = board.eye_mask(board.to_play)
    return {p for p in board.legal_points(superko=False) if not eyes[p]}


def _neighbours(board: Board, p: int) -> list[int]:
    return [int(q) for q in board.geometry.neighbors[p]]


def _ring(board: Board, p: int) -> list[int]:
    """The up to 8 on-board points around p."""
    n = board.size
    r, c = divmod(p, n)
    return [(r + dr) * n + c + dc for dr in (-1, 0, 1) for dc in (-1, 0, 1)
            if (dr or dc) and 0 <= r + dr < n and 0 <= c + dc < n]


def candidate_points(board: Board, last: int | None = None, patterns: str = "") -> dict[str, set[int]]:
    """The candidate points of each MoGo rule for the side to move, answering `last` (default:
    the board's last move).  Keys and `patterns` as kernels.policy.candidate_masks."""
    if last is None:
        last = last_point(board)
    me, opp = board.to_play, opponent(board.to_play)
    ok = playable(board)
    stones = board.stones
    out = {k: set() for k in ("save_extend", "save_capture", "capture", "fill", "nakade", "pattern",
                              "two_lib_defend", "two_lib_attack")}

    # capture: the last liberty of any opponent chain in atari
    chains = {}
    for p in np.flatnonzero(stones):
        if int(p) not in chains:
            group, libs = board.group(int(p))
            for q in group:
                chains[q] = (frozenset(group), frozenset(libs))
    for p, (_group, libs) in chains.items():
        if stones[p] == opp and len(libs) == 1:
            out["capture"] |= set(libs)

    if last is not None:
        in_atari = {chains[q] for q in _neighbours(board, last) if stones[q] == me and len(chains[q][1]) == 1}
        for group, libs in in_atari:
            out["save_extend"] |= set(libs)
            for s in group:  # attackers: opponent stones next to the chain in atari
                for t in _neighbours(board, s):
                    if stones[t] == opp:
                        x_libs = chains[t][1]
                        if len(x_libs) == 1 and next(iter(x_libs)) in _neighbours(board, t):
                            out["save_capture"] |= set(x_libs)
        if in_atari and stones[last] == opp and len(chains[last][1]) == 1:
            out["save_capture"] |= set(chains[last][1])  # the last move's own chain
        table = playout_table(patterns)[me - 1]
        out["pattern"] = {q for q in _ring(board, last) if matches(stones, board.size, q, table)}
        for q in _neighbours(board, last):
            if stones[q] == me and len(chains[q][1]) == 2:
                out["two_lib_defend"] |= set(chains[q][1])
        group, libs = chains[last] if stones[last] == opp else ((), ())
        if len(libs) == 2:
            for x in libs:
                (y,) = libs - {x}
                room = [r for r in _neighbours(board, y) if stones[r] == EMPTY and r != x]
                joins = [r for r in _neighbours(board, y) if stones[r] == opp and r not in group]
                if len(room) <= 1 and not joins:
                    out["two_lib_attack"].add(x)

    for p in np.flatnonzero(stones == EMPTY):
        p = int(p)
        ring = _ring(board, p)
        if len(ring) == 8 and all(stones[q] == EMPTY for q in ring):
            out["fill"].add(p)
        empties = [q for q in _neighbours(board, p) if stones[q] == EMPTY]
        if len(empties) == 2 and all(len([r for r in _neighbours(board, q) if stones[r] == EMPTY]) == 1
                                     for q in empties):
            region = [p] + empties
            colours = {int(stones[r]) for q in region for r in _neighbours(board, q)} - {EMPTY}
            if len(colours) == 1:
                out["nakade"].add(p)
    return {k: v & ok for k, v in out.items()}


def liberties_after(board: Board, p: int) -> tuple[int, int, int]:
    """If the side to move plays the empty point p: (liberties of its chain, its stones,
    stones captured).  The move must be legal."""
    b = board.copy()
    captured = b.play(p, superko=False)
    group, libs = b.group(p)
    return len(libs), len(group), len(captured)
