"""A batched arena: every game of a match in one process, all of gojax's searches in one forest
(search/forest.py): one device call per round for every game where gojax is to move.

Each side is an `ArenaEngine` (gojax in this process: a `Player`, gojax/player.py) or an
`ExternalEngine` (a GTP command, GNU Go or Pachi, one process per game as `gojax match` starts
it).  While gojax's trees search, the external engines to move think in their own processes.
The games and their records are those `gojax match` writes (gojax/match.py): results.jsonl
with one line per game, an SGF per game, GNU Go as referee, colours alternating, per-game seeds,
resumable; an external engine that crashes or answers an illegal move forfeits its game only.
An in-process engine has the seed `gojax gtp` would get in that game from `gojax match`
(match.seeded: its seed x 100003 + the game) and makes the same decisions (resignation, passing
on the judged count), so an arena game is the game two `gojax gtp` processes play
(tests/test_arena.py plays one both ways).  In-process engines share L, K, the playout policy
and the prior (one device call); their simulations per move may differ.  Openings
(`--openings`) are played as `gojax match` plays them: every engine is told the opening's moves
before the first genmove, and one that rejects a move forfeits.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import functools
import io
import json
import multiprocessing
import os
import sys
import time

from gojax.engine_config import EngineConfig, is_gojax_gtp
from gojax.match import (
    Game,
    MatchConfig,
    check_resume,
    colours,
    load_opening,
    load_results,
    make_folder,
    remove_if_empty,
    seeded,
    summarize,
    write_card,
)
from gojax.player import RESIGN, Player
from gojax.runtime import start_worker
from gojax.search.forest import Forest
from gojax.search.params import SearchParams
from gojax.search.tree import TreeStack


@dataclasses.dataclass(frozen=True)
class ArenaEngine:
    """gojax played in this process, by simulations with one tree."""

    name: str
    config: EngineConfig

    def __post_init__(self):
        if self.config.simulations is None or self.config.seconds is not None or self.config.trees > 1:
            raise ValueError(f"{self.name}: the arena plays gojax by simulations with one tree (no --seconds,"
                             " --trees)")

    @property
    def params(self) -> SearchParams:
        return self.config.params

    def player_options(self):
        """Its players' options: silent, and on JAX's default device, where the arena's forest
        plays every game's search in one call (the device choice of `gojax gtp` is a lone
        search's)."""
        return dataclasses.replace(self.config.player_options(io.StringIO(), verbose=False), playout_device="default")

    def command(self) -> str:
        """How the results name it: the `gojax gtp` command that plays the same games."""
        return "arena: " + self.config.command()


def engine_from_command(name: str, cmd: str):
    """An `ArenaEngine` for a `gojax gtp ...` command (its options parsed as `gojax gtp` parses
    them; it plays with this process's gojax, whatever program path the command names), else
    an `ExternalEngine`.  ValueError for gojax options the arena cannot honour."""
    if not is_gojax_gtp(cmd):
        return ExternalEngine(name, cmd)
    return ArenaEngine(name, EngineConfig.from_command(cmd))


@dataclasses.dataclass(frozen=True)
class ExternalEngine:
    name: str
    command: str  # a GTP engine's command line, as `gojax match` takes it (seeded per game)


def arena_game(index: int, a, b, cfg: MatchConfig, trees: tuple = (None, None)) -> Game:
    """Game `index` between `a` and `b` (ArenaEngine or ExternalEngine): an ArenaEngine plays
    as a Player in this process, on its slot of `trees` (the arena's stacks, None for an
    external engine), with the seed `gojax match` would give its `gojax gtp` process."""
    engines = colours(cfg, index, a, b)
    tree_of = colours(cfg, index, *trees)
    commands, players = {}, {}
    for color, e in engines.items():
        if isinstance(e, ExternalEngine):
            commands[color] = seeded(e.command, index) if cfg.vary_seeds else e.command
            continue
        seed = e.params.seed * 100003 + index if cfg.vary_seeds else e.params.seed
        commands[color] = e.command()
        players[color] = Player(cfg.size, cfg.komi, dataclasses.replace(e.params, seed=seed), e.player_options(),
                                tree=tree_of[color])
    return Game(cfg, index, {c: e.name for c, e in engines.items()}, commands, players)


