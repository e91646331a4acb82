"""A small convolutional move model for the tree's prior, for ONE board (callers vmap).

The learnt model of kernels/learnt.py scores each point by its own local features, and no
weighting of those predicts a strong teacher's favourite move much more than a quarter of the
time.  This model reads the whole board: a stack of 3x3 convolutions over per-point input planes
gives a correction to the learnt model's logit at every point,

    logit(p) = linear(p) + head(conv_D(... conv_1(planes)))(p),

fitted to a teacher's move distributions (gojax/learn_net.py; KataGo's policy,
bench/teacher_policy.py).  The input planes, all from the device board (`planes`):

  stones      the mover's, the opponent's, empty
  tactics     one-hot slots of kernels/learnt.py: capture (3), escape (6), self-atari (2),
              atari (2), own two-liberty chains (2), nakade (1)
  distances   to the last and the mover's previous move, Coulom's metric / 17
  legal       legal and not an own eye; a plane of ones (the zero padding then marks the edge)
  linear      the learnt model's logit, centred on the legal points, / 3

A model file (.npz) holds the conv weights `w0..` / `b0..` (HWIO, last layer 1x1 to one
channel), the learnt model's `linear` weights it was fitted on top of, `size` and `net_format`.
Cost: D convolutions of C x C x 9 per point per new node, on the device with the round's leaves.

A net may also carry a value head (`value_*` arrays, gojax/learn_net.py `learn-value`): a trunk of
its own over the same planes, then the mean and the max of each channel over the board, one hidden
layer and a logit: the side to move's probability of winning, fitted to a teacher's values at one
komi (`value_komi`; the planes do not see the komi).  The search mixes it into each leaf's playout
outcomes (SearchParams.value_weight).
"""

from __future__ import annotations

import functools
import os
import zipfile
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels import learnt, rules
from gojax.kernels.geometry import BLACK, EMPTY, Geometry
from gojax.kernels.learnt import ModelError
from gojax.kernels.state import BoardState

NET_FORMAT = 1  # bump when `planes` changes
DATA = Path(__file__).parent / "data"
# `--prior net`: 48 x 6, fitted to KataGo's policy on 9x9 positions of games and of lines branching
# off them (bench/results/teacher/katago9_branch/net_48x6.npz), with the value head of
# katago9_branch2/net48x6_value.npz (its own trunk, fitted to KataGo's values at komi 7.5)
BUNDLED = str(DATA / "net9.npz")
# net13.npz: the 9x9 48 x 6 net refined on 13x13 KataGo labels with a value head refined the same way
# (bench/results/teacher/katago13_branch/net48x6_13_value.npz): it beat the first 9x9 net saved for
# 13x13 on the same seeds against GNU Go (bench/RESULTS.md).
# net19.npz: net13.npz and its head saved for 19x19 unchanged (bench/results/teacher/katago19_policy/
# net48x6_13_as19.npz): it beat the shape prior in 19x19 self-play at equal simulations (bench/RESULTS.md).


def bundled(size: int) -> str | None:
    """The path of the net shipped for `size` x `size` (kernels/data/net{size}.npz), or None."""
    path = DATA / f"net{size}.npz"
    return str(path) if path.exists() else None

# (slot, values) of kernels/learnt.SLOTS given one plane each
ONE_HOT = (("capture", (1, 2, 3)), ("escape", (1, 2, 3, 4, 5, 6)), ("self_atari", (1, 2)), ("atari", (1, 2)),
           ("own_two", (1, 2)), ("nakade", (1,)))
N_PLANES = 3 + sum(len(v) for _, v in ONE_HOT) + 2 + 2 + 1


def is_net(path: str) -> bool:
    """Is the file at `path` a model of this module (not kernels/learnt.py's)?"""
    return "net_format" in _names(path)


