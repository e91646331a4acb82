"""Two board layouts for uniform playouts, timed alternately in one run: the per-point layout
with chain ids and pseudo-liberties (kernels/state.py + kernels/rules.py, what gojax uses) and
bitboards (bench/experiments/bitboard.py).

    python bench/layouts.py [--sizes 9 19] [--batches 256 1024] [--batches-19 64 256] [--repeats 5]

Writes bench/results/layouts.md.  Both run batch playouts from the empty board with the same
rules (eye rule, simple ko, pass only when nothing else, cap 3 N^2).  The per-point kernel
also reduces AMAF tables, first moves and ownership, which the bitboard one does not: its
figure is, if anything, flattered.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))  # the repository root

import jax  # noqa: E402
import numpy as np  # noqa: E402

from bench.experiments.bitboard import Layout, bitboard_playouts, empty_bitboards  # noqa: E402
from gojax.bench import device_description, grid_arguments, versions  # noqa: E402
from gojax.kernels.geometry import Geometry  # noqa: E402
from gojax.kernels.host import Board  # noqa: E402
from gojax.kernels.playout import PlayoutConfig, empty_boards, run_playouts  # noqa: E402
from gojax.kernels.state import from_host  # noqa: E402
from gojax.runtime import enable_gpu_graphs  # noqa: E402


def measure(size: int, batch: int, repeats: int) -> dict:
    key = jax.random.key(0)
    starts = empty_boards(Geometry(size), batch)
    bits = empty_bitboards(size, batch)

    def point(i):
        r = run_playouts(starts, jax.random.fold_in(key, i), 1, PlayoutConfig())
        return jax.device_get(r.moves).mean()

    def bitboard(i):
        z, moves, _, _ = bitboard_playouts(bits, jax.random.fold_in(key, i), size)
        return jax.device_get(moves).mean()

    kinds = {"per-point": point, "bitboard": bitboard}
    compile_sec = {}
    for name, fn in kinds.items():
        t0 = time.perf_counter()
        fn(0)
        compile_sec[name] = time.perf_counter() - t0
    times = {k: [] for k in kinds}
    moves = {k: [] for k in kinds}
    for i in range(1, repeats + 1):
        for name, fn in kinds.items():
            t0 = time.perf_counter()
            moves[name].append(fn(i))
            times[name].append(time.perf_counter() - t0)
    out = {"board": size, "batch": batch, "repeats": repeats}
    for name in kinds:
        sec = statistics.median(times[name])
        out[name] = {"playouts_per_sec": batch / sec, "sec_per_batch": sec, "mean_moves": float(np.mean(moves[name])),
                     "compile_plus_first_sec": compile_sec[name]}
    out["ratio_bitboard_to_point"] = out["bitboard"]["playouts_per_sec"] / out["per-point"]["playouts_per_sec"]
    return out


def main() -> None:
    ap, grid = grid_arguments(__doc__.splitlines()[0],
                              os.path.join(os.path.dirname(__file__), "results", "layouts.md"))
    args = ap.parse_args()
    enable_gpu_graphs()  # on a GPU, time the kernels as `gojax` runs them (gojax/runtime.py)
    rows = []
    for size, batch in grid(args):
        r = measure(size, batch, args.repeats)
        rows.append(r)
        print(f"{size}x{size} B={batch}: per-point {r['per-point']['playouts_per_sec']:,.0f}/s, bitboard "
              f"{r['bitboard']['playouts_per_sec']:,.0f}/s (ratio {r['ratio_bitboard_to_point']:.2f})", flush=True)
    state_bytes = {s: sum(np.asarray(x).nbytes for x in jax.tree_util.tree_leaves(from_host(Board(s))))
                   for s in args.sizes}
    lines = [
        "# Board layouts: per-point arrays with chain ids vs bitboards (uniform playouts)",
        "",
        f"Device: {device_description()}; jax {versions()['jax']}.  Medians of {args.repeats} batches,"
        " the two layouts alternating batch by batch; batch playouts from the empty board, one per board.",
        "",
        "| board | batch | per-point playouts/s | bitboard playouts/s | bitboard / per-point |"
        " moves per playout (point, bit) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        p, b = r["per-point"], r["bitboard"]
        lines.append(f"| {r['board']}x{r['board']} | {r['batch']} | {p['playouts_per_sec']:,.0f} | "
                     f"{b['playouts_per_sec']:,.0f} | {r['ratio_bitboard_to_point']:.2f} | "
                     f"{p['mean_moves']:.1f}, {b['mean_moves']:.1f} |")
    lines += ["", "Bytes per board: " + ", ".join(
        f"{s}x{s} per-point {state_bytes[s]} B, bitboard {2 * 4 * Layout(s).words + 12} B" for s in args.sizes), ""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
