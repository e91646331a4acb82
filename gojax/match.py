"""`gojax match`: many games between two GTP engines, resumable and crash-proof.

Each finished game is written as SGF (sgfmill) into OUT/games/ and appended as one JSON line to
OUT/results.jsonl before the next game starts, so a killed run loses at most the game in
progress; on restart the games already in results.jsonl are skipped.  A game is scored by the
referee: GNU Go's `final_score` on the final position (default), or gojax's own judgement
(gojax/judge.py).  An engine that cannot start, or dies before its first move, stops the run
(EngineFailure, with the engine's own stderr): it is broken, not beaten.  One that crashes
later, hangs past --move-timeout or plays an illegal move forfeits that game; the match goes on
with a fresh process, and forfeits are counted apart: never as results, never in the Elo.
`python -m gojax` engines are started with -P, so that a folder named gojax in the working
directory cannot shadow the installed package.

Openings (`--openings`, as gogui-twogtp's): game i starts from the moves of SGF file
(i // 2 with --alternate, else i) modulo their number, sent to both engines with `play`, so
with --alternate each opening is played once with each engine on each side.  The SGF of a
game holds the opening's moves too.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shlex
import sys
import threading
import time

from gojax.gtp_client import GtpClient, GtpEngineError
from gojax.kernels.geometry import BLACK, WHITE, CoordinateError, opponent
from gojax.kernels.host import Board, IllegalMove
from gojax.sgf import board_to_sgf

_NAMES = {BLACK: "black", WHITE: "white"}


@dataclasses.dataclass
class MatchConfig:
    engine_a: str  # command line of engine A (plays Black in game 0)
    engine_b: str
    games: int = 10
    size: int = 9
    komi: float = 7.5
    alternate: bool = True  # swap colours every game
    out: str = "match"
    referee: str = "gnugo"  # "gnugo" or "gojax"
    gnugo: str = "gnugo --mode gtp --chinese-rules"
    move_timeout: float = 120.0  # seconds one genmove may take before the engine forfeits
    max_moves: int | None = None  # stop a game after this many moves (default 3 N^2) and score it
    name_a: str = "A"
    name_b: str = "B"
    vary_seeds: bool = True  # a different seed every game (else deterministic engines repeat games)
    openings: tuple[str, ...] = ()  # SGF files; game i starts from opening (i // 2 if alternate else i) % len
    opening_moves: int | None = None  # play only the first N moves of each opening (None: all)
    force: bool = False  # add games to an OUT played with other settings (RESUME_KEYS)


class OpeningError(ValueError):
    """An opening SGF that cannot be used (unreadable, another board size, setup stones)."""


class EngineFailure(RuntimeError):
    """An engine (or the referee) could not start or died before its first move."""


class ResumeError(ValueError):
    """OUT holds games played with other settings than this run's (engines, names, board)."""


# The settings that make two runs' games one sample: a run resuming into OUT must match them
# (OUT/match.json keeps them from the first game on).
RESUME_KEYS = ("engine_a", "engine_b", "name_a", "name_b", "size", "komi", "alternate", "vary_seeds",
               "openings", "opening_moves", "max_moves", "referee")


def match_card(cfg: MatchConfig) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in
            ((k, getattr(cfg, k)) for k in RESUME_KEYS)}


def check_resume(cfg: MatchConfig, done: list[dict]) -> None:
    """ResumeError when OUT's games were played with other settings (OUT/match.json; before it
    existed, by the engines' names), unless cfg.force."""
    path = os.path.join(cfg.out, "results.jsonl")
    theirs = {r[c] for r in done for c in ("black", "white")}
    if theirs - {cfg.name_a, cfg.name_b}:
        raise ResumeError(f"{path} holds games between {' and '.join(sorted(theirs))}, but this run's engines are "
                          f"named {cfg.name_a} and {cfg.name_b}: resume with those names (gojax match --name-black "
                          "--name-white) or choose another --out")
    card_path = os.path.join(cfg.out, "match.json")
    if cfg.force or not done or not os.path.exists(card_path):
        return
    with open(card_path) as f:
        old = json.load(f)
    new = match_card(cfg)
    changed = [f"{k}: {old.get(k)!r} -> {new[k]!r}" for k in RESUME_KEYS if old.get(k) != new[k]]
    if changed:
        raise ResumeError(f"{cfg.out} holds {len(done)} games played with other settings ({'; '.join(changed)}):"
                          " choose another --out, or add --force to mix them")


