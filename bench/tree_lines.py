"""The positions a search asks its prior about: nodes of gojax's own trees, for a teacher to label.

    python bench/tree_lines.py --games SGF_OR_FOLDER... [--size 9] --out DIR [--count 2000]
                               [--simulations 1000] [--per-root 6] [--min-visits 30] [--max-depth 4]
    python bench/teacher_policy.py --games SGF_OR_FOLDER... --lines DIR/tree_lines.jsonl --out DIR

The prior is fitted to positions of games and of lines drawn from the teacher's own policy, but a
search asks it about the nodes its tree grows: replies to its own candidates, good and bad.  This
script samples game positions the way bench/teacher_policy.py does (the same `--games`, `--seed`,
`--first` and `--last` give the same games and positions), searches each with gojax at its
defaults (or `--set FIELD=VALUE`), and writes up to `--per-root` of the tree's nodes with at least
`--min-visits` simulations, at most `--max-depth` moves below the root, drawn uniformly (seeded by
the position): one JSON line each, {"game", "move", "branch": [points], "sims", "black_wins"}: the
moves from the game position to the node (gojax points, row 0 the bottom row), the simulations
through the node and Black's share of wins in them.  A rerun skips the positions done.
teacher_policy.py `--lines` then asks KataGo for each and packs each as a line of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from oracle_positions import parse_settings  # noqa: E402
from teacher_policy import from_games, sample  # noqa: E402  (sibling scripts)

from gojax.kernels.geometry import BLACK, WHITE  # noqa: E402
from gojax.kernels.host import Board  # noqa: E402
from gojax.search.mcts import Search  # noqa: E402
from gojax.search.params import SearchParams  # noqa: E402


def position(data: dict, g: int, k: int, size: int) -> Board:
    """The board before move k of game g (teacher_data.py's arrays), replayed as learn-policy
    replays it."""
    board = Board(size, float(data["komi"][g]))
    colour = WHITE if data["first_white"][g] else BLACK
    board.to_play = colour
    for p in data["moves"][g][:k].tolist():
        board.play_recorded(None if p == -1 else p, colour)
        colour = WHITE if colour == BLACK else BLACK
        board.to_play = colour
    return board


def tree_nodes(search: Search, min_visits: int, max_depth: int) -> list[tuple[list[int], int]]:
    """(path: the points from the root, node index) of the tree's nodes with >= min_visits
    simulations, at depth 1 .. max_depth, none through a pass, in node order."""
    tree = search.tree
    n = tree.num_nodes
    paths: dict[int, list[int] | None] = {search.root: []}
    out = []
    for i in range(n):
        if i == search.root:
            continue
        parent, action = int(tree.parent[i]), int(tree.parent_action[i])
        up = paths.get(parent)
        paths[i] = None if up is None or action == tree.pass_action or len(up) >= max_depth else up + [action]
        if paths[i] is not None and tree.sims[i] >= min_visits:
            out.append((paths[i], i))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", required=True, metavar="SGF")
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=2000, help="game positions searched")
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--last", type=int, default=80)
    ap.add_argument("--seed", type=int, default=1, help="teacher_policy.py's sample seed")
    ap.add_argument("--simulations", type=int, default=1000)
    ap.add_argument("--per-root", type=int, default=6)
    ap.add_argument("--min-visits", type=int, default=30)
    ap.add_argument("--max-depth", type=int, default=4)
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="a SearchParams field")
    args = ap.parse_args()
    if min(args.count, args.simulations, args.per_root, args.min_visits, args.max_depth) < 1:
        ap.error("--count, --simulations, --per-root, --min-visits and --max-depth must be >= 1")
    data = from_games(args.games, args.size)
    params = SearchParams(**parse_settings(args.set))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "tree_lines.jsonl"
    # the card that teacher_policy.py --pack writes quotes this command
    (out / "tree_lines.command").write_text(shlex.join(["python", "bench/tree_lines.py"] + sys.argv[1:]) + "\n")
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # a last line cut short by a stopped run
            done.add((r["game"], r["move"]))
    roots = [(g, k) for g, k in sample(data, args.count, args.first, args.last, args.seed) if (g, k) not in done]
    print(f"{len(done)} positions searched, {len(roots)} to go", file=sys.stderr, flush=True)
    with path.open("a") as f:
        for i, (g, k) in enumerate(roots):
            board = position(data, g, k, args.size)
            search = Search(board, params)
            search.run(simulations=args.simulations, stop_early=False)
            nodes = tree_nodes(search, args.min_visits, args.max_depth)
            rng = np.random.default_rng([args.seed, g, k])
            pick = rng.choice(len(nodes), size=min(args.per_root, len(nodes)), replace=False) if nodes else []
            tree = search.tree
            # the node's simulations and Black's share of wins in them: the search's own value there
            rows = [{"game": g, "move": k, "branch": nodes[j][0], "sims": int(tree.sims[nodes[j][1]]),
                     "black_wins": round(float(tree.wins[nodes[j][1]] / tree.sims[nodes[j][1]]), 4)}
                    for j in sorted(pick)]
            # a position with no node to give still counts as searched
            for r in rows or [{"game": g, "move": k, "branch": None}]:
                f.write(json.dumps(r) + "\n")
            f.flush()
            if i % 50 == 0:
                print(f"{len(done) + i + 1} positions searched", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
