"""Teacher values for simulation balancing: KataGo's network value (Black's win rate) of positions
sampled from the teacher positions of bench/teacher_data.py.

    python bench/teacher_values.py [--positions bench/results/teacher/pachi9/positions.npz]
                                   [--out bench/results/teacher/katago9_values] [--count 1500]
                                   [--katago /tmp/katago/run]

KataGo 1.18 with its b10 network (`bash ../shared/tools/katago/setup.sh` prints the runner)
answers each position through its JSON analysis engine with maxVisits 1: the raw network's value,
for Black.  Positions are a fixed random sample of the moves `--first` .. `--last` of the games,
one line per answer in OUT/values.jsonl (a rerun asks only for the rest: resumable); at the end
OUT/values.npz holds (game, move, value, score lead) rows that index positions.npz's games.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

COLUMNS = "ABCDEFGHJKLMNOPQRST"


def vertex(p: int, size: int) -> str:
    return "pass" if p < 0 else f"{COLUMNS[p % size]}{p // size + 1}"


def sample(data, count: int, first: int, last: int, seed: int) -> list[tuple[int, int]]:
    """(game, move number) pairs: positions before move `move` of game `game`."""
    moves = data["moves"]
    cands = [(g, k) for g in range(len(moves)) for k in range(first, min(last, int((moves[g] != -2).sum())))]
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(cands), size=min(count, len(cands)), replace=False)
    return sorted(cands[i] for i in pick)


def main() -> None:
    here = Path(__file__).parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", default=str(here / "results" / "teacher" / "pachi9" / "positions.npz"))
    ap.add_argument("--out", default=str(here / "results" / "teacher" / "katago9_values"))
    ap.add_argument("--count", type=int, default=1500)
    ap.add_argument("--first", type=int, default=6, help="first move number sampled")
    ap.add_argument("--last", type=int, default=70, help="moves from this on are not sampled")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--katago", default=os.environ.get("KATAGO", "/tmp/katago/run"))
    args = ap.parse_args()
    with np.load(args.positions) as f:
        data = {k: f[k] for k in ("moves", "first_white", "komi", "size")}
    size = int(data["size"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = out / "values.jsonl"
    done = {}
    if lines.exists():
        for line in lines.read_text().splitlines():
            r = json.loads(line)
            done[(r["game"], r["move"])] = r
    todo = [x for x in sample(data, args.count, args.first, args.last, args.seed) if x not in done]
    print(f"{len(done)} values there, {len(todo)} to ask KataGo for", file=sys.stderr, flush=True)
    if todo:
        proc = subprocess.Popen([args.katago, "analysis"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, bufsize=1)
        for g, k in todo:
            colour = "W" if data["first_white"][g] else "B"
            played = []
            for p in data["moves"][g][:k].tolist():
                played.append([colour, vertex(p, size)])
                colour = "B" if colour == "W" else "W"
            query = {"id": f"{g}:{k}", "moves": played, "rules": "chinese", "komi": float(data["komi"][g]),
                     "boardXSize": size, "boardYSize": size, "maxVisits": 1,
                     "initialPlayer": "W" if data["first_white"][g] else "B",
                     "overrideSettings": {"reportAnalysisWinratesAs": "BLACK"}}
            proc.stdin.write(json.dumps(query) + "\n")
        proc.stdin.close()
        with lines.open("a") as f:
            for n, line in enumerate(proc.stdout):
                r = json.loads(line)
                if "error" in r:
                    print(f"KataGo: {r}", file=sys.stderr)
                    continue
                g, k = map(int, r["id"].split(":"))
                row = {"game": g, "move": k, "value": r["rootInfo"]["winrate"], "lead": r["rootInfo"]["scoreLead"]}
                f.write(json.dumps(row) + "\n")
                f.flush()
                done[(g, k)] = row
                if n % 100 == 0:
                    print(f"{len(done)} values", file=sys.stderr, flush=True)
        proc.wait()
    rows = [done[k] for k in sorted(done)]
    np.savez_compressed(out / "values.npz", game=np.array([r["game"] for r in rows], np.int32),
                        move=np.array([r["move"] for r in rows], np.int16),
                        value=np.array([r["value"] for r in rows], np.float32),
                        lead=np.array([r["lead"] for r in rows], np.float32))
    print(f"{len(rows)} values -> {out / 'values.npz'}", file=sys.stderr)


if __name__ == "__main__":
    main()
