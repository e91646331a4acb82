"""Where are games lost?  Every move of saved match games judged by a strong oracle engine.

Each position of each game (before every move) is given afresh to an oracle, Pachi at a large
budget with `reporting=json`, which searches it for the side to move.  Its JSON report gives
the position's value (its chosen move's win rate) and the win rate of each candidate it
searched; one row per position goes to a JSONL file:

    {"game", "ply" (moves played before this position), "color", "who" (the engine to move),
     "played", "oracle_move", "value" (side to move's win rate), "played_value" (the played
     move's, when the oracle searched it), "playouts", "top" (five candidates: [move, value,
     playouts])}

A move's loss is value(before) - (1 - value(after)): what the move cost its player in the
oracle's eyes, whether or not the oracle searched it.  `--summary` prints, per engine, the
mean loss per move by phase of the game, how often a move cost 10 or 25 points of win rate,
where each game's value fell for good, and the largest blunders with both moves.

    python bench/oracle_review.py bench/results/strength/pachi_3000_m25 --games 40 \\
        --oracle "/tmp/pachi/pachi/pachi -r chinese threads=1 -t =30000 reporting=json" \\
        --out bench/results/strength/oracle_review/pachi_3000_m25.jsonl
    python bench/oracle_review.py bench/results/strength/pachi_3000_m25 --summary \\
        --out bench/results/strength/oracle_review/pachi_3000_m25.jsonl

Rows are appended as they are judged: a killed run resumes where it stopped.  The oracle is
seeded per position (`-s` from game and ply), so a rerun asks the same questions.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile

from sgfmill import common, sgf
from tqdm import tqdm

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from gojax.gtp_client import GtpClient  # noqa: E402
from gojax.kernels.geometry import BLACK, WHITE  # noqa: E402
from gojax.kernels.host import Board, IllegalMove  # noqa: E402

PHASES = ((0, 10), (10, 20), (20, 30), (30, 45), (45, 1000))


def game_moves(path: str) -> tuple[int, float, list[tuple[str, str]]]:
    """(size, komi, [(colour 'b'/'w', GTP vertex or 'pass')]) of an SGF's main line."""
    with open(path, "rb") as f:
        game = sgf.Sgf_game.from_bytes(f.read())
    moves = []
    for node in game.get_main_sequence()[1:]:
        colour, move = node.get_move()
        if colour is not None:
            moves.append((colour, "pass" if move is None else common.format_vertex(move)))
    return game.get_size(), float(game.get_komi() or 7.5), moves


def oracle_report(text: str) -> dict | None:
    """The last final report (`{"move": ...}`) in the oracle's stderr text."""
    report = None
    for line in text.splitlines():
        if line.startswith('{"move"'):
            try:
                report = json.loads(line)["move"]
            except (json.JSONDecodeError, KeyError):
                continue
    return report


def judge_position(argv: list[str], seed: int, size: int, komi: float, moves: list[tuple[str, str]],
                   colour: str) -> dict:
    """One fresh oracle process per position: nothing of an earlier search carries over."""
    with tempfile.TemporaryFile() as err:
        client = GtpClient(argv + ["-s", str(seed)], stderr=err)
        try:
            client.send(f"boardsize {size}")
            client.send("clear_board")
            client.send(f"komi {komi}")
            for c, m in moves:
                client.send(f"play {c} {m}")
            choice = client.send(f"genmove {colour}", timeout=600).strip().upper()
        finally:
            client.close()
        err.seek(0)
        report = oracle_report(err.read().decode(errors="replace"))
    if report is None:
        return {"oracle_move": choice, "value": None, "candidates": [], "playouts": 0}
    candidates = []
    for line in report.get("can", []):
        if line:
            (move, (value, playouts)), = line[0].items()
            candidates.append([move.upper(), value, playouts])
    candidates.sort(key=lambda c: -c[2])
    value = next((c[1] for c in candidates if c[0] == choice), candidates[0][1] if candidates else None)
    if choice == "RESIGN" and value is None:
        value = 0.0
    return {"oracle_move": choice, "value": value, "candidates": candidates,
            "playouts": report.get("playouts", 0)}


