"""`gojax analysis`: KataGo's JSON analysis protocol (its docs/Analysis_Engine.md) on stdin/stdout.

One query per line in, one response per analysed turn out, each a single JSON line:

    {"id":"q1","moves":[["B","E5"],["W","C3"]],"rules":"chinese","komi":7.5,"boardXSize":9,
     "boardYSize":9,"analyzeTurns":[1,2],"maxVisits":800,"includeOwnership":true}

Responses carry KataGo's field names and units: moveInfos (move, visits, winrate, scoreLead,
prior, lcb, utility, order, pv; ownership with includeMovesOwnership), rootInfo (winrate,
scoreLead, utility, visits, currentPlayer), ownership (row-major from the top-left point, e.g.
A9) and policy (the same order, pass last, -1 where illegal).  Values are from the side to
move's point of view unless reportAnalysisWinratesAs (the engine's --report-as, or a query's
overrideSettings) says BLACK or WHITE.  `prior` is the move's share of the heuristic prior over
the legal moves (search/priors.py: not a neural network's policy).  scoreLead is the mean final
score (area, komi included) of the playouts: at the root those of this search, per move those
through the move's node (the root's where the move has none).

Honoured: maxVisits (playouts, met exactly), overrideSettings'
maxVisits, maxTime and reportAnalysisWinratesAs (other settings are named once in a warning),
avoidMoves and allowMoves (at the root), priority (highest first), reportDuringSearchEvery.
Actions: query_version, terminate (queued turns of that id answer noResults), clear_cache.
A bad query gets {"error": ..., "field": ..., "id": ...} and the engine goes on.  The turns
queued when a search starts (up to `--batch`) are searched together, one device call per round
for all of them (search/forest.py); a turn with reportDuringSearchEvery is searched alone.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import queue
import sys
import threading
import time
from typing import IO

import numpy as np

from gojax import __version__, report
from gojax.judge import RULE_NAMES
from gojax.kernels.geometry import BLACK, MAX_SIZE, MIN_SIZE, WHITE, CoordinateError, Geometry
from gojax.kernels.host import Board, IllegalMove
from gojax.search.forest import Forest
from gojax.search.mcts import Search, SearchResult
from gojax.search.params import SearchParams

READY = "Started, ready to begin handling requests"  # KataGo's line on stderr that clients wait for
_PLAYERS = {"B": BLACK, "W": WHITE, "b": BLACK, "w": WHITE}
REPORT_AS = ("SIDETOMOVE", "BLACK", "WHITE")
OVERRIDES_APPLIED = {"maxVisits", "maxTime", "reportAnalysisWinratesAs"}  # overrideSettings gojax honours


class QueryError(ValueError):
    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _board_for(query: dict) -> tuple[Geometry, list[Board], list[str]]:
    """The positions of the query's game, turn 0 (before moves[0]) to the last; warnings."""
    x, y = query.get("boardXSize"), query.get("boardYSize")
    for name, v in (("boardXSize", x), ("boardYSize", y)):
        if not isinstance(v, int) or not MIN_SIZE <= v <= MAX_SIZE:
            raise QueryError(f"{name} must be an integer {MIN_SIZE}..{MAX_SIZE}", name)
    if x != y:
        raise QueryError("only square boards are supported", "boardYSize")
    komi = query.get("komi", 7.5)
    if not isinstance(komi, (int, float)) or not -150 <= komi <= 150 or (2 * komi) % 1:
        raise QueryError("komi must be an integer or half-integer in [-150, 150]", "komi")
    board = Board(x, float(komi))
    g = board.geometry
    warnings = []
    stones = query.get("initialStones", [])
    placed = {BLACK: [], WHITE: []}
    for entry in _pairs(stones, "initialStones"):
        color, point = _move(g, entry, "initialStones")
        if point is None:
            raise QueryError("initialStones cannot hold a pass", "initialStones")
        placed[color].append(point)
    for color in (BLACK, WHITE):
        if placed[color]:
            try:
                board.place(placed[color], color)
            except (IllegalMove, ValueError) as err:
                raise QueryError(f"bad initialStones: {err}", "initialStones") from None
    moves = [_move(g, entry, "moves") for entry in _pairs(query.get("moves"), "moves")]
    if "initialPlayer" in query:
        if query["initialPlayer"] not in _PLAYERS:
            raise QueryError("initialPlayer must be B or W", "initialPlayer")
        board.to_play = _PLAYERS[query["initialPlayer"]]
    elif moves:
        board.to_play = moves[0][0]
    positions = [board.copy()]
    for i, (color, point) in enumerate(moves):
        try:
            waived = board.play_recorded(point, color)
        except IllegalMove as err:
            raise QueryError(f"illegal move {i + 1} ({g.to_gtp(point)}): {err}", "moves") from None
        if waived:
            warnings.append((f"move {i + 1} ({g.to_gtp(point)}): {waived}; played as the game's own rules allowed",
                             "moves"))
        positions.append(board.copy())
    return g, positions, warnings


