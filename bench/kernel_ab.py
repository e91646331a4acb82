"""The playout step of this checkout's kernels against another checkout's, in ONE process.

    python bench/kernel_ab.py BASE_CHECKOUT [--board 19] [--batch 32] [--stones 0.3] [--rounds 9]
        [--setting field=value,...] [--json]

Separate processes on a shared 2-core machine differ by more than a kernel change is worth, so
this builds both playout loops here: BASE_CHECKOUT's kernels/rules.py, policy.py and playout.py
are executed as modules of their own (the other kernel modules, unchanged by such work, are this
checkout's), and each round times the two loops in turn, A B A B.  A step's time is
bench/step_parts.py's: the difference of two runs stopped at two move caps over their difference
in loop iterations, so dispatch, the start and the scoring cancel out.  Both play from the same
mid-game boards with the same key; the report says whether whole playouts from them agreed
(outcomes, scores, lengths and AMAF tables: a faster path to the same playouts must agree).
The ratio is NEW / BASE per round; its median is the figure.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import types

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from step_parts import loop_pair, midgame_boards, parse_setting, step_times  # noqa: E402

from gojax.kernels import playout  # noqa: E402
from gojax.kernels.state import batch_from_host  # noqa: E402

_MODULES = ("rules", "policy", "playout")  # executed from the base checkout, in this order


def base_kernels(checkout: str) -> dict[str, types.ModuleType]:
    """The base checkout's rules, policy and playout as modules of their own (base_gojax_kernels.*),
    each pointed at the base's versions of the ones before it; every other import is this
    checkout's."""
    done: dict[str, types.ModuleType] = {}
    for name in _MODULES:
        path = os.path.join(checkout, "kernels", f"{name}.py")
        if not os.path.isfile(path):
            raise SystemExit(f"kernel_ab: {path} not found: BASE_CHECKOUT must be a gojax checkout")
        spec = importlib.util.spec_from_file_location(f"base_gojax_kernels.{name}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        # Its functions look their globals up when called: point its references to the kernels
        # before it (`rules`, and names imported from them) at the base's.
        for prev, base_mod in done.items():
            here = sys.modules[f"gojax.kernels.{prev}"]
            for k, v in list(vars(mod).items()):
                if v is here:
                    setattr(mod, k, base_mod)
                elif not k.startswith("__") and getattr(here, k, None) is v and hasattr(base_mod, k):
                    setattr(mod, k, getattr(base_mod, k))
        done[name] = mod
    return done


def measure(base: str, size: int, batch: int, stones: float, rounds: int, setting: str, seed: int = 0) -> dict:
    kernels = base_kernels(base)
    try:
        _, config = parse_setting("s:" + setting if setting else "s", playout.PlayoutConfig(policy="mogo", mercy=0.25))
    except ValueError as e:
        raise SystemExit(f"kernel_ab: {e}") from None
    # The base's PlayoutConfig is its own class: rebuild the setting there, field by field.
    base_cls = kernels["playout"].PlayoutConfig
    base_fields = {f for f in base_cls.__dataclass_fields__}
    base_config = base_cls(**{k: v for k, v in vars(config).items() if k in base_fields})
    state = batch_from_host(midgame_boards(size, batch, stones, seed))
    key = jax.random.key(seed)
    loops = {"base": loop_pair(base_config, size, kernels["playout"].run_playouts.__wrapped__),
             "new": loop_pair(config, size, playout.run_playouts.__wrapped__)}
    try:
        iterations, times, _ = step_times(loops, state, key, rounds)
    except ValueError as e:
        raise SystemExit(f"kernel_ab: {e}") from None
    # The same playouts: whole runs from the same boards and key, their outcomes, lengths and AMAF tables.
    played = {}
    for name, run, cfg in (("base", kernels["playout"].run_playouts, base_config), ("new", playout.run_playouts, config)):
        r = run(state, key, 1, cfg)
        played[name] = [np.asarray(x) for x in (r.z, r.score, r.moves, r.amaf_count)]
    same = all(np.array_equal(a, b) for a, b in zip(played["base"], played["new"]))
    ratios = [n / b for n, b in zip(times["new"], times["base"])]
    return {"board": size, "batch": batch, "stones": stones, "rounds": rounds, "setting": setting or "mogo, mercy 0.25",
            "device": str(jax.devices()[0].device_kind), "base": os.path.abspath(base),
            "us_per_step": {k: statistics.median(v) for k, v in times.items()},
            "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "same_playouts": same, "iterations": iterations}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", metavar="BASE_CHECKOUT")
    ap.add_argument("--board", type=int, default=19)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--stones", type=float, default=0.3)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--setting", default="", metavar="field=value,...",
                    help="PlayoutConfig fields over MoGo's policy with mercy 0.25, as a search plays it")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if min(args.batch, args.rounds) < 1 or not 0 <= args.stones < 1:
        ap.error("need --batch and --rounds >= 1 and --stones in [0, 1)")
    r = measure(args.base, args.board, args.batch, args.stones, args.rounds, args.setting)
    print(f"{r['board']}x{r['board']}, {r['batch']} boards from {r['stones']:.0%} stones, {r['setting']}, "
          f"{r['device']}, {r['rounds']} rounds A B A B in one process")
    print(f"  base  {r['us_per_step']['base']:8.1f} us per loop iteration (median)   {r['base']}")
    print(f"  new   {r['us_per_step']['new']:8.1f} us per loop iteration (median)")
    print(f"  new / base, round by round: median {r['ratio_median']:.3f} ({r['ratio_min']:.3f}-{r['ratio_max']:.3f});"
          f" the same playouts: {'yes' if r['same_playouts'] else 'NO'}")
    if args.json:
        print(json.dumps(r))
    return r


if __name__ == "__main__":
    main()