def _names(path: str) -> frozenset:
    """The array names in the .npz at `path` (empty if it is not one); read once per version of
    the file, since every search asks (SearchParams.for_size) and opening the archive costs ~1 ms."""
    try:
        st = os.stat(path)
    except OSError:
        return frozenset()
    return _names_of(path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=64)
def _names_of(path: str, mtime_ns: int, size: int) -> frozenset:
    try:
        with np.load(path, allow_pickle=False) as f:
            return frozenset(f.files)
    except (OSError, ValueError, zipfile.BadZipFile):
        return frozenset()


@functools.cache
def load_net(path: str) -> tuple[tuple[tuple[np.ndarray, np.ndarray], ...], np.ndarray, int]:
    """((w, b) per layer, the linear model's float32 [N_WEIGHTS] weights, board size); ModelError
    with one line on any fault."""
    try:
        with np.load(path, allow_pickle=False) as f:
            fmt, size, linear = int(f["net_format"]), int(f["size"]), f["linear"].astype(np.float32)
            depth = sum(1 for k in f.files if k.startswith("w"))
            layers = tuple((f[f"w{i}"].astype(np.float32), f[f"b{i}"].astype(np.float32)) for i in range(depth))
    except FileNotFoundError:
        raise ModelError(f"prior net {path}: no such file") from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
        raise ModelError(f"prior net {path}: not a gojax prior net ({err})") from None
    if fmt != NET_FORMAT or not layers or layers[0][0].shape[2] != N_PLANES or linear.shape != (learnt.N_WEIGHTS,):
        raise ModelError(f"prior net {path}: format {fmt} with {layers[0][0].shape[2] if layers else 0} input planes; "
                         f"this gojax reads format {NET_FORMAT} with {N_PLANES}: refit it (gojax learn-net)")
    if not all(np.isfinite(w).all() and np.isfinite(b).all() for w, b in layers):
        raise ModelError(f"prior net {path}: weights are not all finite")
    return layers, linear, size


class ValueHead(NamedTuple):
    """A net's value head: conv trunk (w, b) per layer (HWIO, ReLU after each), then
    [mean, max] of each channel -> hidden (ReLU) -> one logit for the side to move."""
    trunk: tuple
    hidden_w: np.ndarray  # float32 [2 C, H]
    hidden_b: np.ndarray  # float32 [H]
    out_w: np.ndarray  # float32 [H]
    out_b: np.ndarray  # float32 []
    komi: float  # the komi of the values it was fitted to


def save_net(path: str, layers, linear: np.ndarray, size: int, value: ValueHead | None = None, **info) -> None:
    arrays = {f"w{i}": np.asarray(w, np.float32) for i, (w, _) in enumerate(layers)}
    arrays |= {f"b{i}": np.asarray(b, np.float32) for i, (_, b) in enumerate(layers)}
    if value is not None:
        arrays |= {f"value_w{i}": np.asarray(w, np.float32) for i, (w, _) in enumerate(value.trunk)}
        arrays |= {f"value_b{i}": np.asarray(b, np.float32) for i, (_, b) in enumerate(value.trunk)}
        arrays |= {f"value_{k}": np.asarray(getattr(value, k), np.float32)
                   for k in ("hidden_w", "hidden_b", "out_w", "out_b", "komi")}
    np.savez_compressed(path, net_format=NET_FORMAT, size=size, linear=np.asarray(linear, np.float32), **arrays,
                        **info)


