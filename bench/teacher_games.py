"""Self-play games of a GTP engine from varied openings: positions for bench/teacher_data.py and
bench/teacher_policy.py on board sizes where no match games exist in numbers (19x19).

    python bench/teacher_games.py --out DIR --games 100 --size 19 --engine "gnugo --mode gtp --level 0"
                                  [--opening 4] [--seed 0] [--first 0]

Game i opens with 0..OPENING stones drawn with seed SEED + i from the points on the third to fifth
lines (where openings are played), the colours alternating from Black; then the engine plays both
sides to two passes, a resignation or 2 x size^2 moves.  Each game is DIR/game_NNNN.sgf (sgfmill),
written when it ends, so a rerun skips the games already there (resumable); the engine's own
randomness and the drawn openings keep the games apart.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from sgfmill import sgf  # noqa: E402

from bench.teacher_data import gtp_point, parse_point  # noqa: E402
from gojax.gtp_client import GtpClient, GtpEngineError  # noqa: E402


def opening_points(size: int) -> list[tuple[int, int]]:
    """(row, col) on the third to fifth lines from an edge, the lines openings are played on."""
    line = lambda i: min(i, size - 1 - i) + 1  # noqa: E731
    return [(r, c) for r in range(size) for c in range(size)
            if 3 <= min(line(r), line(c)) <= 5]


def play_game(engine: GtpClient, size: int, komi: float, opening: int, rng: random.Random, name: str):
    """An sgfmill game, its result and the moves played."""
    engine.send(f"boardsize {size}")
    engine.send("clear_board")
    engine.send(f"komi {komi}")
    game = sgf.Sgf_game(size)
    root = game.get_root()
    root.set("KM", komi)
    root.set("RU", "Chinese")
    root.set("PB", name)
    root.set("PW", name)
    colour, moves = "b", 0
    points = opening_points(size)
    for rc in rng.sample(points, min(rng.randint(0, opening), len(points))):
        engine.send(f"play {colour} {gtp_point(rc[0] * size + rc[1], size)}")  # drawn points are distinct, so always legal
        game.extend_main_sequence().set_move(colour, rc)
        colour, moves = ("w" if colour == "b" else "b"), moves + 1
    passes, result = 0, None
    while moves < 2 * size * size:
        reply = engine.send(f"genmove {colour}", timeout=600).strip().lower()
        if reply == "resign":
            result = f"{'W' if colour == 'b' else 'B'}+R"
            break
        point = parse_point(reply, size)
        rc = None if point is None else divmod(point, size)
        game.extend_main_sequence().set_move(colour, rc)
        passes = passes + 1 if rc is None else 0
        colour, moves = ("w" if colour == "b" else "b"), moves + 1
        if passes == 2:
            break
    if result is None:
        try:
            score = engine.send("final_score", timeout=120).strip()
            result = score if score[:2] in ("B+", "W+") or score == "0" else None
        except GtpEngineError:  # an engine without final_score: the game still counts as positions
            result = None
    if result:
        root.set("RE", result)
    return game, result, moves


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--first", type=int, default=0, help="index of the first game (to split a run across processes)")
    ap.add_argument("--size", type=int, default=19)
    ap.add_argument("--komi", type=float, default=7.5)
    ap.add_argument("--engine", required=True, help="GTP command line of the engine playing both sides")
    ap.add_argument("--name", default="", help="player name in the SGFs (default: the engine's first word)")
    ap.add_argument("--opening", type=int, default=4, help="at most this many drawn opening stones")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not 2 <= args.size <= 19:
        ap.error(f"--size {args.size}: boards from 2 to 19")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = args.name or Path(shlex.split(args.engine)[0]).name
    t0 = time.monotonic()
    with GtpClient(args.engine) as engine:
        for i in range(args.first, args.first + args.games):
            path = out / f"game_{i:04d}.sgf"
            if path.exists():
                continue
            game, result, moves = play_game(engine, args.size, args.komi, args.opening,
                                            random.Random(args.seed + i), name)
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(game.serialise())
            tmp.replace(path)  # whole files only: an interrupted game is replayed on resume
            print(f"[{time.monotonic() - t0:6.0f} s] game {i}: {moves} moves, {result}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
