"""The public API: what README, docs/usage.md and gojax/__init__.py promise works as written."""

import jax
import numpy as np

import gojax


def test_public_names_exist():
    for name in gojax.__all__:
        assert hasattr(gojax, name), name


def test_readme_example():
    board = gojax.Board(9)
    board.play(board.geometry.from_gtp("E5"))
    res = gojax.run_playouts(gojax.batch_from_host([board]), jax.random.key(0), 64)
    rate = float(res.wins[0]) / 64
    assert 0.0 < rate < 1.0 and res.ownership.shape == (1, 81)
    assert np.asarray(res.amaf_count).shape == (1, 2, 81)
    result = gojax.Search(board, gojax.SearchParams(leaves=4, playouts_per_leaf=8)).run(simulations=64)
    assert result.simulations >= 64 and result.moves


def test_readme_forest_example(tmp_path):
    """docs/usage.md's Forest example, small: positions from SGF records, one tree each, a seed each;
    tree g's result is what a lone search with its params gives."""
    import dataclasses
    paths = []
    for i, moves in enumerate(["B[ee];W[cc]", "B[dd];W[ff];B[gc]"]):
        path = tmp_path / f"g{i}.sgf"
        path.write_text(f"(;GM[1]FF[4]SZ[9]KM[7.5];{moves})")
        paths.append(str(path))
    boards = [gojax.load_sgf(open(path, "rb").read(), upto=30)[0] for path in paths]
    params = [dataclasses.replace(gojax.SearchParams(leaves=4, playouts_per_leaf=4), seed=s) for s in range(2)]
    results = gojax.Forest(boards, params).run(simulations=32)
    assert [len(b.moves) for b in boards] == [2, 3] and all(r.simulations == 32 for r in results)
    alone = gojax.Search(boards[1], params[1]).run(simulations=32)
    assert (results[1].move, [m.visits for m in results[1].moves]) == (alone.move, [m.visits for m in alone.moves])
    # root parallelisation: two trees on one position, their root visits summed move by move
    forest = gojax.Forest([boards[0]] * 2, params)
    each = forest.run(simulations=32)
    merged, owner = gojax.merge_roots(each, forest.searches)
    visits = {m.move: sum(n.visits for r in each for n in r.moves if n.move == m.move) for m in merged.moves}
    assert merged.simulations == 64 and owner in (0, 1) and visits[merged.move] == merged.moves[0].visits


def test_bench_cli_times_mogo_beside_uniform(capsys):
    import json

    from gojax.cli import main
    assert main(["bench", "--board", "5", "--batch", "32", "--playouts-per-position", "16", "--repeats", "1",
                 "--policy", "mogo", "--json", "--no-progress"]) == 0
    out = capsys.readouterr().out
    r = json.loads(out.strip().splitlines()[-1])
    assert r["policy"] == "mogo" and r["ratio_to_uniform"] > 0 and "vs uniform" in out
    assert abs(sum(r["rule_share"].values()) - 1) < 1e-6 and r["rule_share"]["pattern"] > 0
    # A batch runs as many loop steps as its longest playout, never fewer than its mean length.
    assert r["batch_steps_max"] >= r["batch_steps_mean"] >= r["mean_moves"] > 0 and "loop steps" in out


def test_bench_search_json_has_the_fields_the_issue_names(capsys):
    import json

    from gojax.cli import main
    assert main(["bench", "--search", "--board", "5", "--simulations", "64", "--leaves", "4",
                 "--playouts-per-leaf", "4", "--json", "--no-progress"]) == 0
    out = capsys.readouterr().out
    r = json.loads(out.strip().splitlines()[-1])
    for key in ("simulations_per_sec", "host_fraction", "leaves", "playouts_per_leaf", "device"):
        assert key in r, key
    assert (r["leaves"], r["playouts_per_leaf"], r["rounds"]) == (4, 4, 4)
    # One thread's CPU time cannot exceed the wall time (it also counts work outside the timed
    # host sections, so it is not bounded by host_fraction); the device-alone replay ran
    assert 0 < r["host_cpu_fraction"] <= 1.0 and 0 < r["host_fraction"] <= 1.0 and r["device_alone_sec"] > 0
    assert "device alone" in out
    assert r["xla_cpu_threads"] in ("all", 1)  # 1 only if JAX had not started in this process yet



