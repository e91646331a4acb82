"""Would another search setting have avoided gojax's costly moves?  Its worst moves of reviewed
games searched again, every answer judged by KataGo.

    python bench/costly_moves.py FOLDER --review REVIEW.jsonl --who ENGINE [--min-cost 4] [--last 100]
        [--simulations 2000] [--seeds 2] [--set FIELD=VALUE ...] --out OUT.jsonl
    python bench/costly_moves.py --summary OUT.jsonl

REVIEW is bench/game_review.py's JSONL for the match FOLDER: KataGo's score lead before every
move.  The cases are the positions before each move of ENGINE that cost it `--min-cost` points or
more while the game was contested (Black's win rate 10-90%) and before move `--last`.  Each is
searched `--seeds` times by gojax (`gojax.Search`, the default settings for the board size with
the `--set` fields over them), and each move it answers is judged the way the review judged the
game's: KataGo's lead for the mover before the move less its lead after, at `--visits` visits
(1: the network alone; the answers' positions are asked once each and cached in OUT).

The cases were chosen because the game's search chose badly there, so a search run again, even
with the same settings, mostly does better (regression to the mean): compare settings with each
other on the same cases, the default settings run again among them, never with the game's cost.
One row per search is appended to OUT; a rerun skips the searches OUT holds.  `--summary` prints,
per setting, the mean cost, the share of answers costing under 1 point, and the share that
repeat the game's move, over the cases every setting in OUT has searched, and each setting's
mean cost less the defaults' with a 95% interval, case by case.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from tqdm import tqdm

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.game_review import CONTESTED, costs, judge  # noqa: E402
from bench.oracle_positions import parse_settings  # noqa: E402
from bench.resign_review import game_moves  # noqa: E402


def cases(review: list[dict], who: str, min_cost: float, last: int) -> list[dict]:
    """The positions before `who`'s moves that cost `min_cost` points or more while contested,
    before move `last`: {"game", "ply", "colour", "played", "cost", "lead"} (lead: Black's
    before the move), game by game in ply order."""
    out = []
    for row in review:
        for t, engine, cost in costs(row, contested=True):
            if engine == who and cost >= min_cost and t < last:
                out.append({"game": row["game"], "ply": t, "colour": row["colours"][t],
                            "played": row["moves_played"][t], "cost": round(cost, 2), "lead": row["lead"][t]})
    return out


def answer_cost(case: dict, lead_after: float) -> float:
    """Points an answer cost its player: the mover's lead before it less the mover's lead after
    (both Black's leads, KataGo's)."""
    sign = 1 if case["colour"] == "B" else -1
    return round(sign * (case["lead"] - lead_after), 2)


def settings_key(settings: dict) -> str:
    return json.dumps(settings, sort_keys=True)


def paired_difference(held: dict, base: dict, common: set) -> tuple[float, float, float]:
    """(low, mean, high): a setting's mean cost less the defaults', case by case (each case's
    searches averaged first, so the seeds of a case are not counted as independent), with a 95%
    interval from the spread of the per-case differences (normal approximation)."""
    per: dict[tuple, list[float]] = {}
    for k in common:
        per.setdefault(k[:2], []).append(held[k]["cost"] - base[k]["cost"])
    diffs = [statistics.mean(d) for d in per.values()]
    mid = statistics.mean(diffs)
    half = 1.96 * statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("inf")
    return mid - half, mid, mid + half


def summary(rows: list[dict]) -> str:
    """The text `--summary` prints (module docstring)."""
    by: dict[str, dict[tuple, dict]] = {}
    for r in rows:
        by.setdefault(settings_key(r["settings"]), {})[(r["game"], r["ply"], r["seed"])] = r
    common = set.intersection(*(set(v) for v in by.values())) if by else set()
    cases_ = {k[:2] for k in common}
    lines = [f"{len(cases_)} cases searched by every setting ({len(common)} searches each)",
             "setting".ljust(44) + "  searches  mean cost  under 1 point  the game's move  vs the defaults"]
    base = by.get("{}")
    for name, held in sorted(by.items()):
        rs = [held[k] for k in sorted(common)]
        if not rs:
            continue
        versus = ""
        if base is not None and name != "{}":
            lo, mid, hi = paired_difference(held, base, common)
            versus = f"{mid:+.2f} ({lo:+.2f} .. {hi:+.2f})"
        lines.append(f"{(name if name != '{}' else 'the defaults'):<44}  {len(rs):>8}  "
                     f"{statistics.mean(r['cost'] for r in rs):>9.2f}  "
                     f"{sum(r['cost'] < 1 for r in rs) / len(rs):>13.2f}  "
                     f"{sum(r['move'] == r['played'] for r in rs) / len(rs):>15.2f}  {versus}")
    if common:
        game_cost = statistics.mean(next(iter(by.values()))[k]["game_cost"] for k in common)
        lines.append(f"(the game's moves there cost {game_cost:.2f} on average)")
    return "\n".join(lines)


class Judge:
    """KataGo's analysis engine, asked Black's score lead after a move; answers cached by
    (game, ply, move) in `cache`."""

    def __init__(self, runner: str, size: int, visits: int, cache: dict):
        self.visits, self.cache = visits, cache
        self.proc = subprocess.Popen([runner, "analysis"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, SIZE=str(size)))

    def lead_after(self, moves: list[list[str]], komi: float, size: int, case: dict, move: str) -> float:
        key = (case["game"], case["ply"], move)
        if key not in self.cache:
            query = {"id": f"{case['game']}:{case['ply']}:{move}", "rules": "chinese", "komi": komi,
                     "boardXSize": size, "boardYSize": size, "maxVisits": self.visits,
                     "moves": moves[:case["ply"]] + [[case["colour"], move]], "analyzeTurns": [case["ply"] + 1]}
            self.cache[key] = judge(self.proc, query)[0][0]
        return self.cache[key]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--summary"]:
        if len(argv) != 2 or not os.path.exists(argv[1]):
            raise SystemExit("usage: costly_moves.py --summary OUT.jsonl (an existing file)")
        with open(argv[1]) as f:
            print(summary([json.loads(line) for line in f if line.strip()]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="the match folder the review judged (results.jsonl and games/)")
    ap.add_argument("--review", required=True, help="bench/game_review.py's JSONL for that folder")
    ap.add_argument("--who", required=True, help="the gojax engine's name in the match")
    ap.add_argument("--min-cost", type=float, default=4.0, help="points a game's move cost (default 4)")
    ap.add_argument("--last", type=int, default=100, help="only moves before this one (default 100)")
    ap.add_argument("--simulations", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=2, help="searches per case (default 2)")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="a SearchParams setting over the board size's defaults (repeatable)")
    ap.add_argument("--visits", type=int, default=1, help="KataGo's visits per judged position (default 1)")
    ap.add_argument("--katago", default="/tmp/katago/run", help="the runner ../shared/tools/katago/setup.sh prints")
    ap.add_argument("--out", required=True, help="JSONL, one row per search, appended")
    args = ap.parse_args(argv)
    settings = parse_settings(args.set)
    with open(args.review) as f:
        review = [json.loads(line) for line in f if line.strip()]
    todo = cases(review, args.who, args.min_cost, args.last)
    if not todo:
        raise SystemExit(f"no move of {args.who!r} in {args.review} cost >= {args.min_cost} points before move "
                         f"{args.last} while contested ({CONTESTED[0]:.0%}-{CONTESTED[1]:.0%})")
    rows = []
    if os.path.exists(args.out):
        with open(args.out) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    cache = {(r["game"], r["ply"], r["move"]): r["lead_after"] for r in rows}
    done = {(r["game"], r["ply"], r["seed"], r["simulations"]) for r in rows
            if settings_key(r["settings"]) == settings_key(settings)}
    jobs = [(c, s) for c in todo for s in range(args.seeds) if (c["game"], c["ply"], s, args.simulations) not in done]
    print(f"{len(todo)} cases where {args.who} lost >= {args.min_cost} points before move {args.last}; "
          f"{len(jobs)} searches to run" + (f" with {settings}" if settings else ""), file=sys.stderr)
    if not jobs:
        return 0
    import gojax  # the searches only: --summary and the tests need no JAX
    from gojax.kernels.host import BLACK, WHITE, Board
    from gojax.search.params import SearchParams

    gojax.limit_cpu_threads(1)
    games = {}
    with open(os.path.join(args.folder, "results.jsonl")) as f:
        for r in map(json.loads, filter(str.strip, f)):
            games[r["game"]] = (r["komi"], *game_moves(os.path.join(args.folder, r["sgf"])))
    size = games[todo[0]["game"]][1]
    judge = Judge(args.katago, size, args.visits, cache)
    try:
        with open(args.out, "a") as out:
            for case, seed in tqdm(jobs, desc="searches", unit="search"):
                komi, size, moves = games[case["game"]]
                board = Board(size, komi)
                for c, m in moves[:case["ply"]]:
                    board.play_recorded(board.geometry.from_gtp(m), BLACK if c == "B" else WHITE)
                params = SearchParams(**{**settings, "seed": seed})
                point = gojax.Search(board, params).run(simulations=args.simulations).move
                move = board.geometry.to_gtp(point).upper()
                lead = judge.lead_after(moves, komi, size, case, "pass" if move == "PASS" else move)
                out.write(json.dumps({"game": case["game"], "ply": case["ply"], "seed": seed,
                                      "simulations": args.simulations, "settings": settings, "move": move,
                                      "played": case["played"].upper(), "game_cost": case["cost"],
                                      "lead_after": lead, "cost": answer_cost(case, lead)}) + "\n")
                out.flush()
    finally:
        judge.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
