"""Teacher positions for the learnt playout policy: every position of saved games, labelled with
Pachi's pattern-prior distribution over the moves (its GTP `gogui-pattern_rating`).

    python bench/teacher_data.py [GAMES...] --out bench/results/teacher/pachi9 [--size 9]
                                 [--max-positions 120000] [--pachi PATH]
    python bench/teacher_data.py --pack bench/results/teacher/pachi9

GAMES are SGF files or folders of them (default: bench/results/strength, the match games of
gojax, Pachi and GNU Go).  Games are deduplicated by their moves and taken in a fixed shuffled
order, so a partial run still spans every match.  Each game's positions are appended to
OUT/positions.jsonl as one line (a rerun skips the games already there: resumable).  `--pack`
turns the lines into OUT/positions.npz (the arrays `kernels/learnt.py` and `gojax learn-policy`
read) and writes OUT/CARD.md, the data card.

Pachi's rating is its Bradley-Terry pattern model (Coulom 2007's form, large spatial patterns,
fitted by Pachi's authors to professional games): for the side to move, a probability in whole
percent for the likeliest moves and an order for the rest.  The label is that distribution; the
move actually played next (by whichever engine) is kept beside it for move prediction.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402
from sgfmill import sgf  # noqa: E402

from gojax.gtp_client import GtpClient  # noqa: E402
from gojax.kernels.geometry import BLACK  # noqa: E402
from gojax.sgf import SgfError, load_sgf  # noqa: E402

COLUMNS = "ABCDEFGHJKLMNOPQRST"


def gtp_point(p: int, size: int) -> str:
    row, col = divmod(p, size)
    return f"{COLUMNS[col]}{row + 1}"


def parse_point(text: str, size: int) -> int | None:
    text = text.strip().upper()
    if text in ("PASS", ""):
        return None
    return (int(text[1:]) - 1) * size + COLUMNS.index(text[0])


def parse_rating(reply: str, size: int) -> dict[int, int]:
    """{point: percent} from a `gogui-pattern_rating` reply (VAR line, then LABEL lines)."""
    out = {}
    for line in reply.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "LABEL":
            out[parse_point(parts[1], size)] = int(parts[2])
    return out


def sgf_files(paths: list[str]) -> list[Path]:
    files = []
    for p in map(Path, paths):
        files += sorted(p.rglob("*.sgf")) if p.is_dir() else [p]
    return files


def game_moves(path: Path, size: int) -> tuple[list[tuple[int, int | None]], dict] | None:
    """[(colour, point or None)] of a game of `size` that replays legally, and its root props."""
    try:
        data = path.read_bytes()
        board, info = load_sgf(data)
        root = sgf.Sgf_game.from_bytes(data).get_root()
    except (SgfError, OSError, ValueError):
        return None
    if board.size != size or any(info["setup"].values()) or len(info["moves"]) < 2:
        return None
    names = {k: root.get(k) if root.has_property(k) else "" for k in ("PB", "PW")}
    return [(int(c), None if p is None else int(p)) for c, p in info["moves"]], dict(names, KM=info["komi"])


def distinct_games(paths: list[str], size: int) -> list[tuple[str, Path, list, dict]]:
    """(key, path, moves, root props) of each game of `size` in SGF files or folders that replays
    legally, once per sequence of moves (key: a hash of them), in the files' sorted order."""
    games, seen = [], set()
    for path in sgf_files(paths):
        got = game_moves(path, size)
        if got is None:
            continue
        key = hashlib.sha1(repr(got[0]).encode()).hexdigest()[:16]
        if key not in seen:
            seen.add(key)
            games.append((key, path, *got))
    return games


def label_game(pachi: GtpClient, moves, size: int, komi: float) -> list[dict]:
    """One record per position before each move (passes and the end excluded)."""
    pachi.send(f"boardsize {size}")
    pachi.send("clear_board")
    pachi.send(f"komi {komi}")
    out = []
    for i, (colour, point) in enumerate(moves):
        if point is not None:
            rating = parse_rating(pachi.send("gogui-pattern_rating"), size)
            out.append({"move": i, "to_play": "b" if colour == BLACK else "w",
                        "rating": {str(k): v for k, v in rating.items() if k is not None}, "next": point})
        word = "pass" if point is None else gtp_point(point, size)
        pachi.send(f"play {'b' if colour == BLACK else 'w'} {word}")
    return out