def _pairs(value, field: str) -> list:
    if value is None:
        raise QueryError(f"{field} is required", field)
    if not isinstance(value, list) or not all(isinstance(e, list) and len(e) == 2 for e in value):
        raise QueryError(f"{field} must be a list of [player, location] pairs", field)
    return value


def _move(g: Geometry, entry: list, field: str) -> tuple[int, int | None]:
    player, vertex = entry
    if player not in _PLAYERS:
        raise QueryError(f"player must be B or W, got {player!r}", field)
    try:
        return _PLAYERS[player], g.from_gtp(str(vertex))
    except CoordinateError as err:
        raise QueryError(f"bad location {vertex!r}: {err}", field) from None


def _entries(query: dict, kind: str) -> list[dict]:
    value = query.get(kind, [])
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise QueryError(f"{kind} must be a list of {{player, moves, untilDepth}} objects", kind)
    return value


def _limit(g: Geometry, entry: dict, kind: str, warnings: list, named: set) -> tuple[int, np.ndarray, bool]:
    """One avoidMoves / allowMoves entry: (player, bool [P + 1] of its moves, pass last; avoid?)."""
    if entry.get("player") not in _PLAYERS:
        raise QueryError(f"{kind}: player must be B or W", kind)
    moves, depth = entry.get("moves"), entry.get("untilDepth")
    if not isinstance(moves, list):
        raise QueryError(f"{kind}: moves must be a list of locations", kind)
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
        raise QueryError(f"{kind}: untilDepth must be a positive integer", kind)
    if depth > 1 and kind not in named:
        named.add(kind)
        warnings.append((f"{kind} with untilDepth {depth}: gojax restricts the root's moves only", kind))
    mask = np.zeros(g.num_points + 1, bool)
    for vertex in moves:
        try:
            point = g.from_gtp(str(vertex))
        except CoordinateError as err:
            raise QueryError(f"{kind}: bad location {vertex!r}: {err}", kind) from None
        mask[g.num_points if point is None else point] = True
    return _PLAYERS[entry["player"]], mask, kind == "avoidMoves"


def _prepare(search: Search, item: dict) -> None:
    """A turn's root limits (avoidMoves, allowMoves) and per-move ownership, before it searches."""
    if item.get("allowed") is not None:
        search.restrict_root(item["allowed"])
    if item.get("moves_ownership"):
        search.track_move_ownership()


def _top_left_rows(values: np.ndarray, size: int) -> list[float]:
    """[P] in gojax's order (row 1 first) -> KataGo's (the top row first), as JSON numbers."""
    return [float(v) for v in report.top_rows_first(values, size)]


