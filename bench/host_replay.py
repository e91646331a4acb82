"""The search's host work alone, replayed: descents, backups, priors, with no device in the way.

`gojax bench --search` times whole searches, where on a CPU the playouts and the search thread
share the cores and the machine's speed drifts: host changes of 10-20% drown in that noise.
This script runs the searches of `gojax bench --search` once for real, records every device
call's result (as numpy), and then re-runs the same searches with a simulator that hands back
the recorded results at once.  The search is deterministic given those results, so every replay
builds the same tree (checked), and its wall time is host work only, on one thread.

    python bench/host_replay.py [--simulations 3000] [--leaves 8] [--playouts-per-leaf 4] [--replays 5]
                                [--trees G] [--profile N] [--set FIELD=VALUE] [--versus FIELD=VALUE,...]
                                [--sgf FILE ... --move N]

Reports the median replay time per search and per leaf.  `--trees G` replays forests of G trees
(as `gojax bench --search --trees G` builds them) instead of lone searches; `--profile N` prints
the N functions with the most cumulative time over one more replay.  `--versus` replays other
search settings in turn with the first in one process (ratios that survive a noisy machine);
compare two checkouts by running it in each, alternating.  `--sgf FILE ...` replays from
the positions after `--move` moves of real game records instead of `gojax bench`'s three
positions (the empty board and two random games): later positions cost the host more per leaf.
`--idle S` replays the first setting once more per replay, in turn, with the search thread asleep
S seconds before each round's results, as a forest that waits for a slower device sleeps: the
same work, and what the pauses alone add to its CPU time.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import cProfile
import dataclasses
import json
import os
import pstats
import statistics
import sys
import time

import jax

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.oracle_positions import parse_settings  # noqa: E402
from gojax.bench import bench_positions, record_positions  # noqa: E402
from gojax.search.device import Simulator, Submitted, rows_size  # noqa: E402
from gojax.search.forest import Forest  # noqa: E402
from gojax.search.params import SearchParams  # noqa: E402


def _done(value) -> concurrent.futures.Future:
    done = concurrent.futures.Future()
    done.set_result(value)
    return done


class RecordingSimulator(Simulator):
    """The real playouts; keeps each call's leaf verdicts and result on the host."""

    def __init__(self, params: SearchParams):
        super().__init__(params)
        self.results: list = []

    def submit(self, rows, keys, calls, pools=None, ahead=False):
        prepared = concurrent.futures.Future()
        res = jax.device_get(self._round(rows, keys, calls, pools, prepared))
        self.results.append((self._unpack(jax.device_get(prepared.result()), rows_size(rows[0])), res))
        return Submitted(_done(self.results[-1][0]) if ahead else None, _done(res))

    def verdicts(self, boards, rows):  # SearchParams.waves
        self.results.append((super().verdicts(boards, rows), None))
        return self.results[-1][0]


class ReplaySimulator(Simulator):
    """Hands back recorded results in order, with no device work."""

    def __init__(self, params: SearchParams, results: list):
        super().__init__(params)
        self.results = iter(results)

    def submit(self, rows, keys, calls, pools=None, ahead=False):
        verdicts, res = next(self.results)
        return Submitted(_done(verdicts) if ahead else None, _done(res))

    def verdicts(self, boards, rows):
        return next(self.results)[0]


