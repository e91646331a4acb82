"""A value head on the prior net's own trunk: does the move model's board reading carry the value
that the tree lacks where the game is in doubt?

    python bench/experiments/value_trunk.py NET --train DATA.npz [DATA.npz ...] --test TREE.npz
        [--hidden 64] [--epochs 30] [--head OTHER_NET] [--out OUT.npz]

The trunk is NET's convolutions but its last (the 1x1 to the move logits), frozen; each position's
features are the mean and the max of each channel over the board (as kernels/prior_net.ValueHead
pools its own trunk).  Only the hidden layer and the logit are fitted (cross-entropy to the
teacher's win probability for the side to move), on the training games of every --train file
(each split as `gojax learn-net` splits it: seed 0, 10% of games held out, so NET's own held-out
games stay held out here).  Measured, all positions and those the teacher puts in 0.15-0.85: the
held-out games of each --train file and every position of each --test file; `--head` measures a
fitted value head (`gojax learn-value`) beside it on the same positions.  `--out` saves NET with
the fitted head as a ValueHead whose trunk is NET's (a file `--value-model` reads).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from gojax import learn_net, learn_policy  # noqa: E402
from gojax.kernels import prior_net  # noqa: E402

DOUBT = (0.15, 0.85)


_pooled = jax.jit(prior_net.value_features)


def pooled(trunk, x: np.ndarray, chunk: int = 512) -> np.ndarray:
    """float32 [N, 2 C]: the trunk's channel means and maxima over the board of planes x."""
    out = []
    for s in range(0, len(x), chunk):
        part = x[s:s + chunk]
        pad = np.concatenate([part, np.repeat(part[-1:], chunk - len(part), 0)]) if len(part) < chunk else part
        out.append(np.asarray(_pooled(trunk, jnp.asarray(pad)))[:len(part)])
    return np.concatenate(out)


def _logit(head, f):
    w1, b1, w2, b2 = head
    return jax.nn.relu(f @ w1 + b1) @ w2 + b2