def review(folder: str, out: str, oracle: str, games: int | None, first: int) -> None:
    with open(os.path.join(folder, "results.jsonl")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    records = [r for r in records if r["game"] >= first][:games]
    done = set()
    if os.path.exists(out):
        with open(out) as f:
            done = {(r["game"], r["ply"]) for r in map(json.loads, filter(str.strip, f))}
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    argv = shlex.split(oracle)
    jobs = []
    for r in records:
        size, komi, moves = game_moves(os.path.join(folder, r["sgf"]))
        jobs += [(r, size, komi, moves, ply) for ply in range(len(moves) + 1) if (r["game"], ply) not in done]
    with open(out, "a") as f:
        for r, size, komi, moves, ply in tqdm(jobs, desc="positions", unit="pos"):
            colour = ("w" if moves[ply - 1][0] == "b" else "b") if ply else "b"
            judged = judge_position(argv, r["game"] * 1000 + ply, size, komi, moves[:ply], colour)
            cans = {c[0]: c for c in judged["candidates"]}
            played = moves[ply][1].upper() if ply < len(moves) else None
            row = {"game": r["game"], "ply": ply, "color": colour,
                   "who": r["black"] if colour == "b" else r["white"],
                   "played": played, "oracle_move": judged["oracle_move"], "value": judged["value"],
                   "played_value": cans[played][1] if played in cans else None,
                   "playouts": judged["playouts"], "top": judged["candidates"][:5],
                   "winner": r["winner"], "result": r["result"]}
            f.write(json.dumps(row) + "\n")
            f.flush()


def losses(rows: list[dict]) -> list[dict]:
    """Each move with the win rate it cost its player: value(before) - (1 - value(after))."""
    by_game: dict[int, dict[int, dict]] = {}
    for r in rows:
        by_game.setdefault(r["game"], {})[r["ply"]] = r
    out = []
    for _game, plies in sorted(by_game.items()):
        for ply, r in sorted(plies.items()):
            after = plies.get(ply + 1)
            if r["played"] is None or after is None or r["value"] is None or after["value"] is None:
                continue
            out.append({**r, "loss": r["value"] - (1.0 - after["value"]), "after": 1.0 - after["value"]})
    return out


TAGS = ("captures", "saves", "ataris", "self_atari", "own_2lib", "opp_2lib", "local", "edge")


def tactics(board: Board, vertex: str | None, last: int | None) -> set[str]:
    """What a move does on `board` (side to move plays it): captures stones, saves an own chain
    that was in atari, puts an opponent chain in atari, is a self-atari of 2+ stones, is within
    Manhattan distance 2 of the last move, is on the first or second line; own_2lib / opp_2lib:
    it is a liberty of an own / opponent chain that has exactly two."""
    tags: set[str] = set()
    if vertex is None or vertex in ("PASS", "RESIGN"):
        return tags
    g = board.geometry
    p, me = g.from_gtp(vertex), board.to_play
    try:
        stones, captured, _ = board.try_move(p, me)
    except IllegalMove:
        return tags
    after = board.copy()
    after.stones = stones
    if captured:
        tags.add("captures")
    own_atari = [q for q in g.neighbors[p] if board.stones[q] == me and len(board.group(q)[1]) == 1]
    mine, libs = after.group(p)
    if own_atari and len(libs) >= 2:
        tags.add("saves")
    if any(stones[q] == 3 - me and len(after.group(q)[1]) == 1 for q in g.neighbors[p]):
        tags.add("ataris")
    for q in g.neighbors[p]:
        if board.stones[q] in (BLACK, WHITE) and len(board.group(q)[1]) == 2:
            tags.add("own_2lib" if board.stones[q] == me else "opp_2lib")
    if len(libs) == 1 and len(mine) >= 2 and not captured:
        tags.add("self_atari")
    r, c = divmod(p, board.size)
    if last is not None:
        lr, lc = divmod(last, board.size)
        if abs(r - lr) + abs(c - lc) <= 2:
            tags.add("local")
    if min(r, c, board.size - 1 - r, board.size - 1 - c) <= 1:
        tags.add("edge")
    return tags


def position(folder: str, game: int, ply: int) -> tuple[Board, int | None]:
    """The board before move `ply` of a game, and the last move's point."""
    size, komi, moves = game_moves(os.path.join(folder, "games", f"game{game:04d}.sgf"))
    board = Board(size, komi)
    last = None
    for c, m in moves[:ply]:
        last = board.geometry.from_gtp(m)
        board.play_recorded(last, BLACK if c == "b" else WHITE)
    return board, last


def summary(folder: str, out: str, who_focus: str | None) -> None:
    with open(out) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    moves = losses(rows)
    names = sorted({m["who"] for m in moves})
    print(f"{len({r['game'] for r in rows})} games, {len(rows)} positions judged")
    print("mean win-rate loss per move (moves) by ply:")
    phases = "".join(f"{a:>3}-{b if b < 1000 else '':<6}" for a, b in PHASES)
    print("  engine".ljust(24) + phases + "  all      >=0.10  >=0.25  same as oracle")
    for name in names:
        mine = [m for m in moves if m["who"] == name]
        cells = []
        for a, b in PHASES:
            ph = [m["loss"] for m in mine if a <= m["ply"] < b]
            cells.append(f"{statistics.mean(ph):.3f}({len(ph)})".ljust(10) if ph else "-".ljust(10))
        big = sum(m["loss"] >= 0.10 for m in mine) / max(len(mine), 1)
        huge = sum(m["loss"] >= 0.25 for m in mine) / max(len(mine), 1)
        print(f"  {name:<22}" + "".join(cells) + f"{statistics.mean(m['loss'] for m in mine):.3f}    "
              f"{big:.3f}   {huge:.3f}   {sum(m['played'] == m['oracle_move'] for m in mine) / max(len(mine), 1):.3f}")
    focus = who_focus or names[0]
    print(f"\nwhere {focus} lost its games (first ply after which its win rate stays below 0.30):")
    fell = []
    for game in sorted({m["game"] for m in moves}):
        traj = [(m["ply"], m["value"] if m["who"] == focus else 1 - m["value"])
                for m in sorted((r for r in rows if r["game"] == game and r["value"] is not None),
                                key=lambda r: r["ply"])]
        lost = next((r for r in rows if r["game"] == game), {}).get("winner") != focus
        if not lost:
            continue
        below = [p for p, v in traj if v >= 0.30]
        fell.append(below[-1] + 1 if below else 0)
    if fell:
        print(f"  {len(fell)} lost games: median ply {statistics.median(fell)}, quartiles "
              f"{statistics.quantiles(fell, n=4) if len(fell) > 1 else fell}")
    print(f"\nlargest losses of {focus}:")
    worst = sorted((m for m in moves if m["who"] == focus), key=lambda m: -m["loss"])[:25]
    for m in worst:
        print(f"  game {m['game']:>3} ply {m['ply']:>3} {m['color']} played {m['played']:>5} "
              f"(loss {m['loss']:.2f}: {m['value']:.2f} -> {m['after']:.2f}) oracle {m['oracle_move']}")
    # What the blunders did, and what the oracle wanted instead, against all of focus's moves.
    mine = [m for m in moves if m["who"] == focus and m["value"] is not None and m["value"] > 0.05]
    big = [m for m in mine if m["loss"] >= 0.10]
    print(f"\nmoves of {focus} while not yet lost (value > 0.05): {len(mine)}; losing >= 0.10: {len(big)}")
    print("  share of moves that ...".ljust(30) + "".join(f"{t:>11}" for t in TAGS))
    boards = {(m["game"], m["ply"]): position(folder, m["game"], m["ply"]) for m in mine}  # tactics() reads only
    for label, group, key in (("all: played", mine, "played"), ("all: oracle's", mine, "oracle_move"),
                              ("blunders: played", big, "played"), ("blunders: oracle's", big, "oracle_move")):
        counts = dict.fromkeys(TAGS, 0)
        for m in group:
            board, last = boards[m["game"], m["ply"]]
            for t in tactics(board, m[key], last):
                counts[t] += 1
        print(f"  {label:<28}" + "".join(f"{counts[t] / max(len(group), 1):>11.2f}" for t in TAGS))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="a match folder: results.jsonl and games/")
    ap.add_argument("--out", required=True, help="JSONL of judged positions (appended, resumable)")
    ap.add_argument("--oracle", default="pachi -r chinese threads=1 -t =30000 reporting=json",
                    help="the oracle's command line; it must print Pachi's JSON reports on stderr")
    ap.add_argument("--games", type=int, default=None, help="judge this many games (default all)")
    ap.add_argument("--first", type=int, default=0, help="start at this game number")
    ap.add_argument("--summary", action="store_true", help="summarise --out instead of judging")
    ap.add_argument("--who", default=None, help="the engine the summary's game-level figures follow")
    args = ap.parse_args(argv)
    if args.summary:
        summary(args.folder, args.out, args.who)
    else:
        review(args.folder, args.out, args.oracle, args.games, args.first)
    return 0


if __name__ == "__main__":
    sys.exit(main())