def test_bench_jobs_times_processes_together_and_names_a_failure(capsys):
    """`gojax bench --search --jobs J`: J spawned processes, each its own forest, timed together;
    the aggregate is their sum, and a process that fails stops the others and is named."""
    import json

    import pytest

    from gojax.bench import bench_jobs
    from gojax.cli import main
    from gojax.search.params import SearchParams
    assert main(["bench", "--search", "--trees", "2", "--jobs", "2", "--board", "5", "--simulations", "16",
                 "--leaves", "2", "--playouts-per-leaf", "2", "--repeats", "1", "--json", "--no-progress"]) == 0
    out = capsys.readouterr().out
    r = json.loads(out.strip().splitlines()[-1])
    assert (r["jobs"], r["kind"], r["trees"], len(r["processes"])) == (2, "forest", 2, 2)
    assert r["simulations_per_sec"] == pytest.approx(sum(p["simulations_per_sec"] for p in r["processes"]))
    assert all(p["timed_simulations"] == 2 * 16 and p["ceiling_playouts_per_sec"] is None for p in r["processes"])
    assert 0 <= r["start_spread_sec"] < r["window_sec"] and r["window_simulations_per_sec"] > 0
    assert "together" in out and "per process" in out
    with pytest.raises(SystemExit, match="--jobs needs --search"):
        main(["bench", "--jobs", "2"])
    bad = {"board": 5, "simulations": 16, "trees": 2, "params": SearchParams(leaves=2, playouts_per_leaf=2),
           "repeats": 1, "playout_device": "tpu"}
    with pytest.raises(RuntimeError, match="bench process . of 2 failed: ValueError: playout device 'tpu'"):
        bench_jobs(2, "forest", bad, (0, 4, False), progress=False)

def test_policy_flags_reach_the_search_parameters():
    import pytest

    from gojax.cli import build_parser, search_params
    args = build_parser().parse_args(["gtp", "--policy", "uniform", "--pool-prob", "0.5", "--pool-size", "20",
                                      "--cmc-prob", "0.25", "--nakade-prob", "1", "--fill-board-prob", "0.5",
                                      "--self-atari-prob", "0.75", "--save-prob", "0.5", "--pattern-prob", "0.25",
                                      "--capture-prob", "0", "--amaf-horizon", "12"])
    p = search_params(args)
    cfg = p.playout_config()
    assert (cfg.policy, cfg.pool_prob, cfg.cmc_prob, p.pool_size) == ("uniform", 0.5, 0.25, 20)
    assert (cfg.nakade_prob, cfg.fill_board_prob, cfg.self_atari_prob) == (1.0, 0.5, 0.75)
    assert (cfg.save_prob, cfg.pattern_prob, cfg.capture_prob, cfg.amaf_horizon) == (0.5, 0.25, 0.0, 12)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["gtp", "--policy", "pachi"])
    with pytest.raises(SystemExit):
        search_params(build_parser().parse_args(["gtp", "--pool-prob", "1.5"]))


_LIMIT_ONE_THREAD = """
import os, json, sys, threading
from gojax import runtime
allowed = os.sched_getaffinity(0)
me = threading.get_native_id()
before = set(map(int, os.listdir('/proc/self/task'))) - {me}
first = runtime.limit_cpu_threads(1)
again = runtime.limit_cpu_threads(1)
import jax, jax.numpy as jnp
total = int(jnp.arange(10).sum())
masks = {int(tid): sorted(os.sched_getaffinity(int(tid))) for tid in os.listdir('/proc/self/task')}
print(json.dumps(dict(cores=sorted(allowed), first=first, again=again, total=total, mine=masks.pop(me),
                      others=sorted(set(tuple(m) for t, m in masks.items() if t not in before)),
                      earlier=sorted(set(tuple(masks[t]) for t in before if t in masks)))), flush=True)
sys.stdin.readline()  # hold the claim until told
"""


