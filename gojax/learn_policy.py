"""`gojax learn-policy`: fit the learnt playout policy (kernels/learnt.py) to a teacher's move
distributions, and measure how well it predicts them on held-out games.

The data is a positions.npz of bench/teacher_data.py: games' moves, and per position Pachi's
pattern-prior percents over the moves.  The fit maximises the likelihood of the teacher's
distribution (cross-entropy, with an L2 penalty) over the legal moves that are not own eyes,
the moves a playout may draw; games are split into training and held-out ones by a fixed hash.
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
    floor: float = 0.1  # percent given to a legal move the teacher rated 0 or left unlabelled
    held_out: float = 0.1  # share of games kept for measuring
    seed: int = 0


@dataclasses.dataclass
class Dataset:
    feats: np.ndarray  # int16 [N, P, S]  flat weight indices per point and slot
    legal: np.ndarray  # bool [N, P]  legal, not an own eye
    target: np.ndarray  # float32 [N, P]  the teacher's distribution over the legal points
    next: np.ndarray  # int16 [N]  the point played next
    player: np.ndarray  # int16 [N]  who played it (index into player_names)
    player_names: list[str]
    game: np.ndarray  # int32 [N]


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
    return feats.astype(jnp.int16), legal


def build(path: str, floor: float = 0.1, chunk: int = 2048, progress=None) -> Dataset:
    """positions.npz -> features, legal masks and targets (a few minutes for 100k positions)."""
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
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
    pct = data["percent"].astype(np.float32)
    pct = np.where(data["percent"] == UNLABELLED, 0.0, pct)
    target = np.where(legal, np.maximum(pct, floor), 0.0)
    keep = legal.any(1)
    target = target[keep] / target[keep].sum(1, keepdims=True)
    return Dataset(feats=feats[keep], legal=legal[keep], target=target.astype(np.float32),
                   next=data["next"][keep], player=data["player"][keep],
                   player_names=[str(x) for x in data["player_names"]], game=data["game"][keep])


def split(ds: Dataset, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) position indices; a game is wholly in one or the other."""
    games = np.unique(ds.game)
    rng = np.random.default_rng(seed)
    test_games = set(rng.choice(games, size=max(1, int(round(held_out * len(games)))), replace=False).tolist())
    test = np.isin(ds.game, list(test_games))
    return np.flatnonzero(~test), np.flatnonzero(test)


def _log_probs(w: jax.Array, feats: jax.Array, legal: jax.Array) -> jax.Array:
    x = w[feats.astype(jnp.int32)].sum(-1)
    return jax.nn.log_softmax(jnp.where(legal, x, -1e9), axis=-1)


def fit(ds: Dataset, train: np.ndarray, config: FitConfig = FitConfig(), progress=None) -> np.ndarray:
    """float32 [N_WEIGHTS]: maximum-likelihood weights on the `train` positions (Adam)."""

    def loss(w, feats, legal, target):
        lp = _log_probs(w, feats, legal)
        return -(target * jnp.where(legal, lp, 0.0)).sum(-1).mean() + config.l2 * (w * w).sum()

    @jax.jit
    def step(w, m, v, t, feats, legal, target):
        val, grad = jax.value_and_grad(loss)(w, feats, legal, target)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        mh, vh = m / (1 - 0.9 ** t), v / (1 - 0.999 ** t)
        return w - config.learning_rate * mh / (jnp.sqrt(vh) + 1e-8), m, v, val

    w = jnp.zeros(learnt.N_WEIGHTS, jnp.float32)
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
        lp = np.asarray(jax.jit(_log_probs)(w, ds.feats[part], ds.legal[part]))
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
    weights = fit(ds, train, config, progress=lambda e, n, loss: say(f"epoch {e}/{n}: training loss {loss:.4f}"))
    report = {"data": args.data, "config": dataclasses.asdict(config), "train_positions": int(len(train)),
              "held_out": evaluate(ds, test, weights), "train": evaluate(ds, train[:20000], weights)}
    size = int(np.load(args.data)["size"])
    learnt.save_model(args.out, weights, size, report=json.dumps(report))
    print(json.dumps(report, indent=1))
    say(f"model -> {args.out}")
