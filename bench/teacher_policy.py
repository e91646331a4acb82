"""Strong-teacher positions for the tree's prior: KataGo's network policy (and value) for positions
sampled from the games of a bench/teacher_data.py positions.npz.

    python bench/teacher_policy.py [--positions bench/results/teacher/pachi9/positions.npz]
                                   [--out bench/results/teacher/katago9_policy] [--count 16000]
                                   [--katago /tmp/katago/run]
    python bench/teacher_policy.py --pack [--out ...] [--games-of EARLIER/positions.npz]
    python bench/teacher_policy.py --games SGF_OR_FOLDER... --size 13 --out bench/results/teacher/katago13_policy

`--games` samples from saved SGF games of one board size directly (deduplicated by their moves, in
the files' sorted order), for sizes with no teacher_data.py file; give the same list to `--pack`.

KataGo 1.18 with its b10 network (`bash ../shared/tools/katago/setup.sh` prints the runner)
answers each position through its JSON analysis engine with maxVisits 1: the raw network's move
probabilities for the side to move and its value for Black.  Positions are a fixed random sample
of moves `--first` .. `--last` of the games, asked in that random order, so a partial run is a
uniform sample too; one line per answer in OUT/policy.jsonl (a rerun asks only for the rest).
`--pack` writes OUT/positions.npz in teacher_data.py's layout (`gojax learn-policy` reads it):
`percent` holds KataGo's probabilities in whole percents, `policy` the exact ones (float32, -1 at
illegal points), `value` its value for Black, and OUT/CARD.md, the data card.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from teacher_data import BLACK, distinct_games  # noqa: E402  (sibling scripts)
from teacher_values import vertex  # noqa: E402


def from_games(paths: list[str], size: int) -> dict:
    """teacher_data.py's arrays (moves, first_white, komi, player per position...) for the distinct
    games of `size` among SGF files or folders, with no labels: what `sample` and `pack` read."""
    games = [(moves, props) for _, _, moves, props in distinct_games(paths, size)]
    if not games:
        raise SystemExit(f"no {size}x{size} games in {' '.join(paths)}")
    moves = np.full((len(games), max(len(m) for m, _ in games)), -2, np.int16)  # -1 pass, -2 after the end
    names = sorted({str(props.get(k, "")) for _, props in games for k in ("PB", "PW")})
    game, move, player = [], [], []
    for g, (ms, props) in enumerate(games):
        moves[g, :len(ms)] = [-1 if p is None else p for _, p in ms]
        for k, (colour, _) in enumerate(ms):
            game.append(g)
            move.append(k)
            player.append(names.index(str(props.get("PB" if colour == BLACK else "PW", ""))))
    return {"moves": moves, "first_white": np.array([ms[0][0] != BLACK for ms, _ in games]),
            "komi": np.array([float(props.get("KM", 7.5) or 7.5) for _, props in games], np.float32),
            "size": np.array(size), "game": np.array(game, np.int32), "move": np.array(move, np.int16),
            "player": np.array(player, np.int16), "player_names": np.array(names)}


def sample(data, count: int, first: int, last: int, seed: int) -> list[tuple[int, int]]:
    """(game, move number) pairs in a fixed random order: the position before move `move` of
    game `game`, a move on the board (not a pass)."""
    moves = data["moves"]
    cands = [(g, k) for g in range(len(moves)) for k in range(first, min(last, int((moves[g] != -2).sum())))
             if moves[g][k] >= 0]
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(cands), size=min(count, len(cands)), replace=False)
    return [cands[i] for i in pick]


def to_points(policy: list[float], size: int) -> np.ndarray:
    """KataGo's policy (row 0 the TOP row, then pass) -> float32 [P] in gojax's point order (row 0
    the bottom row); -1 where the move is illegal."""
    grid = np.asarray(policy[:size * size], np.float32).reshape(size, size)
    return grid[::-1].reshape(-1)


def query(data, g: int, k: int, size: int) -> dict:
    colour = "W" if data["first_white"][g] else "B"
    played = []
    for p in data["moves"][g][:k].tolist():
        played.append([colour, vertex(p, size)])
        colour = "B" if colour == "W" else "W"
    return {"id": f"{g}:{k}", "moves": played, "rules": "chinese", "komi": float(data["komi"][g]),
            "boardXSize": size, "boardYSize": size, "maxVisits": 1, "includePolicy": True,
            "initialPlayer": "W" if data["first_white"][g] else "B",
            "overrideSettings": {"reportAnalysisWinratesAs": "BLACK"}}


def collect(args, data: dict, size: int, lines: Path, done: set) -> None:
    todo = [x for x in sample(data, args.count, args.first, args.last, args.seed) if f"{x[0]}:{x[1]}" not in done]
    print(f"{len(done)} positions there, {len(todo)} to ask KataGo for", file=sys.stderr, flush=True)
    if not todo:
        return
    proc = subprocess.Popen([args.katago, "analysis"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    # Feed the queries a few ahead of the answers: KataGo reads them all at once otherwise, and a
    # stopped run would leave nothing but what was written.
    ahead, sent = 16, 0
    with lines.open("a") as f:
        for sent in range(min(ahead, len(todo))):
            proc.stdin.write(json.dumps(query(data, *todo[sent], size)) + "\n")
        sent = min(ahead, len(todo))
        for n in range(len(todo)):
            line = proc.stdout.readline()
            if not line:
                raise SystemExit("KataGo stopped answering")
            r = json.loads(line)
            if sent < len(todo):
                proc.stdin.write(json.dumps(query(data, *todo[sent], size)) + "\n")
                sent += 1
            if "error" in r:
                print(f"KataGo: {r}", file=sys.stderr)
                continue
            g, k = map(int, r["id"].split(":"))
            pol = to_points(r["policy"], size)
            f.write(json.dumps({"game": g, "move": k, "value": r["rootInfo"]["winrate"],
                                "lead": r["rootInfo"]["scoreLead"], "pass": r["policy"][size * size],
                                "policy": [round(float(x), 5) for x in pol]}) + "\n")
            f.flush()
            if n % 200 == 0:
                print(f"{len(done) + n + 1} positions", file=sys.stderr, flush=True)
    proc.stdin.close()
    proc.wait()


def in_repo(path) -> Path:
    """`path` relative to the repository when it lies inside it (as a data card shows it)."""
    repo, full = Path(__file__).resolve().parent.parent, Path(path).resolve()
    return full.relative_to(repo) if full.is_relative_to(repo) else Path(path)


def pack(data: dict, size: int, out: Path, rows: list[dict], source: str, moves: tuple[int, int] = (0, 80),
         games_of: str = "", ask: str = "--count 16000") -> None:
    """OUT/positions.npz and OUT/CARD.md from the answers `rows`; `ask`: the options that asked for
    them (the card's regenerate line)."""
    rows = sorted(rows, key=lambda r: (r["game"], r["move"]))
    shown = in_repo(out)
    games = sorted({r["game"] for r in rows})
    index = {g: i for i, g in enumerate(games)}
    policy = np.array([r["policy"] for r in rows], np.float32)
    percent = np.where(policy < 0, 0, np.round(policy * 100)).astype(np.uint8)
    game = np.array([index[r["game"]] for r in rows], np.int32)
    move = np.array([r["move"] for r in rows], np.int16)
    names = [str(x) for x in data["player_names"]]
    # the engine that played the move after each position, from the source file's own rows
    who = {(int(g), int(m)): int(p) for g, m, p in zip(data["game"], data["move"], data["player"])}
    player = np.array([who.get((r["game"], r["move"]), 0) for r in rows], np.int16)
    nxt = np.array([data["moves"][r["game"]][r["move"]] for r in rows], np.int16)
    np.savez_compressed(out / "positions.npz", size=size, moves=data["moves"][games],
                        first_white=data["first_white"][games], komi=data["komi"][games], game=game, move=move,
                        next=nxt, percent=percent, policy=policy, player=player, player_names=np.array(names),
                        value=np.array([r["value"] for r in rows], np.float32))
    played = sorted({names[p] for p in player.tolist()})  # the engines of the sampled games
    env = f"SIZE={size} " if size != 9 else ""  # KataGo's runner sizes its buffers by it
    card = [f"# Teacher positions: {out.name}", "",
            f"- {len(rows)} positions of {len(games)} {size}x{size} games, a uniform random sample of the",
            f"  positions before moves {moves[0]}-{moves[1] - 1} of {source}'s games (players: {', '.join(played)});",
            "  the sample is asked in a random order, so a run stopped early is one too.",
            "- Label: KataGo 1.18's b10 network (katrain's `b10c384h6nbttflrs`) with maxVisits 1: its move",
            "  probabilities for the side to move (`policy`, -1 illegal; `percent` in whole percents) and its",
            "  value for Black (`value`).  No search.",
            "- Beside it: the move played next and the engine that played it (`player`, `player_names`).",
            f"- Regenerate: `{env}python bench/teacher_policy.py {ask} --out {shown}` then the same with `--pack`"
            + (f" `--games-of {games_of}` (only the games of that earlier pack, so that the held-out games stay "
               "held out)." if games_of else "."),
            "- Only fitted weights derived from this data ship with gojax (kernels/data/); KataGo's network",
            "  does not."]
    (out / "CARD.md").write_text("\n".join(card) + "\n")
    print(f"{len(rows)} positions -> {out / 'positions.npz'}", file=sys.stderr)


def main() -> None:
    here = Path(__file__).parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", default=str(here / "results" / "teacher" / "pachi9" / "positions.npz"))
    ap.add_argument("--games", nargs="+", metavar="SGF", help="sample from these SGF files or folders instead of "
                                                              "--positions (with --size)")
    ap.add_argument("--size", type=int, default=9, help="--games: the board size kept")
    ap.add_argument("--out", default=str(here / "results" / "teacher" / "katago9_policy"))
    ap.add_argument("--count", type=int, default=16000)
    ap.add_argument("--first", type=int, default=0, help="first move number sampled")
    ap.add_argument("--last", type=int, default=80, help="moves from this on are not sampled")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--katago", default=os.environ.get("KATAGO", "/tmp/katago/run"))
    ap.add_argument("--pack", action="store_true", help="write OUT/positions.npz and CARD.md from what is there")
    ap.add_argument("--games-of", metavar="NPZ", default="",
                    help="--pack: keep only the games of an earlier positions.npz (the same game numbers, so that "
                         "the games learn-policy and learn-net hold out stay held out as the data grows)")
    args = ap.parse_args()
    if args.games:
        data = from_games(args.games, args.size)
    else:
        with np.load(args.positions) as f:
            data = {k: f[k] for k in ("moves", "first_white", "komi", "size", "game", "move", "player",
                                      "player_names")}
    size = int(data["size"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = out / "policy.jsonl"
    rows = []
    if lines.exists():
        text = lines.read_text().splitlines()
        for i, line in enumerate(text):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                if i != len(text) - 1:  # only a last line cut short by a stopped run is skipped
                    raise
    if args.pack:
        if args.games_of:
            with np.load(args.games_of) as f:
                kept = {m.tobytes() for m in f["moves"]}
            before = len(rows)
            rows = [r for r in rows if data["moves"][r["game"]].tobytes() in kept]
            print(f"--games-of: {before - len(rows)} positions of games not in {args.games_of} left out", file=sys.stderr)
        source = ", ".join(Path(p).name for p in args.games) if args.games else Path(args.positions).parent.name
        ask = (f"--games {' '.join(args.games)} --size {args.size} " if args.games else f"--positions {in_repo(args.positions)} ") \
            + f"--first {args.first} --last {args.last} --count {args.count}"
        pack(data, size, out, rows, source, (args.first, args.last), args.games_of, ask)
    else:
        collect(args, data, size, lines, {f"{r['game']}:{r['move']}" for r in rows})


if __name__ == "__main__":
    main()
