"""Where a playout's move step spends its time: the real playout loop (kernels/playout.py) timed
per iteration under settings that leave parts of it out, on one batch of mid-game boards.

    python bench/step_parts.py [--board 19] [--batch 32] [--stones 0.3] [--repeats 7]
        [--setting NAME:field=value,...]... [--json]

A step's time: two runs of the same playouts stopped at a short and a long move cap
(PlayoutConfig.move_cap), their time difference over their difference in loop iterations, so
the call's dispatch, the start and the final scoring cancel out, and every setting plays the
same number of iterations from the same boards (a rule left out changes the moves, not the
count).  What a part costs is the step time it saves when left out: `--setting
nosave:save_prob=0` against the first setting.  By default: MoGo's policy as the playouts run it,
without each of its rules in turn, and the uniform policy.  Each round times every setting once,
in turn, so a machine's drift hits them alike; medians over --repeats rounds.  The batch runs on
the default device as one array (on a CPU: one device, XLA's whole thread pool), not split over
a device per core as a 13x13 or 19x19 search splits it.

The boards: --batch games of random legal moves until --stones of the points hold stones
(seeded), so captures, ataris and two-liberty chains occur as in a playout.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from gojax.kernels.host import Board  # noqa: E402
from gojax.kernels.playout import PlayoutConfig, run_playouts  # noqa: E402
from gojax.kernels.state import batch_from_host  # noqa: E402

DEFAULT_SETTINGS = ("mogo", "no_save:save_prob=0", "no_pattern:pattern_prob=0", "no_capture:capture_prob=0",
                    "no_two_lib:two_lib_prob=0", "no_self_atari:self_atari_prob=0", "no_cycle_stop:cycle_window=0",
                    "uniform:policy=uniform")


def midgame_boards(size: int, batch: int, stones: float, seed: int) -> list[Board]:
    """`batch` boards, each from random legal moves until a `stones` share of the points hold
    stones (or 3 x size^2 moves, or no legal move)."""
    rng = np.random.default_rng(seed)
    boards = []
    for _ in range(batch):
        b = Board(size)
        for _ in range(3 * size * size):
            if int((b.stones != 0).sum()) >= stones * size * size:
                break
            pts = b.legal_points()
            if not pts:
                break
            b.play(int(rng.choice(pts)))
        boards.append(b)
    return boards


def parse_setting(text: str, base: PlayoutConfig | None = None) -> tuple[str, PlayoutConfig]:
    """'NAME' or 'NAME:field=value,...' over `base` (default PlayoutConfig(policy="mogo")) -> (name, config)."""
    name, _, rest = text.partition(":")
    fields = {f.name: f for f in dataclasses.fields(PlayoutConfig)}
    changes = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep or key not in fields:
            raise ValueError(f"--setting {text!r}: {item!r} is not field=value over PlayoutConfig's fields")
        default = getattr(PlayoutConfig(), key)
        try:
            changes[key] = (value.lower() in ("1", "true") if isinstance(default, bool) else
                            int(value) if isinstance(default, int) else
                            float(value) if isinstance(default, float) else value)
        except ValueError:
            raise ValueError(f"--setting {text!r}: {value!r} is not a value for {key}") from None
    try:
        return name, dataclasses.replace(base or PlayoutConfig(policy="mogo"), **changes)
    except (TypeError, ValueError) as e:
        raise ValueError(f"--setting {text!r}: {e}") from None


def loop_pair(config: PlayoutConfig, size: int, run=run_playouts):
    """Jitted fn(state, key) -> moves int32 [B] of the playout loop stopped at size^2 / 8 and at
    size^2 / 4 moves; `run` is run_playouts, or another checkout's (bench/kernel_ab.py)."""
    caps = (max(2, size * size // 8), max(4, size * size // 4))
    return tuple(jax.jit(lambda s, k, cap=cap: run(s, k, 1, dataclasses.replace(config, move_cap=cap)).moves)
                 for cap in caps)


def step_times(loops: dict, state, key, rounds: int) -> tuple[dict, dict, dict]:
    """Each named `loop_pair`'s microseconds per loop iteration in each of `rounds` rounds, every
    pair once per round in turn.  Returns (iterations [short, long], times, the long run's moves)."""
    iterations, moves = {}, {}
    for name, pair in loops.items():  # compile, warm, count the iterations each runs
        out = [np.asarray(f(state, key)) for f in pair]
        iterations[name], moves[name] = [int(o.max()) for o in out], out[1]
        if iterations[name][1] <= iterations[name][0]:
            raise ValueError(f"{name}: every playout ends within {iterations[name][0]} moves; "
                             "start from boards with fewer --stones")
    times = {name: [] for name in loops}
    for _ in range(rounds):
        for name, pair in loops.items():
            spent = []
            for f in pair:
                t = time.perf_counter()
                jax.block_until_ready(f(state, key))
                spent.append(time.perf_counter() - t)
            times[name].append((spent[1] - spent[0]) / (iterations[name][1] - iterations[name][0]) * 1e6)
    return iterations, times, moves


def measure(size: int, batch: int, stones: float, repeats: int, settings: list[str], seed: int = 0) -> dict:
    """Median microseconds per loop iteration under each setting, per board, and against the first."""
    configs = dict(parse_setting(s) for s in settings)
    state = batch_from_host(midgame_boards(size, batch, stones, seed))
    key = jax.random.key(seed)
    loops = {name: loop_pair(cfg, size) for name, cfg in configs.items()}
    iterations, times, _ = step_times(loops, state, key, repeats)
    step = {name: statistics.median(ts) for name, ts in times.items()}
    first = next(iter(step.values()))
    return {"board": size, "batch": batch, "stones": stones, "repeats": repeats,
            "device": str(jax.devices()[0].device_kind), "iterations": iterations, "us_per_step": step,
            "us_per_board_step": {k: v / batch for k, v in step.items()},
            "vs_first": {k: v / first for k, v in step.items()}}


def format_report(r: dict) -> str:
    lines = [f"{r['board']}x{r['board']}, {r['batch']} boards from {r['stones']:.0%} stones, {r['device']}:"
             f" microseconds per loop iteration (median of {r['repeats']})",
             f"{'setting':16s} {'us/step':>9s} {'us/board':>9s} {'vs first':>9s}  iterations"]
    for name, us in r["us_per_step"].items():
        lines.append(f"{name:16s} {us:9.1f} {r['us_per_board_step'][name]:9.2f} {r['vs_first'][name]:9.2f}"
                     f"  {r['iterations'][name][0]} / {r['iterations'][name][1]}")
    return "\n".join(lines)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", type=int, default=19)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--stones", type=float, default=0.3, help="share of the points holding stones (0.3)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--setting", action="append", metavar="NAME:field=value,...",
                    help="a PlayoutConfig over MoGo's defaults (repeatable; the first is the baseline); "
                         f"default: {' '.join(DEFAULT_SETTINGS)}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="end stdout with the figures as one JSON line")
    args = ap.parse_args(argv)
    if not 0 <= args.stones < 1:
        ap.error(f"--stones must lie in [0, 1), got {args.stones}")
    if min(args.batch, args.repeats) < 1:
        ap.error("--batch and --repeats must be at least 1")
    try:
        r = measure(args.board, args.batch, args.stones, args.repeats, args.setting or list(DEFAULT_SETTINGS), args.seed)
    except ValueError as e:
        ap.error(str(e))
    print(format_report(r))
    if args.json:
        print(json.dumps(r))
    return r


if __name__ == "__main__":
    main()
