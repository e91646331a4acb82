"""GTP version 2, layer 2 of 3: the command handlers.  Each parses its arguments, calls the
player (gojax/player.py) and returns the reply text, or raises GtpError.

Besides the required and tournament commands: regression (reg_genmove, loadsgf, printsgf,
final_status_list, is_legal, list_stones), KGS (kgs-time_settings, kgs-genmove_cleanup),
Leela-Zero analysis as Lizzie and Sabaki read it (lz-analyze, lz-genmove_analyze) and GoGui's
analyze commands (ownership, visits, RAVE values).
"""

from __future__ import annotations

import math
import time

import numpy as np

from gojax import __version__, report
from gojax.gtp import GtpError, Quit, command
from gojax.judge import RULE_NAMES
from gojax.kernels.geometry import BLACK, MAX_SIZE, MIN_SIZE, WHITE, CoordinateError, Geometry
from gojax.kernels.host import IllegalMove
from gojax.kernels.learnt import ModelError
from gojax.player import RESIGN, Player, handicap_points
from gojax.search.mcts import SearchResult
from gojax.sgf import SgfError, board_to_sgf, load_sgf

NAME = "gojax"
KGS_NAMES = ("chinese", "japanese", "aga", "new_zealand", "tromp-taylor")  # what kgs-rules may say
LIZZIE_VERSION = "0.17.0"  # Lizzie reads `version` as Leela Zero's and wants 0.15 or later
_COLOURS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


def _need(args, n: int, usage: str):
    if len(args) != n:
        raise GtpError(f"syntax error: expected {usage}")
    return args


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise GtpError(f"syntax error: {what} must be an integer, got {text!r}") from None