@functools.cache
def load_value(path: str) -> ValueHead:
    """The value head of the net at `path`; ModelError with one line if it has none or it is damaged."""
    load_net(path)  # the file itself: one line on any fault
    with np.load(path, allow_pickle=False) as f:
        if "value_out_w" not in f.files:
            raise ModelError(f"prior net {path} has no value head: fit one (gojax learn-value) or use --value-weight 0")
        try:
            depth = sum(1 for k in f.files if k.startswith("value_w"))
            trunk = tuple((f[f"value_w{i}"].astype(np.float32), f[f"value_b{i}"].astype(np.float32))
                          for i in range(depth))
            head = ValueHead(trunk, *(f[f"value_{k}"].astype(np.float32) for k in ("hidden_w", "hidden_b", "out_w",
                                                                                 "out_b")),
                             float(f["value_komi"]))
        except (KeyError, ValueError) as err:
            raise ModelError(f"prior net {path}: a damaged value head ({err})") from None
    arrays = [a for wb in trunk for a in wb] + list(head[1:5])
    if not trunk or trunk[0][0].shape[2] != N_PLANES or not all(np.isfinite(a).all() for a in arrays):
        raise ModelError(f"prior net {path}: a damaged value head (shapes or values): refit it (gojax learn-value)")
    return head


def has_value(path: str) -> bool:
    """Does the net at `path` carry a value head?"""
    return "value_out_w" in _names(path)


def value_features(trunk, x: jax.Array) -> jax.Array:
    """float32 [B, 2 C]: the mean and the max over the board of each channel of the `trunk`'s
    convolutions ((w, b) per layer, ReLU after each) of planes x [B, N, N, C_in]."""
    h = x
    for w, b in trunk:
        h = jax.nn.relu(jax.lax.conv_general_dilated(h, w, (1, 1), "SAME",
                                                     dimension_numbers=("NHWC", "HWIO", "NHWC")) + b)
    return jnp.concatenate([h.mean((1, 2)), h.max((1, 2))], -1)


def value_forward(head, x: jax.Array) -> jax.Array:
    """float32 [B] logits (side to move wins) from planes [B, N, N, C]; `head` a ValueHead whose
    arrays may be device arrays (its komi is not read)."""
    pooled = value_features(head.trunk, x)
    return jax.nn.relu(pooled @ head.hidden_w + head.hidden_b) @ head.out_w + head.out_b


def black_value(states: BoardState, path: str) -> jax.Array:
    """float32 [B]: the value head's probability that Black wins, for a batch of positions."""
    _, linear, size = load_net(path)
    head = load_value(path)
    x, _ = jax.vmap(lambda s: planes(s, jnp.asarray(linear)))(states)
    p_mover = jax.nn.sigmoid(value_forward(jax.tree.map(jnp.asarray, head._replace(komi=0.0)), x))
    return jnp.where(states.to_play == BLACK, p_mover, 1.0 - p_mover)


