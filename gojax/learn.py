"""`gojax learn-prior`: fit the shape prior (search/shape.py) to the moves chosen in saved match
games (gojax's own, or Pachi's: `--learn-from pachi`), and measure how often it predicts them.

A match folder (gojax match / gojax scaling) holds results.jsonl and games/*.sgf; the results
name each player's command, so only the moves of the engines asked for, searching a fixed
`min_simulations` or more per move, are learnt from (GNU Go's never are), from the games of
one board size (9x9 by default, the bundled model's; the features are defined on every size).
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gojax.engine_config import DEFAULT_SIMULATIONS
from gojax.kernels.geometry import BLACK
from gojax.kernels.host import Board
from gojax.search import shape
from gojax.search.priors import mogo_values
from gojax.sgf import SgfError, load_sgf

_SIMS = re.compile(r"--simulations[ =](\d+)")
ENGINES = ("gojax", "pachi")


@dataclass
class Positions:
    """Training positions: features of every candidate (legal point) and the row played."""

    feats: list[np.ndarray] = field(default_factory=list)  # int32 [n_j, 5]
    chosen: list[int] = field(default_factory=list)
    games: list[str] = field(default_factory=list)  # the SGF (or teacher game) of each position
    targets: list[np.ndarray] = field(default_factory=list)  # a teacher's float [n_j] per position, or none

    def add(self, other: Positions) -> None:
        self.feats += other.feats
        self.chosen += other.chosen
        self.games += other.games
        self.targets += other.targets


def learnt_players(row: dict, min_simulations: int, engines: tuple[str, ...] = ("gojax",)) -> set[str]:
    """Colours ("black"/"white") in one results row whose engine is one of `engines` (gojax,
    pachi) playing a fixed >= min_simulations per move."""
    out = set()
    for colour in ("black", "white"):
        cmd = row.get("commands", {}).get(row.get(colour, ""), "")  # old runs did not record them
        if "gojax" in engines and "gojax" in cmd and " gtp" in cmd:
            m = _SIMS.search(cmd)
            sims = int(m.group(1)) if m else DEFAULT_SIMULATIONS
            if sims >= min_simulations and "--seconds" not in cmd:
                out.add(colour)
        elif "pachi" in engines and "pachi" in cmd.split(" -")[0]:
            m = re.search(r"-t\s+=(\d+)", cmd)  # fixed playouts only (-t =N), not time
            if m and int(m.group(1)) >= min_simulations:
                out.add(colour)
    return out


def positions_from_game(path: Path, colours: set[str], diamond: bool = False) -> Positions:
    """Every non-pass move by `colours` in one SGF, with its candidates' features (and diamond
    keys: shape.features)."""
    out = Positions()
    start, info = load_sgf(path.read_bytes(), upto=0)
    board: Board = start
    for colour, point in info["moves"]:
        name = "black" if colour == BLACK else "white"
        if name in colours and point is not None and colour == board.to_play:
            legal = [p for p in board.legal_points(colour) if p is not None]
            if point in legal:
                verdict = np.full(board.geometry.num_points, 0.5, np.float32)
                verdict[legal] = mogo_values(board, legal)
                last, prev = shape.last_moves(board)
                f = shape.features(board.stones, board.size, colour, last, prev, verdict, diamond)
                out.feats.append(f[legal])
                out.chosen.append(legal.index(point))
                out.games.append(str(path))
        board.play(point, colour)
    return out


def collect(folders: list[Path], min_simulations: int, progress=None, engines: tuple[str, ...] = ("gojax",),
            size: int = 9, diamond: bool = False) -> Positions:
    """Positions from every `size` game in the match folders (searched recursively for results.jsonl)."""
    out = Positions()
    rows = []
    for folder in folders:
        for res in sorted(Path(folder).rglob("results.jsonl")):
            for line in res.read_text().splitlines():
                if line.strip():
                    rows.append((res.parent, json.loads(line)))
    for folder, row in (progress(rows) if progress else rows):
        colours = learnt_players(row, min_simulations, engines)
        if not colours or not row.get("sgf") or row.get("size", 9) != size:
            continue
        try:
            out.add(positions_from_game(folder / row["sgf"], colours, diamond))
        except (OSError, SgfError) as e:
            warnings.warn(f"skipping {folder / row['sgf']}: {e}", stacklevel=2)
    return out


def accuracy(model: shape.ShapeModel, pos: Positions, verdict_only: bool = False) -> dict[str, float]:
    """How often the model's top candidate is the move played (ties share the credit), and the
    mean log-likelihood of the played move.  verdict_only: rank by MoGo's verdict alone."""
    top1, loglik = 0.0, 0.0
    for f, c in zip(pos.feats, pos.chosen):
        s = f[:, 4].astype(np.float64) if verdict_only else model.log_strength(f).astype(np.float64)
        best = np.flatnonzero(s == s.max())
        top1 += (c in best) / len(best)
        if not verdict_only:
            loglik += s[c] - s.max() - np.log(np.exp(s - s.max()).sum())
    n = max(len(pos.chosen), 1)
    return {"positions": len(pos.chosen), "top1": top1 / n, "loglik": loglik / n,
            "uniform_loglik": -float(np.mean([np.log(len(f)) for f in pos.feats])) if pos.feats else 0.0}


def split(pos: Positions, holdout_every: int) -> tuple[Positions, Positions]:
    """Train / test by game: every `holdout_every`-th game (in sorted order) is held out."""
    games = sorted(set(pos.games))
    held = set(games[::holdout_every]) if holdout_every > 0 else set()
    train, test = Positions(), Positions()
    for j, (f, c, g) in enumerate(zip(pos.feats, pos.chosen, pos.games)):
        dst = test if g in held else train
        dst.feats.append(f)
        dst.chosen.append(c)
        dst.games.append(g)
        if pos.targets:
            dst.targets.append(pos.targets[j])
    return train, test


def from_teacher(path: str, progress=None) -> Positions:
    """Positions of a teacher file (bench/teacher_policy.py's positions.npz: KataGo's policy), each
    with the teacher's distribution over the legal points as its target and its favourite as
    the chosen move; positions where the teacher gives the legal points no probability are skipped."""
    from gojax.learn_policy import POSITION_KEYS, _arrays, replay
    data = _arrays(path, "a teacher positions file", POSITION_KEYS + ("policy",))
    out = Positions()
    rows = list(zip(replay(data), data["policy"], data["game"].tolist()))
    for board, policy, game in (progress(rows) if progress else rows):
        colour = board.to_play
        legal = [p for p in board.legal_points(colour) if p is not None]
        target = np.maximum(policy[legal], 0.0).astype(np.float64)
        if not legal or target.sum() <= 0:
            continue
        verdict = np.full(board.geometry.num_points, 0.5, np.float32)
        verdict[legal] = mogo_values(board, legal)
        last, prev = shape.last_moves(board)
        out.feats.append(shape.features(board.stones, board.size, colour, last, prev, verdict)[legal])
        out.targets.append(target / target.sum())
        out.chosen.append(int(target.argmax()))
        out.games.append(f"{path}#{game}")
    return out