def fit(f: np.ndarray, y: np.ndarray, hidden: int, epochs: int, batch: int = 256, lr: float = 2e-3,
        l2: float = 1e-4, seed: int = 0, say=print):
    """Adam on the cross-entropy of a one-hidden-layer head over pooled features f [N, F]."""
    mu, sd = f.mean(0), f.std(0) + 1e-6  # standardised inside the first layer at the end
    fs = (f - mu) / sd
    k1, k2 = jax.random.split(jax.random.key(seed))
    head = (jax.random.normal(k1, (f.shape[1], hidden)) * np.sqrt(2 / f.shape[1]), jnp.zeros(hidden),
            jax.random.normal(k2, (hidden,)) * np.sqrt(1 / hidden), jnp.zeros(()))
    total = max(1, len(f) // batch) * epochs

    def loss(head, f, y):
        z = _logit(head, f)
        return -(y * jax.nn.log_sigmoid(z) + (1 - y) * jax.nn.log_sigmoid(-z)).mean() + l2 * (head[0] ** 2).sum()

    @jax.jit
    def step(head, m, v, t, f, y):
        lr_t = lr * 0.5 * (1 + jnp.cos(jnp.pi * (t - 1) / total))
        val, g = jax.value_and_grad(loss)(head, f, y)
        m = jax.tree.map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = jax.tree.map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        head = jax.tree.map(lambda p, a, b: p - lr_t * (a / (1 - 0.9 ** t)) / (jnp.sqrt(b / (1 - 0.999 ** t)) + 1e-8),
                            head, m, v)
        return head, m, v, val

    m = jax.tree.map(jnp.zeros_like, head)
    v = jax.tree.map(jnp.zeros_like, head)
    rng, t = np.random.default_rng(seed), 0
    for e in range(epochs):
        order, run = rng.permutation(len(f)), 0.0
        for i in range(len(f) // batch):
            idx = order[i * batch:(i + 1) * batch]
            t += 1
            head, m, v, val = step(head, m, v, t, jnp.asarray(fs[idx]), jnp.asarray(y[idx]))
            run += float(val)
        if (e + 1) % 5 == 0 or e == epochs - 1:
            say(f"epoch {e + 1}/{epochs}: training loss {run / max(1, len(f) // batch):.4f}")
    w1, b1, w2, b2 = (np.asarray(a) for a in head)
    # fold the standardisation into the first layer: (f - mu) / sd @ w1 = f @ (w1 / sd) - (mu / sd) @ w1
    return (w1 / sd[:, None]).astype(np.float32), (b1 - (mu / sd) @ w1).astype(np.float32), w2, b2


def measure(pred: np.ndarray, t: np.ndarray) -> dict:
    return learn_net.value_agreement(pred, t, DOUBT)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("net")
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--test", nargs="*", default=[])
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--head", default="", help="a net with a fitted value head to measure beside")
    ap.add_argument("--finetune", type=int, default=0, metavar="EPOCHS",
                    help="then fit trunk and head together for EPOCHS passes (the board's symmetries drawn per batch)")
    ap.add_argument("--learning-rate", type=float, default=5e-4, help="--finetune's first Adam step (5e-4)")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    t0 = time.monotonic()

    def say(text):
        print(f"[{time.monotonic() - t0:6.0f} s] {text}", file=sys.stderr, flush=True)

    layers, linear, size = prior_net.load_net(args.net)
    trunk = tuple((jnp.asarray(w), jnp.asarray(b)) for w, b in layers[:-1])
    other = prior_net.load_value(args.head) if args.head else None
    if other is not None:
        other_linear = prior_net.load_net(args.head)[1]
        if not np.array_equal(other_linear, linear):
            raise SystemExit(f"--head {args.head} reads another linear model's planes than {args.net}")
    feats, targets, sets, planes = [], [], [], []  # sets: (name, rows into the concatenation)
    train_rows, start, komis = [], 0, set()
    for path, is_test in [(p, False) for p in args.train] + [(p, True) for p in args.test]:
        kept = learn_net.kept_positions(path)
        y, komi = learn_net.value_targets(path, kept)
        komis.add(komi)
        x, _, _, _, game = learn_net.inputs(path, linear, kept=kept)
        f = pooled(trunk, x)
        theirs = None
        if other is not None:
            head = other._replace(komi=0.0)
            theirs = np.concatenate([np.asarray(learn_net._value_predict(head, x[s:s + 2048]))
                                     for s in range(0, len(x), 2048)])
        if args.finetune:
            planes.append(x)
        del x
        if is_test:
            rows = np.arange(len(y))
        else:
            tr, rows = learn_policy.split_games(game, 0.1, 0)
            train_rows.append(tr + start)
        sets.append((path, rows + start, theirs[rows] if theirs is not None else None))
        feats.append(f)
        targets.append(y)
        start += len(y)
        say(f"{path}: {len(y)} positions at komi {komi}, {len(rows)} measured")
    if len(komis) != 1:
        raise SystemExit(f"the files are at several komis: {sorted(komis)}")
    f, y = np.concatenate(feats), np.concatenate(targets)
    train = np.concatenate(train_rows)
    say(f"fitting on {len(train)} positions, {f.shape[1]} features")
    w1, b1, w2, b2 = fit(f[train], y[train], args.hidden, args.epochs, say=say)
    pred = 1 / (1 + np.exp(-(np.maximum(f @ w1 + b1, 0) @ w2 + b2)))
    trunk_np = tuple((np.asarray(w), np.asarray(b)) for w, b in layers[:-1])
    if args.finetune:
        report_frozen = {path: measure(pred[rows], y[rows]) for path, rows, _ in sets}
        say(f"frozen trunk: {json.dumps(report_frozen)}")
        x = np.concatenate(planes)
        del planes
        total = max(1, len(train) // 64) * args.finetune

        def rate(t):
            return args.learning_rate * 0.5 * (1 + jnp.cos(jnp.pi * (t - 1) / total))

        def progress(e, n, loss, h):
            say(f"finetune epoch {e}/{n}: training loss {loss:.4f}")
        start_head = prior_net.ValueHead(trunk, jnp.asarray(w1), jnp.asarray(b1), jnp.asarray(w2), jnp.asarray(b2), 0.0)
        tuned = learn_net.adam_epochs(start_head, lambda h, x, y: learn_net._value_loss(h, x, y, 1e-5), (x, y), train,
                                      args.finetune, 64, rate, 0, progress)
        trunk_np = tuple((np.asarray(w), np.asarray(b)) for w, b in tuned.trunk)
        w1, b1, w2, b2 = (np.asarray(a, np.float32) for a in tuned[1:5])
        head = tuned._replace(komi=0.0)
        pred = np.concatenate([np.asarray(learn_net._value_predict(head, x[s:s + 2048]))
                               for s in range(0, len(x), 2048)])
    report = {"net": args.net, "hidden": args.hidden, "epochs": args.epochs, "train_positions": int(len(train)),
              "train": measure(pred[train[:8192]], y[train[:8192]])}
    for path, rows, theirs in sets:
        report[path] = {"trunk_head": measure(pred[rows], y[rows])}
        if theirs is not None:
            report[path]["head"] = measure(theirs, y[rows])
            report[path]["half_and_half"] = measure(0.5 * (theirs + pred[rows]), y[rows])
    print(json.dumps(report, indent=1))
    if args.out:
        head = prior_net.ValueHead(trunk_np, w1, b1,
                                   np.asarray(w2, np.float32), np.asarray(b2, np.float32), komis.pop())
        prior_net.save_net(args.out, layers, linear, size, value=head, value_report=json.dumps(report))
        say(f"-> {args.out}")


if __name__ == "__main__":
    main()
