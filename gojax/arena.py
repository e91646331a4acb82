"""A batched arena: every game of a gojax-vs-gojax match in one process, all their searches in
one forest (search/forest.py): one device call per round for every game's side to move.

The games and their records are those `gojax match` writes (gojax/match.py): results.jsonl
with one line per game, an SGF per game, GNU Go as referee, colours alternating, resumable.
Each engine is a `Player` (gojax/player.py) with the seed `gojax gtp` would get in that game
from `gojax match` (match.seeded: its seed x 100003 + the game), and makes the same decisions
(resignation, passing on the judged count), so an arena game is the game two `gojax gtp`
processes play (tests/test_arena.py plays one both ways).  Both engines must share L, K, the
playout policy and the prior (one device call); their simulations per move may differ.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
import time

from gojax.kernels.geometry import BLACK, WHITE
from gojax.kernels.host import Board
from gojax.match import MatchConfig, counted, finish_game, load_results, referee_score, summarize
from gojax.player import RESIGN, Player, PlayerOptions
from gojax.search.forest import Forest
from gojax.search.params import SearchParams

_NAMES = {BLACK: "black", WHITE: "white"}


@dataclasses.dataclass(frozen=True)
class ArenaEngine:
    name: str
    simulations: int
    params: SearchParams = SearchParams()
    resign: bool = True

    def command(self) -> str:
        """How the results name it: the `gojax gtp` command that plays the same games."""
        return f"arena: gojax gtp --simulations {self.simulations} --seed {self.params.seed}"


class _Game:
    def __init__(self, index: int, a: ArenaEngine, b: ArenaEngine, cfg: MatchConfig):
        self.index = index
        a_black = not cfg.alternate or index % 2 == 0
        self.engines = {BLACK: a if a_black else b, WHITE: b if a_black else a}
        self.players = {}
        for color, e in self.engines.items():
            seed = e.params.seed * 100003 + index if cfg.vary_seeds else e.params.seed
            self.players[color] = Player(cfg.size, cfg.komi, dataclasses.replace(e.params, seed=seed),
                                         PlayerOptions(simulations=e.simulations, resign=e.resign, log=io.StringIO(),
                                                       verbose=False))
        self.board = Board(cfg.size, cfg.komi)
        self.max_moves = cfg.max_moves or 3 * cfg.size * cfg.size
        self.winner, self.reason, self.ended = None, None, "score"
        self.seconds = 0.0

    @property
    def over(self) -> bool:
        return self.reason is not None or self.board.game_over or len(self.board.moves) >= self.max_moves


def run_arena(a: ArenaEngine, b: ArenaEngine, cfg: MatchConfig, parallel: int = 64, progress: bool = True,
              log=sys.stderr) -> dict:
    """Play the games of `cfg` not yet in OUT/results.jsonl, `parallel` at a time; returns the
    summary over all of them (gojax.match.summarize)."""
    os.makedirs(os.path.join(cfg.out, "games"), exist_ok=True)
    path = os.path.join(cfg.out, "results.jsonl")
    done = load_results(path)
    finished = {r["game"] for r in done}
    todo = [i for i in range(cfg.games) if i not in finished]
    if done:
        print(f"[arena] resuming: {len(done)} of {cfg.games} games already in {path}", file=log)
    from tqdm import tqdm
    bar = tqdm(total=cfg.games, initial=cfg.games - len(todo), desc="arena", file=log, disable=not progress)
    for start in range(0, len(todo), parallel):
        games = [_Game(i, a, b, cfg) for i in todo[start:start + parallel]]
        _play(games, cfg)
        for g in games:
            rec = _record(g, cfg)
            with open(path, "a") as f:
                f.write(json.dumps(rec) + "\n")
            done.append(rec)
            bar.update(1)
    bar.close()
    return summarize([r for r in done if r["game"] < cfg.games], a.name, b.name)


def _play(games: list[_Game], cfg: MatchConfig) -> None:
    """Every game to its end: each ply, the side to move in every unfinished game searches, all
    in one forest; finished games keep their seat with a budget of 0."""
    searches = [None] * len(games)
    forest = None
    while not all(g.over for g in games):
        budgets = []
        for i, g in enumerate(games):
            if g.over:
                budgets.append(0)
                continue
            color = g.board.to_play
            searches[i] = g.players[color].prepare(color)
            budgets.append(g.players[color].options.simulations)
        filler = next(s for s in searches if s is not None)
        t0 = time.perf_counter()
        trees = [s or filler for s in searches]
        forest = Forest.of(trees) if forest is None else forest.use(trees)
        results = forest.run(budgets)
        share = (time.perf_counter() - t0) / max(1, sum(b > 0 for b in budgets))
        for g, r, budget in zip(games, results, budgets):
            if not budget:
                continue
            g.seconds += share
            color = g.board.to_play
            move = g.players[color].decide(color, r)
            if move == RESIGN:
                g.winner, g.reason, g.ended = 3 - color, f"{_NAMES[color]} resigns", "resign"
                continue
            g.board.play(move, color)
            g.players[3 - color].play(color, move)


def _record(g: _Game, cfg: MatchConfig) -> dict:
    score = None
    if g.reason is None:
        score = referee_score(cfg, g.board)
        g.winner, g.reason = counted(score, g.board, g.max_moves)
    names = {c: e.name for c, e in g.engines.items()}
    record = {"game": g.index, "black": names[BLACK], "white": names[WHITE], "size": cfg.size, "komi": cfg.komi,
              "commands": {e.name: e.command() for e in g.engines.values()}}
    moves = max(len(g.board.moves), 1)
    record.update(finish_game(cfg, g.index, g.board, names, g.winner, g.reason, g.ended, score,
                              {e.name: g.seconds / moves for e in g.engines.values()}))
    return record
