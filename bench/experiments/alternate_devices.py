"""Can a lone 9x9 search use the second core by alternating its rounds over two CPU devices?

A lone 9x9 search plays its rounds on one pinned XLA thread (gojax/runtime.py: splitting each
round's 32 boards over a device per core ran no faster).  The loop already keeps one round on
the device while it descends the next (search/loop.py), so with a device per core, round r and
round r + 1 could run at once on different cores.  This measures it, the search unchanged (the
leaf keys do not depend on the device: the same moves, checked below):

  one        the default: one device, XLA's pool on one claimed core (limit_cpu_threads(1));
  alternate  one virtual device per core (split_cpu_devices), round i on device i % 2, each
             dispatched from its own thread (a CPU device runs a call on the thread that
             dispatches it, so one dispatch thread would play them in turn);
  pinned     alternate, each dispatch thread held on a core of its own, XLA's Eigen pool
             single-threaded (--xla_cpu_multi_thread_eigen=false).

Each setting runs in a process of its own (the devices are fixed when JAX starts), in turn,
`--cycles` times; each process times `--repeats` 3,000-simulation searches from each of `gojax
bench`'s three positions and prints its median simulations/s.  Also printed: N calls of one
round back to back on one device, and alternated over two from two threads (the ceiling).

    python bench/experiments/alternate_devices.py [--cycles 3] [--repeats 2]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

MODES = ("one", "alternate", "pinned")


def run_mode(mode: str, repeats: int, simulations: int) -> dict:
    """Time searches in this process with `mode`'s devices; their moves and rates."""
    from gojax import runtime
    if mode == "pinned":
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false").strip()
    if mode == "one":
        runtime.limit_cpu_threads(1)
    else:
        runtime.split_cpu_devices()
    import jax

    from gojax.bench import bench_positions
    from gojax.search import device as dev
    from gojax.search.mcts import Search
    from gojax.search.params import SearchParams

    params = SearchParams()
    devices = jax.local_devices() if mode != "one" else [None]
    sim = dev.Simulator(params, device=devices[0])
    positions = bench_positions(9)
    for d in devices:
        sim.device = d
        sim.warm_up(positions[0])
    if mode != "one":
        turn = itertools.count()
        plain_round = sim._round
        cores = itertools.count()

        def alternating(*args, **kwargs):
            sim.device = devices[next(turn) % len(devices)]
            return plain_round(*args, **kwargs)

        def hold_core():
            if mode == "pinned":
                allowed = sorted(os.sched_getaffinity(0))
                os.sched_setaffinity(threading.get_native_id(), {allowed[next(cores) % len(allowed)]})

        sim._round = alternating
        sim._worker = concurrent.futures.ThreadPoolExecutor(len(devices), "gojax-device", initializer=hold_core)
        sim._fetcher = concurrent.futures.ThreadPoolExecutor(1, "gojax-fetch")
    rates, moves = [], []
    for pos in positions:
        for _ in range(repeats):
            res = Search(pos, params, sim).run(simulations=simulations, stop_early=False)
            rates.append(res.simulations / res.seconds)
            moves.append(res.move)
    return {"mode": mode, "median": statistics.median(rates), "rates": rates, "moves": moves}


def ceiling(calls: int = 40) -> dict:
    """Milliseconds per round: back to back on one device, and alternated over two devices."""
    from gojax import runtime
    runtime.split_cpu_devices()
    import jax
    import numpy as np

    from gojax.bench import bench_positions
    from gojax.search import device as dev
    from gojax.search.params import SearchParams
    params = SearchParams()
    sims = [dev.Simulator(params, device=d) for d in jax.local_devices()[:2]]
    pos = bench_positions(9)[1]
    for s in sims:
        s.warm_up(pos)
    key = np.asarray(jax.random.key_data(jax.random.key(0)))[None]

    def call(s, c):
        return jax.block_until_ready(s.dispatch([[pos] * params.leaves], key, [c]).wins)

    t = time.perf_counter()
    for c in range(calls):
        call(sims[0], c)
    one = time.perf_counter() - t
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda c: call(sims[c % 2], c), range(calls)))
    two = time.perf_counter() - t
    return {"one_device_ms": 1e3 * one / calls, "two_devices_ms": 1e3 * two / calls}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--simulations", type=int, default=3000)
    ap.add_argument("--mode", choices=MODES + ("ceiling",), help=argparse.SUPPRESS)  # one child process
    args = ap.parse_args()
    if args.mode == "ceiling":
        print(json.dumps(ceiling()))
        return
    if args.mode:
        print(json.dumps(run_mode(args.mode, args.repeats, args.simulations)))
        return
    table: dict = {m: [] for m in MODES}
    moves = {}
    for cycle in range(args.cycles):
        for mode in MODES:
            out = subprocess.run([sys.executable, __file__, "--mode", mode, "--repeats", str(args.repeats),
                                  "--simulations", str(args.simulations)], capture_output=True, text=True, check=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            table[mode].append(row["median"])
            moves.setdefault(mode, row["moves"])
            print(f"cycle {cycle}: {mode:9s} {row['median']:7.0f} simulations/s", flush=True)
    print("same moves in every setting:", len({tuple(m) for m in moves.values()}) == 1)
    for mode in MODES:
        ratios = [b / a for a, b in zip(table["one"], table[mode])]
        print(f"{mode:9s} medians {[round(x) for x in table[mode]]}, against one cycle by cycle "
              f"{[round(r, 2) for r in ratios]}")
    out = subprocess.run([sys.executable, __file__, "--mode", "ceiling"], capture_output=True, text=True, check=True)
    c = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"device alone: {c['one_device_ms']:.1f} ms per round on one device, {c['two_devices_ms']:.1f} alternated "
          f"over two")


if __name__ == "__main__":
    main()
