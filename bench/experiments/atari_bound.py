"""An upper bound on what exact per-chain liberty sums would save in the 19x19 playout step,
measured before building them.

Liberty sums (count, sum and sum of squares of each chain's liberty cells, kept as moves are
played) would make "is this chain in atari" one lookup and would give its last liberty at once.
That changes BoardState and every kernel that builds one, so this measures the most it could
save first.  The real playout loop (bench/step_parts.py's timing: two move caps, the difference
per loop iteration) runs MoGo's policy as it is, with the save rule off, with the atari test
replaced by a free stand-in (pseudo-liberties == 1: wrong moves, the cost of a lookup), and both.

    python bench/experiments/atari_bound.py [--board 19] [--batch 32] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from bench.step_parts import loop_pair, midgame_boards, parse_setting  # noqa: E402
from gojax.kernels import rules  # noqa: E402
from gojax.kernels.geometry import BLACK, WHITE  # noqa: E402
from gojax.kernels.state import batch_from_host  # noqa: E402


def _free_atari(state):
    """rules.atari_here's shape with one comparison per direction (wrong: pseudo-liberties)."""
    nc, nch, nl = rules.orthogonal(state.color), rules.orthogonal(state.chain), rules.orthogonal(state.libs)
    return nc, nch, [((x == BLACK) | (x == WHITE)) & (n == 1) for x, n in zip(nc, nl)]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", type=int, default=19)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    state = batch_from_host(midgame_boards(args.board, args.batch, 0.3, 0))
    key = jax.random.key(0)

    def compiled(setting):  # traced now, so a later patch of rules.atari_here does not reach it
        pair = loop_pair(parse_setting(setting)[1], args.board)
        return pair, [int(np.asarray(f(state, key)).max()) for f in pair]
    loops = {"mogo": compiled("mogo"), "no_save": compiled("x:save_prob=0")}
    exact = rules.atari_here
    rules.atari_here = _free_atari
    try:
        loops |= {"free_atari": compiled("mogo"), "free_atari_no_save": compiled("x:save_prob=0")}
    finally:
        rules.atari_here = exact
    loops["uniform"] = compiled("x:policy=uniform")
    times = {k: [] for k in loops}
    for _ in range(args.repeats):
        for name, (pair, its) in loops.items():
            spent = []
            for f in pair:
                t = time.perf_counter()
                jax.block_until_ready(f(state, key))
                spent.append(time.perf_counter() - t)
            times[name].append((spent[1] - spent[0]) / (its[1] - its[0]) * 1e6)
    step = {k: statistics.median(v) for k, v in times.items()}
    print(f"{args.board}x{args.board}, {args.batch} boards, {jax.devices()[0].device_kind}: microseconds per loop "
          f"iteration (median of {args.repeats})")
    for k, v in step.items():
        print(f"{k:20s} {v:8.1f}  {v / step['mogo']:.2f}")
    return step


if __name__ == "__main__":
    main()
