"""The host twin: one Go board in numpy/Python, slow and obviously correct.

Groups are found by flood fill on every move; legality covers occupied points, suicide
(captures are resolved first), simple ko and positional superko (Zobrist hashes of every
earlier whole-board position).  The search tree descends with this board and the device
kernels (kernels/rules.py) are tested against it move by move.

Start reading at `Board.play`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import numpy as np

from gojax.kernels.geometry import BLACK, EMPTY, WHITE, Geometry, opponent

_ASCII = {EMPTY: ".", BLACK: "X", WHITE: "O"}
_FROM_ASCII = {".": EMPTY, "+": EMPTY, "X": BLACK, "x": BLACK, "O": WHITE, "o": WHITE}


class IllegalMove(ValueError):
    """A move the rules forbid; `reason` is one of occupied, suicide, ko, superko."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@functools.cache
def zobrist_table(num_points: int) -> np.ndarray:
    """[3, P] uint64 random keys (row 0 unused for empty); fixed seed, built on first use."""
    rng = np.random.default_rng(20261122 + num_points)
    return rng.integers(1, 2**63, size=(3, num_points), dtype=np.uint64)


@functools.cache
def _zobrist_ints(num_points: int) -> list[list[int]]:
    """zobrist_table as Python ints: one XOR of ints is several times cheaper than of numpy scalars."""
    return zobrist_table(num_points).tolist()


def _hash_after(h: int, num_points: int, color: int, p: int, captured) -> int:
    """The Zobrist hash `h` after `color` plays p and the `captured` stones leave."""
    z = _zobrist_ints(num_points)
    h ^= z[color][p]
    taken = z[opponent(color)]
    for q in captured:
        h ^= taken[q]
    return h


class History:
    """The Zobrist hashes of every position of a game so far (positional superko): a set that a
    board shares with the boards made from it.  `plus` gives a new History one hash larger
    without copying the rest (a search makes a board per leaf, and a game's history is long);
    none is ever changed in place."""

    __slots__ = ("_base", "_recent")
    RECENT = 32  # hashes kept as a tuple on top of the shared set before a new set is made

    def __init__(self, hashes: Iterable[int] = (), recent: tuple[int, ...] = ()):
        self._base = hashes if isinstance(hashes, frozenset) else frozenset(hashes)
        self._recent = recent

    def plus(self, h: int) -> History:
        if len(self._recent) < self.RECENT:
            return History(self._base, self._recent + (h,))
        return History(self._base.union(self._recent, (h,)))

    def __contains__(self, h) -> bool:
        return h in self._base or h in self._recent

    def __iter__(self):
        return iter(self._base.union(self._recent))

    def __len__(self) -> int:
        return len(self._base.union(self._recent))

    def __eq__(self, other) -> bool:
        if isinstance(other, History):
            other = other._base.union(other._recent)
        return isinstance(other, (set, frozenset)) and self._base.union(self._recent) == other

    __hash__ = None  # equal to a set with the same hashes, and like a set, not hashable

    def __repr__(self) -> str:
        return f"History({len(self)} positions)"


def _dead_chain(stones: list[int], nbrs, p: int) -> list[int]:
    """The chain through stone p if it has no liberty, else [] (the fill stops at the first
    liberty: most chains next to a move have one at hand)."""
    color, chain, todo = stones[p], {p}, [p]
    while todo:
        for r in nbrs[todo.pop()]:
            s = stones[r]
            if s == EMPTY:
                return []
            if s == color and r not in chain:
                chain.add(r)
                todo.append(r)
    return sorted(chain)


def captures_by(after: list[int], nbrs, p: int) -> list[int] | None:
    """The stones a move at p captures, `after` holding the board with the new stone on p and
    nothing yet taken off; None when the move is suicide (it captures nothing and has no liberty)."""
    opp, captured = opponent(after[p]), []
    for q in nbrs[p]:
        if after[q] == opp and q not in captured:
            captured.extend(_dead_chain(after, nbrs, q))
    if not captured and _dead_chain(after, nbrs, p):
        return None
    return captured


