"""How long playouts run, and how much of a call's loop its finished boards wait: the playout
loop runs until the last of its L x K playouts ends, so a call costs its longest playout's moves
for every board.

    python bench/playout_lengths.py [--board 19] [--leaves 8] [--playouts-per-leaf 4] [--calls 16]
                                    [--setting NAME:field=value,...]... [--json]

Each setting (a PlayoutConfig over MoGo's policy with the search's mercy rule, as the search
plays them) runs --calls calls of L x K playouts from the empty board, call c with key c.
Reports the moves per playout (mean, median, 90th percentile), the mean over calls of each
call's longest playout, and the idle share 1 - mean / longest: the part of the loop's board-moves
spent on boards that had already ended.  Counts, not times: the same on every machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.step_parts import parse_setting  # noqa: E402
from gojax.kernels.host import Board  # noqa: E402
from gojax.kernels.playout import PlayoutConfig, run_playouts  # noqa: E402
from gojax.kernels.state import batch_from_host  # noqa: E402
from gojax.search.params import SearchParams  # noqa: E402

DEFAULT_SETTINGS = ("search", "no_mercy:mercy=0", "mercy_0.1:mercy=0.1", "mercy_0.05:mercy=0.05")


def lengths(config: PlayoutConfig, size: int, leaves: int, k: int, calls: int) -> dict:
    """Moves per playout and per call's longest, over `calls` calls from the empty board."""
    starts = batch_from_host([Board(size)] * leaves)
    moves, longest = [], []
    for c in range(calls):
        m = np.asarray(run_playouts(starts, jax.random.key(c), k, config).moves).ravel()
        moves.append(m)
        longest.append(int(m.max()))
    moves = np.concatenate(moves)
    mean_longest = float(np.mean(longest))
    return {"mean": float(moves.mean()), "median": float(np.median(moves)), "p90": float(np.percentile(moves, 90)),
            "longest": mean_longest, "idle": 1 - float(moves.mean()) / mean_longest}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", type=int, default=19)
    ap.add_argument("--leaves", type=int, default=8)
    ap.add_argument("--playouts-per-leaf", type=int, default=4)
    ap.add_argument("--calls", type=int, default=16)
    ap.add_argument("--setting", action="append", default=[], metavar="NAME:field=value,...",
                    help="a PlayoutConfig over the search's (repeatable; the first is the baseline); default: "
                         + " ".join(DEFAULT_SETTINGS))
    ap.add_argument("--json", action="store_true", help="end stdout with the figures as one JSON line")
    args = ap.parse_args(argv)
    base = SearchParams().for_size(args.board).playout_config()
    try:
        settings = [parse_setting(s, base) for s in (args.setting or DEFAULT_SETTINGS)]
    except ValueError as err:
        raise SystemExit(str(err)) from None
    b = args.leaves * args.playouts_per_leaf
    print(f"{args.board}x{args.board}, {args.calls} calls of L{args.leaves} x K{args.playouts_per_leaf} playouts from "
          f"the empty board: moves per playout")
    print(f"{'setting':<14} {'mean':>6} {'median':>6} {'p90':>6} {'longest of ' + str(b):>14} {'idle':>6}")
    out = {}
    for name, config in settings:
        r = lengths(config, args.board, args.leaves, args.playouts_per_leaf, args.calls)
        out[name] = r
        print(f"{name:<14} {r['mean']:6.0f} {r['median']:6.0f} {r['p90']:6.0f} {r['longest']:14.0f} "
              f"{100 * r['idle']:5.1f}%")
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
