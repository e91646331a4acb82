"""Small host-side tactical readers used by the heuristic priors.

`extension_escapes`: does extending a chain out of atari get it away, or does it only prolong a
ladder?  Read by playing the ladder out: after the extension the chain must reach three
liberties, or capture an attacking stone, before the attacker runs it into the edge or its own
stones.  A read that goes past `budget` moves is called an escape (unknown).

The read plays on a stones array with the host board's rules (occupied, suicide, simple ko; no
superko, as a read never repeats a position worth forbidding), compiled with numba: a prior asks
for one per ladder verdict of every new node.  The attacker tries its two ataris in the order of
the points, so a read cut by its budget ends the same way every time.  tests/test_priors.py holds
it equal to the same read played with `Board.play`.
"""

from __future__ import annotations

import numba
import numpy as np

from gojax.kernels.geometry import BORDER, EMPTY
from gojax.kernels.host import Board


@numba.njit(cache=True, nogil=True)
def _fill(stones, nbr, p, most, chain, libs, mark):
    """Flood the chain through stone p: its stones into `chain`, its distinct liberties into
    `libs`, stopping once `most` liberties are found (0: never).  `mark`: int32 [P + 1] scratch,
    all zero on entry and on return.  Returns (stones reached, liberties found)."""
    color = stones[p]
    n_chain, n_libs = 1, 0
    chain[0] = p
    mark[p] = 1
    i = 0
    done = False
    while i < n_chain and not done:
        s = chain[i]
        i += 1
        for k in range(4):
            r = nbr[s, k]
            c = stones[r]
            if c == EMPTY:
                if mark[r] == 0:
                    mark[r] = 2
                    libs[n_libs] = r
                    n_libs += 1
                    if n_libs == most:
                        done = True
                        break
            elif c == color and mark[r] == 0:
                mark[r] = 1
                chain[n_chain] = r
                n_chain += 1
    for j in range(n_chain):
        mark[chain[j]] = 0
    for j in range(n_libs):
        mark[libs[j]] = 0
    return n_chain, n_libs


@numba.njit(cache=True, nogil=True)
def _play(stones, ko, color, p, nbr, chain, libs, mark):
    """`Board.play(p, superko=False)` for `color` on a copy of `stones`: (the stones after, the
    new simple-ko point or -1, legal?)."""
    if stones[p] != EMPTY or p == ko:
        return stones, -1, False
    after = stones.copy()
    after[p] = color
    opp = 3 - color
    taken, last_taken = 0, -1
    for k in range(4):
        q = nbr[p, k]
        if after[q] == opp:
            n_chain, n_libs = _fill(after, nbr, q, 1, chain, libs, mark)
            if n_libs == 0:
                for j in range(n_chain):
                    after[chain[j]] = EMPTY
                taken += n_chain
                last_taken = chain[0]
    n_chain, n_libs = _fill(after, nbr, p, 2, chain, libs, mark)
    if taken == 0 and n_libs == 0:
        return stones, -1, False  # suicide
    new_ko = -1
    if taken == 1 and n_chain == 1 and n_libs == 1:
        new_ko = last_taken
    return after, new_ko, True


@numba.njit(cache=True, nogil=True)
def _can_capture_attacker(stones, nbr, chain, n_chain, libs, mark, scratch, seen):
    """Is a stone touching the defender's chain (its first n_chain entries of `chain`) in atari?"""
    attacker = 3 - stones[chain[0]]
    found = False
    for j in range(n_chain):
        for k in range(4):
            q = nbr[chain[j], k]
            if stones[q] == attacker and seen[q] == 0:
                n_group, n_libs = _fill(stones, nbr, q, 2, scratch, libs, mark)
                if n_libs == 1:
                    found = True
                    break
                for i in range(n_group):  # each attacking chain is read once (or the part read of it)
                    seen[scratch[i]] = 1
        if found:
            break
    seen[:] = 0
    return found


@numba.njit(cache=True, nogil=True)
def _read(stones, ko, q, defender, nbr, budget):
    """The ladder read from the defender's extension at q, as a loop over a stack of frames (a
    compiled recursive function does not load from numba's cache).  A frame is a position after
    a defender's move with two liberties: the attacker tries an atari on each (`tries`), and a
    defence that fails under either fails the frame; a read that goes past `budget` moves in all
    counts as an escape."""
    size = stones.shape[0]
    chain = np.empty(size, np.int32)
    libs = np.empty(size, np.int32)
    scratch = np.empty(size, np.int32)
    mark = np.zeros(size, np.int32)
    seen = np.zeros(size, np.int8)
    boards = np.empty((budget + 1, size), np.int8)
    kos = np.empty(budget + 1, np.int64)
    at = np.empty(budget + 1, np.int64)  # each frame's chain, by the defender's stone
    first = np.empty(budget + 1, np.int64)  # its two liberties in the order of the points
    second = np.empty(budget + 1, np.int64)
    tries = np.zeros(budget + 1, np.int64)
    attacker = 3 - defender
    depth, moves = 0, 0
    cur, cur_ko, cur_q = stones.copy(), ko, q
    while True:
        # The defender plays at cur_q: a result at once, or a new frame.
        moves += 1
        res, have_res = True, True
        if moves <= budget:
            b, b_ko, ok = _play(cur, cur_ko, defender, cur_q, nbr, chain, libs, mark)
            if not ok:
                res = False
            else:
                n_chain, n_libs = _fill(b, nbr, cur_q, 3, chain, libs, mark)
                if n_libs == 2:
                    boards[depth] = b
                    kos[depth], at[depth], tries[depth] = b_ko, cur_q, 0
                    first[depth], second[depth] = min(libs[0], libs[1]), max(libs[0], libs[1])
                    depth += 1
                    have_res = False
                else:
                    res = n_libs >= 3
        # Hand results up the frames, and find the next atari to answer.
        while True:
            if have_res:
                if depth == 0:
                    return res
                if not res:
                    depth -= 1  # the frame's chain is caught: so is its parent's
                    continue
                have_res = False
            top = depth - 1
            t = tries[top]
            if t == 2:  # both ataris answered: the chain gets away
                depth -= 1
                res, have_res = True, True
                continue
            tries[top] = t + 1
            a, other = (first[top], second[top]) if t == 0 else (second[top], first[top])
            after, after_ko, ok = _play(boards[top], kos[top], attacker, a, nbr, chain, libs, mark)
            if not ok:
                continue
            n_chain, n_libs = _fill(after, nbr, at[top], 2, chain, libs, mark)  # the whole chain when in atari
            if n_libs != 1:
                continue
            if _can_capture_attacker(after, nbr, chain, n_chain, libs, mark, scratch, seen):
                continue  # the defender takes the atari stone (or another attacker) and lives on
            cur, cur_ko, cur_q = after, after_ko, other
            break


def extension_escapes(board: Board, p: int, budget: int = 60) -> bool:
    """The side to move extends at p (the last liberty of one of its chains).  True when the
    chain gets away: three or more liberties, or a capture of an attacker, at some point."""
    geometry = board.geometry
    stones = np.empty(geometry.num_points + 1, np.int8)  # the neighbour table's pad: off the board
    stones[:-1] = board.stones
    stones[-1] = BORDER
    ko = -1 if board.ko is None else board.ko
    return bool(_read(stones, ko, int(p), int(board.to_play), geometry.neighbor_table, int(budget)))