def chain_of(stones, nbrs, p: int, most: int = 0) -> tuple[set[int], set[int]]:
    """(stones, liberties) of the chain through stone p, on any indexable stones (an array, or a
    list where many reads make numpy's per-element cost show).  With `most`, the fill stops
    once that many liberties are found: the stones are then only those reached so far (a
    ladder read asks "three or more?" or "exactly one?")."""
    color, chain, libs, todo = stones[p], {p}, set(), [p]
    while todo:
        for r in nbrs[todo.pop()]:
            s = stones[r]
            if s == EMPTY:
                libs.add(r)
                if len(libs) == most:
                    return chain, libs
            elif s == color and r not in chain:
                chain.add(r)
                todo.append(r)
    return chain, libs


class Board:
    """A Go position plus the history needed for positional superko.

    stones: int8 [P] (0 empty, 1 black, 2 white), point p = row * N + col, A1 = 0.
    """

    def __init__(self, size: int = 9, komi: float = 7.5):
        self.geometry = Geometry(size)
        self.size = size
        self.komi = float(komi)
        self.stones = np.zeros(size * size, np.int8)
        self.to_play = BLACK
        self.ko: int | None = None  # simple-ko point forbidden to `to_play`
        self.passes = 0  # consecutive passes
        self.hash = 0  # Zobrist hash of the stones (an int: the search's XORs on ints are cheaper)
        self.seen = History((0,))  # hashes of every position so far (positional superko)
        self.peak_stones = 0  # most stones on the board in any position of `seen`
        # Every point a capture has emptied: only a move there can repeat a position of `seen`.
        self.emptied: frozenset[int] = frozenset()
        self.moves: list[tuple[int, int | None]] = []  # (colour, point or None for pass)
        # Stones captured by each colour; replaced, never changed in place, so copies share it.
        self.captures = {BLACK: 0, WHITE: 0}

    def same_position(self, other: Board) -> bool:
        """The same stones (by hash), komi, side to move and ko point: what a search from either
        sees (a colour moving twice changes the side to move, not the stones)."""
        return (self.hash, self.komi, self.to_play, self.ko) == (other.hash, other.komi, other.to_play, other.ko)

    # --- construction ------------------------------------------------------------------------
    def copy(self) -> Board:
        b = Board.__new__(Board)
        b.__dict__.update(self.__dict__)
        b.stones = self.stones.copy()
        b.moves = list(self.moves)
        return b

    def after(self, p: int | None, plain: bool = False) -> Board:
        """The position after the side to move plays p (None = pass), as a new board; this one
        is unchanged.  Raises IllegalMove as `play` does.  The search makes one board per new
        leaf this way.  `plain`: the caller knows that p is legal and captures nothing (the
        tree's device masks say so), and the legality and capture tests are skipped."""
        b = Board.__new__(Board)
        b.__dict__ = self.__dict__.copy()
        if plain:
            color, h = self.to_play, self.hash ^ _zobrist_ints(len(self.stones))[self.to_play][p]
            b.stones = self.stones.copy()
            b.stones[p] = color
            b.hash, b.ko, b.passes, b.to_play = h, None, 0, opponent(color)
            b.seen = self.seen.plus(h)
            b.moves = self.moves + [(color, p)]
            # Until a capture empties a point, stone counts only grow: the peak is this count.
            b.peak_stones = self.peak_stones + 1 if not self.emptied else \
                max(self.peak_stones, int(np.count_nonzero(b.stones)))
            return b
        if p is None:  # a pass keeps the stones array, and `place` writes into it
            b.stones = self.stones.copy()
        b.moves = list(self.moves)
        b.play(p)  # a stone: play puts a new stones array in place
        return b

    @classmethod
    def from_ascii(cls, text: str, to_play: int = BLACK, komi: float = 7.5) -> Board:
        """Rows top (row N) first; 'X' black, 'O' white, '.' empty; spaces ignored."""
        rows = [r.replace(" ", "") for r in text.strip().splitlines() if r.strip()]
        size = len(rows)
        if any(len(r) != size for r in rows):
            raise ValueError("ASCII board must be square")
        b = cls(size, komi)
        for i, row in enumerate(rows):
            for col, ch in enumerate(row):
                b.stones[(size - 1 - i) * size + col] = _FROM_ASCII[ch]
        b.to_play = to_play
        b.hash = b._compute_hash()
        b.seen = History((b.hash,))
        b.peak_stones = int(np.count_nonzero(b.stones))
        return b

    def _compute_hash(self) -> int:
        z = _zobrist_ints(self.size * self.size)
        h = 0
        for p in np.flatnonzero(self.stones).tolist():
            h ^= z[self.stones[p]][p]
        return h

    # --- groups ------------------------------------------------------------------------------
    def chains(self) -> tuple[np.ndarray, list[tuple[frozenset, frozenset]]]:
        """(label [P] int32, chains): label[p] indexes `chains` for stones, -1 for empty points;
        each chain is (stones, liberties).  One flood fill over the board, cached until the
        position changes."""
        key = self.stones.tobytes()
        cached = getattr(self, "_chains_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        label = np.full(self.size * self.size, -1, np.int32)
        found = []
        for p in np.flatnonzero(self.stones):
            if label[p] < 0:
                stones, libs = self.group(int(p))
                label[list(stones)] = len(found)
                found.append((frozenset(stones), frozenset(libs)))
        self._chains_cache = (key, (label, found))
        return label, found

    def chain_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(stones, root, liberty count), cached per position.

        stones int8 [P + 1] (index P: off the board, value 3); root int32 [P + 1]: the lowest
        point of each stone's chain, -1 for empty points and for index P; libs int32 [P + 1]:
        the number of distinct liberties of the chain rooted at each point (0 elsewhere, and at
        index P, which root -1 reaches).  One flood fill over a list of the stones: for a board
        of a few hundred points plain Python beats a vectorised labelling (a dozen numpy calls
        per round of it); `chains` is the version the tests compare it with."""
        key = self.stones.tobytes()
        cached = getattr(self, "_arrays_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        n = self.size * self.size
        nbrs = self.geometry.neighbors
        stones = self.stones.tolist()
        root, libs, pairs = [-1] * (n + 1), [0] * (n + 1), []
        for p in range(n):  # ascending: a chain's first point found is its lowest
            color = stones[p]
            if color == EMPTY or root[p] >= 0:
                continue
            root[p], chain, found = p, [p], set()
            for q in chain:  # the list grows while we walk it
                for r in nbrs[q]:
                    s = stones[r]
                    if s == EMPTY:
                        found.add(r)
                    elif s == color and root[r] < 0:
                        root[r] = p
                        chain.append(r)
            libs[p] = len(found)
            pairs += [p * n + r for r in found]
        self._liberty_pairs = (key, np.asarray(pairs, np.int64))
        arrays = (np.asarray(stones + [3], np.int8), np.asarray(root, np.int32), np.asarray(libs, np.int32))
        self._arrays_cache = (key, arrays)
        return arrays

    def liberty_matrix(self) -> np.ndarray:
        """bool [P + 1, P]: row r marks the liberties of the chain rooted at point r (row P, which
        root -1 reaches, is empty)."""
        self.chain_arrays()
        key, pairs = self._liberty_pairs
        n = self.size * self.size
        m = np.zeros((n + 1, n), bool)
        m[pairs // n, pairs % n] = True
        return m

    def group(self, p: int) -> tuple[set[int], set[int]]:
        """(stones, liberties) of the chain through stone p."""
        return chain_of(self.stones, self.geometry.neighbors, p)

    def try_move(self, p: int, color: int) -> tuple[np.ndarray, list[int], int]:
        """Stones after `color` plays p, the captured points and the new hash; raises on illegal."""
        after = self.stones.tolist()  # list reads: the capture test reads a few dozen points
        if after[p] != EMPTY:
            raise IllegalMove("occupied", f"{self.geometry.to_gtp(p)} is occupied")
        after[p] = color
        captured = captures_by(after, self.geometry.neighbors, p)
        if captured is None:
            raise IllegalMove("suicide", f"{self.geometry.to_gtp(p)} is suicide")
        stones = self.stones.copy()
        stones[p] = color
        if captured:
            stones[captured] = EMPTY
        return stones, captured, _hash_after(self.hash, len(after), color, p, captured)

    # --- legality ----------------------------------------------------------------------------
    def is_legal(self, p: int | None, color: int | None = None, superko: bool = True) -> bool:
        try:
            self.check(p, color, superko)
            return True
        except IllegalMove:
            return False

    def check(self, p: int | None, color: int | None = None, superko: bool = True) -> None:
        """Raise IllegalMove if `color` may not play p (None = pass, always legal)."""
        if p is None:
            return
        color = self.to_play if color is None else color
        if color == self.to_play and p == self.ko:
            raise IllegalMove("ko", f"{self.geometry.to_gtp(p)} retakes a ko")
        _, _, h = self.try_move(p, color)
        if superko and h in self.seen:
            raise IllegalMove("superko", f"{self.geometry.to_gtp(p)} repeats an earlier position")

    def legal_points(self, color: int | None = None, superko: bool = True) -> list[int]:
        """Every point `color` may play, from one chain labelling: a point is legal when it is
        empty, not the ko point, and has an empty neighbour, a friendly neighbour chain with
        another liberty, or an enemy neighbour chain whose last liberty it is (a capture).
        Positional superko then compares the Zobrist hash after the move.  Vectorised over the
        points; `check` is the one-move-at-a-time version the tests compare it with."""
        color = self.to_play if color is None else color
        g = self.geometry
        stones, root, lib_count = self.chain_arrays()
        nb = g.neighbor_table
        ns, nl = stones[nb], lib_count[root[nb]]
        capture_nb = (ns == opponent(color)) & (nl == 1)
        ok = (ns == EMPTY).any(1) | ((ns == color) & (nl > 1)).any(1) | capture_nb.any(1)
        ok &= self.stones == EMPTY
        if color == self.to_play and self.ko is not None:
            ok[self.ko] = False
        points = np.flatnonzero(ok)
        if not superko or not self.emptied:  # no move can repeat a position (superko_repeats)
            return points.tolist()
        z = zobrist_table(self.size * self.size)
        after = self.hash ^ z[color, points]  # [n] hashes after the move, before captures
        captures = capture_nb[points].any(1)
        for k in np.flatnonzero(captures):
            p = points[k]
            for r in {int(root[q]) for q, c in zip(nb[p], capture_nb[p]) if c}:
                for q in np.flatnonzero(root[:-1] == r):
                    after[k] ^= z[opponent(color), q]
        seen = self.seen  # membership point by point: faster than np.isin for a few dozen points
        return [p for p, h in zip(points.tolist(), after.tolist()) if h not in seen]

    def superko_filter(self, legal: np.ndarray, capture: np.ndarray) -> list[int]:
        """`legal_points()` from the device's masks for this position (bool [P] each: legal
        under simple ko, and legal AND capturing): drops the moves that repeat an earlier
        position."""
        repeats = self.superko_repeats(legal, capture)
        points = np.flatnonzero(legal).tolist()
        return [p for p in points if p not in repeats] if repeats else points

    def superko_repeats(self, legal: np.ndarray, capture: np.ndarray, taking: list[int] | None = None) -> set[int]:
        """The points of the device's `legal` mask that repeat an earlier position.  Only a
        point in `emptied` can: the new stone stood there in that position, and since then a
        capture took it off (stones leave the board no other way).  The Zobrist hash after a
        move there is one XOR for a plain move; for a capture, `captures_by` on a list of the
        stones says which stones leave.  `taking`: the points of legal & capture, where the
        caller has them (the search finds them for a round's boards at once)."""
        seen, color, emptied = self.seen, self.to_play, self.emptied
        repeats = set()
        if not emptied:
            return repeats
        if taking is None:
            taking = np.flatnonzero(legal & capture).tolist()
        takes = [p for p in taking if p in emptied]
        if takes:
            after, nbrs, h0 = self.stones.tolist(), self.geometry.neighbors, self.hash
            for p in takes:
                after[p] = color
                if _hash_after(h0, len(after), color, p, captures_by(after, nbrs, p)) in seen:  # legal: never None
                    repeats.add(p)
                after[p] = EMPTY
        if not self.plain_moves_are_new():
            z, h0 = _zobrist_ints(len(legal))[color], self.hash
            repeats.update(p for p in np.flatnonzero(legal & ~capture).tolist() if p in emptied and h0 ^ z[p] in seen)
        return repeats

    def plain_moves_are_new(self) -> bool:
        """A move that captures nothing leaves one stone more than now; when no earlier position
        had that many, it cannot repeat one, and only captures need the hash test.  True for
        most positions of a game (stone counts fall only by captures)."""
        return int(np.count_nonzero(self.stones)) + 1 > self.peak_stones

    def eye_mask(self, color: int, points: np.ndarray | None = None) -> np.ndarray:
        """bool [P]: is_eye for every point at once; or bool [len(points)] at `points` alone."""
        g = self.geometry
        stones = np.append(self.stones, 3)
        pts = slice(None) if points is None else np.asarray(points, np.int64)
        ns, dg = stones[g.neighbor_table[pts]], stones[g.diagonal_table[pts]]
        surrounded = ((ns == color) | (ns == 3)).all(1)
        bad = (dg == opponent(color)).sum(1) + (ns == 3).any(1)
        return (self.stones[pts] == EMPTY) & surrounded & (bad < 2)

    def is_eye(self, p: int, color: int) -> bool:
        """SPEC eye: empty, all 4 neighbours `color` or off-board, and at most one opponent
        diagonal (none when p is on the edge or in the corner)."""
        if self.stones[p] != EMPTY:
            return False
        g = self.geometry
        if any(self.stones[q] != color for q in g.neighbors[p]):
            return False
        bad = sum(self.stones[q] == opponent(color) for q in g.diagonals[p])
        on_edge = len(g.neighbors[p]) < 4
        return bool(bad + on_edge < 2)

    # --- moves -------------------------------------------------------------------------------
    def play(self, p: int | None, color: int | None = None, superko: bool = True) -> list[int]:
        """Play p (None = pass) for `color` (default: side to move).  Returns captured points.

        Raises IllegalMove and leaves the board unchanged if the move is illegal.
        """
        color = self.to_play if color is None else color
        if p is None:
            self.passes += 1
            self.ko = None
            self.moves.append((color, None))
            self.to_play = opponent(color)
            return []
        if color == self.to_play and p == self.ko:
            raise IllegalMove("ko", f"{self.geometry.to_gtp(p)} retakes a ko")
        stones, captured, h = self.try_move(p, color)  # raises on occupied and suicide
        if superko and int(h) in self.seen:
            raise IllegalMove("superko", f"{self.geometry.to_gtp(p)} repeats an earlier position")
        # Simple ko: a lone stone that captured exactly one stone and has that point as its
        # only liberty may be retaken at once; forbid that single retake.
        self.ko = None
        if len(captured) == 1:  # lone and in atari: every neighbour but the captured point is the opponent's
            q, opp = captured[0], opponent(color)
            if all(r == q or stones[r] == opp for r in self.geometry.neighbors[p]):
                self.ko = q
        self.stones, self.hash = stones, h
        self.seen = self.seen.plus(self.hash)
        if captured:
            self.emptied = self.emptied.union(captured)
        self.peak_stones = max(self.peak_stones, int(np.count_nonzero(stones)))
        if captured:
            self.captures = {**self.captures, color: self.captures[color] + len(captured)}
        self.passes = 0
        self.moves.append((color, p))
        self.to_play = opponent(color)
        return captured

    @staticmethod
    def _group_of(stones: np.ndarray, geometry: Geometry, p: int) -> tuple[set[int], set[int]]:
        b = Board.__new__(Board)
        b.stones, b.geometry = stones, geometry
        return b.group(p)

    def play_recorded(self, p: int | None, color: int) -> str | None:
        """Replay a move of a game record with basic legality only (the point empty, no suicide):
        a ko retake or a repeated position that the record's own rules allowed is played anyway.
        Returns what our rules would have refused (None if nothing); raises IllegalMove otherwise."""
        try:
            self.play(p, color)
            return None
        except IllegalMove as err:
            if err.reason not in ("ko", "superko"):
                raise
            self.ko = None
            self.play(p, color, superko=False)
            return str(err)

    def place(self, points: Iterable[int], color: int) -> None:
        """Set up stones (handicap, SGF AB/AW): no captures, no move recorded."""
        points = list(points)
        for p in points:
            self.stones[p] = color
        if color == EMPTY:  # stones taken off by hand: as a capture would (superko_repeats)
            self.emptied = self.emptied.union(points)
        self.hash = self._compute_hash()
        self.seen = self.seen.plus(self.hash)
        self.peak_stones = max(self.peak_stones, int(np.count_nonzero(self.stones)))
        self.ko = None

    @property
    def game_over(self) -> bool:
        return self.passes >= 2

    def resumed(self) -> Board:
        """A copy with the passes cleared, so that playouts play a finished game on instead of
        scoring it as it stands: under Chinese counting they take the dead stones off."""
        b = self.copy()
        b.passes = 0
        return b

    # --- scoring -----------------------------------------------------------------------------
    def area(self) -> tuple[int, int, np.ndarray]:
        """(black area, white area, owner [P] int8): stones plus empty points reaching only
        that colour (Tromp-Taylor); owner 0 for dame."""
        owner = self.stones.copy()
        seen = np.zeros_like(self.stones, bool)
        nbrs = self.geometry.neighbors
        for p in range(self.size * self.size):
            if self.stones[p] != EMPTY or seen[p]:
                continue
            region, border, todo = [p], set(), [p]
            seen[p] = True
            while todo:
                q = todo.pop()
                for r in nbrs[q]:
                    if self.stones[r] == EMPTY:
                        if not seen[r]:
                            seen[r] = True
                            region.append(r)
                            todo.append(r)
                    else:
                        border.add(int(self.stones[r]))
            owner[region] = border.pop() if len(border) == 1 else EMPTY
        return int((owner == BLACK).sum()), int((owner == WHITE).sum()), owner

    def score(self) -> float:
        """Black's area minus White's area minus komi (> 0: Black wins)."""
        b, w, _ = self.area()
        return b - w - self.komi

    # --- display -----------------------------------------------------------------------------
    def to_ascii(self, coordinates: bool = False) -> str:
        n = self.size
        lines = []
        for r in range(n - 1, -1, -1):
            row = " ".join(_ASCII[int(s)] for s in self.stones[r * n:(r + 1) * n])
            lines.append(f"{r + 1:2d} {row}" if coordinates else row)
        if coordinates:
            lines.append("   " + " ".join(self.geometry.to_gtp(c)[0] for c in range(n)))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_ascii(coordinates=True)
