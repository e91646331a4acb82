"""Does gojax find the move it missed?  Its search re-run on the positions of its blunders.

bench/oracle_review.py judges every move of saved games with an oracle (Pachi at a large
budget).  This script takes the positions where a gojax engine's move cost it 0.10 or more of
win rate in the oracle's eyes (and was not the oracle's move), searches each again with gojax
at several budgets and seeds, and counts how often the search now plays:
  oracle   the oracle's move;
  good     a move among the oracle's five best within 0.05 of its value (the oracle's own move
           included);
  same     the move gojax played in the game.
If `good` rises with the budget, the search finds the move given playouts (a question of
efficiency: priors, search constants); if it stays flat, the playouts misjudge the position (a
question of playout knowledge).  Settings are SearchParams fields, so the same positions judge a
change of policy before any match:

    python bench/oracle_positions.py bench/results/strength/pachi_3000_m25 \\
        --review bench/results/strength/oracle_review/pachi_3000_m25.jsonl \\
        --who gojax3000_m25 --simulations 3000 10000 30000 --seeds 2 [--set two_lib_prob=0.2]

`--compare A.jsonl B.jsonl ...` tabulates saved runs (their --out rows) over the positions and
budgets they all hold, so runs made while the review file grew compare on the same positions.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

from tqdm import tqdm

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import gojax  # noqa: E402
from bench.oracle_review import losses, position  # noqa: E402
from gojax.search.params import SearchParams  # noqa: E402


def parse_settings(pairs: list[str]) -> dict:
    """`name=value` pairs -> SearchParams overrides, each value cast to the field's type."""
    fields = {f.name: f for f in dataclasses.fields(SearchParams)}
    out = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in fields:
            raise SystemExit(f"--set {pair}: SearchParams has no field {name!r}")
        kind = type(getattr(SearchParams(), name))
        out[name] = (value.lower() in ("1", "true", "yes")) if kind is bool else kind(value)
    return out


def blunders(review: str, who: str, min_loss: float) -> list[dict]:
    with open(review) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [m for m in losses(rows) if m["who"] == who and m["loss"] >= min_loss and m["value"] > 0.05
            and m["played"] != m["oracle_move"] and m["oracle_move"] not in ("RESIGN", "PASS")]


HEADER = "simulations  searches  oracle's move  good move  the game's move"


def table_row(n: int, rows: list[dict]) -> str:
    """One budget's line: how many searches, and the shares that played the oracle's move, a
    good move and the game's move."""
    k = max(len(rows), 1)
    return (f"{n:>11}  {len(rows):>8}  {sum(r['move'] == r['oracle'] for r in rows) / k:>13.2f}"
            f"  {sum(r['good'] for r in rows) / k:>9.2f}  {sum(r['move'] == r['played'] for r in rows) / k:>15.2f}")


def key(r: dict) -> tuple:
    return r["game"], r["ply"], r["simulations"], r["seed"]


def read_rows(path: str) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def compare(paths: list[str]) -> None:
    """Print the table of each saved run over the searches (position, budget, seed) every run holds."""
    runs = {path: read_rows(path) for path in paths}
    common = set.intersection(*({key(r) for r in rows} for rows in runs.values()))
    print(f"{len({c[:2] for c in common})} positions held by every run ({len(common)} searches)")
    print("run".ljust(48) + HEADER)
    for path, rows in runs.items():
        for n in sorted({c[2] for c in common}):
            print(os.path.basename(path).ljust(48) + table_row(n, [r for r in rows if key(r) in common and r["simulations"] == n]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "--compare":
        compare(argv[1:])
        return 0
    ap.add_argument("folder", help="the match folder the review judged (results.jsonl and games/)")
    ap.add_argument("--review", required=True, help="bench/oracle_review.py's JSONL for that folder")
    ap.add_argument("--who", required=True, help="the gojax engine's name in the match")
    ap.add_argument("--min-loss", type=float, default=0.10)
    ap.add_argument("--simulations", type=int, nargs="+", default=[3000, 10000, 30000])
    ap.add_argument("--seeds", type=int, default=2, help="searches per position and budget")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="a SearchParams setting (repeatable), e.g. two_lib_prob=0.2")
    ap.add_argument("--out", default=None, help="JSONL: one row per search; a rerun with the same settings "
                                                "skips the searches it holds")
    args = ap.parse_args(argv)
    gojax.limit_cpu_threads(1)
    settings = parse_settings(args.set)
    cases = blunders(args.review, args.who, args.min_loss)
    print(f"{len(cases)} positions where {args.who} lost >= {args.min_loss} and missed the oracle's move"
          + (f"; settings {settings}" if settings else ""))
    wanted = {(m["game"], m["ply"], n, s) for m in cases for n in args.simulations for s in range(args.seeds)}
    rows = []
    if args.out and os.path.exists(args.out):
        rows = [r for r in read_rows(args.out) if r["settings"] == settings and key(r) in wanted]
    done = {key(r) for r in rows}
    jobs = [(m, n, s) for m in cases for n in args.simulations for s in range(args.seeds)
            if (m["game"], m["ply"], n, s) not in done]
    out = open(args.out, "a") if args.out else None
    try:
        for m, n, seed in tqdm(jobs, desc="searches", unit="search"):
            board, _ = position(args.folder, m["game"], m["ply"])
            params = SearchParams(**{**settings, "seed": seed})
            move = board.geometry.to_gtp(gojax.Search(board, params).run(simulations=n).move).upper()
            best = m["top"][0][1] if m["top"] else m["value"]
            good = {c[0] for c in m["top"] if c[1] >= best - 0.05} | {m["oracle_move"]}
            rows.append({"game": m["game"], "ply": m["ply"], "simulations": n, "seed": seed, "settings": settings,
                         "move": move, "oracle": m["oracle_move"], "played": m["played"], "good": move in good})
            if out:
                out.write(json.dumps(rows[-1]) + "\n")
                out.flush()
    finally:
        if out:
            out.close()
    print(HEADER)
    for n in args.simulations:
        print(table_row(n, [r for r in rows if r["simulations"] == n]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
