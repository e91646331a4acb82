"""gojax vs pgx's Go, side by side in one run: uniform random playouts to the end of the game.

    pip install -e '.[bench]'          # pulls pgx
    python bench/compare_pgx.py [--boards 9 19] [--batches 64 256 1024] [--repeats 3] [--out bench/results]

Writes <out>/compare_pgx.md (a markdown table) and <out>/compare_pgx.png (playouts/s vs batch).
Both engines run the same loop shape: a jitted while loop over moves until every board of the
batch has finished.  pgx plays uniformly over its legal actions (pass included, no eye rule,
positional superko, its own move cap of 2 N^2); gojax plays its playout policy (uniform over
legal non-eye points, pass only when nothing is left, simple ko, cap 3 N^2).  The two games
are not the same length, so the table also gives moves per playout and board-moves/s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from gojax.bench import bench_playouts, device_description, versions  # noqa: E402
from gojax.runtime import enable_gpu_graphs  # noqa: E402


def bench_pgx(board: int, batch: int, repeats: int, seed: int = 0) -> dict:
    import pgx
    env = pgx.make(f"go_{board}x{board}")

    @jax.jit
    def playouts(key):
        state = jax.vmap(env.init)(jax.random.split(key, batch))

        def cond(carry):
            s, _, _ = carry
            return ~s.terminated.all()

        def body(carry):
            s, k, moves = carry
            k, sub = jax.random.split(k)
            logits = jnp.where(s.legal_action_mask, 0.0, -jnp.inf)
            action = jax.random.categorical(sub, logits, axis=-1)
            moves = moves + (~s.terminated).astype(jnp.int32)
            return jax.vmap(env.step)(s, action), k, moves

        s, _, moves = jax.lax.while_loop(cond, body, (state, key, jnp.zeros(batch, jnp.int32)))
        return moves

    t0 = time.perf_counter()
    jax.block_until_ready(playouts(jax.random.key(seed)))
    compile_sec = time.perf_counter() - t0
    times, moves = [], []
    for i in range(repeats):
        t0 = time.perf_counter()
        m = jax.device_get(playouts(jax.random.key(seed + 1 + i)))
        times.append(time.perf_counter() - t0)
        moves.append(m.mean())
    sec = statistics.median(times)
    return {"engine": f"pgx {pgx.__version__}", "board": board, "batch": batch,
            "playouts_per_sec": batch / sec, "moves_per_sec": batch * float(np.mean(moves)) / sec,
            "mean_moves": float(np.mean(moves)), "compile_sec": compile_sec}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boards", type=int, nargs="+", default=[9, 19])
    ap.add_argument("--batches", type=int, nargs="+", default=[64, 256, 1024])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pgx-max-batch-19", type=int, default=64,
                    help="pgx on 19x19 takes minutes per batch on a CPU: larger batches are skipped")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = ap.parse_args()
    # On a GPU, the kernels as `gojax` runs them (gojax/runtime.py); the flag is the process's, so
    # pgx runs under it too.
    enable_gpu_graphs()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for board in args.boards:
        for batch in args.batches:
            ours = bench_playouts(board, batch, 1, args.repeats, progress=False)
            row = {"board": board, "batch": batch, "gojax_pps": ours["playouts_per_sec"],
                   "gojax_moves": ours["mean_moves"], "gojax_mps": ours["moves_per_sec"]}
            if board < 19 or batch <= args.pgx_max_batch_19:
                theirs = bench_pgx(board, batch, args.repeats)
                row.update(pgx_pps=theirs["playouts_per_sec"], pgx_moves=theirs["mean_moves"],
                           pgx_mps=theirs["moves_per_sec"], pgx=theirs["engine"])
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)

    lines = [f"Device: {device_description()}; jax {versions()['jax']}; median of {args.repeats} timed batches "
             f"after a warm-up compile (compile time excluded); {time.strftime('%Y-%m-%d')}.", "",
             "| board | batch | gojax playouts/s | pgx playouts/s | ratio | gojax moves/playout | pgx moves/playout "
             "| gojax board-moves/s | pgx board-moves/s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "pgx_pps" in r:
            lines.append(f"| {r['board']} | {r['batch']} | {r['gojax_pps']:,.0f} | {r['pgx_pps']:,.1f} | "
                         f"{r['gojax_pps'] / r['pgx_pps']:.0f}x | {r['gojax_moves']:.0f} | {r['pgx_moves']:.0f} | "
                         f"{r['gojax_mps']:,.0f} | {r['pgx_mps']:,.0f} |")
        else:
            lines.append(f"| {r['board']} | {r['batch']} | {r['gojax_pps']:,.0f} | (skipped) | | "
                         f"{r['gojax_moves']:.0f} | | {r['gojax_mps']:,.0f} | |")
    table = "\n".join(lines)
    with open(os.path.join(args.out, "compare_pgx.md"), "w") as f:
        f.write(table + "\n")
    print(table)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(args.boards), figsize=(5 * len(args.boards), 4), squeeze=False)
    for ax, board in zip(axes[0], args.boards):
        sel = [r for r in rows if r["board"] == board]
        ax.plot([r["batch"] for r in sel], [r["gojax_pps"] for r in sel], "o-", label="gojax")
        pg = [r for r in sel if "pgx_pps" in r]
        ax.plot([r["batch"] for r in pg], [r["pgx_pps"] for r in pg], "s--", label="pgx")
        ax.set(xscale="log", yscale="log", xlabel="batch (boards in flight)", ylabel="playouts / s",
               title=f"{board}x{board} uniform playouts")
        ax.legend()
    fig.suptitle(device_description(), fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "compare_pgx.png"), dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