def _limited_process(claims: str):
    """A fresh process that limits XLA's CPU pool to one thread (claims in folder `claims`),
    reports the threads' cores and holds its claim until its stdin is written to."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, JAX_PLATFORMS="cpu", GOJAX_CORE_CLAIMS=claims)
    return subprocess.Popen([sys.executable, "-c", _LIMIT_ONE_THREAD], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _report(proc) -> dict:
    import json
    line = proc.stdout.readline()
    assert line, proc.stderr.read()[-2000:]
    return json.loads(line)


def test_one_xla_cpu_thread_held_on_a_core_the_process_claims(tmp_path):
    """gojax/runtime.py in fresh processes: the limit applies once, before the backends exist;
    the threads JAX made keep the core the process claimed and the calling thread (the search)
    every core; a second process claims another core, and a process that finds every core
    claimed pins nothing."""
    first = _limited_process(str(tmp_path))
    a = _report(first)
    assert a["total"] == 45 and a["again"] is False
    cores = a["cores"]
    if len(cores) == 1:  # nothing to keep apart
        assert a["first"] is False
        first.communicate("\n")
        return
    assert a["first"] is True
    assert a["others"] == [[cores[0]]] and a["mine"] == cores
    assert a["earlier"] in ([], [cores])  # threads started before (at import) keep every core
    second = _limited_process(str(tmp_path))
    b = _report(second)
    assert b["others"] == [[cores[1]]] and b["mine"] == cores
    if len(cores) == 2:  # both cores claimed: a third keeps every thread on every core
        third = _limited_process(str(tmp_path))
        c = _report(third)
        assert c["first"] is True and c["mine"] == cores and c["others"] == [cores]
        third.communicate("\n")
    for proc in (first, second):
        proc.communicate("\n")
        assert proc.returncode == 0
    again = _limited_process(str(tmp_path))  # the claims went with their processes
    assert _report(again)["others"] == [[cores[0]]]
    again.communicate("\n")


_SPLIT = """
import json, os, subprocess, sys
from gojax import runtime
threads, boards, play, size, workers = json.loads(sys.argv[1])
runtime.configure_process(False, threads, boards, board_size=size, playout_workers=workers)
import jax
from gojax.kernels.host import Board
from gojax.search.forest import Forest
from gojax.search.params import SearchParams
plist = [SearchParams(leaves=2, playouts_per_leaf=4, seed=g) for g in range(4)]
results = Forest([Board(5)] * 4, plist).run(64) if play else []
child = subprocess.run([sys.executable, "-c", "import jax; print(jax.device_count())"], capture_output=True,
                       text=True).stdout if play else "0"  # a process this one starts (asked once: 3 s each)
print(json.dumps(dict(devices=jax.device_count(), flags=os.environ.get("XLA_FLAGS"), child=int(child),
                      moves=[[r.move, [m.visits for m in r.moves]] for r in results])))
