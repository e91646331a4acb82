"""A learned move prior: Bradley-Terry "gammas" of simple move features (Coulom 2007), fitted
to the moves gojax itself chose in high-simulation games (gojax/learn.py), used by the
`shape` prior (search/priors.py) as the heuristic H of seed 000 eq. 48-52 in place of MoGo's
three values 0 / 0.5 / 1.

Seed 000 sec. 5.2: a learnt local-shape heuristic (RLGO's, by TD learning from self-play) took
MoGo from 60% to 69% against GNU Go level 10 at 3,000 simulations, more than the handcrafted one.
This is the cheaper cousin: the features of a candidate move are
  pattern  its 3x3 neighbourhood from the mover's side, up to the 8 symmetries (8,740 classes)
  line     distance to the edge: 0 (first line), 1, 2, 3 or more
  last     distance to the opponent's last move, d = |dx| + |dy| + max(|dx|, |dy|)
           (Coulom's metric): none, 2 .. 9, 10 or more
  prev     the same for the mover's own previous move
  verdict  MoGo's handcrafted rule: bad (0), neutral (0.5), good (1)
  diamond  (optional, `learn-prior --diamond`) the 12 points within Manhattan distance 2, up
           to the 8 symmetries: the shapes played at least twice in the training moves each
           get a gamma, every other shape shares one
and a move's strength is the product of its features' gammas.  The probability that the move is
chosen among the n legal ones is p = s / sum(s); H = sigmoid(log(n p) / T): an average move
(p = 1/n) keeps H = 0.5, a move the model expects often goes towards 1, a rare one towards 0.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np

from gojax.kernels.patterns import mover_classes, neighbourhood_indices, symmetry_classes

GROUPS = ("pattern", "line", "last", "prev", "verdict")
NO_MOVE = 0  # the distance class of "no such move" (start of the game, or a pass)
DEFAULT_MODEL = Path(__file__).with_name("data") / "shape9.npz"


@functools.cache
def _line_and_coords(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r, c = np.divmod(np.arange(size * size), size)
    line = np.minimum(np.minimum(r, c), np.minimum(size - 1 - r, size - 1 - c))
    return np.minimum(line, 3).astype(np.int32), r, c


@functools.cache
def _distance_table(size: int) -> np.ndarray:
    """int32 [P + 1, P]: row q = each point's distance class from q; row P (no move) = NO_MOVE."""
    _, r, c = _line_and_coords(size)
    dx, dy = np.abs(c[:, None] - c[None, :]), np.abs(r[:, None] - r[None, :])
    d = dx + dy + np.maximum(dx, dy)  # 0 at the point itself (never a legal move), 2 next to it
    out = np.clip(d - 1, 1, 9).astype(np.int32)
    return np.concatenate([out, np.full((1, size * size), NO_MOVE, np.int32)])


def distance_class(size: int, point: int | None) -> np.ndarray:
    """int32 [P]: each point's distance class from `point` (NO_MOVE everywhere when None)."""
    return _distance_table(size)[size * size if point is None else int(point)]


@functools.cache
def _diamond_table(size: int) -> tuple[np.ndarray, np.ndarray]:
    """(int32 [P, 12] the diamond's points of each point, P where off the board; int64 [8, 12]
    the digit weights of its key under each of the 8 symmetries)."""
    offsets = [(dr, dc) for dr in range(-2, 3) for dc in range(-2, 3) if 0 < abs(dr) + abs(dc) <= 2]
    out = np.full((size * size, len(offsets)), size * size, np.int32)
    for p in range(size * size):
        r, c = divmod(p, size)
        for i, (dr, dc) in enumerate(offsets):
            if 0 <= r + dr < size and 0 <= c + dc < size:
                out[p, i] = (r + dr) * size + c + dc
    weights = np.zeros((8, len(offsets)), np.int64)
    for k, (swap, fr, fc) in enumerate((s, a, b) for s in (0, 1) for a in (1, -1) for b in (1, -1)):
        for i, (dr, dc) in enumerate(offsets):
            tr, tc = (dc, dr) if swap else (dr, dc)
            weights[k, i] = 1 << (2 * offsets.index((tr * fr, tc * fc)))
    return out, weights


