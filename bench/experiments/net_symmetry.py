"""The prior net's prediction of a teacher's favourite move, alone and averaged over the board's
symmetries (`--prior-symmetries S`, kernels/prior_net.symmetric_forward), on held-out games.

    python bench/experiments/net_symmetry.py NET DATA.npz [DATA.npz ...] [--all]

Each file is split into training and held-out games as `gojax learn-net` splits it (seed 0, 10%),
and the held-out positions are measured (`--all`: every position, for a file the net never saw).
Prints top-1 agreement with the teacher's favourite and cross-entropy to its distribution for
S = 1, 2, 4 and 8.
"""

from __future__ import annotations

import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from gojax import learn_net, learn_policy  # noqa: E402
from gojax.kernels import prior_net  # noqa: E402

COUNTS = (1, 2, 4, 8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net")
    ap.add_argument("data", nargs="+")
    ap.add_argument("--all", action="store_true", help="measure every position, not the held-out games")
    args = ap.parse_args()
    layers, linear, _ = prior_net.load_net(args.net)
    layers = tuple((jnp.asarray(w), jnp.asarray(b)) for w, b in layers)

    @jax.jit
    def log_probs(x, lin, legal):
        n = len(x)
        out = []
        for s in COUNTS:
            logit = jax.vmap(lambda xi, li, s=s: prior_net.symmetric_forward(layers, xi, li, s))(x, lin)
            out.append(jax.nn.log_softmax(jnp.where(legal, logit, -1e9).reshape(n, -1), -1))
        return out

    print(f"net {args.net}; top-1 of the teacher's favourite / cross-entropy, by S")
    print("| data | positions | " + " | ".join(f"S = {s}" for s in COUNTS) + " |")
    print("| --- | --- |" + " --- |" * len(COUNTS))
    for path in args.data:
        arrays = learn_net.inputs(path, linear)
        idx = np.arange(len(arrays[4])) if args.all else learn_policy.split_games(arrays[4], 0.1, 0)[1]
        top = [[] for _ in COUNTS]
        ce = [[] for _ in COUNTS]
        for start in range(0, len(idx), 1024):
            part = idx[start:start + 1024]
            x, lin, legal, target = (jnp.asarray(a[part]) for a in arrays[:4])
            t = target.reshape(len(part), -1)
            flat = legal.reshape(len(part), -1)
            for i, lp in enumerate(log_probs(x, lin, legal)):
                top[i].append(np.asarray(jnp.argmax(lp, -1) == t.argmax(-1)))
                ce[i].append(np.asarray(-(t * jnp.where(flat, lp, 0.0)).sum(-1)))
        cells = [f"{np.concatenate(a).mean():.1%} / {np.concatenate(c).mean():.3f}" for a, c in zip(top, ce)]
        print(f"| {path} | {len(idx)} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
