"""How near the playouts' mean outcome comes to a teacher's value, per playout policy: the
quantity simulation balancing lowers (Huang, Coulom and Lin 2010), on `gojax balance-policy`'s
held-out positions, so that a balanced model and the policies it should beat are measured alike.

    python bench/playout_values.py VALUES.npz --positions POSITIONS.npz [--value-range 0.15 0.85]
        [--playouts 32] [--setting NAME:field=value,...]... [--json]

VALUES.npz: game, move and value (Black's) per position, as bench/teacher_values.py writes it; a
teacher positions.npz that carries a value column serves as both.  A --setting is a
PlayoutConfig over MoGo's defaults (bench/step_parts.py's form: `uniform:policy=uniform`,
`balanced:policy=learnt,policy_model=B.npz`); by default mogo, uniform and the bundled learnt
policy.  Every setting plays from the same positions with the same keys; the mean squared error
carries the estimate's own noise (at most 0.25 / --playouts), alike for all; the teacher's
variance is the error of a constant guess (their mean), the bar a useful playout value clears.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.step_parts import parse_setting  # noqa: E402
from gojax.kernels import rules  # noqa: E402
from gojax.kernels.playout import run_playouts  # noqa: E402
from gojax.kernels.state import unpack_fields, with_placeholder_chains  # noqa: E402
from gojax.learn_policy import BalanceConfig, balance_positions, balance_split  # noqa: E402

DEFAULT_SETTINGS = ("mogo", "uniform:policy=uniform", "learnt:policy=learnt")
CHUNK = 64  # start positions per device call, as balance-policy sends them


def playout_values(packed: np.ndarray, config, playouts: int, seed: int) -> np.ndarray:
    """float32 [V]: the mean outcome for Black of `playouts` playouts from each packed position."""
    out = []
    for s in range(0, len(packed), CHUNK):
        part = packed[s:s + CHUNK]
        full = np.concatenate([part, np.repeat(part[:1], CHUNK - len(part), axis=0)])  # one compiled shape
        states = jax.vmap(rules.with_chains)(with_placeholder_chains(unpack_fields(full)))
        r = run_playouts(states, jax.random.fold_in(jax.random.key(seed), s), playouts, config)
        out.append(np.asarray(r.wins)[:len(part)] / playouts)
    return np.concatenate(out).astype(np.float32)


def measure(values: str, positions: str, value_range: tuple[float, float], playouts: int, settings: list[str],
            seed: int = 0, held_out: float = BalanceConfig.held_out) -> dict:
    """Each setting's mean squared error (and its standard error) against the teacher on the held-out
    positions of balance-policy's split."""
    configs = dict(parse_setting(s) for s in settings)  # a bad setting fails before any work
    packed, target, _ = balance_positions(positions, values)
    keep = (target >= value_range[0]) & (target <= value_range[1])
    packed, target = packed[keep], target[keep]
    if not len(target):
        raise ValueError(f"no position's value lies in {list(value_range)}")
    test = balance_split(len(target), held_out, BalanceConfig.seed)[0]
    rows = {}
    for name, cfg in configs.items():
        v = playout_values(packed[test], cfg, playouts, seed)
        err = (v - target[test]) ** 2
        rows[name] = {"mse": float(err.mean()), "stderr": float(err.std(ddof=1) / np.sqrt(len(err))),
                      "correlation": float(np.corrcoef(v, target[test])[0, 1]), "mean": float(v.mean())}
    return {"positions": int(len(test)), "value_range": list(value_range), "playouts": playouts,
            "teacher_mean": float(target[test].mean()), "teacher_variance": float(target[test].var()), "settings": rows}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("values", help="values.npz (game, move, value) or a positions.npz with a value column")
    ap.add_argument("--positions", required=True, help="the positions.npz whose games the values index")
    ap.add_argument("--value-range", type=float, nargs=2, default=[0.0, 1.0], metavar=("LO", "HI"))
    ap.add_argument("--playouts", type=int, default=32)
    ap.add_argument("--setting", action="append", metavar="NAME:field=value,...",
                    help=f"a PlayoutConfig over MoGo's defaults (repeatable); default: {' '.join(DEFAULT_SETTINGS)}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="end stdout with the figures as one JSON line")
    args = ap.parse_args(argv)
    if args.playouts < 1:
        ap.error("--playouts must be at least 1")
    try:
        r = measure(args.values, args.positions, tuple(args.value_range), args.playouts,
                    args.setting or list(DEFAULT_SETTINGS), args.seed)
    except (OSError, ValueError) as e:
        ap.error(str(e))
    print(f"{r['positions']} held-out positions, teacher values in {r['value_range']} (mean {r['teacher_mean']:.3f}, "
          f"variance {r['teacher_variance']:.4f}: the error of their mean), {r['playouts']} playouts each")
    for name, row in r["settings"].items():
        print(f"{name:16s} mse {row['mse']:.4f} +- {row['stderr']:.4f}   correlation {row['correlation']:+.3f}"
              f"   mean {row['mean']:.3f}")
    if args.json:
        print(json.dumps(r))
    return r


if __name__ == "__main__":
    main()