def diamond_keys(stones: np.ndarray, size: int, mover) -> np.ndarray:
    """int64 [..., P]: each point's diamond shape (the 12 points within distance 2; 2 bits each:
    empty, the mover's, the opponent's, off the board), the least key over the 8 symmetries."""
    s = np.asarray(stones, np.int64)
    pad = np.concatenate([s, np.full(s.shape[:-1] + (1,), 3, np.int64)], axis=-1)
    swap = (np.asarray(mover) != 1)[..., None]  # the mover's stones code 1, the opponent's 2
    pad = np.where(swap & (pad == 1), 2, np.where(swap & (pad == 2), 1, pad))
    points, weights = _diamond_table(size)
    codes = pad[..., points]  # [..., P, 12]
    return np.min(codes @ weights.T, axis=-1)


def diamond_rows(diamonds: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The diamond group's row of each key: 1 + its place among the sorted `diamonds`, 0 if not there."""
    if not len(diamonds):
        return np.zeros(np.shape(keys), np.int64)
    at = np.clip(np.searchsorted(diamonds, keys), 0, len(diamonds) - 1)
    return np.where(diamonds[at] == keys, at + 1, 0)


def features(stones: np.ndarray, size: int, mover, last, prev, verdict: np.ndarray,
             diamond: bool = False) -> np.ndarray:
    """int32 [..., P, 5]: every point's class in each group of GROUPS, for one position or a
    batch of them; with `diamond`, int64 [..., P, 6], the last column the diamond key.
    stones int8 [..., P]; mover int [...]; last, prev: the points of the
    opponent's last and the mover's previous move (None for none or a pass; a list for a
    batch); verdict float [..., P]: MoGo values 0 / 0.5 / 1 (any value off the candidates)."""
    s = np.asarray(stones)
    n, points = int(np.prod(s.shape[:-1], dtype=np.int64)), size * size
    movers = np.broadcast_to(np.asarray(mover), s.shape[:-1]).reshape(n)
    rows, at = np.repeat(np.arange(n), points), np.tile(np.arange(points), n)
    v = np.broadcast_to(np.asarray(verdict, np.float32), s.shape).reshape(-1)
    out = candidate_features(s.reshape(n, points), size, movers, move_rows(last, size), move_rows(prev, size),
                             rows, at, v, diamond)
    return out.reshape(s.shape + out.shape[-1:])


def candidate_features(stones: np.ndarray | None, size: int, mover: np.ndarray, last_rows: np.ndarray,
                       prev_rows: np.ndarray, rows: np.ndarray, points: np.ndarray, verdict: np.ndarray,
                       diamond: bool = False, near: np.ndarray | None = None) -> np.ndarray:
    """`features` of some candidates of a batch of positions only: position rows[i]'s point
    points[i]; stones int8 [n, P], mover int [n], last_rows / prev_rows int [n] (the moves as
    `move_rows` gives them), verdict float [R] the candidates' MoGo values; near, int [R] or
    None: the candidates' 3x3 neighbourhood indices with the colours as they lie (the device's
    kernels/policy.pattern_index), else read off `stones` (needed with `diamond` too).  Returns
    int32 [R, 5] (int64 [R, 6] with `diamond`), row for row what `features` holds there."""
    line, _, _ = _line_and_coords(size)
    dist = _distance_table(size)
    if near is None:
        pattern = symmetry_classes()[0][neighbourhood_indices(stones, size, mover)[rows, points]]
    else:
        pattern = mover_classes()[np.asarray(mover)[rows] - 1, near]
    cols = [pattern, line[points],
            dist[np.asarray(last_rows)[rows], points], dist[np.asarray(prev_rows)[rows], points],
            np.rint(np.asarray(verdict, np.float32) * 2).astype(np.int32).clip(0, 2)]
    if diamond:
        keys = diamond_keys(stones, size, mover)[rows, points]
        return np.stack([c.astype(np.int64) for c in cols] + [keys], axis=-1)
    return np.stack(cols, axis=-1)


def move_rows(moves, size: int) -> np.ndarray:
    """int64 [n]: the distance classes' table row of a move or of each of a list or tuple of
    them (a point, or None: none or a pass)."""
    moves = moves if isinstance(moves, (list, tuple)) else [moves]
    return np.array([size * size if q is None else q for q in moves], np.int64)


def last_moves(board) -> tuple[int | None, int | None]:
    """(the opponent's last move, the mover's previous one) of a host Board; None for a pass."""
    m = board.moves
    return (m[-1][1] if m else None), (m[-2][1] if len(m) > 1 else None)


def group_sizes() -> tuple[int, ...]:
    return (symmetry_classes()[1], 4, 10, 10, 3)


@dataclasses.dataclass(frozen=True)
class ShapeModel:
    """log-gammas per group (float32 arrays, one per GROUPS entry); `moves`: how many chosen
    moves they were fitted to (documentation only)."""

    log_gamma: tuple[np.ndarray, ...]
    moves: int = 0
    diamonds: np.ndarray | None = None  # int64 [D] sorted diamond keys with a gamma (log_gamma[5][1:])

    @property
    def uses_diamond(self) -> bool:
        return self.diamonds is not None

    @classmethod
    def uniform(cls) -> ShapeModel:
        return cls(tuple(np.zeros(n, np.float32) for n in group_sizes()))

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL) -> ShapeModel:
        try:
            z = np.load(path, allow_pickle=False)
        except ValueError:  # numpy's own words would suggest loading it with pickle
            raise ValueError(f"{path}: not a shape model (an .npz file as `gojax learn-prior` writes)") from None
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise ValueError(f"{path}: not a shape model (an .npz file as `gojax learn-prior` writes)")
        with z:
            sizes = group_sizes()
            lg = tuple(z[g].astype(np.float32) for g in GROUPS)
            if tuple(len(x) for x in lg) != sizes:
                raise ValueError(f"{path}: group sizes {[len(x) for x in lg]} != {list(sizes)}")
            if "diamond_keys" not in z:
                return cls(lg, int(z["moves"]))
            keys, dg = z["diamond_keys"].astype(np.int64), z["diamond"].astype(np.float32)
            if len(dg) != len(keys) + 1:
                raise ValueError(f"{path}: {len(keys)} diamond keys but {len(dg)} diamond gammas")
            return cls(lg + (dg,), int(z["moves"]), keys)

    def save(self, path: str | Path) -> None:
        extra = {} if self.diamonds is None else {"diamond": self.log_gamma[5], "diamond_keys": self.diamonds}
        np.savez_compressed(path, moves=np.int64(self.moves), **dict(zip(GROUPS, self.log_gamma)), **extra)

    def log_strength(self, feats: np.ndarray) -> np.ndarray:
        """float32 [..., P] from features [..., P, 5] (or [..., P, 6] with the diamond keys)."""
        out = sum(lg[feats[..., i]] for i, lg in enumerate(self.log_gamma[:5]))
        if self.diamonds is not None:
            out = out + self.log_gamma[5][diamond_rows(self.diamonds, feats[..., 5])]
        return out

    def point_tables(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The first four groups' log-gammas laid out per point, for a device that sums them at
        every point of many positions (search/device.prepare_round): float32 [2, 65536] by side
        to move and 3x3 neighbourhood index as it lies (kernels/policy.pattern_index), [P] by
        point, [P + 1, P] by the last move's point (row P: none or a pass) and point, the same
        for the previous move.  Not for a model with diamonds."""
        line, _, _ = _line_and_coords(size)
        dist = _distance_table(size)
        lg = self.log_gamma
        return lg[0][mover_classes()], lg[1][line], lg[2][dist], lg[3][dist]

    def with_verdicts(self, partial: np.ndarray, verdict: np.ndarray) -> np.ndarray:
        """`log_strength` from the sum of the first four groups' log-gammas (`point_tables`,
        summed in GROUPS order as log_strength sums them: the same float32 numbers) and the
        candidates' MoGo values (0 / 0.5 / 1)."""
        return partial + self.log_gamma[4][np.rint(np.asarray(verdict, np.float32) * 2).astype(np.int32).clip(0, 2)]

    def values(self, feats: np.ndarray, candidates: np.ndarray, temperature: float = 1.0) -> np.ndarray:
        """H for the candidate points (int [n]) of one position, given every point's features."""
        ls = self.log_strength(feats[candidates])
        return grouped_values(ls, np.zeros(len(ls), np.int64), 1, temperature)


