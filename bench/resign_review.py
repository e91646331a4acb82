"""Were gojax's resignations right?  KataGo's view of each position where gojax resigned.

    python bench/resign_review.py FOLDER ... [--katago /tmp/katago/run] [--visits 16] > OUT.jsonl

For each game of the match folders (results.jsonl and games/) that gojax lost by resigning, the
position it resigned in goes to KataGo's JSON analysis engine (bash ../shared/tools/katago/setup.sh
prints its runner) with `--visits` visits; one line per position: the game, gojax's colour, the
moves played, and KataGo's win rate and score lead for gojax.  A resignation in a position KataGo
still gives gojax a fair chance in is one the resign rule (SearchParams.resign_threshold) costs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from sgfmill import sgf

COLUMNS = "ABCDEFGHJKLMNOPQRST"


def game_moves(path: str) -> tuple[int, list[list[str]]]:
    """An SGF game's board size and its moves as KataGo's analysis engine takes them: [colour, GTP point or "pass"]."""
    with open(path, "rb") as g:
        game = sgf.Sgf_game.from_bytes(g.read())
    moves = []
    for node in game.get_main_sequence()[1:]:
        colour, move = node.get_move()
        if colour is not None:
            moves.append([colour.upper(), "pass" if move is None else f"{COLUMNS[move[1]]}{move[0] + 1}"])
    return game.get_size(), moves


def resigned_positions(folder: str, visits: int) -> list[tuple[dict, str]]:
    """(KataGo query, gojax's colour) for each game of `folder` gojax lost by resigning."""
    out = []
    with open(os.path.join(folder, "results.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            gojax = "B" if r["black"].startswith("gojax") else "W" if r["white"].startswith("gojax") else None
            if gojax is None or r.get("ended_by") != "resign" or r.get("winner_color", "")[:1].upper() == gojax:
                continue
            size, moves = game_moves(os.path.join(folder, r["sgf"]))
            out.append(({"id": f"{os.path.basename(os.path.normpath(folder))}:{r['game']}", "moves": moves,
                         "rules": "chinese", "komi": r["komi"], "boardXSize": size, "boardYSize": size,
                         "maxVisits": visits}, gojax))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--katago", default="/tmp/katago/run", help="the runner setup.sh prints")
    ap.add_argument("--visits", type=int, default=16)
    args = ap.parse_args(argv)
    asked = [p for folder in args.folders for p in resigned_positions(folder, args.visits)]
    if not asked:
        raise SystemExit("no game gojax lost by resigning in those folders")
    size = asked[0][0]["boardXSize"]
    print(f"{len(asked)} resigned positions", file=sys.stderr)
    proc = subprocess.run([args.katago, "analysis"], input="".join(json.dumps(q) + "\n" for q, _ in asked),
                          capture_output=True, text=True, env=dict(os.environ, SIZE=str(size)))
    answers = {a["id"]: a["rootInfo"] for a in map(json.loads, proc.stdout.splitlines()) if "rootInfo" in a}
    if not answers:
        raise SystemExit(f"KataGo answered nothing: {proc.stderr[-500:]}")
    for q, gojax in asked:
        info = answers.get(q["id"])
        if info is None:
            print(json.dumps({"id": q["id"], "error": "no answer"}))
            continue
        sign = 1 if gojax == "B" else -1  # the runner's config reports Black's view
        print(json.dumps({"id": q["id"], "gojax": gojax, "moves": len(q["moves"]),
                          "winrate": round(info["winrate"] if gojax == "B" else 1 - info["winrate"], 4),
                          "score_lead": round(sign * info["scoreLead"], 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
