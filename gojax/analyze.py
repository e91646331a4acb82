"""`gojax analyze`: a search tree for every position of every game, many trees at once.

Each row is what `gojax evaluate` writes for the position (win rate, its standard error, mean
score and ownership from `playouts` playouts of the position) plus what a search of
`simulations` simulations finds there: the best move, its principal variation, and the most
visited moves with their visits and values.  Positions go through a forest (search/forest.py)
`trees` at a time, one device call per round for all of them.  Position i (counted over the
whole run) searches with seed `seed + i`, so rows do not depend on the batch they fall in:
reruns give the same bytes, and a killed run resumes where its file ends.

With `jobs` > 1 the batches go to that many worker processes, each with its own forest, and
the rows are written in position order as the batches come back.  One forest's Python host
work caps it well below a GPU's rate, so several processes sharing the device run faster
(bench/README.md, "A forest on one H100"); on a CPU they share its cores with the playouts.

Several processes or hosts (jax.distributed initialised in each, every one given the same files
and OUT on a shared file system): batch b is searched by process b mod N on its own devices,
each wave of N batches is gathered (jax.experimental.multihost_utils) and process 0 writes the
rows, the same bytes one process writes.  A run that loses a process stops; the same command
resumes it where OUT ends.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import math
import multiprocessing
import os
import sys

from gojax.evaluate import check_sgf_files, done_rows, evaluate, sgf_positions, truncate_to_rows
from gojax.kernels.geometry import BLACK
from gojax.runtime import start_worker
from gojax.search.forest import Forest
from gojax.search.params import SearchParams

TOP_MOVES = 5


def run_analyze(paths: list[str], out: str, simulations: int = 1000, params: SearchParams = SearchParams(),
                trees: int = 16, playouts: int = 256, policy: str = "uniform", progress: bool = True,
                log=sys.stderr, jobs: int = 1, cpu_threads: int | None = None) -> int:
    """Append one JSON row per position to OUT (rows already there are skipped); returns rows
    written.  `jobs` worker processes search the batches of `trees` positions (1: this process);
    `cpu_threads` limits each worker's XLA CPU threads (runtime.configure_cpu_threads)."""
    import jax
    check_sgf_files(paths)
    processes, writer = jax.process_count(), jax.process_index() == 0
    skip = done_rows(out)
    if processes > 1:  # every process starts where process 0 does
        from gojax.runtime import gather_bytes
        skip = int(gather_bytes(str(skip).encode())[0])
    if skip and writer:
        print(f"[analyze] resuming: {skip} rows already in {out}", file=log)
        truncate_to_rows(out, skip)
    from tqdm import tqdm
    bar = tqdm(desc="analyze", unit="pos", file=log, disable=not progress, initial=skip)
    search = functools.partial(_search_rows, simulations=simulations, params=params, trees=trees,
                               playouts=playouts, policy=policy)
    batches = _batches(paths, skip, trees, log)
    written = 0
    with open(out if writer else os.devnull, "a") as f:
        if processes > 1:
            written = _write(_gathered(batches, search, processes, jax.process_index()), f, bar)
        elif jobs == 1:
            written = _write(map(search, batches), f, bar)
        else:  # spawn: a forked child would inherit this process's JAX runtime, threads and all
            ctx = multiprocessing.get_context("spawn")
            with ctx.Pool(jobs, initializer=start_worker, initargs=(cpu_threads,)) as pool:
                written = _write(pool.imap(search, batches), f, bar)
    bar.close()
    return written


def _batches(paths, skip, trees, log):
    """Lists of (index, path, move, board), `trees` positions each, from position `skip` on."""
    pending = []
    for index, item in enumerate(sgf_positions(paths, log)):
        if index >= skip:
            pending.append((index, *item))
        if len(pending) == trees:
            yield pending
            pending = []
    if pending:
        yield pending


def _gathered(batches, search, processes: int, me: int):
    """Every batch's rows, in order, in every process: batch b searched by process b mod
    `processes`, then each wave of `processes` batches exchanged (runtime.gather_bytes)."""
    from gojax.runtime import gather_bytes
    batches = iter(batches)
    while True:
        wave = list(itertools.islice(batches, processes))
        if not wave:
            return
        every = gather_bytes("\n".join(search(wave[me])).encode() if me < len(wave) else b"")
        for data in every[:len(wave)]:
            yield data.decode().split("\n")


def _write(row_batches, f, bar) -> int:
    """Write each batch's rows as it comes, in order, flushed: a kill loses only batches in flight."""
    written = 0
    for rows in row_batches:
        f.writelines(row + "\n" for row in rows)
        f.flush()
        written += len(rows)
        bar.update(len(rows))
    return written


def _search_rows(pending, simulations, params, trees, playouts, policy) -> list[str]:
    """The rows of one batch of positions, in position order."""
    rows = {}
    for size in sorted({b.size for *_, b in pending}):
        group = [x for x in pending if x[3].size == size]
        boards = [b for *_, b in group]
        boards += [boards[-1]] * (trees - len(boards))  # a fixed forest size: one compile
        seeds = [params.seed + idx for idx, *_ in group]
        seeds += [seeds[-1]] * (trees - len(seeds))
        forest = Forest(boards, [dataclasses.replace(params, seed=s) for s in seeds])
        results = forest.run(simulations, stop_early=False)
        ev = [evaluate([b], playouts, policy, seed=params.seed, start_index=idx, local=True) for idx, _, _, b in group]
        for (idx, path, move, board), r, e in zip(group, results, ev):
            g = board.geometry
            black = board.to_play == BLACK
            top = [{"move": g.to_gtp(m.move), "visits": m.visits,
                    "value": None if math.isnan(m.q) else round(m.q, 6)} for m in r.moves[:TOP_MOVES] if m.visits]
            rows[idx] = json.dumps({
                "file": path, "move": move, "to_play": "B" if black else "W", "win_rate_for": "B",
                "win_rate": round(float(e["win_rate"][0]), 6), "stderr": round(float(e["stderr"][0]), 6),
                "score_mean": round(float(e["score_mean"][0]), 4),
                "ownership": [round(float(x), 3) for x in e["ownership"][0]],
                "search_win_rate": round(r.root_value if black else 1.0 - r.root_value, 6),
                "best_move": g.to_gtp(r.move), "pv": [g.to_gtp(p) for p in r.pv[:12]], "top_moves": top,
                "simulations": r.simulations})
    return [rows[i] for i in sorted(rows)]
