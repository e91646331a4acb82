"""What one playout rule costs: the MoGo policy with and without it, same batch, timed alternately.

    python bench/rule_cost.py two_lib_prob=1 [--batches 32:4 1024:16] [--repeats 15] [--out F]

Prints (and appends to --out) one JSON line per batch shape: the median playouts/s of each
configuration, their ratio, and the share of moves each rule of kernels/policy.RULES chose.
9x9 from the empty board, the search's mercy rule on (SearchParams.mercy).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import jax  # noqa: E402

from gojax.kernels.geometry import Geometry  # noqa: E402
from gojax.kernels.playout import PlayoutConfig, empty_boards, run_playouts  # noqa: E402
from gojax.kernels.policy import RULES  # noqa: E402
from gojax.runtime import enable_gpu_graphs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("setting", help="a PlayoutConfig field and value, e.g. two_lib_prob=1")
    ap.add_argument("--batches", nargs="+", default=["32:4", "1024:16"], help="B:K pairs (B playouts, K per position)")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--out", default=None, help="append the JSON lines here")
    args = ap.parse_args()
    enable_gpu_graphs()  # on a GPU, time the kernels as `gojax` runs them (gojax/runtime.py)
    name, value = args.setting.split("=")
    base = PlayoutConfig(policy="mogo", mercy=0.25)
    configs = {"mogo": base, args.setting: dataclasses.replace(base, **{name: type(getattr(base, name))(value)})}
    for shape in args.batches:
        batch, k = map(int, shape.split(":"))
        starts = empty_boards(Geometry(9), batch // k)
        key = jax.random.key(0)

        def run(cfg, i, starts=starts, key=key, k=k):
            r = run_playouts(starts, jax.random.fold_in(key, i), k, cfg)
            return jax.device_get(r.rule_counts)
        for cfg in configs.values():
            run(cfg, 0)  # compile
        rates = {n: [] for n in configs}
        counts = {n: 0 for n in configs}
        for i in range(1, args.repeats + 1):
            for n, cfg in configs.items():
                t0 = time.perf_counter()
                counts[n] = counts[n] + run(cfg, i).sum(0)
                rates[n].append(batch / (time.perf_counter() - t0))
        median = {n: round(statistics.median(v)) for n, v in rates.items()}
        row = dict(board=9, batch=batch, playouts_per_position=k, repeats=args.repeats, device=str(jax.devices()[0]),
                   jax=jax.__version__, median_playouts_per_s=median,
                   ratio=round(median[args.setting] / median["mogo"], 3),
                   rule_share={n: {r: round(float(c[i] / c.sum()), 3) for i, r in enumerate(RULES) if c[i]}
                               for n, c in counts.items()})
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