def collect(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = out / "positions.jsonl"
    done, count = set(), 0
    if lines.exists():
        for line in lines.read_text().splitlines():
            row = json.loads(line)
            done.add(row["key"])
            count += len(row["positions"])
    games = distinct_games(args.games, args.size)
    random.Random(args.seed).shuffle(games)
    todo = [g for g in games if g[0] not in done]
    print(f"{len(games)} distinct {args.size}x{args.size} games, {len(done)} done ({count} positions); "
          f"{len(todo)} to label", file=sys.stderr)
    pachi = GtpClient(f"{args.pachi} -r chinese threads=1 pondering=0", stderr="keep")
    t0, start = time.monotonic(), count
    try:
        with lines.open("a") as f:
            for n, (key, path, moves, props) in enumerate(todo):
                if count >= args.max_positions:
                    break
                komi = float(props.get("KM", 7.5) or 7.5)
                rows = label_game(pachi, moves, args.size, komi)
                f.write(json.dumps({"key": key, "sgf": str(path), "komi": komi, "players": [props.get("PB", ""),
                                   props.get("PW", "")], "moves": [p if p is not None else -1 for _, p in moves],
                                    "first": "b" if moves[0][0] == BLACK else "w", "positions": rows}) + "\n")
                f.flush()
                count += len(rows)
                if n % 20 == 0:
                    rate = (count - start) / max(time.monotonic() - t0, 1e-9)
                    print(f"{n + 1}/{len(todo)} games, {count} positions, {rate:.0f}/s", file=sys.stderr, flush=True)
    finally:
        pachi.close()
    print(f"{count} positions in {lines}", file=sys.stderr)


def pack(folder: str, size: int) -> None:
    """positions.jsonl -> positions.npz: the games' moves, and per position its game, move number
    and Pachi's percent per point (uint8 [N, P]; 255 = Pachi gave it no label), the next move."""
    out = Path(folder)
    lines = (out / "positions.jsonl").read_text().splitlines()
    try:
        rows = [json.loads(line) for line in lines]
    except json.JSONDecodeError:  # a line still being written by a running collection
        rows = [json.loads(line) for line in lines[:-1]]
    n_pts = size * size
    max_len = max(len(r["moves"]) for r in rows)
    moves = np.full((len(rows), max_len), -2, np.int16)  # -1 pass, -2 after the end
    first_white = np.zeros(len(rows), bool)
    komi = np.zeros(len(rows), np.float32)
    game, move, nxt, pct, players = [], [], [], [], []
    for g, r in enumerate(rows):
        moves[g, :len(r["moves"])] = r["moves"]
        first_white[g] = r["first"] == "w"
        komi[g] = r["komi"]
        for pos in r["positions"]:
            row = np.full(n_pts, 255, np.uint8)
            for k, v in pos["rating"].items():
                row[int(k)] = v
            game.append(g)
            move.append(pos["move"])
            nxt.append(pos["next"])
            pct.append(row)
            players.append(r["players"][pos["to_play"] == "w"])
    names = sorted(set(players))
    roots = sorted({str(Path(r["sgf"]).parent.parent) for r in rows})  # a match's folder, or a set of games
    many = len(roots) > 6
    if many:
        roots = [os.path.commonpath(roots)]
    np.savez_compressed(out / "positions.npz", size=size, moves=moves, first_white=first_white, komi=komi,
                        game=np.array(game, np.int32), move=np.array(move, np.int16), next=np.array(nxt, np.int16),
                        percent=np.stack(pct), player=np.array([names.index(p) for p in players], np.int16),
                        player_names=np.array(names))
    by_player = {name: players.count(name) for name in names}
    card = [f"# Teacher positions: {out.name}", "",
            f"- {len(rows)} distinct {size}x{size} games (deduplicated by their moves), {len(game)} positions:",
            "  every position before a move on the board (passes left out), komi as in each game, from the",
            "  SGFs under " + ", ".join(f"`{d}`" for d in roots) + (" (many folders)." if many else "."),
            "- Label: Pachi 12.90's `gogui-pattern_rating` for the side to move, its pattern prior (no search,",
            "  no network): whole percents for its likeliest moves (`percent`, 255 = unlabelled point).",
            "- Beside it: the move played next and the engine that played it (`player`, `player_names`).",
            f"- Regenerate: `python bench/teacher_data.py {' '.join(roots)} --size {size} --out {out}` then",
            f"  `python bench/teacher_data.py --pack {out} --size {size}`.",
            "- Only fitted weights derived from this data ship with gojax (kernels/data/); Pachi's own",
            "  pattern files do not.", "", "| player of the next move | positions |", "| --- | --- |"]
    card += [f"| {name or '(unnamed)'} | {k} |" for name, k in sorted(by_player.items(), key=lambda x: -x[1])]
    (out / "CARD.md").write_text("\n".join(card) + "\n")
    print(f"{len(game)} positions from {len(rows)} games -> {out / 'positions.npz'}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*", default=[os.path.join(os.path.dirname(__file__), "results", "strength")])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "teacher", "pachi9"))
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--max-positions", type=int, default=120_000)
    ap.add_argument("--seed", type=int, default=0, help="order of the games")
    ap.add_argument("--pachi", default=os.environ.get("PACHI", "/tmp/pachi/pachi/pachi"),
                    help="the Pachi binary (bash ../shared/tools/pachi/build.sh prints its path)")
    ap.add_argument("--pack", metavar="FOLDER", help="pack FOLDER/positions.jsonl into positions.npz and CARD.md")
    args = ap.parse_args()
    if args.pack:
        pack(args.pack, args.size)
    else:
        collect(args)


if __name__ == "__main__":
    main()
