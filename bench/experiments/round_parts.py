"""Where a 9x9 search round's device time goes: the prior net, the value head, the playouts.

A round of the default search (L8 x K4 on one pinned XLA thread) is prepare_round (the leaves'
chains, legal moves, the prior net's logits and, on 9x9, the value head's trunk) and then
play_round (32 MoGo playouts).  This times, in turn in one process, prepare_round without the
value head, prepare_round with it, and the whole round (Simulator.dispatch), all from the same
8 leaves (`gojax bench`'s second position); then the net's convolution stack alone for those 8
boards, as XLA's convolution and as an im2col matrix product, to see how far from a core's
peak the trunk runs.

    python bench/experiments/round_parts.py [--repeats 7] [--calls 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()
    from gojax import runtime
    runtime.limit_cpu_threads(1)
    import jax
    import jax.numpy as jnp
    import numpy as np

    from gojax.bench import bench_positions
    from gojax.kernels import prior_net
    from gojax.kernels.state import packed_fields
    from gojax.search import device as dev
    from gojax.search.params import SearchParams

    params = SearchParams()
    sim = dev.Simulator(params)
    pos = bench_positions(9)[1]
    sim.warm_up(pos)
    plan = sim.plan(9)
    packed = packed_fields([pos] * params.leaves)
    tables = sim.shape_tables(9, None)
    key = np.asarray(jax.random.key_data(jax.random.key(0)))[None]

    def prepare(value_model):
        return lambda: jax.block_until_ready(dev.prepare_round(packed, plan.with_prior, plan.with_pattern, tables,
                                                               plan.learnt_prior, value_model, plan.symmetries))

    layers, _, _ = prior_net.load_net(plan.learnt_prior)
    weights = tuple((jnp.asarray(w), jnp.asarray(b)) for w, b in layers)
    x = jnp.asarray(np.random.default_rng(0).normal(size=(params.leaves, 9, 9, layers[0][0].shape[2])), jnp.float32)

    def stack(im2col: bool):
        def run(h):
            for i, (w, b) in enumerate(weights):
                if im2col and w.shape[0] == 3:
                    p = jnp.pad(h, ((0, 0), (1, 1), (1, 1), (0, 0)))
                    cols = jnp.concatenate([p[:, dy:dy + 9, dx:dx + 9] for dy in range(3) for dx in range(3)], -1)
                    h = cols @ w.reshape(-1, w.shape[-1]) + b
                else:
                    h = jax.lax.conv_general_dilated(h, w, (1, 1), "SAME",
                                                     dimension_numbers=("NHWC", "HWIO", "NHWC")) + b
                if i < len(weights) - 1:
                    h = jax.nn.relu(h)
            return h
        fn = jax.jit(run)
        return lambda: jax.block_until_ready(fn(x))

    parts = {"prepare (prior net, verdicts)": prepare(None), "prepare + value head": prepare(plan.value_model),
             "whole round": lambda: jax.block_until_ready(sim.dispatch([[pos] * params.leaves], key, [0]).wins),
             "conv stack (XLA conv)": stack(False), "conv stack (im2col)": stack(True)}
    for fn in parts.values():
        fn()
    times: dict = {name: [] for name in parts}
    for _ in range(args.repeats):
        for name, fn in parts.items():
            t = time.perf_counter()
            for _ in range(args.calls):
                fn()
            times[name].append(1e3 * (time.perf_counter() - t) / args.calls)
    macs = sum(params.leaves * 81 * int(np.prod(w.shape)) for w, _ in layers)
    print(f"9x9, {params.leaves} leaves x {params.playouts_per_leaf} playouts, {jax.devices()[0].device_kind}, "
          f"one XLA thread; ms per call (median of {args.repeats} x {args.calls}):")
    for name, v in times.items():
        ms = statistics.median(v)
        extra = f"  ({2 * macs / ms / 1e6:.0f} GFLOP/s)" if name.startswith("conv") else ""
        print(f"  {name:32s} {ms:7.2f}{extra}")


if __name__ == "__main__":
    main()
