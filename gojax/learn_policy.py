"""`gojax learn-policy`: fit the learnt playout policy (kernels/learnt.py) to a teacher's move
distributions, and measure how well it predicts them on held-out games.

The data is a positions.npz of bench/teacher_data.py (per position Pachi's pattern-prior
percents over the moves) or bench/teacher_policy.py (KataGo's network policy, exact, in
`policy`).  The fit maximises the likelihood of the teacher's distribution (cross-entropy, with
an L2 penalty) over the legal moves that are not own eyes, the moves a playout may draw; games
are split into training and held-out ones by a fixed hash.  With a starting model (`--init`)
the penalty pulls towards its weights, not towards 0: a few thousand strong labels then refine a
model fitted on many weaker ones, and shapes they never show keep their old weights.  The
features are the same on every board size, so a model fitted on one size may start another's
(the 3x3 shapes of a few thousand 19x19 positions are too sparse to fit from nothing).
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

from gojax.kernels import learnt, rules
from gojax.kernels.geometry import BLACK, WHITE, Geometry
from gojax.kernels.host import Board, IllegalMove
from gojax.kernels.state import packed_fields, unpack_fields, with_placeholder_chains

UNLABELLED = 255


@dataclasses.dataclass(frozen=True)
class FitConfig:
    """How the weights are fitted (maximum likelihood, Adam)."""

    epochs: int = 6
    batch: int = 1024  # positions per step
    learning_rate: float = 0.05
    l2: float = 1e-5  # times the sum of squared weights, per position
    # percent given to a legal move the teacher rated 0 or left unlabelled (Pachi's percents), or
    # called illegal (KataGo's exact policy: its own zeros stay 0)
    floor: float = 0.1
    held_out: float = 0.1  # share of games kept for measuring
    seed: int = 0


@dataclasses.dataclass
class Dataset:
    feats: np.ndarray  # int32 [N, P, S]  flat weight indices per point and slot
    legal: np.ndarray  # bool [N, P]  legal, not an own eye
    target: np.ndarray  # float32 [N, P]  the teacher's distribution over the legal points
    next: np.ndarray  # int16 [N]  the point played next
    player: np.ndarray  # int16 [N]  who played it (index into player_names)
    player_names: list[str]
    game: np.ndarray  # int32 [N]  the source game (`_families`)
    kept: np.ndarray  # int [N]  each position's row in the file (positions with no legal move are left out)


def replay(data: dict) -> list[Board]:
    """The board before each labelled position's move, from the games' moves."""
    size = int(data["size"])
    boards, want = [], {}
    for i, (g, mv) in enumerate(zip(data["game"].tolist(), data["move"].tolist())):
        want.setdefault(g, {})[mv] = i
    out: list[Board | None] = [None] * len(data["game"])
    for g, idx in want.items():
        board = Board(size, float(data["komi"][g]))
        colour = WHITE if data["first_white"][g] else BLACK
        board.to_play = colour
        for k, p in enumerate(data["moves"][g].tolist()):
            if p == -2:
                break
            if k in idx:
                out[idx[k]] = board.copy()
            try:
                board.play_recorded(None if p == -1 else p, colour)
            except IllegalMove as err:
                raise ValueError(f"game {g} move {k + 1}: {err}") from err
            colour = WHITE if colour == BLACK else BLACK
            board.to_play = colour
    boards = [b for b in out if b is not None]
    if len(boards) != len(out):
        raise ValueError("some positions lie past the end of their game's moves")
    return boards


@functools.partial(jax.jit, static_argnames=("size",))
def _features(packed: jax.Array, size: int):
    g = Geometry(size)
    state = jax.vmap(rules.with_chains)(with_placeholder_chains(unpack_fields(packed)))
    feats = jax.vmap(learnt.features)(state)[:, g.point_to_cell]
    legal = jax.vmap(functools.partial(rules.legal_mask, exclude_eyes=True))(state)[:, g.point_to_cell]
    return feats.astype(jnp.int32), legal  # flat indices run past int16's range (learnt.N_WEIGHTS)


def build(path: str, floor: float = 0.1, chunk: int = 2048, progress=None) -> Dataset:
    """positions.npz -> features, legal masks and targets (a few minutes for 100k positions)."""
    data = _arrays(path, "a teacher positions file", POSITION_KEYS)
    size = int(data["size"])
    boards = replay(data)
    feats, legal = [], []
    for s in range(0, len(boards), chunk):
        part = boards[s:s + chunk]
        packed = packed_fields(part + [part[-1]] * (chunk - len(part)))  # one compiled shape
        f_, l_ = _features(packed, size)
        feats.append(np.asarray(f_)[:len(part)])
        legal.append(np.asarray(l_)[:len(part)])
        if progress:
            progress(s + len(part), len(boards))
    feats, legal = np.concatenate(feats), np.concatenate(legal)
    if "policy" in data:  # exact probabilities (teacher_policy.py): the floor only where the teacher says illegal
        pct = data["policy"].astype(np.float32) * 100.0
        target = np.where(legal, np.where(pct >= 0, pct, floor), 0.0)
    else:
        pct = np.where(data["percent"] == UNLABELLED, 0.0, data["percent"].astype(np.float32))
        target = np.where(legal, np.maximum(pct, floor), 0.0)
    keep = legal.any(1)
    target = target[keep] / target[keep].sum(1, keepdims=True)
    return Dataset(feats=feats[keep], legal=legal[keep], target=target.astype(np.float32),
                   next=data["next"][keep], player=data["player"][keep],
                   player_names=[str(x) for x in data["player_names"]], game=_families(data)[keep],
                   kept=np.flatnonzero(keep))


def _families(data: dict) -> np.ndarray:
    """int [N]: the game each position comes from.  A file of lines branching off games
    (bench/teacher_policy.py --branch) names each line's source game in `family`, so that a game
    and all its lines are held out together."""
    return data["family"][data["game"]] if "family" in data else data["game"]


def split(ds: Dataset, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) position indices; a game is wholly in one or the other."""
    return split_games(ds.game, held_out, seed)


