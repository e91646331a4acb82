"""Positions/s of `gojax.evaluate` against the number of (virtual) devices, and the standard
error of the win rate against the number of playouts.

    python bench/evaluate_devices.py [--boards 9 19] [--devices 1 2 4] [--positions 64] [--playouts 1024]

Each device count runs in a fresh process with XLA_FLAGS=--xla_force_host_platform_device_count=D
(on a CPU the virtual devices share the same cores: this checks the sharding and its overhead,
not a speed-up).  Positions are middle games from bench_positions; timings are medians of 3
after a warm-up call.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, statistics, sys, time
import jax
from gojax.bench import bench_positions
from gojax.evaluate import evaluate
board, n, playouts = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
pos = bench_positions(board)
boards = [pos[1 + i % 2] for i in range(n)]
evaluate(boards, playouts=playouts)  # compile
times = []
for r in range(3):
    t0 = time.perf_counter(); evaluate(boards, playouts=playouts, seed=r + 1); times.append(time.perf_counter() - t0)
print(json.dumps({"devices": jax.device_count(), "seconds": statistics.median(times)}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boards", type=int, nargs="+", default=[9, 19])
    ap.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--positions", type=int, default=64)
    ap.add_argument("--playouts", type=int, default=1024)
    args = ap.parse_args()
    root = os.path.join(os.path.dirname(__file__), "..")
    print("| board | devices | positions | playouts each | seconds | positions/s |")
    print("|---|---|---|---|---|---|")
    for board in args.boards:
        n = args.positions if board < 19 else max(8, args.positions // 8)
        for d in args.devices:
            env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={d}", JAX_PLATFORMS="cpu")
            out = subprocess.run([sys.executable, "-c", CHILD, str(board), str(n), str(args.playouts)], env=env,
                                 cwd=root, capture_output=True, text=True, check=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            print(f"| {board} | {r['devices']} | {n} | {args.playouts} | {r['seconds']:.2f} | {n / r['seconds']:.1f} |",
                  flush=True)
    sys.path.insert(0, root)
    from gojax.bench import bench_positions
    from gojax.evaluate import evaluate
    pos = bench_positions(9)[1]
    print("\n| playouts | win rate | standard error | stderr x sqrt(P) |\n|---|---|---|---|")
    for p in (64, 256, 1024, 4096):
        r = evaluate([pos], playouts=p, seed=7)
        print(f"| {p} | {r['win_rate'][0]:.3f} | {r['stderr'][0]:.4f} | {r['stderr'][0] * p ** 0.5:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
