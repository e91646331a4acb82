"""The search's host work alone, replayed: descents, backups, priors, with no device in the way.

`gojax bench --search` times whole searches, where on a CPU the playouts and the search thread
share the cores and the machine's speed drifts: host changes of 10-20% drown in that noise.
This script runs the searches of `gojax bench --search` once for real, records every device
call's result (as numpy), and then re-runs the same searches with a simulator that hands back
the recorded results at once.  The search is deterministic given those results, so every replay
builds the same tree (checked), and its wall time is host work only, on one thread.

    python bench/host_replay.py [--simulations 3000] [--leaves 8] [--playouts-per-leaf 4] [--replays 5]

Reports the median replay time per search and per leaf.  Compare two checkouts by running it in
each, alternating.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import statistics
import time

import jax

from gojax.bench import bench_positions
from gojax.search.device import Simulator
from gojax.search.mcts import Search
from gojax.search.params import SearchParams


class RecordingSimulator(Simulator):
    """The real playouts; keeps each call's result on the host."""

    def __init__(self, params: SearchParams):
        super().__init__(params)
        self.results: list = []

    def submit(self, rows, keys, calls, pools=None):
        res = jax.device_get(self.dispatch(rows, keys, calls, pools))
        self.results.append(res)
        done = concurrent.futures.Future()
        done.set_result(res)
        return done


class ReplaySimulator(Simulator):
    """Hands back recorded results in order, with no device work."""

    def __init__(self, params: SearchParams, results: list):
        super().__init__(params)
        self.results = iter(results)

    def submit(self, rows, keys, calls, pools=None):
        done = concurrent.futures.Future()
        done.set_result(next(self.results))
        return done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", type=int, default=9)
    ap.add_argument("--simulations", type=int, default=3000)
    ap.add_argument("--leaves", type=int, default=8)
    ap.add_argument("--playouts-per-leaf", type=int, default=4)
    ap.add_argument("--replays", type=int, default=5)
    args = ap.parse_args()
    params = SearchParams(leaves=args.leaves, playouts_per_leaf=args.playouts_per_leaf)
    recorded = []
    for pos in bench_positions(args.board):
        sim = RecordingSimulator(params)
        res = Search(pos, params, sim).run(simulations=args.simulations, stop_early=False)
        recorded.append((pos, sim.results, res.nodes, res.move))
    times = []
    for _ in range(args.replays):
        for pos, results, nodes, move in recorded:
            t0 = time.perf_counter()
            res = Search(pos, params, ReplaySimulator(params, results)).run(simulations=args.simulations,
                                                                          stop_early=False)
            times.append(time.perf_counter() - t0)
            if (res.nodes, res.move) != (nodes, move):
                raise SystemExit(f"replay diverged: {res.nodes} nodes, move {res.move} (recorded {nodes}, {move})")
    per_search = statistics.median(times)
    leaves = args.simulations / args.playouts_per_leaf
    print(f"{args.board}x{args.board}, {args.simulations} simulations, L{args.leaves} x K{args.playouts_per_leaf}: "
          f"host work {per_search:.3f} s per search (median of {len(times)}), "
          f"{1e3 * per_search / leaves:.3f} ms per leaf; nodes {[r[2] for r in recorded]}")


if __name__ == "__main__":
    main()
