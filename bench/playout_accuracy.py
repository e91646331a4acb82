"""Knowledge per playout: do gojax's playouts rank moves the way a strong oracle does?

bench/oracle_review.py stores, for every position of a match's games, the oracle's (Pachi at a
large budget) value of each of its top candidate moves.  This script plays out the position
after each candidate with gojax's playouts (no tree) and asks how well their raw win rates
order the candidates:
  pairs    of two candidates whose oracle values differ by at least --margin, the share the
           playouts put in the same order (0.5 is a coin);
  top-1    the share of positions where the playouts' best candidate is the oracle's best;
  error    the mean absolute difference between the playouts' and the oracle's values;
  bias     the playouts' value minus the oracle's, for the side that moved, on average;
  amaf     pairs again, ordered by the AMAF values (seed 000 eq. 16-17) of the candidates in
           playouts from the position itself: what MC-RAVE's Q~ sees before a child has any
           simulations of its own.
  amaf rank the rank (1 = first) of the oracle's best candidate among all the mover's legal
           points by their AMAF value (points no playout credited come last; ties count half):
           how many moves an early tree, led by Q~, tries before the right one.
  root rank the same rank by the value the search's tree policy gives each move of a fresh
           root (search/select.py) once those playouts' AMAF tables are added to its prior:
           prior and AMAF together, as a search sees them before its children have
           simulations; `prior rank` is the rank by the root's prior alone.
A search grows its tree where the playouts say so: playouts that order moves better need fewer
of them to find the move, which is what a match against Pachi at equal playouts measures, with
far more noise.  Every setting judges the same positions with the same keys (common random
numbers), so differences between settings are paired; the standard errors are over positions.

    python bench/playout_accuracy.py bench/results/strength/pachi_3000_m25 \\
        --review bench/results/strength/oracle_review/pachi_3000_m25.jsonl --playouts 128 \\
        --setting defaults --setting uniform:policy=uniform --setting twolib02:two_lib_prob=0.2

A --setting is NAME or NAME:field=value,field=value over SearchParams (its playout fields take
effect: policy, mercy and the rules' probabilities); `defaults` is SearchParams().
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np
from tqdm import tqdm

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import gojax  # noqa: E402
from bench.oracle_positions import parse_settings  # noqa: E402
from bench.oracle_review import position  # noqa: E402
from gojax.kernels.geometry import BLACK  # noqa: E402
from gojax.kernels.host import IllegalMove  # noqa: E402
from gojax.search.mcts import Search  # noqa: E402
from gojax.search.params import SearchParams  # noqa: E402
from gojax.search.select import action_values  # noqa: E402


def cases(folder: str, review: str, min_playouts: int, every: int) -> list[dict]:
    """Positions whose oracle searched at least two legal candidates with min_playouts each:
    {game, ply, mover (colour), moves [GTP], oracle [values for the mover], boards [after each]}."""
    with open(review) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rows.sort(key=lambda r: (r["game"], r["ply"]))
    out = []
    for r in rows[::every]:
        cands = [c for c in r["top"] if c[2] >= min_playouts and c[0] not in ("PASS", "RESIGN")]
        if len(cands) < 2:
            continue
        board, _ = position(folder, r["game"], r["ply"])
        moves, points, values, boards = [], [], [], []
        for move, value, _ in cands:
            p = board.geometry.from_gtp(move)
            after = board.copy()
            try:
                after.play(p)
            except IllegalMove:
                continue
            moves.append(move)
            points.append(p)
            values.append(value)
            boards.append(after)
        if len(moves) >= 2:
            out.append({"game": r["game"], "ply": r["ply"], "mover": board.to_play, "moves": moves,
                        "points": points, "oracle": np.array(values), "boards": boards, "before": board})
    return out


def _played_out(boards: list, params: SearchParams, playouts: int, seed: int, batch: int, offset: int):
    """(Black's win rate [n], AMAF value for Black [n, 2, P], AMAF count [n, 2, P]) of each
    board's playouts."""
    config = params.playout_config()
    black = np.empty(len(boards))
    amaf = np.empty((len(boards), 2, boards[0].geometry.num_points))
    count = np.empty_like(amaf)
    for i in tqdm(range(0, len(boards), batch), desc="batches", unit="batch", leave=False):
        chunk = boards[i:i + batch]
        n = len(chunk)
        chunk += [chunk[0]] * (batch - n)  # one shape, one compile
        r = gojax.evaluate(chunk, playouts=playouts, config=config, seed=seed, start_index=offset + i)
        black[i:i + n] = r["win_rate"][:n]
        amaf[i:i + n] = r["amaf_value"][:n]
        count[i:i + n] = r["amaf_count"][:n]
    return black, amaf, count


def playout_values(cs: list[dict], params: SearchParams, playouts: int, seed: int, batch: int,
                   amaf_only: bool = False, amaf_playouts: int | None = None
                   ) -> tuple[list[np.ndarray], list[np.ndarray], list[float]]:
    """Per position, for the mover: the raw playout win rate after each candidate (NaN with
    `amaf_only`), each candidate's AMAF value in `amaf_playouts` (default `playouts`) playouts
    from the position (NaN where no playout played it), and the AMAF rank of the oracle's best."""
    boards = [b for c in cs for b in c["boards"]]
    if amaf_only:
        black = np.full(len(boards), np.nan)
    else:
        black, _, _ = _played_out(boards, params, playouts, seed, batch, 0)
    _, amaf, count = _played_out([c["before"] for c in cs], params, amaf_playouts or playouts, seed, batch, len(boards))
    values, amafs, ranks, k = [], [], {"amaf": [], "root": [], "prior": []}, 0
    for j, c in enumerate(cs):
        v = black[k:k + len(c["moves"])]
        values.append(v if c["mover"] == BLACK else 1.0 - v)
        row = amaf[j, 0 if c["mover"] == BLACK else 1]
        row = row if c["mover"] == BLACK else 1.0 - row
        amafs.append(row[c["points"]])
        best = c["points"][int(np.argmax(c["oracle"]))]
        ranks["amaf"].append(amaf_rank(row, c["before"].legal_points(), best))
        mover = 0 if c["mover"] == BLACK else 1
        wins = np.nan_to_num(amaf[j, mover] * count[j, mover])  # Black's, as the tree keeps them
        ranks["root"].append(root_rank(c["before"], params, count[j, mover], wins, best))
        ranks["prior"].append(root_rank(c["before"], params, np.zeros_like(wins), np.zeros_like(wins), best))
        k += len(c["moves"])
    return values, amafs, ranks


def root_rank(board, params: SearchParams, amaf_count: np.ndarray, amaf_wins: np.ndarray, best: int) -> float:
    """Rank of point `best` among the legal points by the tree policy's value at a fresh root of
    `board` whose AMAF statistics (the mover's row, [P]; wins are Black's) are added to its prior."""
    search = Search(board, params)
    tree, root = search.tree, search.root
    p = board.geometry.num_points
    legal = tree.legal[root, :p]
    tree.na[root, :p] += np.where(legal, amaf_count, 0.0)
    tree.wa[root, :p] += np.where(legal, amaf_wins, 0.0)
    v = action_values(tree, root, params)[:p]
    points = np.flatnonzero(legal)
    return 1.0 + float((v[points] > v[best]).sum()) + 0.5 * float((v[points] == v[best]).sum() - 1)


def amaf_rank(value: np.ndarray, legal: list[int], best: int) -> float:
    """Rank (1 = first) of point `best` among the `legal` points by `value` (NaN: never
    credited, ranked after every credited point); ties count half."""
    v = np.nan_to_num(value[legal], nan=-np.inf)
    mine = np.nan_to_num(value[best], nan=-np.inf)
    return 1.0 + float((v > mine).sum()) + 0.5 * float((v == mine).sum() - 1)


def pair_order(oracle: np.ndarray, v: np.ndarray, margin: float) -> float:
    """Share of candidate pairs (oracle values at least `margin` apart) that `v` orders as the
    oracle does; a tie or a NaN counts half; NaN when no pair qualifies."""
    agree, n = 0.0, 0
    for i in range(len(oracle)):
        for j in range(i + 1, len(oracle)):
            if abs(oracle[i] - oracle[j]) >= margin:
                n += 1
                d = (oracle[i] - oracle[j]) * (v[i] - v[j])
                agree += 1.0 if d > 0 else 0.0 if d < 0 else 0.5
    return agree / n if n else math.nan


def scores(cs: list[dict], values: list[np.ndarray], amafs: list[np.ndarray], ranks: dict[str, list[float]],
           margin: float) -> dict[str, np.ndarray]:
    """Per-position metrics (NaN where a position has no pair beyond the margin)."""
    pairs, top, err, bias, amaf = [], [], [], [], []
    for c, v, a in zip(cs, values, amafs):
        o = c["oracle"]
        amaf.append(pair_order(o, a, margin))
        if np.isnan(v).all():  # --amaf-only: no MC figures
            pairs.append(math.nan), top.append(math.nan), err.append(math.nan), bias.append(math.nan)
            continue
        pairs.append(pair_order(o, v, margin))
        top.append(float(np.argmax(v) == np.argmax(o)))
        err.append(float(np.abs(v - o).mean()))
        bias.append(float((v - o).mean()))
    return {"pairs": np.array(pairs), "top1": np.array(top), "error": np.array(err), "bias": np.array(bias),
            "amaf": np.array(amaf), "amaf_rank": np.array(ranks["amaf"]),
            "amaf_top3": (np.array(ranks["amaf"]) <= 3).astype(float), "root_rank": np.array(ranks["root"]),
            "root_top3": (np.array(ranks["root"]) <= 3).astype(float), "prior_rank": np.array(ranks["prior"])}


def mean_se(x: np.ndarray) -> tuple[float, float]:
    x = x[~np.isnan(x)]
    if not len(x):
        return math.nan, math.nan
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else math.nan


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="the match folder the review judged (results.jsonl and games/)")
    ap.add_argument("--review", required=True, help="bench/oracle_review.py's JSONL for that folder")
    ap.add_argument("--setting", action="append", default=[], metavar="NAME[:field=value,...]",
                    help="a playout setting to judge (repeatable; default: defaults only)")
    ap.add_argument("--playouts", type=int, default=128, help="playouts after each candidate")
    ap.add_argument("--amaf-playouts", type=int, default=None,
                    help="playouts from the position for the AMAF column (default: --playouts); a candidate "
                         "is credited in only some of them, so its AMAF value is noisier than its MC value")
    ap.add_argument("--min-playouts", type=int, default=300, help="the oracle's playouts a candidate needs")
    ap.add_argument("--margin", type=float, default=0.05, help="oracle value gap that makes a pair count")
    ap.add_argument("--every", type=int, default=1, help="judge every n-th position")
    ap.add_argument("--batch", type=int, default=256, help="positions per device call")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--amaf-only", action="store_true",
                    help="only the AMAF column (for settings that change credit, not the games)")
    ap.add_argument("--out", default=None, help="JSON: every setting's figures")
    args = ap.parse_args(argv)
    settings = {}
    for spec in args.setting or ["defaults"]:
        name, _, pairs = spec.partition(":")
        settings[name] = parse_settings([p for p in pairs.split(",") if p])
    cs = cases(args.folder, args.review, args.min_playouts, args.every)
    n_cand = sum(len(c["moves"]) for c in cs)
    print(f"{len(cs)} positions, {n_cand} candidate moves, {args.playouts} playouts after each candidate, "
          f"{args.amaf_playouts or args.playouts} from each position for AMAF")
    results, base = {}, None
    header = ("setting".ljust(14) + "pairs in order    top-1             abs error         bias    "
              "vs first: pairs   amaf pairs        vs first: amaf    amaf rank of best  vs first: rank  in amaf top 3"
              "     root rank       vs first: rank  in root top 3    prior rank     vs first: rank")
    rows = []
    for name, overrides in settings.items():
        t = time.perf_counter()
        values, amafs, ranks = playout_values(cs, SearchParams(**overrides), args.playouts, args.seed,
                                              args.batch, args.amaf_only, args.amaf_playouts)
        s = scores(cs, values, amafs, ranks, args.margin)
        base = s if base is None else base
        figs = {k: mean_se(v) for k, v in s.items()}
        figs["pairs_minus_first"] = mean_se(s["pairs"] - base["pairs"])
        figs["amaf_minus_first"] = mean_se(s["amaf"] - base["amaf"])
        figs["amaf_rank_minus_first"] = mean_se(s["amaf_rank"] - base["amaf_rank"])
        figs["root_rank_minus_first"] = mean_se(s["root_rank"] - base["root_rank"])
        figs["prior_rank_minus_first"] = mean_se(s["prior_rank"] - base["prior_rank"])
        results[name] = {"settings": overrides, "seconds": time.perf_counter() - t,
                         **{k: {"mean": m, "se": e} for k, (m, e) in figs.items()}}
        cell = "{0:+.3f} +- {1:.3f}".format
        rows.append(f"{name:<14}" + "  ".join(f"{figs[k][0]:.3f} +- {figs[k][1]:.3f}" for k in ("pairs", "top1", "error"))
                    + f"  {figs['bias'][0]:+.3f}  {cell(*figs['pairs_minus_first'])}"
                    + f"  {figs['amaf'][0]:.3f} +- {figs['amaf'][1]:.3f}  {cell(*figs['amaf_minus_first'])}"
                    + f"  {figs['amaf_rank'][0]:5.2f} +- {figs['amaf_rank'][1]:.2f}"
                    + f"     {figs['amaf_rank_minus_first'][0]:+.2f} +- {figs['amaf_rank_minus_first'][1]:.2f}"
                    + f"     {figs['amaf_top3'][0]:.3f} +- {figs['amaf_top3'][1]:.3f}"
                    + f"  {figs['root_rank'][0]:5.2f} +- {figs['root_rank'][1]:.2f}"
                    + f"     {figs['root_rank_minus_first'][0]:+.2f} +- {figs['root_rank_minus_first'][1]:.2f}"
                    + f"     {figs['root_top3'][0]:.3f} +- {figs['root_top3'][1]:.3f}"
                    + f"  {figs['prior_rank'][0]:5.2f} +- {figs['prior_rank'][1]:.2f}"
                    + f"  {figs['prior_rank_minus_first'][0]:+.2f} +- {figs['prior_rank_minus_first'][1]:.2f}")
        print(rows[-1], flush=True)
        if args.out:  # after every setting, so a stopped run keeps what it finished
            with open(args.out, "w") as f:
                json.dump({"folder": args.folder, "review": args.review, "positions": len(cs), "candidates": n_cand,
                           "playouts": args.playouts,
                           "amaf_playouts": args.amaf_playouts or args.playouts, "margin": args.margin,
                           "every": args.every, "seed": args.seed,
                           "results": results}, f, indent=1)
    print(header)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
