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
`--branch D` also asks for positions off the games' lines, like the nodes a search tree makes: after
each answer, a move is drawn from KataGo's own policy flattened by `--branch-temperature` (p^(1/T)),
and the position after it is asked too, D moves deep.  The draw is seeded by the position, so a
rerun continues the same lines.  Each line is packed as its own row of `moves`, with `family`
naming its source game, so learn-policy and learn-net hold out a game with all its lines.
`--pack` writes OUT/positions.npz in teacher_data.py's layout (`gojax learn-policy` reads it):
`percent` holds KataGo's probabilities in whole percents, `policy` the exact ones (float32, -1 at
illegal points), `value` its value for Black, and OUT/CARD.md, the data card.
"""

from __future__ import annotations

import argparse
import collections
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


def key(g: int, k: int, branch: tuple = ()) -> str:
    """A position's id: game, move number, and the drawn moves after it (gojax points)."""
    return f"{g}:{k}" + (":" + ",".join(map(str, branch)) if branch else "")


def draw(policy: np.ndarray, temperature: float, seed: int, g: int, k: int, branch: tuple) -> int:
    """A legal point (gojax order) drawn from KataGo's policy p^(1/T), seeded by the position."""
    p = np.where(policy > 0, np.maximum(policy, 1e-9) ** (1.0 / temperature), 0.0)
    rng = np.random.default_rng([seed, g, k, *branch])
    return int(rng.choice(len(p), p=p / p.sum()))


def query(data, g: int, k: int, size: int, branch: tuple = ()) -> dict:
    colour = "W" if data["first_white"][g] else "B"
    played = []
    for p in data["moves"][g][:k].tolist() + list(branch):
        played.append([colour, vertex(p, size)])
        colour = "B" if colour == "W" else "W"
    return {"id": key(g, k, branch), "moves": played, "rules": "chinese", "komi": float(data["komi"][g]),
            "boardXSize": size, "boardYSize": size, "maxVisits": 1, "includePolicy": True,
            "initialPlayer": "W" if data["first_white"][g] else "B",
            "overrideSettings": {"reportAnalysisWinratesAs": "BLACK"}}


def children(rows: list[dict], depth: int) -> list[tuple]:
    """(game, move, branch) of the positions one drawn move after answered ones, up to `depth`."""
    return [(r["game"], r["move"], tuple(r.get("branch", ())) + (r["drawn"],)) for r in rows
            if "drawn" in r and len(r.get("branch", ())) < depth]