class AnalysisEngine:
    def __init__(self, params: SearchParams = SearchParams(), max_visits: int = 500, report_as: str = "SIDETOMOVE",
                 log: IO = sys.stderr, batch: int = 64, max_time: float | None = None):
        """`batch`: at most this many queued turns are searched together (search/forest.py);
        `max_visits`, `report_as`, `max_time` (seconds per turn, None: no limit): a query's
        defaults, which its overrideSettings replace."""
        self.params = params
        self.max_visits = max_visits
        self.report_as = report_as
        self.max_time = max_time
        self.log = log
        self.terminated: set[str] = set()
        self.batch = batch
        self._named: set[str] = set()  # unsupported settings already warned about

    # --- one query ------------------------------------------------------------------------------
    def parse(self, line: str) -> tuple[list[dict], list[dict]]:
        """Check a query line: (work items, one per turn; warning responses), or QueryError."""
        try:
            query = json.loads(line)
        except json.JSONDecodeError as err:
            raise QueryError(f"could not parse json: {err}") from None
        if not isinstance(query, dict):
            raise QueryError("a query must be a JSON object")
        if not isinstance(query.get("id"), str):
            raise QueryError("id (a string) is required", "id")
        g, positions, warnings = _board_for(query)
        turns = query.get("analyzeTurns", [len(positions) - 1])
        if not isinstance(turns, list) or not all(isinstance(t, int) and 0 <= t < len(positions) for t in turns):
            raise QueryError(f"analyzeTurns must list turns 0..{len(positions) - 1}", "analyzeTurns")
        settings = query.get("overrideSettings", {})
        if not isinstance(settings, dict):
            raise QueryError("overrideSettings must be a JSON object", "overrideSettings")
        visits = settings.get("maxVisits", query.get("maxVisits", self.max_visits))
        if not isinstance(visits, int) or isinstance(visits, bool) or visits < 1:
            raise QueryError("maxVisits must be a positive integer", "maxVisits")
        report_as = settings.get("reportAnalysisWinratesAs", self.report_as)
        if report_as not in REPORT_AS:
            raise QueryError(f"reportAnalysisWinratesAs must be one of {', '.join(REPORT_AS)}", "overrideSettings")
        max_time = settings.get("maxTime", self.max_time)
        if max_time is not None and (not isinstance(max_time, (int, float)) or max_time <= 0):
            raise QueryError("maxTime must be a positive number of seconds", "overrideSettings")
        for key in sorted(set(settings) - OVERRIDES_APPLIED - self._named):
            self._named.add(key)  # named once per engine: clients send the same settings every query
            warnings.append((f"overrideSettings.{key} is not supported by gojax; ignored", "overrideSettings"))
        priority = query.get("priority", 0)
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise QueryError("priority must be an integer", "priority")
        rules = query.get("rules", "chinese")
        if not isinstance(rules, str) or rules.lower() not in RULE_NAMES:
            warnings.append((f"rules {rules!r}: gojax counts by area (chinese); using chinese", "rules"))
            rules = "chinese"
        every = query.get("reportDuringSearchEvery")
        if every is not None and (not isinstance(every, (int, float)) or every <= 0):
            raise QueryError("reportDuringSearchEvery must be a positive number of seconds", "reportDuringSearchEvery")
        limits = [_limit(g, entry, kind, warnings, self._named) for kind in ("avoidMoves", "allowMoves")
                  for entry in _entries(query, kind)]
        items = []
        for t in turns:
            to_play = positions[t].to_play
            allowed = None
            for color, mask, avoid in limits:
                if color == to_play:
                    allowed = (np.ones(g.num_points + 1, bool) if allowed is None else allowed) & (~mask if avoid else mask)
            items.append({"id": query["id"], "turn": t, "board": positions[t], "visits": visits,
                          "rules": RULE_NAMES[rules.lower()], "ownership": bool(query.get("includeOwnership")),
                          "moves_ownership": bool(query.get("includeMovesOwnership")),
                          "policy": bool(query.get("includePolicy")), "every": every, "report_as": report_as,
                          "max_time": max_time, "allowed": allowed, "priority": priority})
        return items, [{"warning": w, "field": field, "id": query["id"]} for w, field in warnings]

    def analyse_batch(self, items: list[dict], emit) -> None:
        """Queued turns of one board size, rules and time limit share a forest (one device call
        per round); a turn that reports during its search is searched alone."""
        groups: dict = {}
        for item in items:
            if item["every"]:
                self.analyse(item, emit)
            else:
                groups.setdefault((item["board"].size, item["rules"], item["max_time"]), []).append(item)
        for (_, rules, max_time), group in groups.items():
            params = dataclasses.replace(self.params, rules=rules)
            forest = Forest([item["board"] for item in group], params)
            for item, search in zip(group, forest.searches):
                _prepare(search, item)
            results = forest.run([item["visits"] for item in group], stop_early=False, seconds=max_time, exact=True)
            for item, search, r in zip(group, forest.searches, results):
                emit(self.response(item, item["board"], search, r, during=False))

    def analyse(self, item: dict, emit) -> None:
        """Search one turn and emit its response (and partial ones with reportDuringSearchEvery)."""
        board: Board = item["board"]
        params = dataclasses.replace(self.params, rules=item["rules"])
        search = Search(board, params)
        _prepare(search, item)
        deadline = None if item["max_time"] is None else time.perf_counter() + item["max_time"]
        done = 0
        while True:
            chunk = item["visits"] - done
            seconds = item["every"]
            if deadline is not None:
                seconds = min(seconds or math.inf, max(deadline - time.perf_counter(), 1e-3))
            result = search.run(simulations=chunk, seconds=seconds, stop_early=False, exact=True)
            done += result.simulations
            if done >= item["visits"] or not item["every"] or item["id"] in self.terminated or \
                    (deadline is not None and time.perf_counter() >= deadline):
                result.simulations = done
                emit(self.response(item, board, search, result, during=False))
                return
            emit(self.response(item, board, search, result, during=True))

    def response(self, item: dict, board: Board, search: Search, r: SearchResult, during: bool) -> dict:
        g = board.geometry
        report_as = item.get("report_as", self.report_as)
        flip = {"SIDETOMOVE": False, "BLACK": board.to_play == WHITE, "WHITE": board.to_play == BLACK}[report_as]
        view = (lambda q: 1.0 - q) if flip else (lambda q: q)
        sign = -1.0 if (board.to_play == WHITE) != flip else 1.0  # ownership: +1 for the side reported
        black_lead = float(np.sum(r.ownership)) - board.komi  # mean area count of the playouts, Black's view
        lead = black_lead if (board.to_play == BLACK) != flip else -black_lead
        infos = []
        for line in report.move_lines(r):
            line = line.flipped() if flip else line
            action = search.tree.pass_action if line.move is None else line.move
            info = {"move": g.to_gtp(line.move), "visits": line.visits, "winrate": line.winrate,
                    "scoreLead": lead if math.isnan(line.score_lead) else line.score_lead, "lcb": line.lcb,
                    "utility": 2 * line.winrate - 1, "prior": line.prior, "order": line.order,
                    "pv": [g.to_gtp(p) for p in search.variation(action, 12)]}
            owned = search.owned_after(action) if item.get("moves_ownership") else None
            if owned is not None:
                info["ownership"] = _top_left_rows(sign * owned, board.size)
            infos.append(info)
        visits = sum(int(m.visits) for m in r.moves)
        root_q = sum(m.visits * (m.q if not math.isnan(m.q) else 0.0) for m in r.moves) / max(visits, 1)
        out = {"id": item["id"], "turnNumber": item["turn"], "isDuringSearch": during, "moveInfos": infos,
               "rootInfo": {"winrate": view(root_q), "scoreLead": lead, "utility": 2 * view(root_q) - 1,
                            "visits": visits, "thisHash": f"{int(board.hash):016X}",
                            "currentPlayer": "B" if board.to_play == BLACK else "W"}}
        if item["ownership"]:
            out["ownership"] = _top_left_rows(sign * np.asarray(r.ownership), board.size)
        if item["policy"]:
            prior = np.full(board.size * board.size + 1, -1.0)
            for move, share in report.prior_shares(r):
                prior[board.size * board.size if move is None else move] = share
            out["policy"] = _top_left_rows(prior[:-1], board.size) + [float(prior[-1])]
        return out

    # --- the protocol loop ------------------------------------------------------------------------
    def serve(self, inp: IO, out: IO) -> None:
        """Read queries until stdin closes and answer them, the highest `priority` first (then in
        order of arrival); then finish the queue and return."""
        work: queue.PriorityQueue = queue.PriorityQueue()  # (-priority, arrival, item); None last
        arrival = itertools.count()
        lock = threading.Lock()

        def emit(obj: dict) -> None:
            with lock:
                out.write(json.dumps(obj) + "\n")
                out.flush()

        def worker():
            stop = False
            while not stop:
                batch = [work.get()[2]]
                while len(batch) < self.batch and not work.empty():  # whatever else is queued now
                    batch.append(work.get()[2])
                if None in batch:
                    stop = True
                    batch = [item for item in batch if item is not None]
                live = []
                for item in batch:
                    if item["id"] in self.terminated:
                        emit({"id": item["id"], "turnNumber": item["turn"], "isDuringSearch": False,
                              "noResults": True})
                    else:
                        live.append(item)
                try:
                    self.analyse_batch(live, emit)
                except Exception as err:  # one failed search must not stop the engine
                    for item in live:
                        emit({"error": f"internal error: {err}", "id": item["id"]})

        thread = threading.Thread(target=worker, daemon=True)
        thread.start()
        print(READY, file=self.log, flush=True)
        for line in inp:
            if not line.strip():
                continue
            try:
                action = self._action(line)
                if action is not None:
                    emit(action)
                    continue
                items, warnings = self.parse(line)
            except QueryError as err:
                reply = {"error": str(err)}
                if err.field:
                    reply["field"] = err.field
                try:
                    qid = json.loads(line).get("id")
                except (json.JSONDecodeError, AttributeError):
                    qid = None
                if isinstance(qid, str):
                    reply["id"] = qid
                emit(reply)
                continue
            for w in warnings:
                emit(w)
            self.terminated.discard(items[0]["id"])  # an id used again is a new query
            for item in items:
                work.put((-item["priority"], next(arrival), item))
        work.put((math.inf, next(arrival), None))
        thread.join()

    def _action(self, line: str) -> dict | None:
        try:
            query = json.loads(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(query, dict) or "action" not in query:
            return None
        action = query["action"]
        if action == "query_version":
            return {**query, "version": __version__, "git_hash": "<omitted>"}
        if action == "terminate":
            if not isinstance(query.get("terminateId"), str):
                raise QueryError("terminateId (a string) is required", "terminateId")
            self.terminated.add(query["terminateId"])
            return query
        if action == "clear_cache":
            return query  # gojax keeps no evaluation cache between queries
        raise QueryError(f"unknown action {action!r}", "action")
