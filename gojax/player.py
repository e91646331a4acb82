"""The player: a game (host board + history), a clock, and a search that is reused from move
to move.  The GTP handlers (gojax/gtp_commands.py) talk only to this class; it knows nothing of
GTP strings (colours are 1/2, moves are point indices, None is pass).

Decisions on top of the search (SPEC.md "Search"): resign when the chosen move's value for us
is below the threshold after enough simulations (never in cleanup mode, never with resign off);
pass when the opponent has just passed and the area count as it stands wins; in cleanup mode,
never pass while the opponent's dead stones are still on the board.
"""

from __future__ import annotations

import dataclasses
import sys

import jax
import numpy as np

from kernels.geometry import BLACK, WHITE, Geometry, opponent
from kernels.host import Board, IllegalMove
from kernels.playout import PlayoutConfig, run_playouts
from kernels.state import batch_from_host
from search.mcts import Search, SearchResult, Simulator
from search.params import SearchParams
from search.timecontrol import Clock

RESIGN = "resign"


def handicap_points(size: int, n: int) -> list[int]:
    """GTP fixed handicap placement (GTP 2 spec, sec. 4.1.1): sizes 7 and up, 2..9 stones
    (2..4 on even sizes and on 7x7)."""
    if size < 7:
        raise ValueError("fixed handicap needs a board of 7x7 or more")
    limit = 9 if size % 2 == 1 and size > 7 else 4
    if not 2 <= n <= limit:
        raise ValueError(f"handicap must be 2..{limit} on {size}x{size}")
    d = 3 if size >= 13 else 2
    lo, hi, mid = d, size - 1 - d, size // 2

    def pt(col, row):
        return row * size + col

    corners = [pt(lo, lo), pt(hi, hi), pt(lo, hi), pt(hi, lo)]  # D4 Q16 D16 Q4 on 19x19
    sides = [pt(lo, mid), pt(hi, mid), pt(mid, lo), pt(mid, hi)]  # D10 Q10 K4 K16
    centre = pt(mid, mid)
    if n <= 4:
        return corners[:n]
    if n == 5:
        return corners + [centre]
    if n == 6:
        return corners + sides[:2]
    if n == 7:
        return corners + sides[:2] + [centre]
    if n == 8:
        return corners + sides
    return corners + sides + [centre]


@dataclasses.dataclass
class PlayerOptions:
    simulations: int | None = 3000  # per move when there is no clock (and a cap with one)
    seconds: float | None = None  # per move when there is no clock
    resign: bool = True  # resign when the value is below params.resign_threshold
    log: object = sys.stderr  # where search summaries go (never stdout: GTP owns it)
    verbose: bool = True


