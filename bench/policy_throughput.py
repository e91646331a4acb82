"""MoGo playouts against uniform ones, same board and batch, timed alternately in one run.

    python bench/policy_throughput.py [--sizes 9 19] [--batches 256 1024] [--repeats 5]
                                      [--cycle-window 8]

Writes bench/results/policy_throughput.md: playouts/s of each policy, their ratio (the issue's
bar: MoGo at least 40% of uniform), moves per playout, cap hits, and the share of moves each
MoGo rule chose.  Uses gojax.bench.bench_playouts, which alternates the two policies batch by
batch so that the machine's load hits both alike.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from gojax.bench import bench_playouts, grid_arguments  # noqa: E402
from gojax.kernels.playout import PlayoutConfig  # noqa: E402
from gojax.runtime import enable_gpu_graphs  # noqa: E402


def main() -> None:
    ap, grid = grid_arguments(__doc__.splitlines()[0],
                              os.path.join(os.path.dirname(__file__), "results", "policy_throughput.md"))
    ap.add_argument("--cycle-window", type=int, default=PlayoutConfig.cycle_window,
                    help="PlayoutConfig.cycle_window for both policies; 0 turns the ko-cycle stop off")
    args = ap.parse_args()
    enable_gpu_graphs()  # on a GPU, time the kernels as `gojax` runs them (gojax/runtime.py)
    rows = []
    config = PlayoutConfig(policy="mogo", cycle_window=args.cycle_window)
    for size, batch in grid(args):
        r = bench_playouts(size, batch, 16, args.repeats, config=config, progress=False)
        rows.append(r)
        print(f"{size}x{size} B={batch}: mogo {r['playouts_per_sec']:,.0f}/s, uniform "
              f"{r['uniform_playouts_per_sec']:,.0f}/s, ratio {r['ratio_to_uniform']:.0%}", flush=True)
    lines = [
        "# MoGo playouts vs uniform playouts (same batch, timed alternately)",
        "",
        f"Device: {rows[0]['device']}; jax {rows[0]['jax']}.  Empty-board starts, batch / 16 positions x 16",
        f"playouts, mean of {args.repeats} timed batches per policy after a warm-up (a batch lasts as long",
        "as its longest playout, so the mean, not the median, is what a run costs).  MoGo rules at their",
        "defaults (save 1, pattern 1, capture 1, nakade 0, fill board 0).  Ko-cycle stops:",
        f"PlayoutConfig.cycle_window = {args.cycle_window} (0: off) / cycle_moves.  Loop steps: each batch's longest",
        "playout, the iterations its while loop ran (a count that does not depend on the machine's speed).",
        "",
        "| board | batch | MoGo playouts/s | uniform playouts/s | ratio | MoGo moves/playout | loop steps MoGo / uniform"
        " | cap hits | ko-cycle stops | moves by rule (MoGo) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        share = ", ".join(f"{k} {v:.0%}" for k, v in r["rule_share"].items() if v > 0)
        lines.append(f"| {r['board']} | {r['batch']} | {r['playouts_per_sec']:,.0f} | {r['uniform_playouts_per_sec']:,.0f}"
                     f" | {r['ratio_to_uniform']:.0%} | {r['mean_moves']:.1f}"
                     f" | {r['batch_steps_mean']:.0f} / {r['uniform_batch_steps_mean']:.0f}"
                     f" | {r['cap_hits']} of {r['playouts_timed']}"
                     f" | {r['cycle_stops']}"
                     f" | {share} |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
