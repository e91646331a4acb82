"""How often gojax's prior and its search choose the move a stronger engine played.

    python bench/move_prediction.py GAMES... --out ROWS.jsonl [--every 8] [--skip 10]
                                    [--simulations 1000] [--trees 8] [search flags of `gojax gtp`]

GAMES are SGF files or folders of them (e.g. a Pachi self-play match folder).  Every `every`-th
position from move `skip` on is read, and for each: the move played next, the shape prior's
favourite (the highest H at the root, search/priors.py) and the search's move after
`simulations` simulations (trees searched `trees` at a time in one forest, position i with seed
i).  One JSON line per position is appended to ROWS.jsonl (a rerun resumes after the last);
the summary (top-1 of each with its standard error, and the uniform guess's expected top-1)
is printed and written to ROWS.summary.json.  Any size: the shape prior's features (3x3
pattern, line, distances) are defined on every board, but the bundled model was fitted on 9x9.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402

from gojax.cli import add_search_options, search_params  # noqa: E402
from gojax.evaluate import sgf_positions  # noqa: E402
from gojax.search.forest import Forest  # noqa: E402


def positions(paths, every: int, skip: int):
    """(file, move number, board, the point played next) for the sampled positions; passes and
    the final position are left out."""
    games: dict[str, list] = {}
    for path, _, board in sgf_positions(paths):
        games.setdefault(path, []).append(board)
    for path, boards in games.items():
        final = boards[-1]
        for i in range(skip, len(boards) - 1, every):
            played = final.moves[i][1]
            if played is not None:
                yield path, i, boards[i], int(played)


def prior_favourite(search) -> int | None:
    """The legal point with the highest heuristic H at the root (None if only pass is legal)."""
    tree, root = search.tree, search.root
    legal = tree.legal[root].copy()
    legal[tree.pass_action] = False
    if not legal.any():
        return None
    return int(np.flatnonzero(legal)[np.argmax(tree.prior[root][legal])])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--every", type=int, default=8)
    ap.add_argument("--skip", type=int, default=10, help="leave out the first moves (the opening)")
    ap.add_argument("--simulations", type=int, default=1000)
    ap.add_argument("--trees", type=int, default=8)
    ap.add_argument("--max-positions", type=int, default=None)
    add_search_options(ap)
    args = ap.parse_args()
    params = search_params(args)
    engine = {k: v for k, v in dataclasses.asdict(params).items() if v != getattr(type(params)(), k)}
    done = sum(1 for _ in open(args.out)) if os.path.exists(args.out) else 0
    todo = list(positions(args.games, args.every, args.skip))[:args.max_positions]
    with open(args.out, "a") as f:
        for start in range(done, len(todo), args.trees):
            chunk = todo[start:start + args.trees]
            plist = [dataclasses.replace(params, seed=start + j) for j in range(len(chunk))]
            forest = Forest([b for _, _, b, _ in chunk], plist)
            favourites = [prior_favourite(s) for s in forest.searches]
            results = forest.run(args.simulations)
            for (path, i, board, played), fav, res in zip(chunk, favourites, results):
                n_legal = len(board.legal_points(superko=True))
                row = dict(game=os.path.basename(path), move=i, size=board.size, played=played, prior=fav,
                           search=res.move, legal=n_legal, simulations=res.simulations)
                f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"{min(start + args.trees, len(todo))}/{len(todo)} positions", file=sys.stderr, flush=True)
    rows = [json.loads(line) for line in open(args.out)]
    n = len(rows)

    def top1(key):
        p = sum(r[key] == r["played"] for r in rows) / n
        return dict(top1=round(p, 4), stderr=round(math.sqrt(p * (1 - p) / n), 4))
    summary = dict(positions=n, games=len({r["game"] for r in rows}), size=rows[0]["size"] if rows else None,
                   simulations=args.simulations, engine_flags=engine, prior=top1("prior"), search=top1("search"),
                   uniform_top1=round(float(np.mean([1 / max(r["legal"], 1) for r in rows])), 4))
    print(json.dumps(summary))
    with open(os.path.splitext(args.out)[0] + ".summary.json", "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
