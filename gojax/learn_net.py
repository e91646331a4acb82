"""`gojax learn-net`: fit the prior net (kernels/prior_net.py) to a teacher's move distributions
on top of a learnt linear model, and measure it on held-out games.

The data is a positions.npz of bench/teacher_policy.py (KataGo's policy) or teacher_data.py; the
targets and the split into training and held-out games are learn-policy's (gojax/learn_policy.py).
Each batch is turned by one of the board's 8 symmetries (the planes do not depend on the
orientation, so this only multiplies the data).  Adam on the cross-entropy; the last layer starts
at zero, so the untrained net is the linear model.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from gojax import learn_policy
from gojax.kernels import learnt, prior_net, rules
from gojax.kernels.geometry import BLACK
from gojax.kernels.state import packed_fields, unpack_fields, with_placeholder_chains


@dataclasses.dataclass(frozen=True)
class NetConfig:
    """The net's shape and its fit."""

    width: int = 32  # channels of each 3x3 convolution
    depth: int = 5  # 3x3 convolutions, then a 1x1 to one channel
    epochs: int = 20
    batch: int = 64
    learning_rate: float = 2e-3
    schedule: str = "constant"  # or "cosine": the rate decays to 0 over the fit (half a cosine)
    held_out: float = 0.1  # share of games kept for measuring (learn_policy.split)
    seed: int = 0


@functools.partial(jax.jit, static_argnames=("size",))
def _planes(packed: jax.Array, linear: jax.Array, size: int):
    state = jax.vmap(rules.with_chains)(with_placeholder_chains(unpack_fields(packed)))
    return jax.vmap(lambda s: prior_net.planes(s, linear))(state)


def kept_positions(path: str):
    """(learn_policy.build's Dataset, the file's arrays, the host board of each position it keeps:
    those with a legal move) of a teacher file, for `inputs` and `value_targets` to share."""
    ds = learn_policy.build(path)
    data = learn_policy._arrays(path, "a teacher positions file", learn_policy.POSITION_KEYS)
    every = learn_policy.replay(data)
    return ds, data, [every[i] for i in ds.kept.tolist()]


def inputs(path: str, linear: np.ndarray, chunk: int = 1024, kept=None):
    """(planes float32 [N, n, n, C], linear logits [N, n, n], legal bool [N, n, n], target [N, n, n],
    game [N]) of a teacher file, the positions learn_policy.build keeps (`kept`: kept_positions'
    answer for the file, if the caller has it)."""
    ds, data, boards = kept or kept_positions(path)
    size = int(data["size"])
    x, lin = [], []
    for s in range(0, len(boards), chunk):
        part = boards[s:s + chunk]
        p, li = _planes(packed_fields(part + [part[-1]] * (chunk - len(part))), jnp.asarray(linear), size)
        x.append(np.asarray(p)[:len(part)])
        lin.append(np.asarray(li)[:len(part)])
    shape = (len(boards), size, size)
    return (np.concatenate(x), np.concatenate(lin), ds.legal.reshape(shape), ds.target.reshape(shape), ds.game)


def _init(key, width: int, depth: int):
    layers, cin = [], prior_net.N_PLANES
    for _ in range(depth):
        key, k = jax.random.split(key)
        layers.append((jax.random.normal(k, (3, 3, cin, width)) * np.sqrt(2 / (9 * cin)), jnp.zeros(width)))
        cin = width
    layers.append((jnp.zeros((1, 1, cin, 1)), jnp.zeros(1)))
    return layers


def _log_probs(layers, x, lin, legal):
    logit = prior_net.forward(layers, x, lin)
    return jax.nn.log_softmax(jnp.where(legal, logit, -1e9).reshape(len(x), -1), -1)


def _loss(layers, x, lin, legal, target):
    lp = _log_probs(layers, x, lin, legal)
    return -(target.reshape(len(x), -1) * jnp.where(legal.reshape(len(x), -1), lp, 0.0)).sum(-1).mean()


@jax.jit
def _measure(layers, x, lin, legal, target):
    lp = _log_probs(layers, x, lin, legal)
    t = target.reshape(len(x), -1)
    return -(t * jnp.where(legal.reshape(len(x), -1), lp, 0.0)).sum(-1), jnp.argmax(lp, -1) == t.argmax(-1)


