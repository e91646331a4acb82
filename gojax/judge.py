"""Life and death at the end of a game: which stones are dead, which live in seki, the count.

Two ways to count a finished game (SPEC.md "Rules"; `SearchParams.rules`):
  chinese       area scoring after the dead stones are taken off (GNU Go's referee, KGS, human
                play).  Nobody captures them on the board, so the engine judges them.
  tromp-taylor  area scoring of the board as it stands: every stone is alive (CGOS).

The judgement plays the position out: K playouts with Black to move first and K with White
first (both sides passed, so neither has the move), with the passes cleared so that a finished
position is played on, not scored as it stands.  A whole chain is dead when, averaged over its
stones and the playouts, the opponent owns its points more often than it does.  Playouts do not
know seki (random players fill shared liberties), so seki is found on the board instead: two
living chains of opposite colours that share a liberty which neither side can fill without
putting its own chain in atari.  Seki chains are alive; their shared liberties count for nobody.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import numpy as np

from gojax.kernels.geometry import BLACK, EMPTY, WHITE
from gojax.kernels.host import Board, IllegalMove
from gojax.kernels.playout import PlayoutConfig, run_playouts
from gojax.kernels.state import batch_from_host
from gojax.search.params import RULES

# Rule-set names that GTP kgs-rules and KataGo's analysis queries use, and how gojax counts each
# (by area: territory rule sets are counted as Chinese, dead stones off).
RULE_NAMES = {"chinese": "chinese", "japanese": "chinese", "korean": "chinese", "aga": "chinese",
              "new_zealand": "chinese", "new-zealand": "chinese", "stone-scoring": "chinese",
              "tromp-taylor": "tromp-taylor"}
DEAD_BELOW = 0.0  # a chain is dead when its mean ownership, from its own side, is below this
SEKI_ABOVE = -0.5  # seki is looked for among chains whose value is above this: random players fill a
#                   seki's shared liberty, so its chains die in some playouts, but not in most


@dataclasses.dataclass(frozen=True)
class Judgement:
    ownership: np.ndarray  # float32 [P] mean final owner over the playouts: +1 Black, -1 White
    dead: tuple[int, ...]  # points of the stones taken off before counting (sorted)
    seki: tuple[int, ...]  # points of the stones living in seki (sorted)
    score: float  # Black's area minus White's minus komi, after the dead stones are taken off


def _play_on(board: Board, to_play: int) -> Board:
    b = board.resumed()
    b.ko, b.to_play = None, to_play
    return b


@functools.cache
def _config(policy: str) -> PlayoutConfig:
    return PlayoutConfig(policy=policy)  # no mercy rule: the playouts must reach the end


def play_out(board: Board, key: jax.Array, playouts: int = 512, policy: str = "mogo") -> np.ndarray:
    """float32 [P]: mean final owner (+1 Black, -1 White) over `playouts` playouts of the
    position played on (passes cleared), half with each colour to move first."""
    starts = batch_from_host([_play_on(board, BLACK), _play_on(board, WHITE)])
    res = run_playouts(starts, key, max(1, playouts // 2), _config(policy))
    return np.asarray(res.ownership, np.float32).mean(0)


def seki_points(board: Board, alive: np.ndarray) -> set[int]:
    """Stones of the chains marked `alive` (bool [P]) that live in seki with a chain of the
    other colour: they share a liberty that neither colour can fill without putting a chain of
    three or more stones (the filling stone included) in atari.  Smaller sacrifices are left
    out: a throw-in of one or two stones leaves the capturer a two-point eye, which does not
    live, so filling there is how such a group is killed, not a seki."""
    g = board.geometry
    label, chains = board.chains()
    out: set[int] = set()
    for q in np.flatnonzero(board.stones == EMPTY):
        nbrs = [r for r in g.neighbors[q] if board.stones[r] != EMPTY and alive[r]]
        if {int(board.stones[r]) for r in nbrs} != {BLACK, WHITE}:
            continue
        if all(_losing_fill(board, int(q), c) for c in (BLACK, WHITE)):
            for r in nbrs:
                out |= set(chains[label[r]][0])
    return out


def _losing_fill(board: Board, q: int, color: int) -> bool:
    """Would `color` at q be suicide, or capture nothing and leave its own chain of three or
    more stones with one liberty?"""
    try:
        stones, captured, _ = board.try_move(q, color)
    except IllegalMove:
        return True
    if captured:
        return False
    chain, libs = Board._group_of(stones, board.geometry, q)
    return len(libs) <= 1 and len(chain) >= 3


def judge_ownership(board: Board, ownership: np.ndarray, rules: str = "chinese") -> Judgement:
    """The judgement from a given ownership map ([P], +1 Black)."""
    if rules not in RULES:
        raise ValueError(f"rules must be one of {RULES}, got {rules!r}")
    label, chains = board.chains()
    view = np.where(board.stones == BLACK, ownership, -ownership)  # each stone's owner, from its side
    chain_value = np.array([view[list(stones)].mean() for stones, _ in chains]) if chains else np.zeros(0)
    value = np.where(label >= 0, chain_value[np.maximum(label, 0)], 0.0) if chains else np.zeros(label.shape)
    stones = board.stones != EMPTY
    seki = seki_points(board, stones & (value > SEKI_ABOVE))
    dead = np.zeros(label.shape, bool)
    if rules == "chinese":
        dead = stones & (value < DEAD_BELOW)
        dead[list(seki)] = False
    cleaned = board.copy()
    cleaned.stones = np.where(dead, EMPTY, board.stones).astype(np.int8)
    return Judgement(ownership=np.asarray(ownership, np.float32), dead=tuple(int(p) for p in np.flatnonzero(dead)),
                     seki=tuple(sorted(seki)), score=cleaned.score())


def judge(board: Board, key: jax.Array, rules: str = "chinese", playouts: int = 512,
          policy: str = "mogo") -> Judgement:
    """Dead stones, seki and the count of `board` under `rules`, from `playouts` playouts."""
    return judge_ownership(board, play_out(board, key, playouts, policy), rules)


def margin(judgement: Judgement, color: int) -> float:
    """The count's margin for `color` (> 0: `color` wins)."""
    return judgement.score if color == BLACK else -judgement.score


def dead_of(judgement: Judgement, board: Board, color: int) -> list[int]:
    """The dead stones of one colour."""
    return [p for p in judgement.dead if board.stones[p] == color]

