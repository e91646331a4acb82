"""Does root parallelisation choose better moves?  T trees of N simulations with their roots
merged (`gojax gtp --trees T`, search/forest.merge_roots) against one tree of N and one of T x N,
judged by an oracle on positions of real games.

    python bench/root_parallel.py FOLDER --review REVIEW.jsonl --out ROWS.jsonl
                                  [--trees 4] [--simulations 1000] [--every 8] [--skip 10]
                                  [--batch 16] [search flags of `gojax gtp`]

FOLDER is a match folder that bench/oracle_review.py judged (its games/), REVIEW its JSONL: for
each position the oracle's (Pachi at 30,000 playouts) best move and its top candidates with
their values.  Every `every`-th reviewed position from ply `skip` on is searched three ways, all
with seed s = 1000 x (its index): T trees of N simulations with seeds s .. s+T-1 in one forest,
roots merged (tree 0 alone is the one tree of N: a forest's tree gives what a lone search with
its seed gives); and one tree of T x N with seed s.  One JSON line per position is appended to
ROWS.jsonl (a rerun resumes after the last); the summary is printed and written to
ROWS.summary.json: for each way, how often it chose the oracle's move (with its standard error)
and its mean loss in the oracle's win rate where the oracle valued the chosen move; how often
the T trees agreed, and where the merged choice differs from tree 0's, which of the two chose the
oracle's move.  `--batch B` searches B positions at a time (B x T trees in one forest).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.oracle_review import position  # noqa: E402
from gojax.cli import add_search_options, search_params  # noqa: E402
from gojax.search.forest import Forest, merge_roots  # noqa: E402

WAYS = ("one", "merged", "big")  # one tree of N, T trees of N merged, one tree of T x N


def cases(review: str, every: int, skip: int) -> list[dict]:
    """The reviewed positions to search, in (game, ply) order: every `every`-th from ply `skip`
    on, where the oracle named a move (not a pass or a resignation)."""
    with open(review) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rows = sorted((r for r in rows if r["ply"] >= skip and r["oracle_move"] not in ("PASS", "RESIGN")),
                  key=lambda r: (r["game"], r["ply"]))
    return rows[::every]


def search_batch(folder: str, chunk: list[dict], first: int, params, trees: int, simulations: int) -> list[dict]:
    """The three ways' choices for a chunk of reviewed positions (index first, first + 1, ..)."""
    boards = [position(folder, r["game"], r["ply"])[0] for r in chunk]
    seeds = [1000 * (first + i) for i in range(len(chunk))]
    forest = Forest([b for b in boards for _ in range(trees)],
                    [dataclasses.replace(params, seed=s + t) for s in seeds for t in range(trees)])
    small = forest.run(simulations)
    big = Forest(boards, [dataclasses.replace(params, seed=s) for s in seeds]).run(trees * simulations)
    geometry = boards[0].geometry  # one board size per match

    def gtp(move: int | None) -> str:  # the review's spelling: "D4", "PASS"
        return geometry.to_gtp(move).upper()
    out = []
    for i, r in enumerate(chunk):
        mine = small[i * trees:(i + 1) * trees]
        merged, _ = merge_roots(mine, forest.searches[i * trees:(i + 1) * trees])
        out.append(dict(game=r["game"], ply=r["ply"], oracle_move=r["oracle_move"], oracle_top=r["top"],
                        trees=[gtp(x.move) for x in mine], one=gtp(mine[0].move), merged=gtp(merged.move),
                        big=gtp(big[i].move), simulations=simulations, tree_count=trees))
    return out


def loss(row: dict, move: str, min_playouts: int) -> float | None:
    """The oracle's win rate of its best move less that of `move`, where it searched `move` with at
    least min_playouts playouts (else None: the oracle did not value it)."""
    values = {m: v for m, v, n in row["oracle_top"] if n >= min_playouts}
    best = row["oracle_top"][0][1]
    return None if move not in values else best - values[move]


def summarise(rows: list[dict], min_playouts: int) -> dict:
    n = len(rows)
    out = {"positions": n, "trees": rows[0]["tree_count"] if rows else None,
           "simulations": rows[0]["simulations"] if rows else None}
    for way in WAYS:
        p = sum(r[way] == r["oracle_move"] for r in rows) / max(n, 1)
        known = [x for x in (loss(r, r[way], min_playouts) for r in rows) if x is not None]
        out[way] = dict(oracle_move=round(p, 4), stderr=round(math.sqrt(p * (1 - p) / max(n, 1)), 4),
                        valued=len(known), mean_loss_where_valued=round(sum(known) / len(known), 4) if known else None)
    differ = [r for r in rows if r["merged"] != r["one"]]
    out["trees_all_agree"] = round(sum(len(set(r["trees"])) == 1 for r in rows) / max(n, 1), 4)
    out["merged_differs_from_tree0"] = len(differ)
    out["where_they_differ"] = dict(merged_is_oracle=sum(r["merged"] == r["oracle_move"] for r in differ),
                                    tree0_is_oracle=sum(r["one"] == r["oracle_move"] for r in differ))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="the match folder the review judged (its games/)")
    ap.add_argument("--review", required=True, help="bench/oracle_review.py's JSONL for that folder")
    ap.add_argument("--out", required=True, help="rows, one JSON line per position (appended: resumable)")
    ap.add_argument("--trees", type=int, default=4, help="T: trees whose roots are merged")
    ap.add_argument("--simulations", type=int, default=1000, help="N: simulations per tree")
    ap.add_argument("--every", type=int, default=8)
    ap.add_argument("--skip", type=int, default=10, help="leave out the first plies (the opening)")
    ap.add_argument("--batch", type=int, default=16, help="positions searched at a time")
    ap.add_argument("--min-playouts", type=int, default=500,
                    help="the oracle values a move it searched with at least this many playouts")
    add_search_options(ap)
    args = ap.parse_args(argv)
    if args.trees < 2 or args.simulations < 1 or args.batch < 1:
        ap.error("--trees must be at least 2, --simulations and --batch at least 1")
    params = search_params(args)
    todo = cases(args.review, args.every, args.skip)
    done = sum(1 for line in open(args.out) if line.strip()) if os.path.exists(args.out) else 0
    with open(args.out, "a") as f:
        for start in range(done, len(todo), args.batch):
            for row in search_batch(args.folder, todo[start:start + args.batch], start, params, args.trees,
                                    args.simulations):
                f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"{min(start + args.batch, len(todo))}/{len(todo)} positions", file=sys.stderr, flush=True)
    with open(args.out) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    summary = summarise(rows, args.min_playouts)
    print(json.dumps(summary))
    with open(os.path.splitext(args.out)[0] + ".summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