def evaluate(layers, arrays, idx: np.ndarray, chunk: int = 2048) -> dict:
    """Held-out cross-entropy to the teacher and top-1 agreement with its favourite."""
    ce, top = [], []
    for s in range(0, len(idx), chunk):
        part = idx[s:s + chunk]
        c, t = _measure(layers, *(a[part] for a in arrays[:4]))
        ce.append(np.asarray(c))
        top.append(np.asarray(t))
    return {"positions": int(len(idx)), "cross_entropy": round(float(np.concatenate(ce).mean()), 4),
            "top1_teacher": round(float(np.concatenate(top).mean()), 4)}


def _turn(a: jax.Array, k: int) -> jax.Array:
    """One of the 8 symmetries of the board axes (1, 2) of a batch."""
    return prior_net.turn(a, k, axes=(1, 2))


def adam_epochs(params, loss, batches: tuple[np.ndarray, ...], train: np.ndarray, epochs: int, batch: int,
                rate, seed: int, progress=None):
    """Adam on `loss(params, *batch_arrays)` over `epochs` passes of `train` (row indices into every
    array of `batches`, [N, n, n, ...] boards first), each batch turned by one of the board's 8
    symmetries (`_turn`); rate(t) the step size at step t = 1, 2, ...  progress(epoch, epochs,
    mean loss, params) after each pass.  Returns the params (device arrays)."""
    @functools.partial(jax.jit, static_argnames=("k",))
    def step(params, m, v, t, arrays, k):
        lr = rate(t)
        val, grad = jax.value_and_grad(loss)(params, *(_turn(a, k) if a.ndim >= 3 else a for a in arrays))
        m = jax.tree.map(lambda a, g: 0.9 * a + 0.1 * g, m, grad)
        v = jax.tree.map(lambda a, g: 0.999 * a + 0.001 * g * g, v, grad)
        params = jax.tree.map(lambda p, a, b: p - lr * (a / (1 - 0.9 ** t)) / (jnp.sqrt(b / (1 - 0.999 ** t)) + 1e-8),
                              params, m, v)
        return params, m, v, val

    steps = max(1, len(train) // batch)
    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    rng = np.random.default_rng(seed)
    t = 0
    for epoch in range(epochs):
        order = rng.permutation(train)
        total = 0.0
        for i in range(steps):
            idx = np.sort(order[i * batch:(i + 1) * batch])
            t += 1
            params, m, v, val = step(params, m, v, t, tuple(a[idx] for a in batches), k=int(rng.integers(8)))
            total += float(val)
        if progress:
            progress(epoch + 1, epochs, total / steps, params)
    return params


def fit(arrays, train: np.ndarray, config: NetConfig, progress=None, init=None):
    """Adam from `init` ((w, b) per layer, e.g. a net fitted on another board size) or from fresh
    weights of config's shape."""
    total_steps = max(1, len(train) // config.batch) * config.epochs

    def rate(t):
        if config.schedule == "cosine":
            return config.learning_rate * 0.5 * (1 + jnp.cos(jnp.pi * (t - 1) / total_steps))
        return config.learning_rate

    layers = (_init(jax.random.key(config.seed), config.width, config.depth) if init is None
              else [(jnp.asarray(w), jnp.asarray(b)) for w, b in init])
    layers = adam_epochs(layers, _loss, tuple(arrays[:4]), train, config.epochs, config.batch, rate, config.seed,
                         progress)
    return [(np.asarray(w), np.asarray(b)) for w, b in layers]


def main(args) -> None:
    """`gojax learn-net DATA --linear NPZ --out NET`: build, fit, measure on held-out games, save.
    With `--init NET`: start from that net (its shape and its linear model; the convolutions do
    not depend on the board size, so a net fitted on 9x9 can start a 13x13 one)."""
    init = None
    width, depth = args.width, args.depth
    if args.init:
        init, linear, _ = prior_net.load_net(args.init)  # ModelError is a ValueError: one line
        width, depth = init[0][0].shape[3], len(init) - 1
    elif args.epochs < 1:
        raise ValueError("--epochs 0 needs --init NET (a net to measure and save as it is)")
    else:
        linear, fitted = learnt.load_model(args.linear)
    config = NetConfig(width=width, depth=depth, epochs=args.epochs, seed=args.seed,
                       schedule=args.schedule, learning_rate=args.learning_rate)
    t0 = time.monotonic()

    def say(text):
        print(f"[{time.monotonic() - t0:6.0f} s] {text}", file=sys.stderr, flush=True)
    datas = args.data if isinstance(args.data, list) else [args.data]
    parts = [inputs(d, linear) for d in datas]
    size = parts[0][0].shape[1]
    if any(p[0].shape[1] != size for p in parts):
        raise ValueError(f"the data files are of several board sizes: {', '.join(datas)}")
    if init is None and size != fitted:
        raise ValueError(f"--linear {args.linear or learnt.BUNDLED} was fitted on {fitted}x{fitted}, the data is "
                         f"{size}x{size} (--init NET starts from a net of any size)")
    # each file is split on its own, so a file's held-out games stay those it has alone
    splits, start = [], 0
    for p in parts:
        tr, te = learn_policy.split_games(p[4], config.held_out, config.seed)
        splits.append((tr + start, te + start))
        start += len(p[4])
    arrays = [np.concatenate([p[i] for p in parts]) for i in range(4)]  # planes, linear, legal, target
    del parts
    train = np.concatenate([tr for tr, _ in splits])
    test = np.concatenate([te for _, te in splits])
    tests = {d: te for d, (_, te) in zip(datas, splits)} if len(datas) > 1 else {}
    say(f"{len(train)} training and {len(test)} held-out positions")
    linear_only, other = _init(jax.random.key(0), 1, 0), None
    if getattr(args, "measure", ""):  # a second teacher's positions, every one of them
        other = inputs(args.measure, linear)
        if other[0].shape[1] != size:
            raise ValueError(f"--measure {args.measure} is {other[0].shape[1]}x{other[0].shape[1]}, "
                             f"the data {size}x{size}")
        everything = np.arange(len(other[0]))
        report_other = {"data": args.measure, "linear": evaluate(linear_only, other, everything)}
        if init is not None:
            report_other["init"] = evaluate(init, other, everything)
        say(f"--measure {args.measure}: {report_other}")
    report = {"linear": evaluate(linear_only, arrays, test)}
    if tests:
        report["linear_by_data"] = {d: evaluate(linear_only, arrays, te) for d, te in tests.items()}
    say(f"the linear model alone: {report['linear']}")
    if init is not None:
        report["init"] = evaluate(init, arrays, test)
        if tests:
            report["init_by_data"] = {d: evaluate(init, arrays, te) for d, te in tests.items()}
        say(f"--init {args.init} as it is: {report['init']}")
    layers = fit(arrays, train, config, init=init, progress=lambda e, n, loss, layers: say(
        f"epoch {e}/{n}: training loss {loss:.4f}" + (f", held out {evaluate(layers, arrays, test)}" if e % 5 == 0 else "")))
    report |= {"data": datas if len(datas) > 1 else datas[0], "linear_model": args.init or args.linear or learnt.BUNDLED,
               "init_net": args.init, "config": dataclasses.asdict(config),
               "train_positions": int(len(train)), "held_out": evaluate(layers, arrays, test),
               "train": evaluate(layers, arrays, train[:4096])}
    if tests:
        report["held_out_by_data"] = {d: evaluate(layers, arrays, te) for d, te in tests.items()}
    if other is not None:
        report["measure"] = report_other | {"net": evaluate(layers, other, everything)}
        say(f"--measure {args.measure}, the fitted net: {report['measure']['net']}")
    prior_net.save_net(args.out, layers, linear, size, report=json.dumps(report))
    print(json.dumps(report, indent=1))
    say(f"net -> {args.out}")



@dataclasses.dataclass(frozen=True)
class ValueConfig:
    """The value head's shape and its fit (cross-entropy to the teacher's win probability)."""

    width: int = 16  # channels of each 3x3 convolution of its trunk (32 and 64, deeper: no better held out)
    depth: int = 3  # 3x3 convolutions
    hidden: int = 32  # units of the layer after the board's mean and max
    epochs: int = 12
    batch: int = 64
    learning_rate: float = 2e-3  # Adam's step size, decaying to 0 along half a cosine
    l2: float = 1e-4  # times the sum of the trunk's squared weights (1e-3 left every unit dead)
    held_out: float = 0.1  # share of games kept for measuring (learn_policy.split_games)
    seed: int = 0


def check_values(path: str) -> float:
    """The komi of a teacher file's games; ValueError if it has no values or mixes komis."""
    data = learn_policy._arrays(path, "a teacher positions file", learn_policy.POSITION_KEYS)
    if "value" not in data:
        raise ValueError(f"{path}: no teacher values (bench/teacher_policy.py --pack writes them)")
    komis = np.unique(data["komi"])
    if len(komis) != 1:
        raise ValueError(f"{path}: games at komis {komis.tolist()}; the value head is fitted at one komi")
    return float(komis[0])


def value_targets(path: str, kept=None) -> tuple[np.ndarray, float]:
    """(float32 [N] the teacher's win probability for the side to move at each position `inputs`
    keeps, the games' komi); ValueError if the file has no values or mixes komis.  `kept`:
    kept_positions' answer for the file, if the caller has it."""
    komi = check_values(path)
    ds, data, boards = kept or kept_positions(path)
    black = np.array([b.to_play == BLACK for b in boards])
    value = data["value"][ds.kept].astype(np.float32)
    if not np.all((value >= 0) & (value <= 1)):
        raise ValueError(f"{path}: teacher values outside [0, 1]")
    return np.where(black, value, 1.0 - value).astype(np.float32), komi


def _value_init(key, config: ValueConfig) -> prior_net.ValueHead:
    trunk, cin = [], prior_net.N_PLANES
    for _ in range(config.depth):
        key, k = jax.random.split(key)
        trunk.append((jax.random.normal(k, (3, 3, cin, config.width)) * np.sqrt(2 / (9 * cin)),
                      jnp.zeros(config.width)))
        cin = config.width
    w = jax.random.normal(key, (2 * cin, config.hidden)) * np.sqrt(1 / (2 * cin))
    return prior_net.ValueHead(tuple(trunk), w, jnp.zeros(config.hidden), jnp.zeros(config.hidden), jnp.zeros(()),
                               0.0)


def _value_loss(head, x, y, l2):
    z = prior_net.value_forward(head, x)
    ce = -(y * jax.nn.log_sigmoid(z) + (1 - y) * jax.nn.log_sigmoid(-z)).mean()
    return ce + l2 * sum((w ** 2).sum() for w, _ in head.trunk)


@jax.jit
def _value_predict(head, x):
    return jax.nn.sigmoid(prior_net.value_forward(head, x))


def evaluate_value(head, x: np.ndarray, y: np.ndarray, idx: np.ndarray, doubt=(0.15, 0.85)) -> dict:
    """Squared error and correlation to the teacher on positions `idx`, all of them and those
    in doubt (teacher value within `doubt`), beside the error of a constant guess (the variance)."""
    head = head._replace(komi=0.0)
    pred = np.concatenate([np.asarray(_value_predict(head, x[idx[s:s + 2048]])) for s in range(0, len(idx), 2048)])
    return value_agreement(pred, y[idx], doubt)


def value_agreement(pred: np.ndarray, t: np.ndarray, doubt=(0.15, 0.85)) -> dict:
    """Squared error and correlation of values `pred` to the teacher's `t`, all of them and those
    in doubt (t within `doubt`), beside the error of a constant guess (the variance)."""
    out = {}
    for name, m in (("all", np.ones(len(t), bool)), ("in_doubt", (t >= doubt[0]) & (t <= doubt[1]))):
        if m.sum() < 2:
            continue
        out[name] = {"positions": int(m.sum()), "squared_error": round(float(((pred[m] - t[m]) ** 2).mean()), 4),
                     "constant_guess": round(float(t[m].var()), 4),
                     "correlation": round(float(np.corrcoef(pred[m], t[m])[0, 1]), 3)}
    return out


def fit_value(x: np.ndarray, y: np.ndarray, train: np.ndarray, config: ValueConfig, komi: float,
              progress=None, init: prior_net.ValueHead | None = None) -> prior_net.ValueHead:
    """Adam on the cross-entropy, the step size decaying to 0 along half a cosine, from `init`'s
    weights if given (its komi is not read), else from random ones of `config`'s shape."""
    total = max(1, len(train) // config.batch) * config.epochs

    def rate(t):
        return config.learning_rate * 0.5 * (1 + jnp.cos(jnp.pi * (t - 1) / total))
    start = _value_init(jax.random.key(config.seed), config) if init is None else \
        jax.tree.map(jnp.asarray, init._replace(komi=0.0))
    if config.epochs == 0:
        head = start
    else:
        head = adam_epochs(start,
                           lambda h, x, y: _value_loss(h, x, y, config.l2), (x, y), train, config.epochs,
                           config.batch, rate, config.seed, progress)
    return prior_net.ValueHead(tuple((np.asarray(w), np.asarray(b)) for w, b in head.trunk),
                               *(np.asarray(a) for a in head[1:5]), komi)


def value_main(args) -> None:
    """`gojax learn-value DATA --net NET --out OUT`: fit a value head to the teacher's values of
    DATA over NET's input planes, measure it on held-out games, save NET with it.  With `--init
    HEADNET`: start from that net's value head (its planes do not depend on the board size, so a
    head fitted on 9x9 can start a 13x13 one; it must read NET's linear model)."""
    layers, linear, size = prior_net.load_net(args.net)
    init = None
    width, depth = args.width, args.depth
    if getattr(args, "init", ""):
        init = prior_net.load_value(args.init)  # ModelError (a ValueError): one line
        if not np.array_equal(prior_net.load_net(args.init)[1], linear):
            raise ValueError(f"--init {args.init} reads another linear model's planes than --net {args.net}")
        width, depth = init.trunk[0][0].shape[3], len(init.trunk)
    elif args.epochs < 1:
        raise ValueError("--epochs 0 needs --init NET (a value head to measure and save as it is)")
    config = ValueConfig(width=width, depth=depth, epochs=args.epochs, seed=args.seed,
                         learning_rate=args.learning_rate,
                         hidden=ValueConfig.hidden if init is None else init.hidden_w.shape[1])
    t0 = time.monotonic()

    def say(text):
        print(f"[{time.monotonic() - t0:6.0f} s] {text}", file=sys.stderr, flush=True)
    data_komi = check_values(args.data)  # before the positions are built: a file without values is a quick error
    if init is not None and init.komi != data_komi:
        raise ValueError(f"--init {args.init}'s head was fitted at komi {init.komi:g}, the data is at {data_komi:g}")
    kept = kept_positions(args.data)
    y, komi = value_targets(args.data, kept)
    x, _, _, _, game = inputs(args.data, linear, kept=kept)
    if x.shape[1] != size:
        raise ValueError(f"--net {args.net} was fitted on {size}x{size}, the data is {x.shape[1]}x{x.shape[1]}")
    train, test = learn_policy.split_games(game, config.held_out, config.seed)
    say(f"{len(train)} training and {len(test)} held-out positions, komi {komi}")
    report = {}
    if init is not None:
        report["init"] = evaluate_value(init, x, y, test)
        say(f"--init {args.init} as it is, held out: {report['init']}")
    head = fit_value(x, y, train, config, komi, init=init, progress=lambda e, n, loss, h: say(
        f"epoch {e}/{n}: training loss {loss:.4f}" + (f", held out {evaluate_value(h, x, y, test)}" if e % 4 == 0 else "")))
    report |= {"data": args.data, "net": args.net, "init_head": getattr(args, "init", ""),
               "config": dataclasses.asdict(config), "komi": komi,
              "train_positions": int(len(train)), "held_out": evaluate_value(head, x, y, test),
              "train": evaluate_value(head, x, y, train[:4096])}
    with np.load(args.net, allow_pickle=False) as f:
        info = {k: f[k] for k in ("report",) if k in f.files}
    prior_net.save_net(args.out, layers, linear, size, value=head, value_report=json.dumps(report), **info)
    print(json.dumps(report, indent=1))
    say(f"net with its value head -> {args.out}")