class Player:
    def __init__(self, size: int = 9, komi: float = 7.5, params: SearchParams = SearchParams(),
                 options: PlayerOptions = PlayerOptions()):
        self.params = params
        self.options = options
        self.simulator = Simulator(params)
        self.clock = Clock()
        self.komi = komi
        self.clear(size)

    # --- game state --------------------------------------------------------------------------
    def clear(self, size: int | None = None) -> None:
        size = self.board.size if size is None else size
        Geometry(size)  # validates
        self.board = Board(size, self.komi)
        self.history: list[Board] = []
        self.setup: dict[int, list[int]] = {BLACK: [], WHITE: []}
        self.search: Search | None = None
        self.last: SearchResult | None = None
        self.clock.left = {}
        self.simulator.new_game()

    def set_komi(self, komi: float) -> None:
        self.komi = float(komi)
        self.board.komi = self.komi
        self.search = None

    def play(self, color: int, point: int | None) -> None:
        """Raises IllegalMove (board unchanged) for an illegal move."""
        before = self.board.copy()
        self.board.play(point, color)
        self.history.append(before)

    def undo(self) -> None:
        if not self.history:
            raise IllegalMove("undo", "cannot undo")
        self.board = self.history.pop()

    def place_handicap(self, points: list[int]) -> None:
        if self.board.moves or self.board.stones.any():
            raise ValueError("board not empty")
        if len(set(points)) != len(points) or len(points) < 2:
            raise ValueError("bad handicap stones")
        self.board.place(points, BLACK)
        self.board.to_play = WHITE
        self.setup[BLACK] = list(points)

    def load(self, board: Board, setup: dict[int, list[int]]) -> None:
        self.board = board
        self.komi = board.komi
        self.history = []
        self.setup = setup
        self.search = None

    # --- thinking ----------------------------------------------------------------------------
    def warm_up(self) -> float:
        """Compile the device kernels for this board size and batch shape (seconds taken)."""
        return self.simulator.warm_up(self.board)

    def _search_for(self, board: Board) -> Search:
        if self.search is None or self.search.size != board.size:
            self.search = Search(board, self.params, self.simulator)
        else:
            self.search.advance(board)
        return self.search

    def think(self, color: int, seconds: float | None = None, simulations: int | None = None) -> SearchResult:
        """Search the current position for `color` (the side to move is set to `color`)."""
        if self.board.to_play != color:
            self.board.to_play = color
            self.board.ko = None
        clock_seconds = self.clock.seconds_for_move(color, int((self.board.stones == 0).sum()))
        if seconds is None and clock_seconds is not None:
            seconds, simulations = clock_seconds, simulations or self.options.simulations
        elif seconds is None and simulations is None:
            seconds, simulations = self.options.seconds, self.options.simulations
        search = self._search_for(self.board)
        result = search.run(simulations=simulations, seconds=seconds)
        self.last = result
        if self.options.verbose:
            self._log(result)
        return result

    def genmove(self, color: int, cleanup: bool = False, commit: bool = True):
        """The move to play for `color`: a point, None (pass) or RESIGN.  Plays it unless
        commit=False (reg_genmove)."""
        result = self.think(color)
        move = result.move
        threshold = self.params.resign_threshold
        if (self.options.resign and not cleanup and threshold > 0
                and result.simulations >= self.params.resign_min_simulations and result.value < threshold):
            return RESIGN
        if not cleanup and self.board.passes >= 1 and self._area_margin(color) > 0:
            move = None  # the opponent passed and the count as it stands wins: end the game
        if cleanup and move is None and self.dead_stones(opponent(color), result.ownership):
            move = next((m.move for m in result.moves if m.move is not None), None)
        if commit:
            self.play(color, move)
        return move

    def _area_margin(self, color: int) -> float:
        s = self.board.score()
        return s if color == BLACK else -s

    # --- end of game ---------------------------------------------------------------------------
    def ownership(self, playouts: int = 512) -> np.ndarray:
        """[P] mean final owner (+1 Black) from playouts of the current position (the search's
        policy, without the learned rules)."""
        res = run_playouts(batch_from_host([self.board]), jax.random.key(self.params.seed), playouts,
                           PlayoutConfig(policy=self.params.policy, amaf_rule=self.params.amaf_rule))
        return np.asarray(res.ownership[0])

    def dead_stones(self, color: int | None = None, ownership: np.ndarray | None = None) -> list[int]:
        """Stones (of `color`, or both) that the playouts mostly lose: owner below -0.5 for Black's,
        above 0.5 for White's."""
        own = self.ownership() if ownership is None else ownership
        s = self.board.stones
        dead = ((s == BLACK) & (own < -0.5)) | ((s == WHITE) & (own > 0.5))
        if color is not None:
            dead &= s == color
        return [int(p) for p in np.flatnonzero(dead)]

    def status(self, kind: str) -> list[int]:
        """final_status_list: 'dead', 'alive' or 'seki' stones.  Seki: living stones whose
        points the playouts split (|owner| < 0.3), an approximation from ownership alone."""
        own = self.ownership()
        dead = set(self.dead_stones(None, own))
        stones = [int(p) for p in np.flatnonzero(self.board.stones)]
        seki = {p for p in stones if p not in dead and abs(own[p]) < 0.3}
        if kind == "dead":
            return sorted(dead)
        if kind == "seki":
            return sorted(seki)
        return [p for p in stones if p not in dead and p not in seki]

    def final_score(self) -> float:
        """Black's area minus White's area minus komi, after removing dead stones."""
        b = self.board.copy()
        for p in self.dead_stones():
            b.stones[p] = 0
        return b.score()

    def _log(self, r: SearchResult) -> None:
        g = self.board.geometry
        top = ", ".join(f"{g.to_gtp(m.move)} {m.visits} {m.q:.2f}" for m in r.moves[:5])
        print(f"[gojax] {r.simulations} sims in {r.seconds:.2f}s ({r.simulations / max(r.seconds, 1e-9):,.0f}/s),"
              f" value {r.value:.3f}, nodes {r.nodes}, host {r.host_fraction:.0%}; top: {top};"
              f" pv {' '.join(g.to_gtp(p) for p in r.pv[:8])}", file=self.options.log, flush=True)
