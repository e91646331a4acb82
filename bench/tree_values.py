"""How well a search's own node values agree with a teacher's: the tree's side of the value question.

    python bench/tree_values.py --nodes NODES.jsonl --labels POLICY.jsonl [--doubt 0.15 0.85]

NODES.jsonl: bench/tree_lines.py's lines with each node's simulations and Black's share of wins
("sims", "black_wins"); POLICY.jsonl: bench/teacher_policy.py --lines's labels of the same nodes
(KataGo's "value" for Black), matched by (game, move, branch).  Prints, for all matched nodes and
by depth and by simulations: the correlation of the node's win share with the teacher's value,
the squared error, and a constant guess's squared error (the labels' mean) beside it; then the
same on the nodes the teacher is in doubt about (`--doubt LO HI`), where a value has to be more
than "who is far ahead".
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def _key(row: dict) -> tuple:
    return row["game"], row["move"], tuple(row["branch"])


def matched(nodes_path: str, labels_path: str) -> list[tuple[int, int, float, float]]:
    """(depth, sims, the node's Black win share, the teacher's Black value) of each node in both files."""
    labels = {}
    with open(labels_path) as f:
        for line in f:
            row = json.loads(line)
            if "branch" in row and "value" in row:
                labels[_key(row)] = float(row["value"])
    out = []
    with open(nodes_path) as f:
        for line in f:
            row = json.loads(line)
            if "black_wins" in row and _key(row) in labels:
                out.append((len(row["branch"]), int(row["sims"]), float(row["black_wins"]), labels[_key(row)]))
    return out


def summary(rows: list[tuple[int, int, float, float]]) -> str:
    if len(rows) < 3:
        return f"{len(rows):6d} nodes"
    tree = np.array([r[2] for r in rows])
    teacher = np.array([r[3] for r in rows])
    corr = float(np.corrcoef(tree, teacher)[0, 1]) if tree.std() > 0 and teacher.std() > 0 else float("nan")
    mse = float(np.mean((tree - teacher) ** 2))
    const = float(np.mean((teacher.mean() - teacher) ** 2))
    return f"{len(rows):6d} nodes  correlation {corr:+.3f}  squared error {mse:.4f}  (constant {const:.4f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", required=True, help="bench/tree_lines.py's tree_lines.jsonl, with sims and black_wins")
    ap.add_argument("--labels", required=True, help="bench/teacher_policy.py --lines's policy.jsonl")
    ap.add_argument("--doubt", type=float, nargs=2, default=(0.15, 0.85), metavar=("LO", "HI"))
    args = ap.parse_args()
    rows = matched(args.nodes, args.labels)
    if not rows:
        raise SystemExit(f"no node of {args.nodes} has a label in {args.labels} (and sims, black_wins)")
    lo, hi = args.doubt
    for name, part in (("all", rows), (f"teacher in {lo}-{hi}", [r for r in rows if lo <= r[3] <= hi])):
        print(f"{name}: {summary(part)}")
        for depth in sorted({r[0] for r in part}):
            print(f"  depth {depth}: {summary([r for r in part if r[0] == depth])}")
        for a, b in ((30, 60), (60, 120), (120, 240), (240, 10**9)):
            label = f"{a}-{b - 1}" if b < 10**9 else f">={a}"
            print(f"  sims {label:>7}: {summary([r for r in part if a <= r[1] < b])}")


if __name__ == "__main__":
    main()