class IdleReplaySimulator(ReplaySimulator):
    """A replay whose search thread sleeps `idle` seconds before each round's results, as a
    search waits for a device slower than its host work (a forest on a CPU backend)."""

    def __init__(self, params: SearchParams, results: list, idle: float):
        super().__init__(params, results)
        self.idle, self.slept = idle, 0.0

    def submit(self, rows, keys, calls, pools=None, ahead=False):
        t0 = time.perf_counter()
        time.sleep(self.idle)
        self.slept += time.perf_counter() - t0
        return super().submit(rows, keys, calls, pools, ahead)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", type=int, default=9)
    ap.add_argument("--simulations", type=int, default=3000)
    ap.add_argument("--leaves", type=int, default=8)
    ap.add_argument("--playouts-per-leaf", type=int, default=4)
    ap.add_argument("--replays", type=int, default=5)
    ap.add_argument("--trees", type=int, default=1, help="G: replay forests of G trees")
    ap.add_argument("--sgf", action="extend", nargs="+", default=[], metavar="FILE",
                    help="start from these game records' positions after --move moves")
    ap.add_argument("--move", type=int, default=None, metavar="N",
                    help="with --sgf: the moves to replay from each record (default: all)")
    ap.add_argument("--serve", action="store_true",
                    help="record, then replay once per 'replay' line on stdin, one JSON line each (bench/host_ab.py)")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="print the N costliest functions")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="a SearchParams field (repeatable), e.g. in_flight=sidestep")
    ap.add_argument("--idle", type=float, action="append", default=[], metavar="SECONDS",
                    help="also replay the first setting with the search thread asleep this long before each "
                         "round's results (a device-bound search's wait), alternating with its plain replays "
                         "(repeatable)")
    ap.add_argument("--versus", action="append", default=[], metavar="FIELD=VALUE[,FIELD=VALUE]",
                    help="another setting (repeatable), recorded and replayed in turn with the first in this "
                         "process, order alternating: paired ratios on a noisy machine")
    args = ap.parse_args()
    base = parse_settings(args.set)
    settings = [("base", base)] + [(v, {**base, **parse_settings(v.split(","))}) for v in args.versus]
    try:
        positions = record_positions(args.sgf, args.move) if args.sgf else bench_positions(args.board)
    except ValueError as err:
        raise SystemExit(str(err)) from None

    def cases_of(params):
        if args.trees > 1:
            boards = [positions[g % len(positions)] for g in range(args.trees)]
            return [(boards, [dataclasses.replace(params, seed=params.seed + g) for g in range(args.trees)])]
        return [([pos], [params]) for pos in positions]

    def search(boards, plist, sim):
        forest = Forest(boards, plist, sim)
        results = forest.run(args.simulations, stop_early=False)
        return [(r.nodes, r.move) for r in results], forest.last_timing["host_cpu_seconds"]

    recorded = {}  # setting -> [(boards, plist, device results, outcome)]
    for name, fields in settings:
        params = SearchParams(leaves=args.leaves, playouts_per_leaf=args.playouts_per_leaf, **fields)
        recorded[name] = []
        for boards, plist in cases_of(params):
            sim = RecordingSimulator(params)
            recorded[name].append((boards, plist, sim.results, search(boards, plist, sim)[0]))
    leaves = args.trees * args.simulations / args.playouts_per_leaf

    def replay(name, idle: float = 0.0) -> tuple[float, float]:
        """One replay of every case of a setting (`idle`: IdleReplaySimulator's sleep per round):
        (wall, search-loop CPU) seconds per case."""
        wall = cpu = 0.0
        for boards, plist, results, outcome in recorded[name]:
            t0 = time.perf_counter()
            sim = IdleReplaySimulator(plist[0], results, idle) if idle else ReplaySimulator(plist[0], results)
            replayed, c = search(boards, plist, sim)
            wall += time.perf_counter() - t0 - getattr(sim, "slept", 0.0)  # the host's work, not its sleep
            cpu += c
            if replayed != outcome:
                raise SystemExit(f"replay diverged: {replayed[:4]} (recorded {outcome[:4]})")
        return wall / len(recorded[name]), cpu / len(recorded[name])

    if args.serve:  # bench/host_ab.py drives two checkouts' copies of this, one replay at a time
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            if line.strip() != "replay":
                break
            wall, cpu = replay("base")
            print(json.dumps({"wall": wall, "cpu": cpu, "cpu_ms_per_leaf": 1e3 * cpu / leaves}), flush=True)
        return
    # Each series: (its name, the setting it replays, the sleep per round).
    series = [(name, name, 0.0) for name, _ in settings]
    series += [(f"idle {idle:g} s per round", "base", idle) for idle in args.idle]
    times = {name: [] for name, _, _ in series}  # per replay: wall seconds and CPU seconds over the cases
    cpus = {name: [] for name, _, _ in series}
    for i in range(args.replays):
        for name, setting, idle in (series if i % 2 == 0 else series[::-1]):
            wall, cpu = replay(setting, idle)
            times[name].append(wall)
            cpus[name].append(cpu)
    for name, setting, _ in series:
        per_case = statistics.median(times[name])
        nodes = [o[0] for o in recorded[setting][0][3]]
        print(f"{'' if name == 'base' else name + ': '}{positions[0].size}x{positions[0].size}, G={args.trees}, "
              f"{args.simulations} simulations per tree, L{args.leaves} x K{args.playouts_per_leaf}: host work "
              f"{per_case:.3f} s per {'forest' if args.trees > 1 else 'search'} (median of {args.replays}), "
              f"{1e3 * per_case / leaves:.3f} ms per leaf; the search loop's CPU alone (as `gojax bench` "
              f"counts it) {1e3 * statistics.median(cpus[name]) / leaves:.3f} ms per leaf "
              f"(fastest replay {1e3 * min(cpus[name]) / leaves:.3f}); "
              f"nodes {nodes[:4]} ({sum(nodes)} in all)")
        if name != "base":
            ratios = sorted(b / a for a, b in zip(cpus["base"], cpus[name]))
            print(f"  CPU per leaf over the base's, replay by replay: median {statistics.median(ratios):.3f}, "
                  f"{ratios[0]:.3f} .. {ratios[-1]:.3f}")
    if args.profile:
        boards, plist, results, _ = recorded["base"][0]
        prof = cProfile.Profile()
        prof.runcall(search, boards, plist, ReplaySimulator(plist[0], results))
        pstats.Stats(prof).sort_stats("cumulative").print_stats(args.profile)
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
