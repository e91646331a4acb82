"""Where do whole games go wrong?  KataGo's score lead before every move of saved match games.

    python bench/game_review.py FOLDER [--games N] [--visits 1] --out OUT.jsonl
    python bench/game_review.py FOLDER --summary --out OUT.jsonl

Each game of a match folder (results.jsonl and games/) goes to KataGo's JSON analysis engine
(bash ../shared/tools/katago/setup.sh prints its runner) as one query with every turn analysed
(`analyzeTurns`), `--visits` visits per position.  One row per game is appended to OUT as it is
judged, so a killed run resumes with the next game:

    {"id", "game", "black", "white", "winner_color", "moves", "colours" and "moves_played" (the
     game's moves), "lead" (Black's score lead before
     each move and after the last, KataGo's), "winrate" (Black's, likewise)}

A move's cost is its player's lead before it minus their lead after it, in points.  `--summary`
prints, per engine, the mean cost per move by phase of the game while it is contested (Black's
win rate 10-90% before the move), the share of moves that cost 5
or 15 points, the move after which each lost game's win rate stayed below 10%, and the costliest
moves.  At one visit the values are the network's alone: noisy move by move, fair on average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.resign_review import game_moves  # noqa: E402

PHASES = ((0, 50), (50, 150), (150, 10_000))  # moves of the game (both colours), 0-based
CONTESTED = (0.1, 0.9)  # Black's win rate before a move that `--summary` counts


def game_queries(folder: str, visits: int) -> list[tuple[dict, dict]]:
    """(KataGo query, results.jsonl row) for each game of `folder`, in results order."""
    out = []
    name = os.path.basename(os.path.normpath(folder))
    with open(os.path.join(folder, "results.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for r in sorted(rows, key=lambda r: r["game"]):
        size, moves = game_moves(os.path.join(folder, r["sgf"]))
        out.append(({"id": f"{name}:{r['game']}", "moves": moves, "rules": "chinese", "komi": r["komi"],
                     "boardXSize": size, "boardYSize": size, "maxVisits": visits,
                     "analyzeTurns": list(range(len(moves) + 1))}, r))
    return out


def judge(proc: subprocess.Popen, query: dict) -> tuple[list[float], list[float]]:
    """Black's score lead and win rate at each of `query`'s analyzeTurns (the runner's config reports
    Black's view), from KataGo's answers, one per turn."""
    proc.stdin.write(json.dumps(query) + "\n")
    proc.stdin.flush()
    index = {t: i for i, t in enumerate(query["analyzeTurns"])}  # the answers' turns, in the query's order
    lead, winrate = [None] * len(index), [None] * len(index)
    while any(x is None for x in lead):
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"KataGo ended (exit {proc.poll()}) while judging {query['id']}")
        a = json.loads(line)
        if "error" in a:
            raise SystemExit(f"KataGo refused {query['id']}: {a['error']}")
        if a.get("id") == query["id"] and "rootInfo" in a:
            lead[index[a["turnNumber"]]] = round(a["rootInfo"]["scoreLead"], 2)
            winrate[index[a["turnNumber"]]] = round(a["rootInfo"]["winrate"], 4)
    return lead, winrate


def costs(row: dict, contested: bool = False) -> list[tuple[int, str, float]]:
    """(move index, engine, points the move cost its player) for each move of a judged game;
    with `contested`, only the moves played where Black's win rate was within CONTESTED (once a
    game is decided, score leads swing by tens of points on moves that change nothing)."""
    lead, winrate = row["lead"], row["winrate"]
    out = []
    for t, colour in enumerate(row["colours"]):
        if contested and not CONTESTED[0] <= winrate[t] <= CONTESTED[1]:
            continue
        sign = 1 if colour == "B" else -1
        out.append((t, row["black"] if colour == "B" else row["white"], sign * (lead[t] - lead[t + 1])))
    return out


def summary(rows: list[dict]) -> str:
    """The text `--summary` prints (module docstring)."""
    per: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        for t, who, c in costs(row, contested=True):
            per.setdefault(who, []).append((t, c))
    lines = [f"{len(rows)} games, {sum(len(r['lead']) - 1 for r in rows)} moves judged; the costs below count "
             f"the {sum(len(cs) for cs in per.values())} moves played while Black's win rate was "
             f"{CONTESTED[0]:.0%}-{CONTESTED[1]:.0%}"]
    for who, cs in sorted(per.items()):
        cells = []
        for lo, hi in PHASES:
            xs = [c for t, c in cs if lo <= t < hi]
            if xs:
                cells.append(f"moves {lo}-{min(hi, max(t for t, _ in cs) + 1) - 1}: {statistics.mean(xs):.2f} "
                             f"({len(xs)})")
        all_ = [c for _, c in cs]
        lines.append(f"{who}: mean cost {statistics.mean(all_):.2f} points per move; " + "; ".join(cells)
                     + f"; >= 5 points {sum(c >= 5 for c in all_) / len(all_):.1%}, >= 15 "
                     f"{sum(c >= 15 for c in all_) / len(all_):.1%}")
    for row in rows:
        loser = {"black": "B", "white": "W"}.get(row["winner_color"], "")
        loser = "W" if loser == "B" else "B" if loser == "W" else None
        if loser is None:
            continue
        wins = [w if loser == "B" else 1 - w for w in row["winrate"]]
        gone = next((t for t in range(len(wins)) if all(w < 0.10 for w in wins[t:])), None)
        worst = sorted((c for c in costs(row, contested=True) if c[1] == row["black" if loser == "B" else "white"]),
                       key=lambda c: -c[2])[:3]
        lines.append(f"{row['id']}: {row['black' if loser == 'B' else 'white']} ({loser}) lost; below 10% for good "
                     f"from move {gone}; costliest moves " + ", ".join(
                         f"{t + 1}. {row['moves_played'][t]} {c:.1f}" for t, _, c in worst))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--out", required=True, help="JSONL, appended game by game")
    ap.add_argument("--katago", default="/tmp/katago/run", help="the runner setup.sh prints")
    ap.add_argument("--visits", type=int, default=1)
    ap.add_argument("--games", type=int, default=None, help="the first N games only")
    ap.add_argument("--summary", action="store_true", help="print the summary of OUT and stop")
    args = ap.parse_args(argv)
    done = {}
    if os.path.exists(args.out):
        with open(args.out) as f:
            done = {r["id"]: r for r in map(json.loads, filter(str.strip, f))}
    if args.summary:
        if not done:
            raise SystemExit(f"nothing judged in {args.out}")
        print(summary(list(done.values())))
        return 0
    asked = [(q, r) for q, r in game_queries(args.folder, args.visits)[:args.games] if q["id"] not in done]
    if not asked:
        print(f"every game is judged already ({len(done)} in {args.out})", file=sys.stderr)
        return 0
    size = asked[0][0]["boardXSize"]
    proc = subprocess.Popen([args.katago, "analysis"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, SIZE=str(size)))
    try:
        for i, (q, r) in enumerate(asked):
            lead, winrate = judge(proc, q)
            row = {"id": q["id"], "game": r["game"], "black": r["black"], "white": r["white"],
                   "winner_color": r.get("winner_color"), "moves": len(q["moves"]),
                   "colours": "".join(c for c, _ in q["moves"]), "moves_played": [m for _, m in q["moves"]],
                   "lead": lead, "winrate": winrate}
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"[{i + 1}/{len(asked)}] {q['id']}: {len(q['moves'])} moves judged", file=sys.stderr, flush=True)
    finally:
        proc.stdin.close()
        proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
