"""Host cost per leaf of two checkouts, replay for replay: paired ratios on a noisy machine.

`bench/host_replay.py` times one checkout; run twice, minutes apart, the two runs differ by
more than the 3-10% a host change is worth on this project's shared machines.  This script
starts `bench/host_replay.py --serve` in each checkout (each records its own device results:
the searches are the same, so the replays are too), both on one core, and then asks them for
one replay at a time, A then B, B then A, ...: each pair of neighbouring replays saw the same
machine, and the ratio B / A of a pair is what is reported (median and range), beside each
side's median CPU per leaf, and the ratio of the two sides' fastest replays.

    python bench/host_ab.py BASE_DIR NEW_DIR [--pairs 8] [--cpu 0] [--json OUT] -- HOST_REPLAY_ARGS

BASE_DIR, NEW_DIR: checkouts of gojax (`git worktree add --detach DIR COMMIT` makes one), each
run with its own code (PYTHONPATH=DIR) and its own bench/host_replay.py (a checkout older than
its `--serve`: copy this one's over it); the arguments after `--` go to both, e.g.
`-- --trees 64 --simulations 1000`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys


def _start(checkout: str, cpu: int | None, replay_args: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=checkout)
    cmd = [sys.executable, os.path.join(checkout, "bench", "host_replay.py"), "--serve", *replay_args]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu), *cmd]
    proc = subprocess.Popen(cmd, cwd=checkout, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if json.loads(_line(proc, checkout)).get("ready") is not True:
        raise SystemExit(f"{checkout}: host_replay.py --serve did not start")
    return proc


def _line(proc: subprocess.Popen, checkout: str) -> str:
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"{checkout}: host_replay.py --serve ended early (rc {proc.wait()}); is it a checkout "
                         f"with --serve?")
    return line


def _replay(proc: subprocess.Popen, checkout: str) -> float:
    proc.stdin.write("replay\n")
    proc.stdin.flush()
    return json.loads(_line(proc, checkout))["cpu_ms_per_leaf"]


def main() -> None:
    argv = sys.argv[1:]
    replay_args = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", help="checkout A (the reference)")
    ap.add_argument("new", help="checkout B")
    ap.add_argument("--pairs", type=int, default=8, help="replays of each, alternating")
    ap.add_argument("--cpu", type=int, default=0, help="the core both run on (-1: no pinning)")
    ap.add_argument("--json", metavar="OUT", help="append the result as one JSON line to OUT")
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    cpu = None if args.cpu < 0 else args.cpu
    sides = [(k, d, _start(d, cpu, replay_args)) for k, d in enumerate((args.base, args.new))]
    ms: list[list[float]] = [[], []]  # A's and B's CPU per leaf, replay by replay (A and B may be one checkout)
    try:
        for i in range(args.pairs):
            for k, d, proc in (sides if i % 2 == 0 else sides[::-1]):
                ms[k].append(_replay(proc, d))
            print(f"pair {i + 1}/{args.pairs}: A {ms[0][-1]:.4f}  B {ms[1][-1]:.4f} ms per leaf",
                  file=sys.stderr, flush=True)
    finally:
        for _, _, proc in sides:
            proc.stdin.close()
            proc.wait()
    ratios = sorted(b / a for a, b in zip(*ms))
    out = {"base": args.base, "new": args.new, "replay_args": replay_args, "pairs": args.pairs,
           "base_ms_per_leaf": ms[0], "new_ms_per_leaf": ms[1],
           "base_median": statistics.median(ms[0]), "new_median": statistics.median(ms[1]),
           "ratio_median": statistics.median(ratios), "ratio_min": ratios[0], "ratio_max": ratios[-1],
           # A replay is deterministic CPU work: the machine's noise only adds to it, so each
           # side's fastest replay is a second reading, steadier than a median on a busy hour.
           "base_fastest": min(ms[0]), "new_fastest": min(ms[1]), "ratio_fastest": min(ms[1]) / min(ms[0])}
    print(f"host CPU per leaf: A {out['base_median']:.4f} ms, B {out['new_median']:.4f} ms (medians of {args.pairs}); "
          f"B / A pair by pair: median {out['ratio_median']:.3f}, {ratios[0]:.3f} .. {ratios[-1]:.3f}; "
          f"fastest replays: A {out['base_fastest']:.4f}, B {out['new_fastest']:.4f} ms, B / A {out['ratio_fastest']:.3f}")
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