def split_games(game: np.ndarray, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`split` given each position's game (int [N]): the held-out games learn-net shares."""
    games = np.unique(game)
    rng = np.random.default_rng(seed)
    test_games = set(rng.choice(games, size=max(1, int(round(held_out * len(games)))), replace=False).tolist())
    test = np.isin(game, list(test_games))
    return np.flatnonzero(~test), np.flatnonzero(test)


def _log_probs(w: jax.Array, feats: jax.Array, legal: jax.Array) -> jax.Array:
    x = w[feats.astype(jnp.int32)].sum(-1)
    return jax.nn.log_softmax(jnp.where(legal, x, -1e9), axis=-1)


_log_probs_jit = jax.jit(_log_probs)


def fit(ds: Dataset, train: np.ndarray, config: FitConfig = FitConfig(), progress=None,
        init: np.ndarray | None = None) -> np.ndarray:
    """float32 [N_WEIGHTS]: maximum-likelihood weights on the `train` positions (Adam), from
    `init` (and penalised towards it) when given, else from 0."""
    w0 = jnp.zeros(learnt.N_WEIGHTS, jnp.float32) if init is None else jnp.asarray(init, jnp.float32)

    def loss(w, feats, legal, target):
        lp = _log_probs(w, feats, legal)
        return -(target * jnp.where(legal, lp, 0.0)).sum(-1).mean() + config.l2 * ((w - w0) ** 2).sum()

    @jax.jit
    def step(w, m, v, t, feats, legal, target):
        val, grad = jax.value_and_grad(loss)(w, feats, legal, target)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        mh, vh = m / (1 - 0.9 ** t), v / (1 - 0.999 ** t)
        return w - config.learning_rate * mh / (jnp.sqrt(vh) + 1e-8), m, v, val

    w = w0
    m, v = jnp.zeros_like(w), jnp.zeros_like(w)
    rng = np.random.default_rng(config.seed)
    n_steps = max(1, len(train) // config.batch)
    t = 0
    for epoch in range(config.epochs):
        order = rng.permutation(train)
        total = 0.0
        for i in range(n_steps):
            idx = np.sort(order[i * config.batch:(i + 1) * config.batch])
            t += 1
            w, m, v, val = step(w, m, v, t, ds.feats[idx], ds.legal[idx], ds.target[idx])
            total += float(val)
        if progress:
            progress(epoch + 1, config.epochs, total / n_steps)
    return np.asarray(w)


def evaluate(ds: Dataset, idx: np.ndarray, weights: np.ndarray, chunk: int = 4096) -> dict:
    """Held-out figures: cross-entropy to the teacher, top-1 agreement with the teacher's
    favourite, and top-1 of the move played next (all players, and each player name)."""
    w = jnp.asarray(weights)
    ce, top_teacher, top_next = [], [], []
    for s in range(0, len(idx), chunk):
        part = idx[s:s + chunk]
        lp = np.asarray(_log_probs_jit(w, ds.feats[part], ds.legal[part]))
        best = np.where(ds.legal[part], lp, -np.inf).argmax(1)
        ce.append(-(ds.target[part] * np.where(ds.legal[part], lp, 0.0)).sum(1))
        top_teacher.append(best == ds.target[part].argmax(1))
        top_next.append(best == ds.next[part])
    ce, top_teacher, top_next = map(np.concatenate, (ce, top_teacher, top_next))
    uniform = float(np.mean(1.0 / np.maximum(ds.legal[idx].sum(1), 1)))
    by_player = {}
    for k, name in enumerate(ds.player_names):
        sel = ds.player[idx] == k
        if sel.sum() >= 100:
            by_player[name] = {"positions": int(sel.sum()), "top1_next": round(float(top_next[sel].mean()), 4)}
    return {"positions": int(len(idx)), "cross_entropy": round(float(ce.mean()), 4),
            "top1_teacher": round(float(top_teacher.mean()), 4), "top1_next": round(float(top_next.mean()), 4),
            "top1_uniform": round(uniform, 4), "by_player": by_player}


def main(args) -> None:
    """`gojax learn-policy DATA --out MODEL`: build, fit, measure on held-out games, save."""
    config = FitConfig(epochs=args.epochs, learning_rate=args.learning_rate, l2=args.l2, seed=args.seed)
    t0 = time.monotonic()

    def say(text):
        print(f"[{time.monotonic() - t0:6.0f} s] {text}", file=sys.stderr, flush=True)
    ds = build(args.data, config.floor, progress=lambda i, n: say(f"features {i}/{n}") if i % 20480 < 2048 else None)
    train, test = split(ds, config.held_out, config.seed)
    say(f"{len(train)} training and {len(test)} held-out positions")
    size = int(np.load(args.data)["size"])
    init = None
    if getattr(args, "init", None):
        init, init_size = learnt.load_model(args.init)  # the features do not depend on the board's size
        say(f"from {args.init} ({init_size}x{init_size}): held out {evaluate(ds, test, init)}")
    weights = fit(ds, train, config, progress=lambda e, n, loss: say(f"epoch {e}/{n}: training loss {loss:.4f}"),
                  init=init)
    report = {"data": args.data, "init": getattr(args, "init", None) or "", "config": dataclasses.asdict(config),
              "train_positions": int(len(train)), "held_out": evaluate(ds, test, weights),
              "train": evaluate(ds, train[:20000], weights)}
    learnt.save_model(args.out, weights, size, report=json.dumps(report))
    print(json.dumps(report, indent=1))
    say(f"model -> {args.out}")


# --- simulation balancing (Huang, Coulom and Lin 2010) -----------------------------------------

@dataclasses.dataclass(frozen=True)
class BalanceConfig:
    """Policy-gradient simulation balancing (Huang, Coulom and Lin 2010, Algorithm 1) of the
    learnt policy's tactical, distance and line weights and one scale on its shape weights, so
    that the mean outcome of its playouts from a position comes near a teacher's value of it."""

    iterations: int = 8
    positions_per_call: int = 64  # L start positions per device call
    playouts: int = 32  # N playouts for the value estimate and N more for the gradient (eq. 9)
    step: float = 0.1  # alpha of the update theta += alpha (V* - V^) g
    held_out: float = 0.2  # share of the positions kept to measure the balance
    seed: int = 0


def _small_index(feats: jax.Array) -> jax.Array:
    """int32 [..., S - 1]: the non-shape slots' flat weight indices, counted from their first."""
    return feats[..., 1:] - int(learnt.OFFSETS[1])


def _draw_and_score(state, key, weights: jax.Array, shape_w: jax.Array, n_small: int):
    """One board: (a move drawn from the policy with `weights`, float32 [n_small + 1] the gradient
    of its log-probability with respect to theta: the non-shape weights, then the shape scale).
    psi = phi(a) - E_pi[phi], phi a point's feature counts and its shape weight (eq. 7)."""
    legal = rules.legal_mask(state, exclude_eyes=True)
    feats = learnt.features(state)
    x = jnp.where(legal, weights[feats].sum(-1), -jnp.inf)
    p = jnp.where(legal, jax.nn.softmax(x), 0.0)
    cell = jnp.where(legal.any(), jax.random.categorical(key, x), 0)
    small = _small_index(feats)  # [M, S - 1]
    phi_a = jnp.zeros(n_small).at[small[cell]].add(1.0)
    expect = jnp.zeros(n_small).at[small].add(jnp.broadcast_to(p[:, None], small.shape))
    shape_term = shape_w[feats[:, 0]]
    psi = jnp.concatenate([phi_a - expect, (shape_term[cell] - (p * shape_term).sum())[None]])
    return cell, jnp.where(legal.any(), 1.0, 0.0) * psi


def _balance_playouts(states, key, base: jax.Array, theta: jax.Array, n: int, cap: int):
    """n playouts from each of the L `states` under weights (base with theta's non-shape weights
    and shape scale): (z float32 [L, n] Black's wins, G float32 [L, n, T] the sum over each
    playout's moves of grad log pi(a_t | s_t) with respect to theta, T = non-shape weights + 1)."""
    n_small = learnt.N_WEIGHTS - int(learnt.OFFSETS[1])
    l = states.color.shape[0]
    boards = jax.tree_util.tree_map(lambda x: jnp.repeat(x, n, axis=0), states)
    b = l * n
    shape_w = base[: int(learnt.OFFSETS[1])]
    weights = jnp.concatenate([shape_w * theta[-1], theta[:-1]])

    def one(state, k):
        return _draw_and_score(state, k, weights, shape_w, n_small)

    def cond(c):
        t, _, done, _ = c
        return (t < cap) & ~done.all()

    def body(c):
        t, state, done, g = c
        keys = jax.random.split(jax.random.fold_in(key, t), b)
        cells, psi = jax.vmap(one)(state, keys)
        cells = jnp.where(done, 0, cells)
        after, _ = rules.play_batch(state, cells, max(1, b // 8))
        g = g + jnp.where(done[:, None], 0.0, psi)
        return t + 1, after, done | (after.passes >= 2), g

    init = (jnp.int32(0), boards, boards.passes >= 2, jnp.zeros((b, n_small + 1), jnp.float32))
    _, final, _, g = jax.lax.while_loop(cond, body, init)
    _, diff = jax.vmap(rules.area)(final.color)
    score = diff.astype(jnp.float32) - final.komi
    z = jnp.where(score > 0, 1.0, jnp.where(score < 0, 0.0, 0.5))
    return z.reshape(l, n), g.reshape(l, n, -1)


_balance_jit = jax.jit(_balance_playouts, static_argnames=("n", "cap"))


def _arrays(path: str, what: str, keys: tuple[str, ...]) -> dict:
    """The arrays of an .npz, or ValueError naming the file and what it lacks."""
    with np.load(path, allow_pickle=False) as f:
        missing = [k for k in keys if k not in f.files]
        if missing:
            raise ValueError(f"{path}: not {what} (no {', '.join(missing)} in it)")
        return {k: f[k] for k in f.files}


POSITION_KEYS = ("size", "moves", "first_white", "komi", "game", "move", "next", "percent", "player",
                 "player_names")


def balance_positions(positions: str, values: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(packed start fields int32 [V, C + 6], the teacher's values float32 [V] for Black, board size)
    from a positions.npz and a bench/teacher_values.py values.npz."""
    data = _arrays(positions, "a teacher positions file", POSITION_KEYS)
    vals = _arrays(values, "a teacher values file", ("game", "move", "value"))
    if vals["game"].size and vals["game"].max() >= len(data["moves"]):
        raise ValueError(f"{values}: its games are not those of {positions}")
    sub = dict(data, game=vals["game"], move=vals["move"])
    boards = replay(sub)
    return packed_fields(boards), vals["value"].astype(np.float32), int(data["size"])


def balance_split(n: int, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """`balance`'s split of n positions: (held-out indices, training indices, the generator that
    then orders the training positions), so that other measures can use the same held-out set."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    n_test = int(round(held_out * n))
    return order[:n_test], order[n_test:], rng


def balance(weights: np.ndarray, packed: np.ndarray, target: np.ndarray, size: int,
            config: BalanceConfig = BalanceConfig(), progress=None) -> tuple[np.ndarray, list[dict]]:
    """Simulation-balanced weights (float32 [N_WEIGHTS]) and each iteration's figures: the mean
    squared error between the playouts' value and the teacher's on the training and the
    held-out positions (the quantity balancing lowers)."""
    g = Geometry(size)
    cap = g.move_cap
    test, train, rng = balance_split(len(target), config.held_out, config.seed)
    base = jnp.asarray(weights)
    off = int(learnt.OFFSETS[1])
    theta = jnp.concatenate([base[off:], jnp.ones(1)])
    lp = config.positions_per_call
    key = jax.random.key(config.seed)

    def states_of(idx):
        idx = np.concatenate([idx, np.repeat(idx[:1], (-len(idx)) % lp)])  # one compiled shape
        st = jax.vmap(rules.with_chains)(with_placeholder_chains(unpack_fields(packed[idx])))
        return st, idx

    def run(idx, k, with_gradient: bool):
        st, full = states_of(idx)
        z, grad = _balance_jit(st, k, base, theta, 2 * config.playouts if with_gradient else config.playouts, cap)
        return np.asarray(z)[:len(idx)], np.asarray(grad)[:len(idx)]

    def mse(idx, k):
        errs = []
        for s in range(0, len(idx), lp):
            part = idx[s:s + lp]
            z, _ = run(part, jax.random.fold_in(k, s), False)
            errs.append((z.mean(1) - target[part]) ** 2)
        return float(np.concatenate(errs).mean())

    history = []
    for it in range(config.iterations + 1):
        k = jax.random.fold_in(key, it)
        # the same keys every iteration (common random numbers): the change is the weights'
        row = {"iteration": it, "held_out_mse": mse(test, jax.random.fold_in(key, 2**31)), "scale": float(theta[-1])}
        if it == config.iterations:
            history.append(row)
            break
        perm = rng.permutation(train)
        sq = []
        for s in range(0, len(perm), lp):
            part = perm[s:s + lp]
            z, grad = run(part, jax.random.fold_in(k, 2 + s), True)
            n = config.playouts
            v_hat = z[:, :n].mean(1)  # the value estimate from the first N playouts
            zc = z[:, n:] - v_hat[:, None]  # a baseline: E[psi] = 0, so it only cuts variance
            gvec = (zc[:, :, None] * grad[:, n:]).mean(1)  # [L, T]
            err = target[part] - v_hat
            theta = theta + config.step * jnp.asarray((err[:, None] * gvec).mean(0))
            sq.append(err ** 2)
        row["train_mse"] = float(np.concatenate(sq).mean())
        history.append(row)
        if progress:
            progress(row)
    out = np.asarray(jnp.concatenate([base[:off] * theta[-1], theta[:-1]]))
    return out.astype(np.float32), history


def balance_main(args) -> None:
    """`gojax balance-policy`: simulation-balance a fitted model against teacher values, save it."""
    t0 = time.monotonic()

    def say(row):
        text = ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items())
        print(f"[{time.monotonic() - t0:6.0f} s] {text}", file=sys.stderr, flush=True)
    weights, size = learnt.load_model(args.model)
    packed, target, data_size = balance_positions(args.positions, args.values)
    keep = (target >= args.value_range[0]) & (target <= args.value_range[1])
    packed, target = packed[keep], target[keep]
    if not len(target):
        raise ValueError(f"no position's value lies in {args.value_range}")
    if data_size != size:
        raise ValueError(f"the model is for {size}x{size}, the positions for {data_size}x{data_size}")
    config = BalanceConfig(iterations=args.iterations, playouts=args.playouts, step=args.step, seed=args.seed)
    out, history = balance(weights, packed, target, size, config, progress=say)
    say(history[-1])
    with np.load(args.model or learnt.BUNDLED, allow_pickle=False) as f:
        report = json.loads(str(f["report"])) if "report" in f.files else {}
    report["balance"] = {"values": args.values, "positions": int(len(target)), "value_range": list(args.value_range),
                         "config": dataclasses.asdict(config),
                         "history": history}
    learnt.save_model(args.out, out, size, report=json.dumps(report))
    print(json.dumps(report["balance"], indent=1))
