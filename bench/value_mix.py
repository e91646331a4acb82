"""How near a leaf evaluation comes to a teacher's value when the playouts' mean outcome is mixed
with a value head's estimate, (1 - w) playouts + w value (--value-weight), on the games
`gojax learn-value` held out (the same split), so that the head never saw them.

    python bench/value_mix.py POSITIONS.npz --net NET [--playouts 64] [--weights 0 0.25 0.5 0.75 1]

POSITIONS.npz: a teacher positions file with values (bench/teacher_policy.py --pack); NET: a
prior net with a value head fitted on it.  Reports, per weight, the squared error and the
correlation with the teacher over all held-out positions and over those in doubt (teacher value
0.15-0.85), beside the error of a constant guess (the variance).  All values are Black's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.playout_values import CHUNK, playout_values  # noqa: E402
from gojax import learn_policy  # noqa: E402
from gojax.kernels import prior_net, rules  # noqa: E402
from gojax.kernels.playout import PlayoutConfig  # noqa: E402
from gojax.kernels.state import packed_fields, unpack_fields, with_placeholder_chains  # noqa: E402
from gojax.learn_net import ValueConfig, check_values, kept_positions  # noqa: E402


def held_out_boards(path: str):
    """(boards, Black's teacher values) of the positions learn-value held out."""
    check_values(path)
    ds, data, boards = kept_positions(path)
    _, test = learn_policy.split_games(ds.game, ValueConfig.held_out, ValueConfig.seed)
    return [boards[i] for i in test.tolist()], data["value"][ds.kept[test]].astype(np.float32)


def net_values(packed: np.ndarray, net: str) -> np.ndarray:
    fn = jax.jit(lambda p: prior_net.black_value(
        jax.vmap(rules.with_chains)(with_placeholder_chains(unpack_fields(p))), net))
    out = []
    for s in range(0, len(packed), CHUNK):
        part = packed[s:s + CHUNK]
        out.append(np.asarray(fn(np.concatenate([part, np.repeat(part[:1], CHUNK - len(part), axis=0)])))[:len(part)])
    return np.concatenate(out)


def measure(path: str, net: str, playouts: int, weights: list[float], seed: int = 0) -> dict:
    prior_net.load_value(net)  # one line if it has no value head
    boards, target = held_out_boards(path)
    packed = np.asarray(packed_fields(boards))
    mc = playout_values(packed, PlayoutConfig(), playouts, seed)
    v = net_values(packed, net)
    rows = {}
    for name, m in (("all", np.ones(len(target), bool)), ("in_doubt", (target >= 0.15) & (target <= 0.85))):
        rows[name] = {"positions": int(m.sum()), "constant_guess": float(target[m].var()), "weights": {}}
        for w in weights:
            z = (1 - w) * mc[m] + w * v[m]
            rows[name]["weights"][str(w)] = {"mse": float(((z - target[m]) ** 2).mean()),
                                             "correlation": float(np.corrcoef(z, target[m])[0, 1])}
    return {"data": path, "net": net, "playouts": playouts, "rows": rows}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("positions")
    ap.add_argument("--net", required=True)
    ap.add_argument("--playouts", type=int, default=64)
    ap.add_argument("--weights", type=float, nargs="+", default=[0.0, 0.25, 0.5, 0.75, 1.0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        r = measure(args.positions, args.net, args.playouts, args.weights, args.seed)
    except (OSError, ValueError) as e:
        ap.error(str(e))
    for name, row in r["rows"].items():
        print(f"{name}: {row['positions']} held-out positions, constant guess {row['constant_guess']:.4f}")
        for w, x in row["weights"].items():
            print(f"  weight {w:5s} mse {x['mse']:.4f}  correlation {x['correlation']:+.3f}")
    print(json.dumps(r))
    return r


if __name__ == "__main__":
    main()
