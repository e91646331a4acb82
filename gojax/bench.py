"""Throughput benchmarks behind `gojax bench`: uniform playouts from the empty board.

Each measurement compiles once (timed apart as compile_sec), then runs `repeats` timed batches
with fresh keys and reports the median.  Timings are wall-clock with the result on the host
(block_until_ready), so they include the device->host copy of the per-position reductions.
"""

from __future__ import annotations

import dataclasses
import platform
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels.geometry import Geometry
from gojax.kernels.playout import PlayoutConfig, empty_boards, run_playouts
from gojax.kernels.policy import RULES
from gojax.runtime import gpu_graphs_on


def device_description(device=None) -> str:
    """e.g. 'gpu: NVIDIA H100 x1 (CUDA graphs)' or 'cpu: AMD EPYC 7B13 (2 cores) x1': `device`
    (a Simulator.device), or JAX's default devices for None.  A GPU's says whether its while
    loops ran in CUDA graphs (gojax/runtime.py), as `gojax` runs them."""
    d = device or jax.devices()[0]
    count = 1 if device is not None else jax.device_count()
    if d.platform != "cpu":
        graphs = "" if d.platform != "gpu" else " (CUDA graphs)" if gpu_graphs_on() else " (no CUDA graphs)"
        return f"{d.platform}: {d.device_kind} x{count}{graphs}"
    name = platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            name = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), name)
    except OSError:
        pass
    import os
    return f"cpu: {name} ({os.cpu_count()} cores) x{count}"


def versions() -> dict:
    import jaxlib

    from gojax import __version__
    return {"gojax": __version__, "jax": jax.__version__, "jaxlib": jaxlib.__version__, "python": platform.python_version()}