"""


def test_big_batches_on_the_cpu_split_over_a_virtual_device_per_core():
    """runtime.split_cpu_devices through configure_process, in fresh processes: a forest of more
    than SMALL_BATCH boards per call gets one CPU device per core and plays the same trees as on
    one device; $XLA_FLAGS is put back, so processes it starts get one device; a small-batch
    search (below runtime.SPLIT_BOARD, or above it with playout workers), an explicit
    --cpu-threads and the user's own device count are left alone."""
    import json
    import os
    import subprocess
    import sys

    from gojax.kernels.host import Board
    from gojax.search.forest import Forest
    from gojax.search.params import SearchParams

    def run(threads, boards, flags=None, play=False, size=None, workers=None):
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        env.pop("XLA_FLAGS", None)
        if flags:
            env["XLA_FLAGS"] = flags
        proc = subprocess.run([sys.executable, "-c", _SPLIT, json.dumps([threads, boards, play, size, workers])], capture_output=True,
                              text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    cores = len(os.sched_getaffinity(0))
    here = Forest([Board(5)] * 4, [SearchParams(leaves=2, playouts_per_leaf=4, seed=g) for g in range(4)]).run(64)
    want = [[r.move, [m.visits for m in r.moves]] for r in here]  # this process: one device
    split = run(None, 8 * 4 * 64, play=True)
    assert (split["devices"], split["flags"], split["child"]) == (cores if cores > 1 else 1, None, 1)
    assert split["moves"] == want
    assert run(None, 8 * 4)["devices"] == 1  # a lone search at the default shape
    # Long calls: a lone 19x19 search shares its rounds with worker processes (tests/test_workers.py)
    # on one device of its own, or, with no workers, splits over a device per core.
    assert run(None, 8 * 4, size=19)["devices"] == 1
    assert run(None, 8 * 4, size=19, workers=0)["devices"] == (cores if cores > 1 else 1)
    assert run(0, 8 * 4 * 64)["devices"] == 1  # --cpu-threads given: the user's choice
    own = run(None, 8 * 4 * 64, "--xla_force_host_platform_device_count=3")
    assert (own["devices"], own["flags"]) == (3, "--xla_force_host_platform_device_count=3")


def test_the_backend_is_the_cpu_when_jax_platforms_says_so(monkeypatch):
    from gojax.runtime import backend_is_cpu
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert backend_is_cpu()
    monkeypatch.setenv("JAX_PLATFORMS", "cuda,cpu")
    assert not backend_is_cpu()


def test_only_small_batch_searches_on_the_cpu_get_one_xla_thread():
    from gojax.runtime import auto_cpu_threads
    assert auto_cpu_threads(8 * 4, on_cpu=True) == 1  # the default search shape
    assert auto_cpu_threads(16 * 16, on_cpu=True) == 0  # big batches want every core
    assert auto_cpu_threads(None, on_cpu=True) == 0  # not a search (bench playouts, evaluate)
    assert auto_cpu_threads(8 * 4, on_cpu=False) == 0  # an accelerator: leave the host alone
    assert auto_cpu_threads(8 * 4, on_cpu=True, board_size=19) == 0  # long calls: a device per core


def test_gpu_graphs_flag_is_added_only_for_an_accelerator_and_never_over_the_users_own():
    """runtime.enable_gpu_graphs in fresh processes: nothing on a CPU backend; on request the
    flag goes into XLA_FLAGS, XLA accepts it (a CPU backend ignores it and still runs loops);
    a user's own command-buffer flag is left alone."""
    import os
    import subprocess
    import sys
    code = """
import os, json
from gojax import runtime
cpu = runtime.enable_gpu_graphs()
forced = runtime.enable_gpu_graphs(force=True)
twice = runtime.enable_gpu_graphs(force=True)
import jax
n = int(jax.lax.while_loop(lambda c: c < 7, lambda c: c + 1, 0))
print(json.dumps(dict(cpu=cpu, forced=forced, twice=twice, n=n, flags=os.environ.get("XLA_FLAGS", ""))))
"""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (r["cpu"], r["forced"], r["twice"], r["n"]) == (False, True, False, 7)
    assert r["flags"].count("--xla_gpu_enable_command_buffer=") == 1 and "WHILE,CONDITIONAL" in r["flags"]
    own = "--xla_gpu_enable_command_buffer=FUSION"
    env["XLA_FLAGS"] = own
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["flags"] == own


def test_gpu_graphs_on_reads_whether_while_loops_are_captured(monkeypatch):
    """What a GPU figure's device line says (gojax.bench.device_description): on with WHILE among
    the command-buffer types (gojax's own flag, or a user's in any case), off without the flag
    or with a user's opt-out."""
    from gojax.runtime import GPU_COMMAND_BUFFERS, gpu_graphs_on
    for flags, on in [("", False), ("--xla_gpu_enable_command_buffer=FUSION", False),
                      (f"--xla_gpu_enable_command_buffer={GPU_COMMAND_BUFFERS}", True),
                      ("--xla_force_host_platform_device_count=2 --xla_gpu_enable_command_buffer=while,fusion", True)]:
        monkeypatch.setenv("XLA_FLAGS", flags)
        assert gpu_graphs_on() is on, flags


def test_bench_search_starts_from_game_records_and_names_a_bad_one(tmp_path, capsys):
    import json

    import pytest

    from gojax.cli import main
    record = tmp_path / "g.sgf"
    record.write_text("(;GM[1]FF[4]SZ[5]KM[7.5];B[cc];W[bb];B[dc])")
    assert main(["bench", "--search", "--sgf", str(record), "--move", "2", "--simulations", "32", "--leaves", "4",
                 "--playouts-per-leaf", "4", "--trees", "2", "--repeats", "1", "--json", "--no-progress"]) == 0
    r = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (r["board"], r["trees"], r["sgf"], r["move"]) == (5, 2, [str(record)], 2)
    with pytest.raises(SystemExit, match="no/such.sgf"):
        main(["bench", "--search", "--sgf", "no/such.sgf"])
    with pytest.raises(SystemExit, match="needs --search"):
        main(["bench", "--sgf", str(record)])
    over = tmp_path / "over.sgf"  # both players passed: nothing to search, so nothing to time
    over.write_text("(;GM[1]FF[4]SZ[5]KM[7.5];B[cc];W[];B[])")
    with pytest.raises(SystemExit, match=r"game is over.*over.sgf \(3 moves\)"):
        main(["bench", "--search", "--sgf", str(over), str(record)])
    assert main(["bench", "--search", "--sgf", str(over), "--move", "2", "--simulations", "32", "--leaves", "4",
                 "--playouts-per-leaf", "4", "--repeats", "1", "--json", "--no-progress"]) == 0


def test_engines_take_gpu_memory_as_needed_unless_told_otherwise(monkeypatch):
    """gojax gtp and gojax analysis share a GPU with other processes (two engines in a match):
    XLA's up-front three quarters would starve the second."""
    import os

    from gojax.runtime import share_gpu_memory
    monkeypatch.setattr(os, "environ", {})
    share_gpu_memory()
    assert os.environ == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    monkeypatch.setattr(os, "environ", {"XLA_PYTHON_CLIENT_PREALLOCATE": "true"})
    share_gpu_memory()
    assert os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"  # the user's own setting wins


def test_clone_named_gojax_in_the_current_folder_is_named(tmp_path):
    """From the folder holding a clone named gojax, Python takes the clone's folder for the package
    (ahead of an editable install; -S leaves no install at all): `python -m gojax` says so."""
    import os
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parents[1]
    os.symlink(root, tmp_path / "gojax")
    proc = subprocess.run([sys.executable, "-S", "-m", "gojax"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1
    assert "took the folder" in proc.stderr and f"pip install {tmp_path / 'gojax'}" in proc.stderr