def grouped_values(log_strength: np.ndarray, rows: np.ndarray, positions: int, temperature: float) -> np.ndarray:
    """H = sigmoid(log(n p) / T) for candidates of several positions at once: `rows` (int [R])
    names each candidate's position, p is its softmax probability among that position's n."""
    log_p, count = _grouped_log_probs(log_strength, rows, positions)
    log_np = log_p + np.log(count[rows])
    return (1.0 / (1.0 + np.exp(-log_np / temperature))).astype(np.float32)


def grouped_probs(log_strength: np.ndarray, rows: np.ndarray, positions: int) -> np.ndarray:
    """p, each candidate's softmax probability among its position's candidates (as grouped_values)."""
    return np.exp(_grouped_log_probs(log_strength, rows, positions)[0]).astype(np.float32)


def _grouped_log_probs(log_strength, rows, positions):
    ls = np.asarray(log_strength, np.float64)
    peak = np.full(positions, -np.inf)
    np.maximum.at(peak, rows, ls)
    e = np.exp(ls - peak[rows])
    total, count = np.bincount(rows, e, positions), np.bincount(rows, minlength=positions)
    return ls - peak[rows] - np.log(total[rows]), count


@functools.lru_cache(maxsize=4)
def load_model(path: str = "") -> ShapeModel:
    """The model at `path` (the bundled 9x9 one when empty), loaded once per process."""
    return ShapeModel.load(path or DEFAULT_MODEL)