def write_card(cfg: MatchConfig) -> None:
    """OUT/match.json: this run's settings, which a later run resuming into OUT must match."""
    with open(os.path.join(cfg.out, "match.json"), "w") as f:
        json.dump(match_card(cfg), f, indent=1)
        f.write("\n")


def make_folder(path: str) -> list[str]:
    """os.makedirs(path); returns the folders it made, deepest first (for `remove_if_empty`)."""
    made, folder = [], os.path.abspath(path)
    while not os.path.exists(folder):
        made.append(folder)
        folder = os.path.dirname(folder)
    os.makedirs(path, exist_ok=True)
    return made


def remove_if_empty(folders: list[str]) -> None:
    """Remove the `folders` a run made (and an empty games/ in each), deepest first, where the
    run saved nothing."""
    for folder in folders:
        for path in (os.path.join(folder, "games"), folder):
            try:
                os.rmdir(path)
            except OSError:  # not empty, or not there
                pass


def opening_files(paths: list[str]) -> tuple[str, ...]:
    """SGF files named directly or found (sorted) in the folders named."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, f) for f in os.listdir(path) if f.lower().endswith(".sgf"))
        elif os.path.exists(path):
            files.append(path)
        else:
            raise OpeningError(f"opening {path!r}: no such file or folder")
    if paths and not files:
        raise OpeningError(f"no .sgf files in {', '.join(paths)}")
    return tuple(files)


def load_opening(path: str, size: int, upto: int | None = None) -> list[tuple[int, int | None]]:
    """The (colour, point) moves of an opening, checked legal in order (positional superko)."""
    from gojax.sgf import SgfError, load_sgf
    try:
        with open(path, "rb") as f:
            board, info = load_sgf(f.read(), upto=upto)
    except (OSError, SgfError) as err:
        raise OpeningError(f"opening {path}: {err}") from err
    if board.size != size:
        raise OpeningError(f"opening {path}: board size {board.size}, the match plays {size}")
    if info["setup"][BLACK] or info["setup"][WHITE]:
        raise OpeningError(f"opening {path}: setup stones (AB/AW) are not supported, only moves")
    return list(info["moves"][:upto] if upto is not None else info["moves"])


def opening_for(cfg: MatchConfig, index: int) -> str | None:
    if not cfg.openings:
        return None
    return cfg.openings[(index // 2 if cfg.alternate else index) % len(cfg.openings)]


def seeded(cmd: str, game: int) -> str:
    """The engine command for one game: `{game}` is replaced by the game index; GNU Go and
    gojax and Pachi commands get a per-game seed (gojax: its own --seed times 100003 plus the
    game)."""
    if "{game}" in cmd:
        return cmd.replace("{game}", str(game))
    argv = shlex.split(cmd)
    if not argv:
        return cmd
    # The program may sit behind a wrapper (env -C DIR, nice, taskset): look past it.
    names = [os.path.basename(a) for a in argv]
    if any("gnugo" in n for n in names[:4]):
        return shlex.join(argv + ["--seed", str(game + 1)])  # GNU Go: 0 would mean "from the clock"
    if any(n == "pachi" for n in names[:4]) and not {"-s", "--seed"} & set(argv):
        i = names.index("pachi")
        return shlex.join(argv[:i + 1] + ["-s", str(game + 1)] + argv[i + 1:])  # before its engine args
    if "gtp" in argv and any(n.startswith("gojax") for n in names[:argv.index("gtp")]):
        base = 0
        if "--seed" in argv:
            i = argv.index("--seed")
            base = int(argv[i + 1]) if i + 1 < len(argv) and argv[i + 1].lstrip("-").isdigit() else 0
            del argv[i:i + 2]
        return shlex.join(argv + ["--seed", str(base * 100003 + game)])
    return cmd


def _find_gnugo(cmd: str) -> str:
    argv = shlex.split(cmd)
    if argv and argv[0] == "gnugo" and not _which("gnugo") and os.path.exists("/usr/games/gnugo"):
        argv[0] = "/usr/games/gnugo"
    return shlex.join(argv)


def _which(name: str) -> str | None:
    import shutil
    return shutil.which(name)


def load_results(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                break  # a line cut short by a kill: the game is played again
    return out


def safe_path(cmd: str) -> str:
    """`python -m gojax ...` with -P: the working directory is not put on sys.path, so a
    folder named gojax there (a clone's parent directory) cannot shadow the package."""
    argv = shlex.split(cmd)
    if (len(argv) > 2 and os.path.basename(argv[0]).startswith("python") and "-P" not in argv
            and "-m" in argv and argv[argv.index("-m") + 1:argv.index("-m") + 2] == ["gojax"]):
        return shlex.join([argv[0], "-P"] + argv[1:])
    return cmd


def start_engine(cmd: str, size: int, komi: float, stop: Stop | None = None) -> GtpClient:
    """An engine ready for a game; EngineFailure (with its stderr) if it cannot get there."""
    try:
        client = GtpClient(_find_gnugo(safe_path(cmd)), stderr="keep")
    except OSError as err:
        raise EngineFailure(f"cannot start {cmd!r}: {err.strerror or err}") from None
    if stop is not None:
        stop.track(client)
    try:
        client.send(f"boardsize {size}", timeout=300)
        client.send("clear_board", timeout=300)
        client.send(f"komi {komi}", timeout=300)
    except GtpEngineError as err:
        if stop is not None and stop.is_set():
            raise MatchStopped() from None
        message = failure_message(cmd, client, err)
        client.close(timeout=1)
        raise EngineFailure(message) from None
    return client


def failure_message(cmd: str, client: GtpClient, err: Exception) -> str:
    tail = client.stderr_tail()
    return f"engine {cmd!r} failed before its first move: {err}" + (f"\n  its stderr ends:\n{tail}" if tail else "")


class MatchStopped(Exception):
    """The run was interrupted: the game in progress is abandoned (no record, no SGF)."""


class Stop:
    """A parallel run's ^C: a flag each game checks before its next move, and the engine and
    referee processes in flight, killed when it fires, so that no game keeps the run waiting
    on a long genmove or a referee's final_score."""

    def __init__(self):
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._clients: set[GtpClient] = set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def track(self, client: GtpClient) -> GtpClient:
        with self._lock:
            self._clients.add(client)
            if self._event.is_set():
                _kill(client)
        return client

    def forget(self, client: GtpClient) -> None:
        with self._lock:
            self._clients.discard(client)

    def fire(self) -> None:
        with self._lock:
            self._event.set()
            for client in self._clients:
                _kill(client)


def _kill(client: GtpClient) -> None:
    try:
        client.proc.kill()
    except OSError:
        pass


class ProcessEngine:
    """One side of a game: a GTP engine in its own process (GNU Go, Pachi, `gojax gtp`)."""

    external = True

    def __init__(self, command: str, client: GtpClient):
        self.command, self.client = command, client

    def play(self, color: int, vertex: str, timeout: float) -> None:
        self.client.send(f"play {_NAMES[color]} {vertex}", timeout=timeout)

    def genmove(self, color: int, timeout: float) -> str:
        """A vertex, "pass" or "resign"; GtpEngineError when it fails or takes too long."""
        return self.client.send(f"genmove {_NAMES[color]}", timeout=timeout).strip().lower()

    def broken(self, err: Exception) -> str | None:
        """Why the run must stop (the engine died before a move: broken, not beaten), else None."""
        return failure_message(self.command, self.client, err) if self.client.dead() else None

    def close(self, stop: Stop | None = None) -> None:
        self.client.close()
        if stop is not None:
            stop.forget(self.client)


class InProcessEngine:
    """One side of a game: gojax's `Player` in this process.  The arena searches for many of
    them in one forest (`Player.prepare` / `decide`) and hands the moves to `Game.answer`."""

    external = False

    def __init__(self, command: str, player):
        self.command, self.player = command, player

    def play(self, color: int, vertex: str, timeout: float) -> None:
        self.player.play(color, self.player.board.geometry.from_gtp(vertex))

    def genmove(self, color: int, timeout: float) -> str:
        move = self.player.genmove(color)
        return move if isinstance(move, str) else self.player.board.geometry.to_gtp(move).lower()

    def broken(self, err: Exception) -> str | None:
        return None

    def close(self, stop: Stop | None = None) -> None:
        pass


def colours(cfg: MatchConfig, index: int, a, b) -> dict[int, object]:
    """Who plays Black and White in game `index`: A Black in even games when colours alternate."""
    a_black = not cfg.alternate or index % 2 == 0
    return {BLACK: a if a_black else b, WHITE: b if a_black else a}


class Game:
    """One game between two engines (`ProcessEngine` / `InProcessEngine`): the board, the
    opening, moves applied and told to the other side, forfeits, resignation, the referee's
    count and the results record.  `gojax match` plays it move by move (`play_game`); the arena
    plays many at once, its in-process engines' moves searched together (gojax/arena.py)."""

    def __init__(self, cfg: MatchConfig, index: int, names: dict[int, str], commands: dict[int, str],
                 players: dict | None = None):
        """`players`: colour -> an in-process `Player`; the other colours start `commands`."""
        self.index, self.names, self.commands = index, names, commands
        self.engines = {c: InProcessEngine(commands[c], p) for c, p in (players or {}).items()}
        self.board = Board(cfg.size, cfg.komi)
        self.max_moves = cfg.max_moves or 3 * cfg.size * cfg.size
        self.winner, self.reason, self.ended = None, None, "score"  # ended: or "resign", "forfeit"
        self.opening = opening_for(cfg, index)
        self.think = {BLACK: 0.0, WHITE: 0.0}  # seconds, and moves, per colour
        self.moves = {BLACK: 0, WHITE: 0}

    def start(self, cfg: MatchConfig, stop: Stop | None = None) -> None:
        """Start the process engines (EngineFailure if one cannot get ready) and play the
        opening's moves on every side (an engine that rejects one forfeits)."""
        for color in (BLACK, WHITE):
            if color not in self.engines:
                self.engines[color] = ProcessEngine(self.commands[color],
                                                    start_engine(self.commands[color], cfg.size, cfg.komi, stop))
        if self.opening is None:
            return
        for color, point in load_opening(self.opening, cfg.size, cfg.opening_moves):
            self.board.play(point, color)
            vertex = self.board.geometry.to_gtp(point)
            for c in (BLACK, WHITE):
                try:
                    self.engines[c].play(color, vertex, cfg.move_timeout)
                except GtpEngineError as err:
                    self.forfeit(c, f"rejected opening move {vertex}: {err}")
                    return

    def close(self, stop: Stop | None = None) -> None:
        for engine in self.engines.values():
            engine.close(stop)

    @property
    def over(self) -> bool:
        return self.reason is not None or self.board.game_over or len(self.board.moves) >= self.max_moves

    def external_to_move(self) -> bool:
        return self.engines[self.board.to_play].external

    def forfeit(self, color: int, why: str) -> None:
        self.winner, self.reason, self.ended = opponent(color), f"{_NAMES[color]} forfeits: {why}", "forfeit"

    def ask(self, timeout: float):
        """The engine to move: genmove, (reply, seconds) or (GtpEngineError, seconds)."""
        t0 = time.perf_counter()
        try:
            reply = self.engines[self.board.to_play].genmove(self.board.to_play, timeout)
        except GtpEngineError as err:
            return err, time.perf_counter() - t0
        return reply, time.perf_counter() - t0

    def answer(self, reply, seconds: float, cfg: MatchConfig, stop: Stop | None = None) -> None:
        """Apply the reply to a genmove (`ask`, or the arena's search): a failure forfeits (or
        stops the run: an engine broken before its first move, EngineFailure; a ^C, MatchStopped),
        a resignation ends the game, a move is played and told to the other side."""
        color = self.board.to_play
        if isinstance(reply, GtpEngineError):
            if stop is not None and stop.is_set():
                raise MatchStopped(self.index)
            why = self.engines[color].broken(reply) if self.moves[color] == 0 else None
            if why:
                raise EngineFailure(why)
            self.forfeit(color, str(reply))
            return
        self.think[color] += seconds
        self.moves[color] += 1
        if reply == "resign":
            self.winner, self.reason, self.ended = opponent(color), f"{_NAMES[color]} resigns", "resign"
            return
        try:
            point = self.board.geometry.from_gtp(reply)
            self.board.play(point, color)  # an illegal move leaves the board as it was
        except (CoordinateError, IllegalMove) as err:
            self.forfeit(color, f"illegal move {reply!r} ({err})")
            return
        try:
            self.engines[opponent(color)].play(color, self.board.geometry.to_gtp(point), cfg.move_timeout)
        except GtpEngineError as err:
            self.forfeit(opponent(color), str(err))

    def record(self, cfg: MatchConfig, stop: Stop | None = None) -> dict:
        """Count a game that ended on the board (the referee), write its SGF; its results.jsonl
        record.  MatchStopped after a ^C, EngineFailure if the referee fails."""
        if stop is not None and stop.is_set():  # an engine may have died of the same ^C
            raise MatchStopped(self.index)
        score = None
        if self.reason is None:
            try:
                score = referee_score(cfg, self.board, stop)
            except GtpEngineError as err:
                if stop is not None and stop.is_set():  # the referee was killed by the ^C
                    raise MatchStopped(self.index) from None
                raise EngineFailure(f"the referee {cfg.gnugo!r} failed to score game {self.index}: {err}") from None
            self.winner, self.reason = counted(score, self.board, self.max_moves)
        names = self.names
        record = {"game": self.index, "black": names[BLACK], "white": names[WHITE], "size": cfg.size,
                  "komi": cfg.komi, "commands": {names[c]: self.commands[c] for c in (BLACK, WHITE)}}
        if self.opening is not None:
            record["opening"] = self.opening
        record.update(finish_game(cfg, self.index, self.board, names, self.winner, self.reason, self.ended, score,
                                  {names[c]: self.think[c] / max(self.moves[c], 1) for c in (BLACK, WHITE)}))
        return record


def play_game(cfg: MatchConfig, index: int, log=sys.stderr, stop: Stop | None = None) -> dict:
    """One game between two engine processes; returns its result record (also the SGF).
    `stop`: when it fires, the game is abandoned (raises MatchStopped; engines closed, nothing
    written)."""
    commands = colours(cfg, index, cfg.engine_a, cfg.engine_b)
    if cfg.vary_seeds:
        commands = {c: seeded(cmd, index) for c, cmd in commands.items()}
    game = Game(cfg, index, colours(cfg, index, cfg.name_a, cfg.name_b), commands)
    try:
        game.start(cfg, stop)
        while not game.over:
            if stop is not None and stop.is_set():
                raise MatchStopped(index)
            game.answer(*game.ask(cfg.move_timeout), cfg, stop)
        return game.record(cfg, stop)
    finally:
        game.close(stop)


def counted(score: float, board: Board, max_moves: int) -> tuple[int | None, str]:
    """(winner, reason) of a game decided by the referee's count (Black's margin `score`)."""
    winner = BLACK if score > 0 else WHITE if score < 0 else None
    reason = f"score {'B' if score > 0 else 'W'}+{abs(score):g}" if score else "jigo"
    if len(board.moves) >= max_moves and not board.game_over:
        reason += f" (stopped at {max_moves} moves)"
    return winner, reason


def finish_game(cfg: MatchConfig, index: int, board: Board, names: dict[int, str], winner: int | None,
                reason: str | None, ended: str, score: float | None, sec_per_move: dict[str, float]) -> dict:
    """Write game `index`'s SGF; returns the rest of its results.jsonl record (who won, how, where)."""
    forfeit = ended == "forfeit"
    result = "0" if winner is None else (("B" if winner == BLACK else "W") + "+" +
                                          ("R" if ended == "resign" else "F" if forfeit else f"{abs(score):g}"))
    sgf_path = os.path.join(cfg.out, "games", f"game{index:04d}.sgf")
    os.makedirs(os.path.dirname(sgf_path), exist_ok=True)
    with open(sgf_path, "wb") as f:
        f.write(board_to_sgf(board, result=result, black=names[BLACK], white=names[WHITE],
                             extra={"GC": reason or ""}))
    return {"winner": None if winner is None else names[winner],
            "winner_color": None if winner is None else _NAMES[winner],
            "result": result, "reason": reason, "ended_by": ended, "forfeit": forfeit, "moves": len(board.moves),
            "sgf": os.path.relpath(sgf_path, cfg.out), "sec_per_move": sec_per_move}


def referee_score(cfg: MatchConfig, board: Board, stop: Stop | None = None) -> float:
    """Black's margin (komi included) of the final position, by the configured referee."""
    if cfg.referee == "gnugo":
        try:
            ref = GtpClient(_find_gnugo(cfg.gnugo), stderr="keep")
        except OSError as err:
            raise EngineFailure(f"cannot start the referee {cfg.gnugo!r}: {err.strerror or err}") from None
        with ref:
            if stop is not None:
                stop.track(ref)
            ref.send(f"boardsize {board.size}")
            ref.send("clear_board")
            ref.send(f"komi {board.komi}")
            for color, p in board.moves:
                ref.send(f"play {_NAMES[color]} {board.geometry.to_gtp(p)}")
            text = ref.send("final_score", timeout=300)
            if stop is not None:
                stop.forget(ref)
        if text in ("0", "Jigo"):
            return 0.0
        sign = 1 if text[0].upper() == "B" else -1
        return sign * float(text[2:])
    from gojax.player import Player, PlayerOptions
    player = Player(board.size, board.komi, options=PlayerOptions(verbose=False))
    player.load(board.copy(), {})
    return player.final_score()


def is_forfeit(record: dict) -> bool:
    """A game lost by a crash, a timeout or an illegal move (records from before `ended_by`
    said so only in their reason's words)."""
    if "ended_by" in record:
        return record["ended_by"] == "forfeit"
    reason = record.get("reason") or ""
    return "forfeit" in reason or "failed to start" in reason


SMALL_SAMPLE = 30  # fewer games than this: the summary says the figure is rough


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate: honest at small n and at 0 or n wins, where
    the normal interval (p +- 1.96 standard errors) shrinks to a point."""
    if n == 0:
        return float("nan"), float("nan")
    p, z2 = wins / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def elo(p: float) -> float:
    """The Elo difference of a win rate p (+-inf at 1 and 0)."""
    if math.isnan(p):
        return p
    if p <= 0 or p >= 1:
        return math.copysign(math.inf, p - 0.5)
    return -400 * math.log10(1 / p - 1)


def summarize(records: list[dict], a: str, b: str) -> dict:
    """Wins, win rate (standard error and 95% Wilson interval) and Elo of engine `a` over the
    games decided on the board (resignation or count); forfeits are counted apart, per engine
    that forfeited."""
    forfeits = {name: 0 for name in (a, b)}
    for r in records:
        if is_forfeit(r) and r.get("winner") in forfeits:
            forfeits[b if r["winner"] == a else a] += 1
    records = [r for r in records if not is_forfeit(r)]
    n = len(records)
    wins_a = sum(r["winner"] == a for r in records) + 0.5 * sum(r["winner"] is None for r in records)
    p = wins_a / n if n else float("nan")
    se = math.sqrt(p * (1 - p) / n) if n else float("nan")
    lo, hi = wilson(wins_a, n)
    per_colour = {}
    for name in (a, b):
        for col in ("black", "white"):
            games = [r for r in records if r[col] == name]
            per_colour[f"{name} as {col}"] = (sum(r["winner"] == name for r in games), len(games))
    times = {}
    for name in (a, b):
        vals = [r["sec_per_move"][name] for r in records if name in r.get("sec_per_move", {})]
        times[name] = sum(vals) / len(vals) if vals else float("nan")
    return {"games": n, "wins": {a: wins_a, b: n - wins_a}, "win_rate": p, "stderr": se,
            "win_rate_95": (lo, hi), "elo": elo(p), "elo_95": (elo(lo), elo(hi)),
            "per_colour": per_colour, "sec_per_move": times, "forfeits": forfeits}


def json_safe(obj):
    """`obj` with every NaN or infinite float as None: strict JSON (an unbounded Elo is null)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def format_summary(s: dict, a: str, b: str) -> str:
    lo, hi = s["win_rate_95"]
    elo_lo, elo_hi = s["elo_95"]
    lines = [f"{s['games']} games decided on the board: {a} {s['wins'][a]:g} - {s['wins'][b]:g} {b}",
             f"  {a} win rate {s['win_rate']:.3f}, 95% interval {lo:.3f} .. {hi:.3f} (Wilson)",
             f"  Elo difference {s['elo']:+.0f} (95% interval {elo_lo:+.0f} .. {elo_hi:+.0f})"]
    if s["games"] < SMALL_SAMPLE:
        lines.append(f"  {s['games']} games are too few for a figure: the interval is wide (100 games narrow a"
                     " win rate near 50% to about +- 0.10)")
    lines += ["  " + ", ".join(f"{k}: {w}/{n}" for k, (w, n) in s["per_colour"].items()),
              "  mean seconds per move: " + ", ".join(f"{k} {v:.2f}" for k, v in s["sec_per_move"].items()),
              "  forfeits (not counted above): " + ", ".join(f"{k} {v}" for k, v in s["forfeits"].items())]
    return "\n".join(lines)


def _from_process_0(records: list[dict]) -> list[dict]:
    """Process 0's `records`, in every process (jax.distributed; the first collective, which
    also meets the processes before any game)."""
    from gojax.runtime import gather_bytes
    return json.loads(gather_bytes(json.dumps(records).encode())[0])


def _shared_games(cfg: MatchConfig, todo: list[int], jobs: int, processes: int, me: int, log):
    """The records of games `todo`, round by round, in every process: round r's `processes` x
    `jobs` games (in todo's order) split over the processes, game k of the round played by
    process k mod N (`jobs` at a time), then the round's records all-gathered (jax.distributed).
    A process that dies stops them all; the same commands resume from OUT."""
    from gojax.runtime import gather_bytes
    per_round = processes * jobs
    for start in range(0, len(todo), per_round):
        mine = todo[start:start + per_round][me::processes]
        if jobs > 1 and len(mine) > 1:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(jobs) as pool:
                records = list(pool.map(lambda i: play_game(cfg, i, log), mine))
        else:
            records = [play_game(cfg, i, log) for i in mine]
        gathered = [r for data in gather_bytes(json.dumps(records).encode()) for r in json.loads(data)]
        yield from sorted(gathered, key=lambda r: r["game"])


def run_match(cfg: MatchConfig, progress: bool = True, log=sys.stderr, jobs: int = 1,
              processes: tuple[int, int] = (1, 0)) -> dict:
    """Play the games not yet in OUT/results.jsonl (`jobs` at a time) and summarise them all.
    `processes` (N, I): this is process I of N started with jax.distributed, each given the same
    OUT on a shared file system: each round of N x jobs games is split over the processes, its
    records gathered, and process 0 writes them (`_shared_games`)."""
    for opening in cfg.openings:  # fail before the first game, not in the middle of the run
        load_opening(opening, cfg.size, cfg.opening_moves)
    n_processes, me = processes
    writer = me == 0
    path = os.path.join(cfg.out, "results.jsonl")
    done = load_results(path)
    if n_processes > 1:  # every process starts from process 0's records (it may be rewriting the file)
        done = _from_process_0(done)
    check_resume(cfg, done)
    made = make_folder(cfg.out) if writer else []
    if os.path.exists(path) and writer:
        # Drop a line cut short by a kill, so that new records start on a line of their own.
        with open(path + ".tmp", "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in done)
        os.replace(path + ".tmp", path)
    finished = {r["game"] for r in done}
    if done and writer:
        print(f"[match] resuming: {len(done)} of {cfg.games} games already in {path}", file=log)
    from tqdm import tqdm
    bar = tqdm(total=cfg.games, initial=len(finished & set(range(cfg.games))), desc="match", file=log,
               disable=not progress or not writer)
    todo = [i for i in range(cfg.games) if i not in finished]

    def record(rec):
        if writer:
            if cfg.force or not os.path.exists(os.path.join(cfg.out, "match.json")):
                write_card(cfg)
            with open(path, "a") as f:
                f.write(json.dumps(rec) + "\n")
                f.flush()
                os.fsync(f.fileno())
        done.append(rec)
        s = summarize([r for r in done if r["game"] < cfg.games], cfg.name_a, cfg.name_b)
        bar.set_postfix_str(f"{cfg.name_a} {s['wins'][cfg.name_a]:g}-{s['wins'][cfg.name_b]:g}")
        bar.update(1)

    try:
        if n_processes > 1:
            for rec in _shared_games(cfg, todo, jobs, n_processes, me, log):
                record(rec)
        elif jobs <= 1:
            try:
                for i in todo:
                    record(play_game(cfg, i, log))
            except KeyboardInterrupt:  # the game in flight is lost; every finished one is saved
                print(f"[match] interrupted: {len(done)} games in {path}; the same command resumes", file=log)
                raise
        else:  # games wait on engine processes, so threads are enough to run them side by side
            from concurrent.futures import ThreadPoolExecutor, as_completed
            stop = Stop()
            pool = ThreadPoolExecutor(jobs)
            try:
                for fut in as_completed([pool.submit(play_game, cfg, i, log, stop) for i in todo]):
                    record(fut.result())
            except EngineFailure:
                stop.fire()  # the other games in flight are abandoned; finished ones are saved
                raise
            except KeyboardInterrupt:
                # Stop at once: the engines and referees in flight are killed and their games
                # abandoned (nothing half-done is written); finished games are all in results.jsonl.
                stop.fire()
                print(f"[match] interrupted: {len(done)} games in {path}; the same command resumes", file=log)
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    except BaseException:
        if not done:  # a run that saved nothing leaves no folder behind
            remove_if_empty(made)
        raise
    bar.close()
    return summarize([r for r in done if r["game"] < cfg.games], cfg.name_a, cfg.name_b)
