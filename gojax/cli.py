"""`gojax`: the command line.  One entry point, one subcommand per job; flags live only here.

    gojax bench [--board 9] [--batch 1024] [--playouts-per-position K] [--repeats R] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys


def _add_bench(sub):
    p = sub.add_parser("bench", help="playout throughput (uniform playouts from the empty board)")
    p.add_argument("--board", type=int, default=9, help="board size (default 9)")
    p.add_argument("--batch", type=int, default=1024, help="boards in flight per device call (default 1024)")
    p.add_argument("--playouts-per-position", type=int, default=1, metavar="K",
                   help="playouts per start position; batch / K positions (default 1)")
    p.add_argument("--repeats", type=int, default=5, help="timed batches; the median is reported (default 5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--amaf-rule", choices=["first", "same_colour"], default="first")
    p.add_argument("--json", action="store_true", help="end stdout with one JSON line")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run_bench)


def _run_bench(args) -> int:
    from gojax.bench import bench_playouts, format_report
    from kernels.playout import PlayoutConfig
    if not 5 <= args.board <= 19:
        raise SystemExit("gojax bench: --board must be 5..19")
    if args.batch < 1 or args.repeats < 1 or args.playouts_per_position < 1:
        raise SystemExit("gojax bench: --batch, --repeats and --playouts-per-position must be positive")
    try:
        r = bench_playouts(args.board, args.batch, args.playouts_per_position, args.repeats, args.seed,
                           PlayoutConfig(amaf_rule=args.amaf_rule), progress=not args.no_progress)
    except ValueError as err:
        raise SystemExit(f"gojax bench: {err}")
    print(format_report(r))
    if args.json:
        print(json.dumps(r))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gojax", description="Monte-Carlo Go on accelerators (JAX).")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_bench(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