def grid_arguments(description: str, out: str):
    """The argument parser of the bench/ scripts that sweep board and batch sizes (19x19 has
    its own, smaller batches).  Returns (parser, grid) with grid(args) -> [(size, batch)]."""
    import argparse
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    ap.add_argument("--batches", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--batches-19", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=out)

    def grid(args):
        return [(s, b) for s in args.sizes for b in (args.batches_19 if s == 19 else args.batches)]
    return ap, grid


def bench_playouts(board: int = 9, batch: int = 1024, playouts_per_position: int = 1, repeats: int = 5,
                   seed: int = 0, config: PlayoutConfig = PlayoutConfig(), progress: bool = True) -> dict:
    """Time `batch` simultaneous playouts (batch / K start positions, K playouts each).

    A policy other than uniform is timed side by side with uniform playouts of the same shape
    (alternating batches, the machine's load hits both alike): the report gives the ratio; the
    learnt policy is timed beside the MoGo policy's defaults too."""
    if batch % playouts_per_position:
        raise ValueError(f"batch {batch} is not a multiple of playouts-per-position {playouts_per_position}")
    g = Geometry(board)
    starts = empty_boards(g, batch // playouts_per_position)
    key = jax.random.key(seed)
    configs = [config] if config.policy == "uniform" else [config, dataclasses.replace(config, policy="uniform")]
    if config.policy == "learnt":
        configs.append(dataclasses.replace(config, policy="mogo"))

    def run(cfg, i):
        res = run_playouts(starts, jax.random.fold_in(key, i), playouts_per_position, cfg)
        return jax.device_get((res.moves, res.cap_hit, res.z, res.rule_counts, res.cycle_hit))

    t0 = time.perf_counter()
    run(config, 0)
    compile_sec = time.perf_counter() - t0  # compile + one run
    for cfg in configs[1:]:
        run(cfg, 0)

    times = [[] for _ in configs]
    # steps[j]: each batch's longest playout = the number of iterations its while loop ran,
    # a count independent of the machine's speed (what a ko cycle held to the cap costs).
    steps = [[] for _ in configs]
    moves, caps, cycles, wins, rules_used = [], 0, 0, [], 0
    bar = _progress(repeats * len(configs), f"bench {board}x{board} B={batch}", progress)
    for i in range(1, repeats + 1):
        for j, cfg in enumerate(configs):
            t0 = time.perf_counter()
            m, cap, z, rc, cyc = run(cfg, i)
            times[j].append(time.perf_counter() - t0)
            steps[j].append(int(m.max()))
            if j == 0:
                moves.append(m.mean())
                caps += int(cap.sum())
                cycles += int(cyc.sum())
                wins.append(z.mean())
                rules_used = rules_used + rc.sum(0)
            bar.update(1)
    bar.close()
    # Throughput from the median batch time (a shared machine's stalls do not move it); the mean
    # and the slowest batch are reported beside it, since rare long batches (a ko cycle) cost too.
    sec = statistics.median(times[0])
    mean_moves = float(np.mean(moves))
    out = {
        "board": board, "batch": batch, "playouts_per_position": playouts_per_position,
        "policy": config.policy, "repeats": repeats,
        "playouts_per_sec": batch / sec,
        "moves_per_sec": batch * mean_moves / sec,
        "sec_per_batch_mean": statistics.fmean(times[0]), "sec_per_batch_median": sec,
        "sec_per_batch_min": min(times[0]), "sec_per_batch_max": max(times[0]),
        "mean_moves": mean_moves, "batch_steps_mean": statistics.fmean(steps[0]),
        "batch_steps_max": max(steps[0]), "cap_hits": caps, "cycle_stops": cycles, "playouts_timed": batch * repeats,
        "black_win_rate": float(np.mean(wins)),
        "rule_share": {name: float(n) / max(1, int(np.sum(rules_used))) for name, n in zip(RULES, rules_used)},
        "compile_sec": compile_sec, "compile_included": False,
        "device": device_description(), **versions(),
    }
    if len(configs) > 1:
        uniform = batch / statistics.median(times[1])
        out.update(uniform_playouts_per_sec=uniform, ratio_to_uniform=out["playouts_per_sec"] / uniform,
                   uniform_batch_steps_mean=statistics.fmean(steps[1]))
    if len(configs) > 2:
        mogo = batch / statistics.median(times[2])
        out.update(mogo_playouts_per_sec=mogo, ratio_to_mogo=out["playouts_per_sec"] / mogo,
                   mogo_batch_steps_mean=statistics.fmean(steps[2]))
    return out


def _progress(total: int, desc: str, enabled: bool):
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, file=sys.stderr, disable=not enabled, leave=False)


def format_report(r: dict) -> str:
    return "\n".join([
        f"gojax bench: {r['board']}x{r['board']} {r['policy']} playouts from the empty board",
        f"  device          {r['device']}   (jax {r['jax']}, gojax {r['gojax']})",
        f"  batch           {r['batch']} boards ({r['batch'] // r['playouts_per_position']} positions"
        f" x {r['playouts_per_position']} playouts), {r['repeats']} timed repeats",
        f"  playouts/s      {r['playouts_per_sec']:,.0f}   (median batch time {r['sec_per_batch_median'] * 1e3:.1f} ms;"
        f" mean {r['sec_per_batch_mean'] * 1e3:.1f}, min {r['sec_per_batch_min'] * 1e3:.1f},"
        f" max {r['sec_per_batch_max'] * 1e3:.1f})",
        f"  board-moves/s   {r['moves_per_sec']:,.0f}",
        *([f"  vs uniform      {r['ratio_to_uniform']:.0%} of uniform playouts/s ({r['uniform_playouts_per_sec']:,.0f},"
           f" same batch, timed alternately)",
           "  moves by rule   " + ", ".join(f"{k} {v:.0%}" for k, v in r["rule_share"].items() if v > 0)]
          if "ratio_to_uniform" in r else []),
        *([f"  vs mogo         {r['ratio_to_mogo']:.0%} of MoGo playouts/s ({r['mogo_playouts_per_sec']:,.0f},"
           f" same batch, timed alternately)"] if "ratio_to_mogo" in r else []),
        f"  mean moves      {r['mean_moves']:.1f} per playout; cap hits {r['cap_hits']}, ko-cycle stops"
        f" {r['cycle_stops']} of {r['playouts_timed']}",
        f"  loop steps      {r['batch_steps_mean']:.0f} per batch (its longest playout; most {r['batch_steps_max']})",
        f"  Black wins      {r['black_win_rate']:.3f} (komi 7.5)",
        f"  compile         {r['compile_sec']:.2f} s (compile + first batch; not in the figures above)",
    ])


def bench_positions(board: int, seed: int = 0) -> list:
    """The fixed start positions of `gojax bench --search`: the empty board and two middle
    games reached by seeded uniform random play (20 and 40 moves)."""
    from gojax.kernels.host import Board
    rng = np.random.default_rng(seed)
    out = [Board(board)]
    for n in (board * board // 4, board * board // 2):
        b = Board(board)
        for _ in range(n):
            legal = [p for p in b.legal_points() if not b.is_eye(p, b.to_play)]
            b.play(int(rng.choice(legal)) if legal else None)
        out.append(b)
    return out


def record_positions(paths: list[str], move: int | None = None) -> list:
    """The boards after `move` moves (all when None) of the SGF records at `paths` (files or
    folders), for a benchmark from real games' positions; ValueError (evaluate.SgfInputError)
    naming every file that cannot be read, every game already over there (two passes: a search
    from it times nothing), or when their board sizes differ."""
    from gojax.evaluate import check_sgf_files
    from gojax.sgf import load_sgf
    if move is not None and move < 0:
        raise ValueError(f"--move {move}: a number of moves is 0 or more")
    out, over = [], []
    for path in check_sgf_files(paths):
        with open(path, "rb") as f:
            out.append(load_sgf(f.read(), upto=move)[0])
        if out[-1].game_over:
            over.append(f"{path} ({len(out[-1].moves)} moves)")
    if over:
        raise ValueError(f"the game is over (two passes) at {'the end' if move is None else f'move {move}'} of: "
                         f"{', '.join(over)}; give an earlier --move")
    if len({b.size for b in out}) > 1:
        raise ValueError(f"the records' board sizes differ: {sorted({b.size for b in out})}")
    return out


def _simulator(params, board, trees: int, playout_device: str, workers: int = 0, share_from: int = 0):
    """The Simulator of a benchmark, its playouts on `playout_device` (search/device.PLAYOUT_DEVICES:
    for "auto" it times the candidates from `board` and keeps the faster) shared with `workers`
    processes (search/workers.py) on boards of `share_from` or more; with the milliseconds per
    call on each candidate when it chose, else None."""
    from gojax.runtime import playout_worker_setup
    from gojax.search.device import Simulator, playout_candidates
    candidates = playout_candidates(playout_device)
    simulator = Simulator(params, device=candidates[0], workers=workers,
                          worker_setup=playout_worker_setup() if workers else None, share_from=share_from)
    return simulator, simulator.choose_device(board, trees, candidates) if len(candidates) > 1 else None


def bench_search(board: int = 9, simulations: int = 3000, params=None, repeats: int = 1,
                 progress: bool = True, positions: list | None = None, playout_device: str = "default",
                 ready=None, alone: bool = True, playout_workers: int = 0, share_from: int = 0) -> dict:
    """Time full searches (fresh tree each) from bench_positions (or `positions`, boards of one
    size), their playouts on `playout_device` (search/device.PLAYOUT_DEVICES); report medians.
    `ready()`, if given, is called once compiled, before the timed searches (bench_jobs starts
    its processes' timings together); `alone=False` skips the device-alone calls."""
    from gojax.search.mcts import Search
    from gojax.search.params import SearchParams
    params = params or SearchParams()
    positions = positions or bench_positions(board)
    board = positions[0].size
    t0 = time.perf_counter()
    simulator, device_ms = _simulator(params, positions[0], 1, playout_device, playout_workers, share_from)
    simulator.warm_up(positions[0])
    compile_sec = time.perf_counter() - t0
    if ready is not None:
        ready()
    started = time.time()
    rows = []
    bar = _progress(len(positions) * repeats, f"search {board}x{board}", progress)
    for _i, pos in enumerate(positions):
        for _r in range(repeats):
            res = Search(pos, params, simulator).run(simulations=simulations, stop_early=False)
            rows.append(res)
            bar.update(1)
    bar.close()
    timed = {"started": started, "ended": time.time(), "timed_simulations": sum(r.simulations for r in rows)}
    med = statistics.median
    # The device alone: as many calls of L leaves x K playouts, back to back, with no host work
    # in between.  A search that takes about this long is bound by the playouts, not the tree.
    rounds = int(med([r.simulations // params.batch for r in rows]))
    alone_sec = []
    for i, pos in enumerate(positions if alone else []):
        key = np.asarray(jax.random.key_data(jax.random.key(i)))[None]
        t0 = time.perf_counter()
        for c in range(rounds):
            jax.block_until_ready(simulator.dispatch([[pos] * params.leaves], key, [c]).wins)
        alone_sec.append(time.perf_counter() - t0)
    leaves = [r.simulations // params.playouts_per_leaf for r in rows]
    resolved = params.for_size(board)  # what `auto` picks on this size
    return {
        "board": board, "simulations": simulations, "leaves": params.leaves,
        "playouts_per_leaf": params.playouts_per_leaf, "selection": params.selection,
        "prior": resolved.prior, "value_weight": resolved.value_weight,
        "policy": params.policy, "mercy": params.mercy,
        "positions": len(positions), "repeats": repeats,
        "simulations_per_sec": med([r.simulations / r.seconds for r in rows]),
        "sec_per_search": med([r.seconds for r in rows]),
        "host_fraction": med([r.host_fraction for r in rows]),
        "device_wait_fraction": med([r.device_wait_seconds / r.seconds for r in rows]),
        "host_cpu_fraction": med([r.host_cpu_seconds / r.seconds for r in rows]),
        "host_cpu_ms_per_leaf": med([1e3 * r.host_cpu_seconds / n for r, n in zip(rows, leaves)]),
        "device_alone_sec": med(alone_sec) if alone_sec else None,
        "nodes": med([r.nodes for r in rows]), "max_depth": med([r.max_depth for r in rows]),
        # Device calls per search: each is one round of feedback to the tree, and at equal
        # simulations the number of rounds is what strength depends on (bench/README.md).
        "rounds": rounds,
        "compile_sec": compile_sec, "compile_included": False,
        "device": device_description(simulator.device), "playout_device": playout_device,
        "playout_workers": simulator.worker_count,
        # this process's rows of a round at the end, where workers share the rounds (Simulator.local_rows)
        "playout_cut": [f"{mine} of {rows}" for (rows, _), mine in simulator.local_rows.items()],
        **({"device_ms_per_call": device_ms} if device_ms else {}), **timed, **versions(),
    }


def bench_forest(board: int = 9, simulations: int = 3000, trees: int = 8, params=None, repeats: int = 3,
                 policy_repeats: int = 3, progress: bool = True, positions: list | None = None,
                 playout_device: str = "default", ready=None) -> dict:
    """G trees searched together (search/forest.py): aggregate simulations/s, the host's CPU
    per leaf, the share of wall time spent waiting for the device; and beside it, in the same
    run, the same number of device calls with no host work between them: the ceiling
    (`policy_repeats=0`: not measured).  The trees start from bench_positions (or `positions`)
    in turn.  `ready()`, if given, is called once compiled, before the timed forests."""
    import dataclasses

    from gojax.search.forest import Forest
    from gojax.search.params import SearchParams
    params = params or SearchParams()
    positions = positions or bench_positions(board)
    board = positions[0].size
    boards = [positions[g % len(positions)] for g in range(trees)]
    plist = [dataclasses.replace(params, seed=params.seed + g) for g in range(trees)]
    t0 = time.perf_counter()
    simulator, device_ms = _simulator(params, boards[0], trees, playout_device)
    Forest(boards, plist, simulator).run(params.batch, stop_early=False)  # compile the round's shapes
    if trees > 1:  # and every block of same-round verdicts, which one round need not meet
        simulator.warm_up_verdicts_now(boards[0])
    compile_sec = time.perf_counter() - t0
    if ready is not None:
        ready()
    started = time.time()
    rows = []
    bar = _progress(repeats, f"forest {board}x{board} G={trees}", progress)
    for _ in range(repeats):
        forest = Forest(boards, plist, simulator)
        forest.run(simulations, stop_early=False)
        rows.append(forest.last_timing)
        bar.update(1)
    bar.close()
    timed = {"started": started, "ended": time.time(), "timed_simulations": sum(r["simulations"] for r in rows)}
    med = statistics.median
    leaves = rows[0]["simulations"] // params.playouts_per_leaf
    # The device alone: the same number of rounds of G x L leaf boards (the trees' roots) x K
    # playouts, back to back with no host work: what the forest would run at if the host were free.
    rounds = -(-simulations // params.batch)
    alone = []
    if policy_repeats:
        rows_in = [[b] * params.leaves for b in boards]
        keys = np.asarray(jax.random.key_data(jax.vmap(jax.random.key)(jnp.arange(trees))))
    for rep in range(policy_repeats):
        t0 = time.perf_counter()
        for c in range(rounds):
            jax.block_until_ready(forest.simulator.dispatch(rows_in, keys, [c + 1000 * rep] * trees).wins)
        alone.append(time.perf_counter() - t0)
    ceiling = trees * rounds * params.batch / med(alone) if alone else None
    sims_per_sec = med([r["simulations"] / r["seconds"] for r in rows])
    resolved = params.for_size(board)  # what `auto` picks on this size
    return {
        "board": board, "trees": trees, "simulations_per_tree": simulations, "leaves": params.leaves,
        "playouts_per_leaf": params.playouts_per_leaf, "prior": resolved.prior,
        "value_weight": resolved.value_weight, "policy": params.policy,
        "waves": params.waves, "repeats": repeats, "simulations_per_sec": sims_per_sec,
        "sec_per_round_of_searches": med([r["seconds"] for r in rows]),
        "host_cpu_ms_per_leaf": med([1e3 * r["host_cpu_seconds"] / leaves for r in rows]),
        "device_wait_fraction": med([r["device_wait_seconds"] / r["seconds"] for r in rows]),
        "ceiling_playouts_per_sec": ceiling,
        "fraction_of_ceiling": sims_per_sec / ceiling if ceiling else None,
        "compile_sec": compile_sec, "device": device_description(simulator.device), "playout_device": playout_device,
        **({"device_ms_per_call": device_ms} if device_ms else {}), **timed, **versions(),
    }


def bench_jobs(jobs: int, kind: str, kwargs: dict, setup: tuple, progress: bool = True) -> dict:
    """`jobs` processes at once, each running bench_forest (kind "forest") or bench_search
    ("search") with `kwargs` and its own seeds (the params' seed + i x trees), sharing the
    device: what several engines or forests on one GPU get together.  Each process compiles,
    then all start their timed searches at once (a barrier) and skip the device-alone calls.
    `setup`: (cpu_threads, boards_per_call, playouts_on_cpu) for runtime.configure_process in
    each.  Returns the processes' reports and the aggregate: the sum of their median rates, and
    every timed simulation over the window from the first start to the last end."""
    import multiprocessing
    import queue as queue_errors
    ctx = multiprocessing.get_context("spawn")  # a forked child would inherit this process's JAX runtime
    barrier, results = ctx.Barrier(jobs), ctx.Queue()
    procs = [ctx.Process(target=_bench_job, args=(i, kind, kwargs, setup, barrier, results), daemon=True)
             for i in range(jobs)]
    for proc in procs:
        proc.start()
    rows, failed = [None] * jobs, {}  # failed: process -> why
    bar = _progress(2 * jobs, f"{jobs} processes: compiled, finished", progress)
    try:
        while sum(r is not None for r in rows) + len(failed) < jobs:
            try:
                i, what, value = results.get(timeout=1.0)
            except queue_errors.Empty:
                dead = [i for i, p in enumerate(procs) if not p.is_alive() and rows[i] is None and i not in failed]
                if dead and results.empty():  # killed without a word (out of memory, a signal)
                    failed.update((i, f"exited with code {procs[i].exitcode}") for i in dead)
                    barrier.abort()
                continue
            bar.update(1)
            if what == "done":
                rows[i] = value
            elif what == "failed":
                failed.setdefault(i, value)
                barrier.abort()  # the others must not wait for it
    finally:
        bar.close()
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
    if failed:  # the first to fail says why; the others were stopped by it
        i, why = next(iter(failed.items()))
        raise RuntimeError(f"bench process {i} of {jobs} failed: {why}")
    window = max(r["ended"] for r in rows) - min(r["started"] for r in rows)
    first = rows[0]
    return {
        **{k: first[k] for k in ("board", "leaves", "playouts_per_leaf", "prior", "policy", "device", "playout_device")},
        "jobs": jobs, "kind": kind, "trees": first.get("trees"), "repeats": first["repeats"],
        "simulations_per_sec": sum(r["simulations_per_sec"] for r in rows),
        "window_simulations_per_sec": sum(r["timed_simulations"] for r in rows) / window,
        "window_sec": window, "start_spread_sec": max(r["started"] for r in rows) - min(r["started"] for r in rows),
        "processes": rows, **versions(),
    }


def _bench_job(index: int, kind: str, kwargs: dict, setup: tuple, barrier, results) -> None:
    """One process of bench_jobs: its JAX settings, its benchmark, the report back on `results`."""
    import threading
    import traceback

    from gojax.runtime import configure_process, share_gpu_memory
    try:
        share_gpu_memory()  # the processes share one device
        configure_process(False, *setup)
        from gojax.search.params import SearchParams
        params = kwargs.get("params") or SearchParams()
        spread = kwargs.get("trees") or 1  # each process's trees get seeds of their own
        kwargs = {**kwargs, "params": dataclasses.replace(params, seed=params.seed + index * spread), "progress": False}

        def ready():
            results.put((index, "compiled", None))
            barrier.wait()
        if kind == "forest":
            r = bench_forest(**kwargs, policy_repeats=0, ready=ready)
        else:
            r = bench_search(**kwargs, alone=False, ready=ready)
        results.put((index, "done", r))
    except threading.BrokenBarrierError:
        results.put((index, "failed", "stopped: another process failed"))
    except BaseException as err:  # noqa: BLE001 - reported to the parent, which names it
        results.put((index, "failed", "".join(traceback.format_exception_only(err)).strip()
                     + "\n" + traceback.format_exc(limit=-3)))


def format_jobs_report(r: dict) -> str:
    what = f"--trees {r['trees']}" if r["kind"] == "forest" else "lone searches"
    per = [p["simulations_per_sec"] for p in r["processes"]]
    host = [p["host_cpu_ms_per_leaf"] for p in r["processes"]]
    return "\n".join([
        f"gojax bench --search {what} --jobs {r['jobs']}: {r['board']}x{r['board']}, L={r['leaves']} x"
        f" K={r['playouts_per_leaf']}, prior {r['prior']}, {r['policy']} playouts",
        f"  device          {r['device']}   (jax {r['jax']}, gojax {r['gojax']})",
        f"  simulations/s   {r['simulations_per_sec']:,.0f} together (the sum of each process's median of"
        f" {r['repeats']}); {r['window_simulations_per_sec']:,.0f} over the {r['window_sec']:.2f} s from the first"
        f" start to the last end (starts {r['start_spread_sec']:.2f} s apart)",
        "  per process     " + ", ".join(f"{x:,.0f}" for x in per) + " simulations/s; host CPU "
        + ", ".join(f"{x:.3f}" for x in host) + " ms per leaf",
    ] + _jobs_devices(r))


def _jobs_devices(r: dict) -> list[str]:
    """The report's line on where each process's playouts ran, where --playout-device auto chose."""
    chosen = [next(iter(p["device_ms_per_call"]), None) for p in r["processes"] if p.get("device_ms_per_call")]
    if not chosen:
        return []
    return ["  playouts on     " + ", ".join(chosen) + " (--playout-device auto: each process's choice at warm-up)"]


def _device_choice(r: dict) -> list[str]:
    """The report's line on --playout-device auto's timings, if it chose."""
    times = r.get("device_ms_per_call")
    if not times:
        return []
    return ["  playouts on     " + ", ".join(f"{name} {ms:.1f} ms per call" for name, ms in times.items())
            + " (--playout-device auto: the first, timed at warm-up)"]


def format_forest_report(r: dict) -> str:
    return "\n".join([
        f"gojax bench --search --trees {r['trees']}: {r['board']}x{r['board']}, {r['simulations_per_tree']} simulations"
        f" per tree, L={r['leaves']} x K={r['playouts_per_leaf']}, prior {r['prior']}, {r['policy']} playouts"
        + (f", descents in {r['waves']} waves" if r.get("waves", 1) > 1 else ""),
        f"  device          {r['device']}   (jax {r['jax']}, gojax {r['gojax']})",
        f"  simulations/s   {r['simulations_per_sec']:,.0f} for the forest   (median of {r['repeats']};"
        f" {r['sec_per_round_of_searches']:.2f} s for all {r['trees']} searches)",
        f"  device alone    {r['ceiling_playouts_per_sec']:,.0f} playouts/s: the same rounds of {r['trees'] * r['leaves']}"
        f" boards x K={r['playouts_per_leaf']} (the roots) back to back with no host work; the forest runs at"
        f" {r['fraction_of_ceiling']:.0%} of it",
        f"  host CPU        {r['host_cpu_ms_per_leaf']:.3f} ms per leaf; waiting for the device"
        f" {r['device_wait_fraction']:.0%} of wall time",
        f"  compile         {r['compile_sec']:.2f} s (not in the figures above)",
    ] + _device_choice(r))


def format_search_report(r: dict) -> str:
    return "\n".join([
        f"gojax bench --search: {r['board']}x{r['board']}, {r['simulations']} simulations per search,"
        f" {r['positions']} positions x {r['repeats']}",
        f"  device          {r['device']}   (jax {r['jax']}, gojax {r['gojax']})"
        + (f"; XLA CPU threads: {r['xla_cpu_threads']}" if r.get("xla_cpu_threads") else "")
        + (f"; {r['playout_workers']} playout worker process(es)" if r.get("playout_workers") else "")
        + "".join(f", {cut} rows of a round here" for cut in r.get("playout_cut", [])),
        f"  batch shape     L={r['leaves']} leaves x K={r['playouts_per_leaf']} playouts per device call;"
        f" {r['selection']}, prior {r['prior']}; {r.get('policy', 'mogo')} playouts, mercy {r.get('mercy', 0):g}",
        f"  simulations/s   {r['simulations_per_sec']:,.0f}   (median; {r['sec_per_search']:.2f} s per search)",
        f"  host            {r['host_fraction']:.0%} of wall time (descent + backup + leaf conversion);"
        f" waiting for the device {r['device_wait_fraction']:.0%}",
        f"  host CPU        {r['host_cpu_ms_per_leaf']:.2f} ms per leaf, {r['host_cpu_fraction']:.0%} of wall time"
        f" (the search thread's CPU time: without the waits for a core it shares with the playouts)",
        f"  device alone    {r['device_alone_sec']:.2f} s for the same {r['rounds']:.0f} calls back to back,"
        f" no host work ({r['device_alone_sec'] / r['sec_per_search']:.0%} of a search)",
        f"  tree            {r['nodes']:.0f} nodes, depth {r['max_depth']:.0f} (medians);"
        f" {r['rounds']:.0f} device calls (rounds) per search",
        f"  compile         {r['compile_sec']:.2f} s (not in the figures above)",
    ] + _device_choice(r))