def run_arena(a: ArenaEngine, b: ArenaEngine, cfg: MatchConfig, parallel: int = 64, progress: bool = True,
              log=sys.stderr, jobs: int = 1) -> dict:
    """Play the games of `cfg` not yet in OUT/results.jsonl, `parallel` at a time in each of
    `jobs` processes (1: this one; more: spawned workers, runtime.start_worker);
    returns the summary over all of them (gojax.match.summarize).  A group of games is written
    to results.jsonl when its last game ends."""
    for opening in cfg.openings:  # fail before the first game, not in the middle of the run
        load_opening(opening, cfg.size, cfg.opening_moves)
    path = os.path.join(cfg.out, "results.jsonl")
    done = load_results(path)
    check_resume(cfg, done)
    made = make_folder(os.path.join(cfg.out, "games"))[1:]  # games/ itself goes with its folder
    finished = {r["game"] for r in done}
    todo = [i for i in range(cfg.games) if i not in finished]
    if done:
        print(f"[arena] resuming: {len(done)} of {cfg.games} games already in {path}", file=log)
    from tqdm import tqdm
    bar = tqdm(total=cfg.games, initial=cfg.games - len(todo), desc="arena", file=log, disable=not progress)
    groups = [todo[start:start + parallel] for start in range(0, len(todo), parallel)]
    with contextlib.ExitStack() as stack:
        if jobs > 1 and len(groups) > 1:  # spawn: a forked child would inherit this process's JAX runtime
            pool = stack.enter_context(multiprocessing.get_context("spawn").Pool(
                min(jobs, len(groups)), initializer=start_worker))
            records = pool.imap_unordered(functools.partial(play_group, a, b, cfg), groups)
        else:  # in this process: the bar also shows the group in play, ply by ply
            show = functools.partial(_show_group, bar)
            records = map(functools.partial(play_group, a, b, cfg, on_ply=show), groups)
        try:
            for group in records:
                if cfg.force or not os.path.exists(os.path.join(cfg.out, "match.json")):
                    write_card(cfg)
                with open(path, "a") as f:
                    f.writelines(json.dumps(rec) + "\n" for rec in group)
                done.extend(group)
                bar.update(len(group))
        except BaseException:
            if not done:  # a run that saved nothing leaves no folder behind
                remove_if_empty(made)
            raise
    bar.close()
    return summarize([r for r in done if r["game"] < cfg.games], a.name, b.name)


def _show_group(bar, games: list[Game]) -> None:
    bar.set_postfix_str(group_progress(games))


def group_progress(games: list[Game]) -> str:
    """Where a group in play stands, for the progress bar: its games' moves (fewest-most) and
    how many have ended, since results.jsonl gets the group only when its last game ends."""
    plies = [len(g.board.moves) for g in games]
    return f"group of {len(games)}: moves {min(plies)}-{max(plies)}, {sum(g.over for g in games)} ended"


def play_group(a: ArenaEngine, b: ArenaEngine, cfg: MatchConfig, indices: list[int], on_ply=None) -> list[dict]:
    """Play games `indices` at once to their ends (their SGFs written); their results.jsonl records.
    on_ply(games), if given, is called after every round of moves."""
    # Each gojax engine's trees side by side in one stack, a slot per game, so that a round's
    # descents and backups are array operations over all its games (search/forest.py).
    stacks = [None if isinstance(e, ExternalEngine) else
              TreeStack(cfg.size, e.params.max_nodes, len(indices), e.params.pass_in_tree == "always").trees
              for e in (a, b)]
    games = [arena_game(i, a, b, cfg, tuple(None if st is None else st[j] for st in stacks))
             for j, i in enumerate(indices)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(games), thread_name_prefix="arena-engine") as pool:
        try:
            for g in games:
                g.start(cfg)
            _play(games, cfg, pool, on_ply)
        finally:
            for g in games:
                g.close()
    return [g.record(cfg) for g in games]


def _play(games: list[Game], cfg: MatchConfig, pool: concurrent.futures.ThreadPoolExecutor, on_ply=None) -> None:
    """Every game to its end.  Each ply: the external engines to move think in their processes
    while every game with gojax to move searches, all in one forest (finished games and games
    waiting for an external engine keep their seat with a budget of 0)."""
    searches = [None] * len(games)
    forest = None
    while not all(g.over for g in games):
        asked = {i: pool.submit(g.ask, cfg.move_timeout) for i, g in enumerate(games)
                 if not g.over and g.external_to_move()}
        budgets, exact = [], []
        for i, g in enumerate(games):
            if g.over or i in asked:
                budgets.append(0)
                exact.append(False)
                continue
            color = g.board.to_play
            player = g.engines[color].player
            searches[i] = player.prepare(color)
            budgets.append(player.options.simulations)
            exact.append(player.options.exact)
        if any(budgets):
            filler = next(s for s in searches if s is not None)
            t0 = time.perf_counter()
            trees = [s or filler for s in searches]
            forest = Forest.of(trees) if forest is None else forest.use(trees)
            results = forest.run(budgets, stop_early=[not x for x in exact], exact=exact)
            share = (time.perf_counter() - t0) / sum(b > 0 for b in budgets)
            for g, r, budget in zip(games, results, budgets):
                if not budget:
                    continue
                color = g.board.to_play
                move = g.engines[color].player.decide(color, r)
                g.answer(move if move == RESIGN else g.board.geometry.to_gtp(move), share, cfg)
        for i, future in asked.items():
            games[i].answer(*future.result(), cfg)
        if on_ply is not None:
            on_ply(games)


