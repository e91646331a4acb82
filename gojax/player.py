"""The player: a game (host board + history), a clock, and a search that is reused from move
to move.  The GTP handlers (gojax/gtp_commands.py) talk only to this class; it knows nothing of
GTP strings (colours are 1/2, moves are point indices, None is pass).

Decisions on top of the search (SPEC.md "Search"): resign when the chosen move's value for us
is below the threshold after enough simulations (never in cleanup mode, never with resign off);
after the opponent passed, pass only when the count under the rules in force wins (Chinese:
with the dead stones taken off as gojax/judge.py judges them; Tromp-Taylor: as it stands), and
otherwise play on; in cleanup mode, never pass while the opponent's dead stones are on the board.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import jax
import numpy as np

from gojax import judge
from gojax.kernels import prior_net
from gojax.kernels.geometry import BLACK, WHITE, Geometry, opponent
from gojax.kernels.host import Board, IllegalMove
from gojax.kernels.learnt import check_model
from gojax.runtime import playout_worker_setup
from gojax.search.device import AUTO_CPU_MARGIN, Simulator, playout_candidates
from gojax.search.mcts import Search, SearchResult
from gojax.search.params import SearchParams
from gojax.search.timecontrol import Clock
from gojax.search.tree import Tree

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
    trees: int = 1  # root parallelisation: this many trees (seeds seed .. seed + T - 1) share the budget
    playout_device: str = "default"  # where the playouts run: search/device.PLAYOUT_DEVICES ("auto" at warm-up)
    exact: bool = False  # spend exactly `simulations` a move: no early stop, no rounding up (studies)
    playout_workers: int = 0  # processes sharing each round's playouts (search/workers.py; gojax/runtime.py chooses)
    playout_share_from: int = 0  # the smallest board whose rounds they share (Simulator's share_from)


class Player:
    def __init__(self, size: int = 9, komi: float = 7.5, params: SearchParams = SearchParams(),
                 options: PlayerOptions | None = None, tree: Tree | None = None):
        """`tree`: where this player's searches keep their tree (one slot of a TreeStack, so that
        gojax/arena.py backs many players' searches up together); by default their own."""
        self.params = params
        self.tree = tree
        self.options = PlayerOptions() if options is None else options
        self._devices = playout_candidates(self.options.playout_device)  # ValueError for a bad choice
        workers = self.options.playout_workers
        self.simulator = Simulator(params, device=self._devices[0], workers=workers,
                                   worker_setup=playout_worker_setup() if workers else None,
                                   share_from=self.options.playout_share_from)
        self.clock = Clock()
        self._judged = None  # ((position hash, komi, rules), Judgement)
        self.komi = komi
        self.clear(size)

    # --- game state --------------------------------------------------------------------------
    def clear(self, size: int | None = None) -> None:
        size = self.board.size if size is None else size
        Geometry(size)  # validates
        if "learnt" in (self.params.policy, self.params.fallback):  # ModelError before a search
            check_model(self.params.policy_model, size)
        resolved = self.params.for_size(size)  # ValueError: a value weight with no net for the size
        if resolved.prior_model_path is not None:
            prior_net.check_model(resolved.prior_model_path, size)
        if resolved.value_weight > 0:
            prior_net.check_value_model(resolved.value_model, size)  # ModelError: no head, or another size
        self.board = Board(size, self.komi)
        self.history: list[Board] = []
        self.setup: dict[int, list[int]] = {BLACK: [], WHITE: []}
        self.search: Search | None = None
        self._forest = None  # the trees of root parallelisation (options.trees > 1)
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

    def load(self, board: Board, setup: dict[int, list[int]], history: list[Board] | None = None) -> None:
        """A position from a game record; `history`: the boards before each of its moves (undo)."""
        self.board = board
        self.komi = board.komi
        self.history = list(history or [])
        self.setup = setup
        self.search = None

    def set_rules(self, rules: str) -> None:
        """How a finished game is counted (SearchParams.rules): "chinese" or "tromp-taylor"."""
        self.params = dataclasses.replace(self.params, rules=rules)  # validates
        old, self.simulator = self.simulator, Simulator(self.params, device=self.simulator.device)
        self.simulator.take_workers(old)  # the workers keep what they compiled
        self.search = None

    # --- thinking ----------------------------------------------------------------------------
    def warm_up(self) -> float:
        """Compile the device kernels for this board size and batch shape (seconds taken); with
        the playout device "auto" on a machine with an accelerator, on both candidates, keeping
        the faster for this search's calls (said on the log)."""
        t0 = time.perf_counter()
        if len(self._devices) == 1:
            self.simulator.warm_up(self.board, self.options.trees)
        else:
            times = self.simulator.choose_device(self.board, self.options.trees, self._devices)
            chosen, *others = times.items()
            print(f"[gojax] playouts on {chosen[0]}: {chosen[1]:.1f} ms per call of "
                  f"{self.options.trees} x {self.params.leaves} leaves x {self.params.playouts_per_leaf} playouts"
                  + "".join(f", against {ms:.1f} ms on {name}" for name, ms in others)
                  + (f" (auto keeps the CPU unless another device takes at most {AUTO_CPU_MARGIN:.0%} of its time)"
                     if any(ms < chosen[1] for _, ms in others) else ""),
                  file=self.options.log, flush=True)
        return time.perf_counter() - t0

    def _search_for(self, board: Board) -> Search:
        if self.search is None or self.search.size != board.size:
            fits = self.tree is not None and self.tree.size == board.size
            self.search = Search(board, self.params, self.simulator, self.tree if fits else None)
        else:
            self.search.advance(board)
        return self.search

    def think(self, color: int, seconds: float | None = None, simulations: int | None = None,
              report=None, every: float | None = None) -> SearchResult:
        """Search the current position for `color` (the side to move is set to `color`).  With
        `report` (a function of a partial SearchResult), one tree calls it every `every` seconds
        of the search (lz-genmove_analyze) and goes on to the end of the same budget."""
        if self.board.to_play != color:
            self.board.to_play = color
            self.board.ko = None
        clock_seconds = self.clock.seconds_for_move(color, int((self.board.stones == 0).sum()), self.board.size ** 2)
        if seconds is None and clock_seconds is not None:
            seconds, simulations = clock_seconds, simulations or self.options.simulations
        elif seconds is None and simulations is None:
            seconds, simulations = self.options.seconds, self.options.simulations
        if self.options.trees > 1:
            result = self._think_forest(simulations, seconds)
        elif report is not None and every is not None:
            result = self._think_reporting(simulations, seconds, report, every)
        else:
            result = self._search_for(self.board).run(simulations=simulations, seconds=seconds,
                                                      stop_early=not self.options.exact, exact=self.options.exact)
        self.last = result
        if self.options.verbose:
            self._log(result)
        return result

    def _think_reporting(self, simulations: int | None, seconds: float | None, report, every: float) -> SearchResult:
        """One search to the end of its budget, in pieces of `every` seconds, `report`ing each."""
        search = self._search_for(self.board)
        start = time.perf_counter()
        deadline = None if seconds is None else start + seconds
        done = 0
        while True:
            left = None if simulations is None else simulations - done
            piece = every if deadline is None else max(min(every, deadline - time.perf_counter()), 1e-3)
            result = search.run(simulations=left, seconds=piece, stop_early=False, exact=self.options.exact)
            done += result.simulations
            if ((left is not None and done >= simulations) or (deadline is not None and time.perf_counter() >= deadline)
                    or (not self.options.exact and left is not None and search.decided(simulations - done))):
                return dataclasses.replace(result, simulations=done, seconds=time.perf_counter() - start)
            report(result)

    def _think_forest(self, simulations: int | None, seconds: float | None) -> SearchResult:
        """T trees on the current position, one device call per round, root statistics merged
        (search/forest.merge_roots); each tree is reused after moves as a lone search is."""
        from gojax.search.forest import Forest, merge_roots
        t = self.options.trees
        forest = self._forest
        if forest is None or self.search is None:  # a new game, size, komi or rules
            plist = [dataclasses.replace(self.params, seed=self.params.seed + i) for i in range(t)]
            forest = self._forest = Forest([self.board] * t, plist, self.simulator)
        else:
            for s in forest.searches:
                s.advance(self.board)
        budget = -(-(simulations or 10**9) // t)  # each tree's share, rounded up
        results = forest.run(budget, seconds=seconds, stop_early=not self.options.exact, exact=self.options.exact)
        merged, owner = merge_roots(results, forest.searches)
        self.search = forest.searches[owner]
        return merged

    def variation(self, move: int | None, length: int = 12) -> list[int | None]:
        """The last search's principal variation starting with `move` (None: pass)."""
        if self.search is None:
            return [move]
        return self.search.variation(self.search.tree.pass_action if move is None else move, length)

    def last_result(self) -> SearchResult:
        """The last search's result if it was of the current position, else a new search's."""
        if self.last is None or self.search is None or not self.search.root_board.same_position(self.board):
            self.think(self.board.to_play)
        return self.last

    def genmove(self, color: int, cleanup: bool = False, commit: bool = True):
        """The move to play for `color`: a point, None (pass) or RESIGN.  Plays it unless
        commit=False (reg_genmove)."""
        return self.decide(color, self.think(color), cleanup, commit)

    def prepare(self, color: int) -> Search:
        """The search for `color` to move here, for a caller that runs it itself (gojax/arena.py
        runs many players' searches in one forest), then calls `decide` with its result."""
        if self.board.to_play != color:
            self.board.to_play = color
            self.board.ko = None
        return self._search_for(self.board)

    def decide(self, color: int, result: SearchResult, cleanup: bool = False, commit: bool = True):
        """genmove's decisions on a finished search: resign, pass only when the count wins, play."""
        self.last = result
        move = result.move
        threshold = self.params.resign_threshold
        # Resign on a full search: resign_min_simulations, or the whole budget when it is smaller.
        budget = self.options.simulations if self.options.seconds is None else None
        enough = min(self.params.resign_min_simulations, budget or self.params.resign_min_simulations)
        if (self.options.resign and not cleanup and threshold > 0
                and result.simulations >= enough and result.value < threshold):
            return RESIGN
        if cleanup:  # KGS cleanup: capture every dead stone before passing
            if move is None and judge.dead_of(self.judgement(), self.board, opponent(color)):
                move = self._play_on_move(result, color)
        elif self.board.passes >= 1:  # a pass now ends the game: only when the count wins
            move = None if judge.margin(self.judgement(), color) > 0 else self._play_on_move(result, color)
        if commit:
            self.play(color, move)
        return move

    def _play_on_move(self, result: SearchResult, color: int) -> int | None:
        """The most visited move that is not a pass and fills no own eye (None if there is none)."""
        eyes = self.board.eye_mask(color)
        return next((m.move for m in result.moves if m.move is not None and not eyes[m.move]
                     and self.board.is_legal(m.move, color)), None)

    # --- end of game ---------------------------------------------------------------------------
    def judgement(self) -> judge.Judgement:
        """Dead stones, seki and the count of the current position under `params.rules`
        (gojax/judge.py), cached per position."""
        key = (int(self.board.hash), self.board.komi, self.params.rules)
        if self._judged is None or self._judged[0] != key:
            self._judged = (key, judge.judge(self.board, jax.random.key(self.params.seed), self.params.rules,
                                             policy=self.params.policy))
        return self._judged[1]

    def ownership(self) -> np.ndarray:
        """[P] mean final owner (+1 Black) from playouts of the current position played on."""
        return self.judgement().ownership

    def status(self, kind: str) -> list[int]:
        """final_status_list: the 'dead', 'alive' or 'seki' stones."""
        j = self.judgement()
        if kind == "dead":
            return list(j.dead)
        if kind == "seki":
            return list(j.seki)
        out = set(j.dead) | set(j.seki)
        return [int(p) for p in np.flatnonzero(self.board.stones) if p not in out]

    def final_score(self) -> float:
        """Black's area minus White's area minus komi, under `params.rules`."""
        return self.judgement().score

    def _log(self, r: SearchResult) -> None:
        g = self.board.geometry
        top = ", ".join(f"{g.to_gtp(m.move)} {m.visits} {m.q:.2f}" for m in r.moves[:5])
        print(f"[gojax] {r.simulations} sims in {r.seconds:.2f}s ({r.simulations / max(r.seconds, 1e-9):,.0f}/s),"
              f" value {r.value:.3f}, nodes {r.nodes}, host {r.host_fraction:.0%}; top: {top};"
              f" pv {' '.join(g.to_gtp(p) for p in r.pv[:8])}", file=self.options.log, flush=True)
