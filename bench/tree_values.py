"""How well a search's own node values agree with a teacher's: the tree's side of the value question.

    python bench/tree_values.py --nodes NODES.jsonl --labels POLICY.jsonl [--doubt 0.15 0.85]
                                [--value-net NET --positions POSITIONS.npz]

NODES.jsonl: bench/tree_lines.py's lines with each node's simulations and Black's share of wins
("sims", "black_wins"); POLICY.jsonl: bench/teacher_policy.py --lines's labels of the same nodes
(KataGo's "value" for Black), matched by (game, move, branch).  Prints, for all matched nodes and
by depth and by simulations: the correlation of the node's win share with the teacher's value,
the squared error, and a constant guess's squared error (the labels' mean) beside it; then the
same on the nodes the teacher is in doubt about (`--doubt LO HI`), where a value has to be more
than "who is far ahead".

`--value-net NET` screens a value head (`gojax learn-value`, or bench/experiments/value_trunk.py)
on the same nodes before any match: its own values, and the tree's mixed with them as the search
would mix them (`--value-weight w`: (1 - w) tree + w net; a node's win share is the mean of its
leaves' outcomes, so a mix of the leaves is this mix of the node, up to the net's value at the node
against its leaves'), beside the tree alone.  POSITIONS.npz: the `--pack` of the labels
(bench/teacher_policy.py pack_tree: one position per label, in (game, move, branch) order).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

WEIGHTS = (0.25, 0.5)  # the value weights whose mixes are shown


def _key(row: dict) -> tuple:
    return row["game"], row["move"], tuple(row["branch"])


def matched(nodes_path: str, labels_path: str, keys: list | None = None) -> list[tuple[int, int, float, float]]:
    """(depth, sims, the node's Black win share, the teacher's Black value) of each node in both
    files; `keys`, a list, gets each one's (game, move, branch)."""
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
                if keys is not None:
                    keys.append(_key(row))
    return out


def net_values(net: str, positions: str, labels_path: str) -> dict[tuple, float]:
    """NET's value head's probability that Black wins at each labelled node, by (game, move,
    branch): the positions of POSITIONS.npz are the labels in pack_tree's sorted order (checked
    against its values)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from gojax import learn_net
    from gojax.kernels import prior_net
    from gojax.kernels.geometry import BLACK

    with open(labels_path) as f:
        rows = sorted((r for r in map(json.loads, f) if "branch" in r and "value" in r),
                      key=lambda r: (r["game"], r["move"], r["branch"]))
    kept = learn_net.kept_positions(positions)
    ds, data, boards = kept
    if len(data["value"]) != len(rows) or not np.allclose(data["value"], [r["value"] for r in rows], atol=1e-6):
        raise SystemExit(f"{positions} is not the --pack of {labels_path} (its positions' values differ)")
    _, linear, _ = prior_net.load_net(net)
    head = prior_net.load_value(net)._replace(komi=0.0)
    x = learn_net.inputs(positions, linear, kept=kept)[0]
    mover = np.concatenate([np.asarray(learn_net._value_predict(head, x[s:s + 2048])) for s in range(0, len(x), 2048)])
    black = np.where([b.to_play == BLACK for b in boards], mover, 1.0 - mover)
    return {_key(rows[i]): float(v) for i, v in zip(ds.kept.tolist(), black)}


def mixes(rows: list[tuple], net: dict[tuple, float], keys: list[tuple]) -> list[str]:
    """Lines for the net's values of `rows` (their node keys `keys`) alone and mixed with the tree's."""
    have = [i for i, k in enumerate(keys) if k in net]
    if len(have) < 3:
        return [f"  value net: {len(have)} nodes"]
    tree = np.array([rows[i][2] for i in have])
    teacher = np.array([rows[i][3] for i in have])
    v = np.array([net[keys[i]] for i in have])
    out = []
    for name, x in [("the tree alone", tree), ("the value net alone", v)] + [
            (f"mixed, w = {w:g}", (1 - w) * tree + w * v) for w in WEIGHTS]:
        corr = float(np.corrcoef(x, teacher)[0, 1]) if x.std() > 0 and teacher.std() > 0 else float("nan")
        out.append(f"  {name:20s} {len(have):6d} nodes  correlation {corr:+.3f}  "
                   f"squared error {np.mean((x - teacher) ** 2):.4f}")
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
    ap.add_argument("--value-net", default="", metavar="NET", help="a net with a value head to screen on the nodes")
    ap.add_argument("--positions", default="", help="--value-net: the --pack of the labels (positions.npz)")
    args = ap.parse_args()
    if args.value_net and not args.positions:
        ap.error("--value-net needs --positions (the labels' positions.npz)")
    keys: list[tuple] = []
    rows = matched(args.nodes, args.labels, keys)
    if not rows:
        raise SystemExit(f"no node of {args.nodes} has a label in {args.labels} (and sims, black_wins)")
    net = net_values(args.value_net, args.positions, args.labels) if args.value_net else None
    lo, hi = args.doubt
    doubt = [i for i, r in enumerate(rows) if lo <= r[3] <= hi]
    for name, idx in (("all", range(len(rows))), (f"teacher in {lo}-{hi}", doubt)):
        part = [rows[i] for i in idx]
        print(f"{name}: {summary(part)}")
        if net is not None:
            print("\n".join(mixes(part, net, [keys[i] for i in idx])))
        for depth in sorted({r[0] for r in part}):
            print(f"  depth {depth}: {summary([r for r in part if r[0] == depth])}")
        for a, b in ((30, 60), (60, 120), (120, 240), (240, 10**9)):
            label = f"{a}-{b - 1}" if b < 10**9 else f">={a}"
            print(f"  sims {label:>7}: {summary([r for r in part if a <= r[1] < b])}")


if __name__ == "__main__":
    main()
