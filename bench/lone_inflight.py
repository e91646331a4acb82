"""A lone search's in-flight nodes: the host twin against the compiled call, paired in one process.

A node that an earlier descent of the same round made has no verdicts when a later descent
reaches it.  A lone search reads it with the host twin where the playouts run on the CPU
backend, and with `Simulator.verdicts_now` (compiled code on the host's CPU) where they run on
an accelerator (`Simulator.verdicts_apart`): on one CPU backend the compiled call waits behind
the playout call in flight (bench/results/forest/README.md, "A compiled call's fixed cost").
This script times both on the machine it runs on, so that the choice can be checked there:

    python bench/lone_inflight.py [--simulations 3000] [--rounds 6] [--json OUT]

Each round runs `gojax bench`'s three positions once each way, the order alternating round by
round, on one simulator (one compile); both ways build the same trees (bench/search_digest.py,
tests/test_forest.py).  Prints each way's median seconds, host sections and the search thread's
CPU per three searches, and the wall-time ratio (compiled / twin) round by round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from gojax.runtime import auto_cpu_threads, backend_is_cpu, limit_cpu_threads  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=3000, help="per search (default 3000)")
    ap.add_argument("--rounds", type=int, default=6, help="rounds of three searches each way (default 6)")
    ap.add_argument("--json", help="append one JSON line with every round's figures")
    args = ap.parse_args(argv)
    if args.simulations < 1 or args.rounds < 1:
        raise SystemExit("lone_inflight: --simulations and --rounds must be positive")
    from gojax.search.params import SearchParams
    params = SearchParams()
    # As `gojax bench --search` and `gojax gtp` run a lone search: one XLA thread on a CPU backend.
    threads = auto_cpu_threads(params.leaves * params.playouts_per_leaf, backend_is_cpu())
    if threads:
        limit_cpu_threads(threads)
    import jax

    from gojax.bench import bench_positions
    from gojax.search.device import Simulator
    from gojax.search.mcts import Search

    simulator = Simulator(params)
    positions = bench_positions(9)
    apart = simulator.verdicts_apart  # what a lone search on this machine does
    simulator.verdicts_apart = True  # compile the compiled call's shape too
    simulator.warm_up(positions[0])
    rows = {"twin": [], "compiled": []}
    for r in range(args.rounds):
        for way in (("twin", "compiled") if r % 2 == 0 else ("compiled", "twin")):
            simulator.verdicts_apart = way == "compiled"
            seconds = host = cpu = 0.0
            for board in positions:
                res = Search(board, params, simulator).run(simulations=args.simulations, stop_early=False)
                seconds, host, cpu = seconds + res.seconds, host + res.host_seconds, cpu + res.host_cpu_seconds
            rows[way].append({"seconds": seconds, "host_seconds": host, "host_cpu_seconds": cpu})
    ratios = [c["seconds"] / t["seconds"] for t, c in zip(rows["twin"], rows["compiled"])]
    print(f"{jax.devices()[0].platform}, 9x9, lone searches of {args.simulations} simulations at L{params.leaves} x "
          f"K{params.playouts_per_leaf}, {args.rounds} rounds of three positions each way; this machine's "
          f"lone search uses the {'compiled call' if apart else 'host twin'}")
    for way, runs in rows.items():
        med = {k: statistics.median(x[k] for x in runs) for k in runs[0]}
        print(f"{way:9s} seconds {med['seconds']:.3f}  host sections {med['host_seconds']:.3f}  "
              f"search thread CPU {med['host_cpu_seconds']:.3f} (medians, per three searches)")
    print(f"wall time compiled / twin round by round: median {statistics.median(ratios):.3f}, "
          f"{min(ratios):.3f} .. {max(ratios):.3f}")
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps({"platform": jax.devices()[0].platform, "simulations": args.simulations,
                                "apart": apart, "rounds": rows, "ratios": ratios}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
