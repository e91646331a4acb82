"""A finished or stopped match folder read back: its summary, and two folders compared game by
game (`gojax results DIR [--versus BASE]`).

Game i of a `gojax match` run has the same colours and the same per-game seeds in every run with
the same opponent, board and komi (MatchConfig.vary_seeds), so two settings of one engine that
played the same games can be paired: the games each won alone decide which is stronger (a sign
test), and the games both won or both lost, most of them, say nothing about the difference.
Pairing needs far fewer games than comparing two win rates with their own intervals."""

from __future__ import annotations

import dataclasses
import json
import math
import os

from gojax.match import is_forfeit, load_results, summarize

# match.json keys that must agree for game i of two folders to be the same game
PAIRED_KEYS = ("engine_b", "size", "komi", "alternate", "vary_seeds", "openings", "opening_moves", "max_moves")


class ResultsError(ValueError):
    """A folder that holds no match results, or two that cannot be paired."""


@dataclasses.dataclass(frozen=True)
class MatchFolder:
    path: str
    card: dict  # match.json ({} for folders from before it existed)
    records: list  # results.jsonl, one dict per game
    engine: str  # the engine whose wins are counted: match.json's name_a (Black in game 0)
    opponent: str


def load_folder(path: str, engine: str | None = None) -> MatchFolder:
    """The match in folder `path`; `engine` names the side to count where the folder has no
    match.json (default: the one whose name starts with "gojax")."""
    results = os.path.join(path, "results.jsonl")
    if not os.path.isfile(results):
        raise ResultsError(f"{path}: no results.jsonl (a `gojax match --out` folder holds one)")
    records = load_results(results)
    if not records:
        raise ResultsError(f"{results}: no finished game yet")
    card = {}
    if os.path.isfile(os.path.join(path, "match.json")):
        with open(os.path.join(path, "match.json")) as f:
            card = json.load(f)
    names = sorted({r[c] for r in records for c in ("black", "white")})
    if len(names) != 2:
        raise ResultsError(f"{results}: games between {', '.join(names)}; a match folder holds two engines")
    engine = card.get("name_a") or engine or next((n for n in names if n.startswith("gojax")), None)
    if engine not in names:
        raise ResultsError(f"{path}: its engines are {names[0]} and {names[1]}; name one with --engine")
    return MatchFolder(path, card, records, engine, names[1 - names.index(engine)])


def folder_summary(folder: MatchFolder) -> dict:
    """gojax.match.summarize of the folder's games, for its counted engine."""
    return summarize(folder.records, folder.engine, folder.opponent)


def sign_test(a: int, b: int) -> float:
    """Two-sided exact sign test: the chance of a split at least as uneven as a : b among a + b
    discordant games if both settings were equally strong."""
    n, k = a + b, min(a, b)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def card_differences(new: MatchFolder, base: MatchFolder) -> list[str]:
    """The match.json settings under which game i of the two folders is not the same game."""
    if not new.card or not base.card:
        return []
    return [f"{k}: {base.card.get(k)!r} vs {new.card.get(k)!r}" for k in PAIRED_KEYS
            if base.card.get(k) != new.card.get(k)]


def paired(new: MatchFolder, base: MatchFolder, force: bool = False) -> dict:
    """The games both folders finished on the board (forfeits left out), game by game: how
    many each engine won, how many it won alone, and the sign test on those.  ResultsError when
    the folders' settings make game i a different game (another opponent, board, komi, colours
    or seeds; `force` pairs them anyway) or they share no game."""
    diffs = card_differences(new, base)
    if diffs and not force:
        raise ResultsError(f"{new.path} and {base.path} did not play the same games ({'; '.join(diffs)}); "
                           "--force pairs them anyway")
    a = {r["game"]: r for r in new.records if not is_forfeit(r)}
    b = {r["game"]: r for r in base.records if not is_forfeit(r)}
    common = sorted(set(a) & set(b))
    if not common:
        raise ResultsError(f"{new.path} and {base.path} share no finished game (their game numbers differ)")
    if new.opponent != base.opponent and not force:
        raise ResultsError(f"{new.path} played {new.opponent} and {base.path} played {base.opponent}; "
                           "--force pairs them anyway")
    for g in common:  # what the records say, for folders from before match.json
        seat_a = "black" if a[g]["black"] == new.engine else "white"
        seat_b = "black" if b[g]["black"] == base.engine else "white"
        board_a, board_b = (a[g].get("size"), a[g].get("komi")), (b[g].get("size"), b[g].get("komi"))
        if (seat_a != seat_b or board_a != board_b) and not force:
            raise ResultsError(f"game {g}: {new.engine} played {seat_a} on size and komi {board_a} in {new.path}, "
                               f"{base.engine} {seat_b} on {board_b} in {base.path}; --force pairs them anyway")
    won_a = {g: a[g]["winner"] == new.engine for g in common}
    won_b = {g: b[g]["winner"] == base.engine for g in common}
    alone_new = sum(won_a[g] and not won_b[g] for g in common)
    alone_base = sum(won_b[g] and not won_a[g] for g in common)
    return {"games": len(common), "new": new.engine, "base": base.engine,
            "wins_new": sum(won_a.values()), "wins_base": sum(won_b.values()),
            "both": sum(won_a[g] and won_b[g] for g in common),
            "neither": sum(not won_a[g] and not won_b[g] for g in common),
            "alone_new": alone_new, "alone_base": alone_base, "p_value": sign_test(alone_new, alone_base),
            "only_new": sorted(set(a) - set(b)), "only_base": sorted(set(b) - set(a)), "differences": diffs}


def format_paired(p: dict, new_path: str, base_path: str) -> str:
    n = p["games"]
    lines = [f"{n} games played in both, game by game (same colours and seeds):",
             f"  {new_path}: {p['new']} won {p['wins_new']} ({100 * p['wins_new'] / n:.1f}%)",
             f"  {base_path}: {p['base']} won {p['wins_base']} ({100 * p['wins_base'] / n:.1f}%)",
             f"  won by both {p['both']}, by neither {p['neither']}; by the first alone {p['alone_new']}, "
             f"by the second alone {p['alone_base']}",
             f"  sign test on those {p['alone_new'] + p['alone_base']}: two-sided p = {p['p_value']:.3g}"]
    if p["only_new"] or p["only_base"]:
        lines.append(f"  not paired: {len(p['only_new'])} games only in the first, {len(p['only_base'])} only in the "
                     "second (or forfeited in one)")
    if p["differences"]:
        lines.append("  paired with --force across different settings: " + "; ".join(p["differences"]))
    return "\n".join(lines)
