"""Where the time goes, from a py-spy profile: each function's share of the samples under one
function (by default the search loop, `Forest.run`), inclusive and self.

    py-spy record -r 400 -f raw -o SPY.txt -- python bench/host_replay.py --trees 64 --simulations 1000 --replays 6
    python bench/spy_shares.py SPY.txt [--within Forest.run] [--under main.<locals>.replay] [--top 40]
                               [--show descend,Board.after,...] [--group NAME=f,g,...]

py-spy's raw format is one line per distinct stack, "frame;frame;... COUNT", each frame
"function (file:line)".  `--under` keeps only stacks through that function too: in a
host_replay profile, `main.<locals>.replay` leaves out the recording run, whose device calls
are not host work.  Shares are of the samples inside `--within`; a function counts once per
stack however often it recurs.  `--group NAME=f,g,...` (repeatable) prints the share of the
samples whose stack passes through any of f, g, ... (a sample counts once however many it
passes through): what taking all of them away could save at most.  `pip install py-spy` (not a
gojax dependency).
"""

from __future__ import annotations

import argparse
import collections
import sys


def function_of(frame: str) -> str:
    """'Forest.run (search/forest.py:140)' -> 'Forest.run'."""
    return frame.rsplit(" (", 1)[0] if frame.endswith(")") and " (" in frame else frame


def shares(lines, within: str, under: str | None = None,
           groups: dict[str, set[str]] | None = None) -> tuple[int, dict[str, int], dict[str, int]]:
    """(samples inside `within`, inclusive samples per function, self samples per function) of
    py-spy raw lines; only stacks through `within` (and `under`, when given) count.  Each of
    `groups` (name: functions) is counted in `inclusive` under its name, once per stack through
    any of its functions."""
    total, inclusive, own = 0, collections.Counter(), collections.Counter()
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        if not stack.strip() and count.isdigit():  # samples py-spy could not attribute to a stack
            continue
        if not count.isdigit():
            raise ValueError(f"line {n}: not py-spy's raw format ('frame;frame;... COUNT'): {line[:80]!r}")
        names = [function_of(f) for f in stack.split(";")]
        if within not in names or (under is not None and under not in names):
            continue
        c = int(count)
        total += c
        inside = set(names[names.index(within):])
        for name in inside:
            inclusive[name] += c
        for name, functions in (groups or {}).items():
            if inside & functions:
                inclusive[name] += c
        own[names[-1]] += c
    return total, dict(inclusive), dict(own)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", help="py-spy record -f raw output")
    ap.add_argument("--within", default="Forest.run", help="shares of the samples inside this function")
    ap.add_argument("--under", default=None, help="and only stacks through this one too")
    ap.add_argument("--top", type=int, default=40, help="the N largest, inclusive and self")
    ap.add_argument("--show", default="", help="comma-separated functions to print whatever their rank")
    ap.add_argument("--group", action="append", default=[], metavar="NAME=f,g,...",
                    help="the share of the samples through any of these functions, counted once")
    args = ap.parse_args(argv)
    groups = {}
    for spec in args.group:
        name, _, functions = spec.partition("=")
        if not name or not functions:
            raise SystemExit(f"spy_shares: --group {spec!r}: give NAME=function,function,...")
        groups[name] = set(functions.split(","))
    try:
        with open(args.raw) as f:
            total, inclusive, own = shares(f, args.within, args.under, groups)
    except (OSError, ValueError) as err:
        raise SystemExit(f"spy_shares: {err}") from None
    if not total:
        raise SystemExit(f"spy_shares: no sample inside {args.within!r}"
                         + (f" through {args.under!r}" if args.under else ""))
    print(f"{total} samples inside {args.within}" + (f" through {args.under}" if args.under else ""))
    functions = {name: c for name, c in inclusive.items() if name not in groups}
    for title, table in (("inclusive", functions), ("self", own)):
        print(f"--- {title}")
        for name, c in sorted(table.items(), key=lambda kv: -kv[1])[:args.top]:
            print(f"{100 * c / total:5.1f}%  {name}")
    for name in groups:
        print(f"--- group {name} (inclusive, each sample once): {100 * inclusive.get(name, 0) / total:.1f}%")
    if args.show:
        print("--- asked for (inclusive)")
        for name in args.show.split(","):
            print(f"{100 * inclusive.get(name, 0) / total:5.1f}%  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
