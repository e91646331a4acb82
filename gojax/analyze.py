"""`gojax analyze`: a search tree for every position of every game, many trees at once.

Each row is what `gojax evaluate` writes for the position (win rate, its standard error, mean
score and ownership from `playouts` playouts of the position) plus what a search of
`simulations` simulations finds there: the best move, its principal variation, and the most
visited moves with their visits and values.  Positions go through a forest (search/forest.py)
`trees` at a time, one device call per round for all of them.  Position i (counted over the
whole run) searches with seed `seed + i`, so rows do not depend on the batch they fall in:
reruns give the same bytes, and a killed run resumes where its file ends.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys

from gojax.evaluate import check_sgf_files, done_rows, evaluate, sgf_positions, truncate_to_rows
from gojax.kernels.geometry import BLACK
from gojax.search.forest import Forest
from gojax.search.params import SearchParams

TOP_MOVES = 5


def run_analyze(paths: list[str], out: str, simulations: int = 1000, params: SearchParams = SearchParams(),
                trees: int = 16, playouts: int = 256, policy: str = "uniform", progress: bool = True,
                log=sys.stderr) -> int:
    """Append one JSON row per position to OUT (rows already there are skipped); returns rows written."""
    check_sgf_files(paths)
    skip = done_rows(out)
    if skip:
        print(f"[analyze] resuming: {skip} rows already in {out}", file=log)
        truncate_to_rows(out, skip)
    from tqdm import tqdm
    bar = tqdm(desc="analyze", unit="pos", file=log, disable=not progress, initial=skip)
    written, pending = 0, []
    with open(out, "a") as f:
        for index, item in enumerate(sgf_positions(paths, log)):
            if index < skip:
                continue
            pending.append((index, *item))
            if len(pending) == trees:
                written += _flush(pending, f, simulations, params, trees, playouts, policy)
                bar.update(len(pending))
                pending = []
        if pending:
            written += _flush(pending, f, simulations, params, trees, playouts, policy)
            bar.update(len(pending))
    bar.close()
    return written


def _flush(pending, f, simulations, params, trees, playouts, policy) -> int:
    rows = {}
    for size in sorted({b.size for *_, b in pending}):
        group = [x for x in pending if x[3].size == size]
        boards = [b for *_, b in group]
        boards += [boards[-1]] * (trees - len(boards))  # a fixed forest size: one compile
        seeds = [params.seed + idx for idx, *_ in group]
        seeds += [seeds[-1]] * (trees - len(seeds))
        forest = Forest(boards, [dataclasses.replace(params, seed=s) for s in seeds])
        results = forest.run(simulations, stop_early=False)
        ev = [evaluate([b], playouts, policy, seed=params.seed, start_index=idx) for idx, _, _, b in group]
        for (idx, path, move, board), r, e in zip(group, results, ev):
            g = board.geometry
            black = board.to_play == BLACK
            top = [{"move": g.to_gtp(m.move), "visits": m.visits,
                    "value": None if math.isnan(m.q) else round(m.q, 6)} for m in r.moves[:TOP_MOVES] if m.visits]
            rows[idx] = json.dumps({
                "file": path, "move": move, "to_play": "B" if black else "W",
                "win_rate": round(float(e["win_rate"][0]), 6), "stderr": round(float(e["stderr"][0]), 6),
                "score_mean": round(float(e["score_mean"][0]), 4),
                "ownership": [round(float(x), 3) for x in e["ownership"][0]],
                "search_win_rate": round(r.root_value if black else 1.0 - r.root_value, 6),
                "best_move": g.to_gtp(r.move), "pv": [g.to_gtp(p) for p in r.pv[:12]], "top_moves": top,
                "simulations": r.simulations})
    f.writelines(rows[i] + "\n" for i in sorted(rows))
    f.flush()
    return len(pending)