def planes(state: BoardState, linear: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(float32 [N, N, N_PLANES] the input planes, float32 [N, N] the linear logit), row 0 the
    bottom row, as the points are numbered."""
    g = Geometry(int(round(state.color.shape[-1] ** 0.5)) - 2)
    cells = jnp.asarray(g.point_to_cell)
    feats = learnt.features(state)[cells]  # [P, S] flat weight indices
    value = feats - jnp.asarray(learnt.OFFSETS)
    names = [name for name, _ in learnt.SLOTS]
    colour = state.color[cells]
    me = state.to_play.astype(colour.dtype)
    legal = rules.legal_mask(state, exclude_eyes=True)[cells]
    lin = linear[feats].sum(-1)
    centred = jnp.where(legal, lin - (lin * legal).sum() / jnp.maximum(legal.sum(), 1), 0.0)
    out = [colour == me, (colour != me) & (colour != EMPTY), colour == EMPTY]
    out += [value[:, names.index(slot)] == k for slot, ks in ONE_HOT for k in ks]
    out += [value[:, names.index("dist_last")] / 17.0, value[:, names.index("dist_prev")] / 17.0]
    out += [legal, jnp.ones_like(lin), centred / 3.0]
    n = g.size
    return jnp.stack([x.astype(jnp.float32) for x in out], -1).reshape(n, n, N_PLANES), lin.reshape(n, n)


def forward(layers, x: jax.Array, lin: jax.Array) -> jax.Array:
    """float32 [..., N, N] logits from planes [..., N, N, C] and linear logits [..., N, N]."""
    h = x if x.ndim == 4 else x[None]
    for i, (w, b) in enumerate(layers):
        h = jax.lax.conv_general_dilated(h, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b
        if i < len(layers) - 1:
            h = jax.nn.relu(h)
    out = h[..., 0] + (lin if lin.ndim == 3 else lin[None])
    return out if x.ndim == 4 else out[0]


# The board's 8 symmetries in the order `symmetries` takes them: the identity and the transpose
# first, then the half turn and the anti-transpose (each prefix is a group, so an average over it
# is as symmetric as its size allows).
SYMMETRY_ORDER = (0, 4, 2, 6, 1, 3, 5, 7)


def turn(a: jax.Array, k: int, axes=(0, 1)) -> jax.Array:
    """Symmetry k (0-7) of the board axes: the transpose if k >= 4, then k % 4 quarter turns."""
    return jnp.rot90(jnp.swapaxes(a, *axes) if k >= 4 else a, k % 4, axes=axes)


def unturn(a: jax.Array, k: int, axes=(0, 1)) -> jax.Array:
    """The inverse of `turn`."""
    a = jnp.rot90(a, -(k % 4), axes=axes)
    return jnp.swapaxes(a, *axes) if k >= 4 else a


def symmetric_forward(layers, x: jax.Array, lin: jax.Array, symmetries: int = 1) -> jax.Array:
    """float32 [N, N]: `forward` of ONE board's planes [N, N, C] averaged over the first
    `symmetries` (1, 2, 4 or 8) of SYMMETRY_ORDER: each turned board's logits turned back.  The
    planes do not depend on the orientation, so turning them is turning the board."""
    if symmetries == 1:
        return forward(layers, x, lin)
    ks = SYMMETRY_ORDER[:symmetries]
    out = forward(layers, jnp.stack([turn(x, k) for k in ks]), jnp.stack([turn(lin, k) for k in ks]))
    return jnp.stack([unturn(out[i], k) for i, k in enumerate(ks)]).mean(0)


def log_strengths(state: BoardState, path: str, symmetries: int = 1) -> jax.Array:
    """float32 [M]: each cell's logit (0 off the board's points), the prior's log-strength;
    `symmetries`: the net's logits averaged over that many of the board's symmetries."""
    layers, linear, size = load_net(path)
    m = state.color.shape[-1]
    if int(round(m ** 0.5)) - 2 != size:
        raise ModelError(f"prior net {path} was fitted on {size}x{size}, not {int(round(m ** 0.5)) - 2}")
    x, lin = planes(state, jnp.asarray(linear))
    logit = symmetric_forward(tuple((jnp.asarray(w), jnp.asarray(b)) for w, b in layers), x, lin, symmetries)
    cells = jnp.asarray(Geometry(size).point_to_cell)
    return jnp.zeros(m, jnp.float32).at[cells].set(logit.reshape(-1))


def model_size(path: str) -> int:
    """The board size a prior model (a net, or kernels/learnt.py's) was fitted on; ModelError."""
    return load_net(path)[2] if path and is_net(path) else learnt.load_model(path)[1]


def check_value_model(path: str, size: int) -> None:
    """ModelError unless the net at `path` has a value head and was fitted for `size` x `size`."""
    load_value(path)
    check_model(path, size, "value model", "gojax learn-value", "--value-weight 0")


def check_model(path: str, size: int, role: str = "prior model", fit: str = "gojax learn-policy, learn-net",
                instead: str = "--prior shape") -> None:
    """ModelError unless the `role` model at `path` loads and was fitted for `size` x `size`."""
    fitted = model_size(path)
    if fitted != size:
        raise ModelError(f"{role} {path or learnt.BUNDLED} was fitted on {fitted}x{fitted}, not {size}x{size}: "
                         f"fit one on {size}x{size} positions ({fit}) or use {instead}")