def collect(args, data: dict, size: int, lines: Path, rows: list[dict]) -> None:
    done = {key(r["game"], r["move"], tuple(r.get("branch", ()))) for r in rows}
    if args.lines:  # the nodes bench/tree_lines.py drew, in its order
        with open(args.lines) as f:
            asked = [json.loads(line) for line in f if line.strip()]
        roots = [(r["game"], r["move"], tuple(r["branch"])) for r in asked if r.get("branch")]
    else:
        roots = [(g, k, ()) for g, k in sample(data, args.count, args.first, args.last, args.seed)]
    todo = collections.deque(x for x in children(rows, args.branch) + roots if key(*x) not in done)
    print(f"{len(done)} positions there, {len(todo)} to ask KataGo for" +
          (f" (and up to {args.branch} drawn moves after each)" if args.branch else ""), file=sys.stderr, flush=True)
    if not todo:
        return
    proc = subprocess.Popen([args.katago, "analysis"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    # Feed the queries a few ahead of the answers: KataGo reads them all at once otherwise, and a
    # stopped run would leave nothing but what was written.  A drawn move's position goes to the
    # front of the queue, so a stopped run leaves few lines unfinished.
    ahead, pending, answered = 16, 0, 0

    def send():
        nonlocal pending
        while pending < ahead and todo:
            g, k, branch = todo.popleft()
            proc.stdin.write(json.dumps(query(data, g, k, size, branch)) + "\n")
            pending += 1
    with lines.open("a") as f:
        send()
        while pending:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit("KataGo stopped answering")
            pending -= 1
            r = json.loads(line)
            if "error" in r:
                print(f"KataGo: {r}", file=sys.stderr)
                send()
                continue
            g, k, *rest = r["id"].split(":")
            g, k = int(g), int(k)
            branch = tuple(int(x) for x in rest[0].split(",")) if rest else ()
            pol = to_points(r["policy"], size)
            row = {"game": g, "move": k, "value": r["rootInfo"]["winrate"], "lead": r["rootInfo"]["scoreLead"],
                   "pass": r["policy"][size * size], "policy": [round(float(x), 5) for x in pol]}
            if args.lines:
                row["branch"] = list(branch)
            elif args.branch:
                row |= {"branch": list(branch), "drawn": draw(pol, args.branch_temperature, args.seed, g, k, branch)}
                todo.extendleft(children([row], args.branch))
            f.write(json.dumps(row) + "\n")
            f.flush()
            answered += 1
            send()
            if answered % 200 == 1:
                print(f"{len(done) + answered} positions", file=sys.stderr, flush=True)
    proc.stdin.close()
    proc.wait()


def in_repo(path) -> Path:
    """`path` relative to the repository when it lies inside it (as a data card shows it)."""
    repo, full = Path(__file__).resolve().parent.parent, Path(path).resolve()
    return full.relative_to(repo) if full.is_relative_to(repo) else Path(path)


# the data card's lines on the label and on what ships, the same for every KataGo pack
LABEL = ["- Label: KataGo 1.18's b10 network (katrain's `b10c384h6nbttflrs`) with maxVisits 1: its move",
         "  probabilities for the side to move (`policy`, -1 illegal; `percent` in whole percents) and its",
         "  value for Black (`value`).  No search."]
SHIPPED = ["- Only fitted weights derived from this data ship with gojax (kernels/data/); KataGo's network",
           "  does not."]


def percents(policy: np.ndarray) -> np.ndarray:
    """uint8: KataGo's exact probabilities (-1 illegal) in whole percents, 0 where illegal."""
    return np.where(policy < 0, 0, np.round(policy * 100)).astype(np.uint8)


def pack(data: dict, size: int, out: Path, rows: list[dict], source: str, moves: tuple[int, int] = (0, 80),
         games_of: str = "", ask: str = "--count 16000") -> None:
    """OUT/positions.npz and OUT/CARD.md from the answers `rows`; `ask`: the options that asked for
    them (the card's regenerate line)."""
    rows = sorted(rows, key=lambda r: (r["game"], r["move"]))
    shown = in_repo(out)
    games = sorted({r["game"] for r in rows})
    index = {g: i for i, g in enumerate(games)}
    policy = np.array([r["policy"] for r in rows], np.float32)
    percent = percents(policy)
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
            *LABEL,
            "- Beside it: the move played next and the engine that played it (`player`, `player_names`).",
            f"- Regenerate: `{env}python bench/teacher_policy.py {ask} --out {shown}` then the same with `--pack`"
            + (f" `--games-of {games_of}` (only the games of that earlier pack, so that the held-out games stay "
               "held out)." if games_of else "."),
            *SHIPPED]
    (out / "CARD.md").write_text("\n".join(card) + "\n")
    print(f"{len(rows)} positions -> {out / 'positions.npz'}", file=sys.stderr)


def pack_lines(data: dict, size: int, out: Path, rows: list[dict], source: str, moves: tuple[int, int], ask: str,
               temperature: float) -> None:
    """`pack` for `--branch` answers: one row of `moves` per line (a game's first moves, then the
    moves drawn after them), `game` the line of each position, `family` the source game of each
    line, `player` and `next` the drawn move after each position."""
    chains: dict[tuple[int, int], list[dict]] = {}
    for r in rows:
        chains.setdefault((r["game"], r["move"]), []).append(r)
    line_moves, family, first_white, komi = [], [], [], []
    game, move, nxt, kept = [], [], [], []
    games = sorted({g for g, _ in chains})
    index = {g: i for i, g in enumerate(games)}
    for (g, k), chain in sorted(chains.items()):
        chain.sort(key=lambda r: len(r["branch"]))
        # a line whose root was asked and whose drawn moves follow one another (a stopped run may
        # leave a line short, never with a gap)
        chain = [r for i, r in enumerate(chain) if len(r["branch"]) == i]
        if not chain:
            continue
        # the last drawn move ends the line: replay reads a position before a move of its line
        line = data["moves"][g][:k].tolist() + chain[-1]["branch"] + [chain[-1]["drawn"]]
        for r in chain:
            game.append(len(line_moves))
            move.append(k + len(r["branch"]))
            nxt.append(r["drawn"])
            kept.append(r)
        line_moves.append(line)
        family.append(index[g])
        first_white.append(data["first_white"][g])
        komi.append(data["komi"][g])
    _save_lines(out, size, line_moves, family, first_white, komi, game, move, nxt, kept,
                f"KataGo b10 policy, drawn at T = {temperature:g}")
    depth = np.bincount([len(r["branch"]) for r in kept])
    shown = in_repo(out)
    env = f"SIZE={size} " if size != 9 else ""
    card = [f"# Teacher positions: {out.name}", "",
            f"- {len(kept)} positions on {len(line_moves)} lines from {len(games)} {size}x{size} games of {source}.",
            f"  Each line starts at a uniform random sample of the positions before moves {moves[0]}-{moves[1] - 1}",
            "  (asked in a random order, so a run stopped early is one too), then follows moves drawn from",
            f"  KataGo's own policy flattened to p^(1/{temperature:g}), as a search tree explores: positions "
            + ", ".join(f"{n} at {d} drawn moves" for d, n in enumerate(depth.tolist())) + ".",
            "- `moves` holds one row per line, `game` the line of each position, `family` the source game of",
            "  each line (learn-policy and learn-net hold out whole families); `next` is the drawn move.",
            *LABEL,
            f"- Regenerate: `{env}python bench/teacher_policy.py {ask} --out {shown}` then the same with `--pack`.",
            *SHIPPED]
    (out / "CARD.md").write_text("\n".join(card) + "\n")
    print(f"{len(kept)} positions on {len(line_moves)} lines -> {out / 'positions.npz'}", file=sys.stderr)


def _save_lines(out: Path, size: int, line_moves: list, family: list, first_white: list, komi: list, game: list,
                move: list, nxt: list, kept: list[dict], name: str) -> None:
    """OUT/positions.npz of positions on lines: one row of `moves` per line, `game` the line of each
    position, `family` the source game of each line."""
    width = max(len(m) for m in line_moves)
    moves_arr = np.full((len(line_moves), width), -2, np.int16)
    for i, m in enumerate(line_moves):
        moves_arr[i, :len(m)] = m
    policy = np.array([r["policy"] for r in kept], np.float32)
    np.savez_compressed(out / "positions.npz", size=size, moves=moves_arr, first_white=np.array(first_white),
                        komi=np.array(komi, np.float32), game=np.array(game, np.int32), move=np.array(move, np.int16),
                        next=np.array(nxt, np.int16), percent=percents(policy), policy=policy,
                        player=np.zeros(len(kept), np.int16), player_names=np.array([name]),
                        family=np.array(family, np.int32), value=np.array([r["value"] for r in kept], np.float32))


def pack_tree(data: dict, size: int, out: Path, rows: list[dict], source: str, ask: str, drew: str = "") -> None:
    """`pack` for `--lines` answers (bench/tree_lines.py): each position is a line of its own, the
    game's moves then the tree's moves to the node, ended by KataGo's favourite there (`next`);
    `drew`: the tree_lines.py command that drew the nodes."""
    rows = sorted(rows, key=lambda r: (r["game"], r["move"], r["branch"]))
    games = sorted({r["game"] for r in rows})
    index = {g: i for i, g in enumerate(games)}
    line_moves, family, game, move, nxt = [], [], [], [], []
    for r in rows:
        best = int(np.argmax(r["policy"]))
        line_moves.append(data["moves"][r["game"]][:r["move"]].tolist() + r["branch"] + [best])
        family.append(index[r["game"]])
        game.append(len(line_moves) - 1)
        move.append(r["move"] + len(r["branch"]))
        nxt.append(best)
    _save_lines(out, size, line_moves, family, [data["first_white"][r["game"]] for r in rows],
                [data["komi"][r["game"]] for r in rows], game, move, nxt, rows, "KataGo b10 policy at gojax's tree nodes")
    depth = np.bincount([len(r["branch"]) for r in rows])
    env = f"SIZE={size} " if size != 9 else ""
    card = [f"# Teacher positions: {out.name}", "",
            f"- {len(rows)} positions at nodes of gojax's search trees, from {len(games)} {size}x{size} games of {source}:",
            "  bench/tree_lines.py searched sampled game positions and drew nodes with enough simulations;",
            "  each position is its node's line of moves from the game position: "
            + ", ".join(f"{n} at depth {d}" for d, n in enumerate(depth.tolist()) if n) + ".",
            "- `moves` holds one row per position's line, `family` the source game of each (learn-policy and",
            "  learn-net hold out whole families); `next` is KataGo's favourite.",
            *LABEL,
            f"- Regenerate: `{env}{drew or f'python bench/tree_lines.py {ask} --out {in_repo(out)}'}`, then `{env}python "
            f"bench/teacher_policy.py {ask} --lines {in_repo(out)}/tree_lines.jsonl --out {in_repo(out)}` and the "
            "same with `--pack`.",
            *SHIPPED]
    (out / "CARD.md").write_text("\n".join(card) + "\n")
    print(f"{len(rows)} positions at tree nodes -> {out / 'positions.npz'}", file=sys.stderr)


def _source_name(path: str) -> str:
    """A games folder's name for the data card: a match's `games/` folder by its match's name."""
    p = Path(path)
    return f"{p.parent.name}/{p.name}" if p.name == "games" else p.name


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
    ap.add_argument("--branch", type=int, default=0, metavar="D",
                    help="also ask for the positions after up to D moves drawn from KataGo's policy")
    ap.add_argument("--lines", metavar="JSONL", default="",
                    help="ask for the positions in this bench/tree_lines.py file instead of a sample (with the "
                         "same --games); --pack then packs each as its own line")
    ap.add_argument("--branch-temperature", type=float, default=2.0, metavar="T",
                    help="--branch: draw from p^(1/T); above 1 flatter, as a search explores")
    args = ap.parse_args()
    if args.branch < 0 or args.branch_temperature <= 0:
        ap.error("--branch must be >= 0 and --branch-temperature > 0")
    if args.lines and args.branch:
        ap.error("--lines asks for the nodes a search drew: no --branch beside it")
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
        source = ", ".join(_source_name(p) for p in args.games) if args.games else Path(args.positions).parent.name
        ask = (f"--games {' '.join(args.games)} --size {args.size} " if args.games else f"--positions {in_repo(args.positions)} ") \
            + f"--first {args.first} --last {args.last} --count {args.count}"
        if args.branch:
            ask += f" --branch {args.branch} --branch-temperature {args.branch_temperature}"
        if args.lines:
            drew = Path(args.lines).with_name("tree_lines.command")
            pack_tree(data, size, out, rows, source, ask.replace(f" --count {args.count}", ""),
                      drew.read_text().strip() if drew.exists() else "")
        elif any("branch" in r for r in rows):
            pack_lines(data, size, out, rows, source, (args.first, args.last), ask, args.branch_temperature)
        else:
            pack(data, size, out, rows, source, (args.first, args.last), args.games_of, ask)
    else:
        collect(args, data, size, lines, rows)


if __name__ == "__main__":
    main()
