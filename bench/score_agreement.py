"""How often gojax's end-of-game judgement agrees with GNU Go's, on finished games.

For every SGF under the folders given whose last two moves are passes (a game decided by the
count, not by resignation), the final position is given to GNU Go (`loadsgf`,
`final_status_list dead`, `final_score`) and to gojax (gojax/judge.py, Chinese rules).  A game
agrees when the two dead lists are the same set; the scores and winners are compared too.
GNU Go's answers are cached in a JSON file beside the output, so that variants of the judgement
are cheap to compare.

    python bench/score_agreement.py bench/results/strength --out bench/results/scoring/agreement_9x9.json
    python bench/score_agreement.py bench/results/scoring/gnugo19_selfplay --out .../agreement_19x19.json
    python bench/score_agreement.py bench/results/strength --legacy --out .../agreement_9x9_legacy.json \
        --cache bench/results/scoring/agreement_9x9.gnugo.json

--legacy measures the judgement gojax had before gojax/judge.py (ownership of the position as
it stands: a finished position is scored without being played out, and single points decide).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

import jax
import numpy as np
from sgfmill import sgf
from tqdm import tqdm

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from gojax import judge  # noqa: E402
from gojax.gtp_client import GtpClient  # noqa: E402
from gojax.sgf import load_sgf  # noqa: E402


def finished_games(folders: list[str]) -> list[str]:
    out = []
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, "**", "*.sgf"), recursive=True)):
            with open(path, "rb") as f:
                game = sgf.Sgf_game.from_bytes(f.read())
            moves = [node.get_move() for node in game.get_main_sequence()[1:]]
            if len(moves) >= 2 and moves[-1][0] and moves[-1][1] is None and moves[-2][1] is None:
                out.append(path)
    return out


def gnugo_verdicts(paths: list[str], cache_path: str, gnugo: str) -> dict:
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    todo = [p for p in paths if p not in cache]
    if todo:
        with GtpClient(gnugo) as ref:
            for path in tqdm(todo, desc="GNU Go", unit="game"):
                ref.send(f"loadsgf {os.path.abspath(path)}", timeout=300)
                dead = ref.send("final_status_list dead", timeout=600).split()
                score = ref.send("final_score", timeout=600)
                cache[path] = {"dead": sorted(dead), "score": score}
                if len(cache) % 50 == 0:
                    json.dump(cache, open(cache_path, "w"))
        json.dump(cache, open(cache_path, "w"))
    return cache


def score_text(s: float) -> str:
    return "0" if s == 0 else (f"B+{s:g}" if s > 0 else f"W+{-s:g}")


def legacy_dead(board, key) -> list[int]:
    """The judgement before gojax/judge.py: 512 playouts of the position as it stands (a
    finished one is not played on) and each stone alone: dead where the other colour owns it
    more than half the time."""
    from gojax.kernels.geometry import BLACK, WHITE
    from gojax.kernels.playout import PlayoutConfig, run_playouts
    from gojax.kernels.state import batch_from_host
    res = run_playouts(batch_from_host([board]), key, 512, PlayoutConfig(policy="mogo"))
    own = np.asarray(res.ownership[0])
    s = board.stones
    return [int(p) for p in np.flatnonzero(((s == BLACK) & (own < -0.5)) | ((s == WHITE) & (own > 0.5)))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--out", required=True, help="JSON summary (per-game rows beside it, .rows.jsonl)")
    ap.add_argument("--gnugo", default="/usr/games/gnugo --mode gtp --chinese-rules")
    ap.add_argument("--playouts", type=int, default=512)
    ap.add_argument("--policy", default="mogo", choices=["mogo", "uniform"])
    ap.add_argument("--legacy", action="store_true", help="the judgement before gojax/judge.py")
    ap.add_argument("--cache", default=None, help="GNU Go's answers (default: OUT with .gnugo.json)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N games")
    args = ap.parse_args(argv)
    paths = finished_games(args.folders)[:args.limit]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    cache = gnugo_verdicts(paths, args.cache or os.path.splitext(args.out)[0] + ".gnugo.json", args.gnugo)
    rows, t0 = [], time.perf_counter()
    for i, path in enumerate(tqdm(paths, desc="gojax", unit="game")):
        board, _ = load_sgf(open(path, "rb").read())
        key = jax.random.key(i)
        g = board.geometry
        if args.legacy:
            dead = legacy_dead(board, key)
            cleaned = board.copy()
            cleaned.stones[dead] = 0
            score = cleaned.score()
        else:
            j = judge.judge(board, key, "chinese", args.playouts, args.policy)
            dead, score = list(j.dead), j.score
        ours = sorted(g.to_gtp(p) for p in dead)
        theirs = cache[path]
        rows.append({"sgf": path, "dead_agree": ours == theirs["dead"], "score_agree": score_text(score) == theirs["score"],
                     "winner_agree": score_text(score)[0] == theirs["score"][0], "gojax_dead": ours,
                     "gnugo_dead": theirs["dead"], "gojax_score": score_text(score), "gnugo_score": theirs["score"]})
    n = len(rows)
    summary = {"games": n, "legacy": args.legacy, "playouts": args.playouts, "policy": args.policy,
               "dead_agree": sum(r["dead_agree"] for r in rows) / max(n, 1),
               "score_agree": sum(r["score_agree"] for r in rows) / max(n, 1),
               "winner_agree": sum(r["winner_agree"] for r in rows) / max(n, 1),
               "seconds_per_game": (time.perf_counter() - t0) / max(n, 1), "device": str(jax.devices()[0]),
               "date": time.strftime("%Y-%m-%d")}
    with open(os.path.splitext(args.out)[0] + ".rows.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    json.dump(summary, open(args.out, "w"), indent=1)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