def _float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise GtpError(f"syntax error: {what} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise GtpError(f"syntax error: {what} must be finite")
    return value


class GtpCommands:
    def __init__(self, player: Player, analyze_max_seconds: float | None = None, warm_up: bool = False,
                 lizzie: bool = False):
        """`warm_up`: compile the kernels for a board size at the first clear_board on it (a GUI
        sends boardsize, then clear_board, then waits), so the first genmove is not slowed."""
        self.player = player
        self.engine = None  # set by GtpEngine
        self.analyze_max_seconds = analyze_max_seconds
        self.warm_up = warm_up
        self.lizzie = lizzie  # `version` answers LIZZIE_VERSION
        self._compiled: set[int] = set()

    # --- helpers -------------------------------------------------------------------------------
    @property
    def g(self) -> Geometry:
        return self.player.board.geometry

    def _color(self, text: str, failure: str = "syntax error") -> int:
        c = _COLOURS.get(text.lower())
        if c is None:
            raise GtpError(f"{failure}: invalid color {text!r}")
        return c

    def _vertex(self, text: str, failure: str = "syntax error") -> int | None:
        try:
            return self.g.from_gtp(text)
        except CoordinateError as err:
            raise GtpError(f"{failure}: {err}") from None

    def _v(self, p) -> str:
        return self.g.to_gtp(p)

    # --- administrative -----------------------------------------------------------------------
    @command()
    def protocol_version(self):
        return "2"

    @command()
    def name(self):
        return NAME

    @command()
    def version(self):
        return LIZZIE_VERSION if self.lizzie else __version__

    @command()
    def known_command(self, *args):
        (name,) = _need(args, 1, "known_command COMMAND")
        return "true" if self.engine.known(name) else "false"

    @command()
    def list_commands(self):
        return "\n".join(self.engine.commands())

    @command()
    def quit(self):
        raise Quit()

    # --- setup ----------------------------------------------------------------------------------
    @command()
    def boardsize(self, *args):
        (text,) = _need(args, 1, "boardsize SIZE")
        size = _int(text, "size")
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise GtpError("unacceptable size")
        try:
            self.player.clear(size)
        except ModelError as err:  # GTP allows only this answer; the log says why
            print(f"[gojax] {err}", file=self.player.options.log, flush=True)
            raise GtpError("unacceptable size") from None
        return ""

    @command()
    def clear_board(self):
        self.player.clear()
        size = self.player.board.size
        if self.warm_up and size not in self._compiled:
            seconds = self.player.warm_up()
            self._compiled.add(size)
            print(f"[gojax] compiled the {size}x{size} kernels for L={self.player.params.leaves} x K="
                  f"{self.player.params.playouts_per_leaf} in {seconds:.1f}s", file=self.player.options.log, flush=True)
        return ""

    @command()
    def komi(self, *args):
        (text,) = _need(args, 1, "komi VALUE")
        self.player.set_komi(_float(text, "komi"))
        return ""

    @command()
    def fixed_handicap(self, *args):
        (text,) = _need(args, 1, "fixed_handicap N")
        n = _int(text, "number of stones")
        try:
            points = handicap_points(self.player.board.size, n)
            self.player.place_handicap(points)
        except ValueError as err:
            raise GtpError(str(err)) from None
        return " ".join(self._v(p) for p in points)

    @command()
    def place_free_handicap(self, *args):
        return self.fixed_handicap(*args)  # the standard points are a good free placement too

    @command()
    def set_free_handicap(self, *args):
        if len(args) < 2:
            raise GtpError("syntax error: expected set_free_handicap VERTEX VERTEX ...")
        points = [self._vertex(a) for a in args]
        if None in points:
            raise GtpError("syntax error: pass is not a handicap stone")
        try:
            self.player.place_handicap(points)
        except ValueError as err:
            raise GtpError(str(err)) from None
        return ""

    # --- moves ----------------------------------------------------------------------------------
    @command()
    def play(self, *args):
        if len(args) != 2:
            raise GtpError("illegal move: expected play COLOR VERTEX")
        color = self._color(args[0], "illegal move")
        point = self._vertex(args[1], "illegal move")
        try:
            self.player.play(color, point)
        except IllegalMove as err:
            raise GtpError(f"illegal move: {err}") from None
        return ""

    def _genmove(self, args, cleanup=False, commit=True):
        (text,) = _need(args, 1, "genmove COLOR")
        move = self.player.genmove(self._color(text), cleanup=cleanup, commit=commit)
        return "resign" if move == RESIGN else self._v(move)

    @command()
    def genmove(self, *args):
        return self._genmove(args)

    @command("kgs-genmove_cleanup")
    def kgs_genmove_cleanup(self, *args):
        return self._genmove(args, cleanup=True)

    @command()
    def reg_genmove(self, *args):
        return self._genmove(args, commit=False)

    @command()
    def undo(self):
        try:
            self.player.undo()
        except IllegalMove:
            raise GtpError("cannot undo") from None
        return ""

    @command()
    def is_legal(self, *args):
        color_text, vertex = _need(args, 2, "is_legal COLOR VERTEX")
        color, point = self._color(color_text), self._vertex(vertex)
        board = self.player.board
        return "1" if board.is_legal(point, color) else "0"

    # --- state ------------------------------------------------------------------------------------
    @command()
    def showboard(self):
        b = self.player.board
        side = "Black" if b.to_play == BLACK else "White"
        return (f"\n{b.to_ascii(coordinates=True)}\n"
                f"{side} to play; komi {b.komi}; captures B {b.captures[BLACK]} W {b.captures[WHITE]}")

    @command()
    def list_stones(self, *args):
        (text,) = _need(args, 1, "list_stones COLOR")
        color = self._color(text)
        return " ".join(self._v(int(p)) for p in range(self.player.board.size ** 2)
                        if self.player.board.stones[p] == color)

    @command()
    def final_score(self):
        s = self.player.final_score()
        return "0" if s == 0 else (f"B+{s:g}" if s > 0 else f"W+{-s:g}")

    @command()
    def final_status_list(self, *args):
        (kind,) = _need(args, 1, "final_status_list dead|alive|seki")
        if kind not in ("dead", "alive", "seki"):
            raise GtpError("syntax error: status must be dead, alive or seki")
        return " ".join(self._v(p) for p in self.player.status(kind))

    @command("kgs-rules")
    def kgs_rules(self, *args):
        (name,) = _need(args, 1, "kgs-rules " + "|".join(KGS_NAMES))
        name = name.lower()
        if name not in KGS_NAMES:
            raise GtpError(f"unknown rules: {name} ({', '.join(KGS_NAMES[:-1])} or {KGS_NAMES[-1]})")
        rules = RULE_NAMES[name]
        if rules != name:
            print(f"[gojax] kgs-rules {name}: counting by area with dead stones removed (gojax counts no territory)",
                  file=self.player.options.log, flush=True)
        self.player.set_rules(rules)
        return ""

    # --- SGF --------------------------------------------------------------------------------------
    @command()
    def loadsgf(self, *args):
        if not 1 <= len(args) <= 2:
            raise GtpError("syntax error: expected loadsgf FILE [MOVE_NUMBER]")
        upto = None
        if len(args) == 2:
            upto = _int(args[1], "move number") - 1  # GTP: load up to but not including move N
            if upto < 0:
                raise GtpError("syntax error: move number must be at least 1")
        try:
            with open(args[0], "rb") as f:
                data = f.read()
            board, info = load_sgf(data, upto)
        except OSError as err:
            raise GtpError(f"cannot load file: {err.strerror}") from None
        except SgfError as err:
            raise GtpError(f"cannot load file: {err}") from None
        for note in info["notes"]:
            print(f"[gojax] loadsgf {args[0]}: {note}", file=self.player.options.log, flush=True)
        self.player.load(board, info["setup"], info["history"])
        return "black" if board.to_play == BLACK else "white"

    @command()
    def printsgf(self, *args):
        text = board_to_sgf(self.player.board, self.player.setup, white=NAME, black="").decode()
        if args:
            try:
                with open(args[0], "w") as f:
                    f.write(text)
            except OSError as err:
                raise GtpError(f"cannot write file: {err.strerror}") from None
            return ""
        return text.strip()

    # --- time ---------------------------------------------------------------------------------------
    @command()
    def time_settings(self, *args):
        main, byo_time, byo_stones = _need(args, 3, "time_settings MAIN BYO_TIME BYO_STONES")
        c = self.player.clock
        c.main, c.byo_time, c.byo_stones = _float(main, "main time"), _float(byo_time, "byo-yomi time"), \
            _int(byo_stones, "byo-yomi stones")
        c.byo_periods = 1
        c.left = {}
        if c.main < 0 or c.byo_time < 0 or c.byo_stones < 0:
            raise GtpError("syntax error: times must not be negative")
        return ""

    @command("kgs-time_settings")
    def kgs_time_settings(self, *args):
        if not args:
            raise GtpError("syntax error: expected kgs-time_settings none|absolute|byoyomi|canadian ...")
        kind, rest = args[0].lower(), args[1:]
        c = self.player.clock
        if kind == "none":
            c.main = c.byo_time = 0.0
            c.byo_stones = 0
        elif kind == "absolute":
            (main,) = _need(rest, 1, "kgs-time_settings absolute MAIN")
            c.main, c.byo_time, c.byo_stones = _float(main, "main time"), 0.0, 0
        elif kind == "byoyomi":
            main, period, periods = _need(rest, 3, "kgs-time_settings byoyomi MAIN PERIOD PERIODS")
            # Japanese byo-yomi: one move per period; treat it as Canadian with 1 stone.
            c.main, c.byo_time, c.byo_stones = _float(main, "main time"), _float(period, "period"), 1
            c.byo_periods = _int(periods, "periods")
        elif kind == "canadian":
            main, period, stones = _need(rest, 3, "kgs-time_settings canadian MAIN PERIOD STONES")
            c.main, c.byo_time, c.byo_stones = _float(main, "main time"), _float(period, "period"), \
                _int(stones, "stones")
        else:
            raise GtpError(f"syntax error: unknown time system {kind!r}")
        c.left = {}
        return ""

    @command()
    def time_left(self, *args):
        color_text, seconds, stones = _need(args, 3, "time_left COLOR TIME STONES")
        self.player.clock.left[self._color(color_text)] = (_float(seconds, "time"), _int(stones, "stones"))
        return ""

    # --- analysis ------------------------------------------------------------------------------------
    def _analysis_line(self, r: SearchResult, kata: bool = False, ownership: bool = False) -> str:
        """One line of `info move ...` entries for search result `r`, as Leela Zero (lz-analyze:
        winrate, prior and lcb in units of 1/10,000, lcb clamped at 0) or KataGo (kata-analyze:
        fractions, and scoreLead) write them (gojax/report.py computes the fields)."""
        scale = (lambda x: f"{x:.6f}") if kata else (lambda x: str(int(x * 10000)))
        entries = []
        for line in report.move_lines(r, limit=20):
            pv = " ".join(self._v(p) for p in self.player.variation(line.move, 12))
            extra = f" utility {2 * line.winrate - 1:.6f}" if kata else ""
            if kata and not math.isnan(line.score_lead):
                extra += f" scoreLead {line.score_lead:.3f}"
            lcb = line.lcb if kata else max(0.0, line.lcb)
            entries.append(f"info move {self._v(line.move)} visits {line.visits}{extra} winrate {scale(line.winrate)} "
                           f"prior {scale(line.prior)} lcb {scale(lcb)} order {line.order} pv {pv}")
        text = " ".join(entries)
        if ownership:  # KataGo's order, from the side to move's view
            sign = -1.0 if self.player.board.to_play == WHITE else 1.0
            own = report.top_rows_first(sign * np.asarray(r.ownership), self.player.board.size)
            text += " ownership " + " ".join(f"{x:.4f}" for x in own)
        return text

    def _analysis_args(self, args):
        """[COLOR] [interval] CENTISECONDS [KEY VALUE ...]: (colour, seconds, options)."""
        color = self.player.board.to_play
        interval = 100  # centiseconds
        rest = list(args)
        if rest and rest[0].lower() in _COLOURS:
            color = self._color(rest.pop(0))
        if rest and rest[0] == "interval":
            rest.pop(0)
        if rest and rest[0].lstrip("-").isdigit():
            interval = _int(rest.pop(0), "interval")
        options = {}
        while rest:
            key = rest.pop(0).lower()
            options[key] = rest.pop(0).lower() if rest else ""
        return color, max(interval, 10) / 100.0, options

    def _analyse(self, color, interval, kata=False, ownership=False):
        start = time.monotonic()
        while True:
            r = self.player.think(color, seconds=interval)
            self.engine.write(self._analysis_line(r, kata, ownership) + "\n")
            if self.engine.input_waiting():
                return
            if self.analyze_max_seconds is not None and time.monotonic() - start >= self.analyze_max_seconds:
                return

    @command("lz-analyze", streams=True)
    def lz_analyze(self, cid, *args):
        color, interval, _ = self._analysis_args(args)
        self.engine.write(f"={cid}\n")
        self._analyse(color, interval)
        self.engine.write("\n")

    @command("kata-analyze", streams=True)
    def kata_analyze(self, cid, *args):
        color, interval, options = self._analysis_args(args)
        self.engine.write(f"={cid}\n")
        self._analyse(color, interval, kata=True, ownership=options.get("ownership") == "true")
        self.engine.write("\n")

    @command("lz-genmove_analyze", streams=True)
    def lz_genmove_analyze(self, cid, *args):
        color, interval, _ = self._analysis_args(args)
        self.engine.write(f"={cid}\n")
        # One search, the genmove's own budget, reported every interval; then genmove's decisions.
        r = self.player.think(color, report=lambda partial: self.engine.write(self._analysis_line(partial) + "\n"),
                              every=interval)
        self.engine.write(self._analysis_line(r) + "\n")
        move = self.player.decide(color, r)
        self.engine.write(f"play {'resign' if move == RESIGN else self._v(move)}\n\n")

    @command("gogui-analyze_commands")
    def gogui_analyze_commands(self):
        return "\n".join(["gfx/Ownership/gogui-ownership", "gfx/Visits/gogui-visits",
                          "gfx/RAVE values/gogui-rave", "string/Principal variation/gogui-pv"])

    @command("gogui-ownership")
    def gogui_ownership(self):
        own = self.player.ownership()
        return "INFLUENCE " + " ".join(f"{self._v(p)} {own[p]:.2f}" for p in range(len(own)))

    @command("gogui-visits")
    def gogui_visits(self):
        r = self.player.last_result()
        return "LABEL " + " ".join(f"{self._v(m.move)} {m.visits}" for m in r.moves if m.move is not None and m.visits)

    @command("gogui-rave")
    def gogui_rave(self):
        r = self.player.last_result()
        return "LABEL " + " ".join(f"{self._v(m.move)} {int(round(m.q_amaf * 100))}" for m in r.moves
                                   if m.move is not None and not math.isnan(m.q_amaf))

    @command("gogui-pv")
    def gogui_pv(self):
        r = self.player.last_result()
        return " ".join(self._v(p) for p in r.pv)