def fit(feats: list[np.ndarray], chosen: list[int], iterations: int = 30, prior_games: float = 1.0,
        min_diamond_count: int = 2, targets: list[np.ndarray] | None = None) -> ShapeModel:
    """Minorization-maximization (Coulom 2007, "Computing Elo ratings of move patterns") for the
    generalised Bradley-Terry model: in each position j the chosen move beat the other
    candidates.  feats[j]: int32 [n_j, 5] for position j's candidates; chosen[j]: the row of the
    move played.  `prior_games`: each gamma also gets that many virtual wins and losses against a
    gamma of 1, so features seen a few times stay near 1.  With a sixth column of diamond keys
    (features(..., diamond=True)), the diamonds chosen at least `min_diamond_count` times get a
    gamma of their own, all others share row 0.  `targets` (float [n_j] per position, summing to 1):
    a teacher's distribution over the candidates instead of one chosen move, each candidate
    winning its share of the position (MM's win counts become expected ones)."""
    sizes = group_sizes()
    f = np.concatenate(feats).astype(np.int64)  # [R, 5 or 6]
    pos = np.repeat(np.arange(len(feats)), [len(x) for x in feats])
    offsets = np.cumsum([0] + [len(x) for x in feats])[:-1]
    win_rows = offsets + np.asarray(chosen)
    diamonds = None
    if f.shape[1] == 6:
        played, counts = np.unique(f[win_rows, 5], return_counts=True)
        diamonds = played[counts >= min_diamond_count]
        f[:, 5] = diamond_rows(diamonds, f[:, 5])
        sizes = sizes + (len(diamonds) + 1,)
    lg = [np.zeros(n) for n in sizes]
    if targets is None:
        wins = [np.bincount(f[win_rows, g], minlength=n) + prior_games for g, n in enumerate(sizes)]
    else:
        share = np.concatenate(targets).astype(np.float64)
        wins = [np.bincount(f[:, g], weights=share, minlength=n) + prior_games for g, n in enumerate(sizes)]
    for _ in range(iterations):
        for g, n in enumerate(sizes):
            s = np.exp(sum(lg[h][f[:, h]] for h in range(len(sizes))))
            e = np.bincount(pos, weights=s, minlength=len(feats))  # E_j
            others = s / np.exp(lg[g][f[:, g]])  # strength of the row's other features
            c = np.bincount(f[:, g], weights=others / e[pos], minlength=n)
            gamma = wins[g] / (c + 2 * prior_games / (1 + np.exp(lg[g])))  # virtual opponent of gamma 1
            lg[g] = np.log(gamma)
            lg[g] -= np.average(lg[g], weights=np.bincount(f[:, g], minlength=n) + 1e-9)  # fix the scale
    return ShapeModel(tuple(x.astype(np.float32) for x in lg), len(feats), diamonds)


def playout_patterns(model: ShapeModel, threshold: float) -> np.ndarray:
    """uint8 [2, 65536]: the playouts' pattern table (kernels/patterns.playout_table) holding
    the 3x3 neighbourhoods whose learnt pattern log-gamma is at least `threshold`; row c - 1 for
    colour c to move (the model names colours from the mover's side)."""
    good = model.log_gamma[0] >= threshold
    return good[mover_classes()].astype(np.uint8)

