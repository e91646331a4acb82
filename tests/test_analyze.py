"""`gojax analyze`: a search per position, many trees at once, resumable and byte-identical."""

import json
import os
import pathlib
import socket
import subprocess
import sys

import pytest

from gojax.analyze import run_analyze
from gojax.search.params import SearchParams

GAME = str(pathlib.Path(__file__).parent / "data" / "game_b.sgf")
PARAMS = SearchParams(leaves=4, playouts_per_leaf=4, seed=3)


def test_rows_do_not_depend_on_the_forest_size_and_a_killed_run_resumes(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run_analyze([GAME], str(a), simulations=32, params=PARAMS, trees=8, playouts=16, progress=False)
    run_analyze([GAME], str(b), simulations=32, params=PARAMS, trees=3, playouts=16, progress=False)
    assert a.read_bytes() == b.read_bytes()
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    assert [r["move"] for r in rows] == list(range(13))  # the start and the 12 moves of game_b
    first = rows[0]
    assert first["best_move"] == first["pv"][0] == first["top_moves"][0]["move"] and first["simulations"] == 32
    assert len(first["ownership"]) == 81 and 0 <= first["search_win_rate"] <= 1
    assert all(r["win_rate_for"] == "B" for r in rows)  # Black's view in every row, whoever is to move
    lines = a.read_text().splitlines(keepends=True)
    a.write_text("".join(lines[:5]) + lines[5][:20])  # killed while writing row 5
    assert run_analyze([GAME], str(a), simulations=32, params=PARAMS, trees=8, playouts=16, progress=False) == 8
    assert a.read_bytes() == b.read_bytes()


def test_worker_processes_write_the_same_rows_in_order(tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    run_analyze([GAME], str(one), simulations=16, params=PARAMS, trees=4, playouts=8, progress=False)
    two.write_text("".join(one.read_text().splitlines(keepends=True)[:2]))  # a run killed after row 2
    # positions 2-12 in batches of 4: [2..5], [6..9], [10..12] over two workers, written in order
    assert run_analyze([GAME], str(two), simulations=16, params=PARAMS, trees=4, playouts=8, progress=False,
                       jobs=2, cpu_threads=1) == 11
    assert two.read_bytes() == one.read_bytes()


def test_an_interrupted_run_says_so_and_the_same_command_goes_on(tmp_path):
    """^C: exit 130 with the rows written so far named, and the same command finishes the file."""
    import signal
    import subprocess
    import sys
    import time
    out = tmp_path / "rows.jsonl"
    # ^C as a terminal delivers it, even where this test runs with SIGINT ignored (a background job)
    gojax = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "from gojax.cli import main; sys.exit(main(sys.argv[1:]))")
    cmd = [sys.executable, "-c", gojax, "analyze", GAME, "--simulations", "256", "--trees", "1", "--playouts", "8",
           "--leaves", "4", "--playouts-per-leaf", "4", "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while (not out.exists() or not out.read_text().count("\n")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    rows = out.read_text().count("\n")
    assert proc.returncode == 130 and 1 <= rows < 13
    assert f"interrupted; {rows} rows in {out}: run the same command to go on" in err
    subprocess.run(cmd, check=True, capture_output=True)
    assert [json.loads(line)["move"] for line in out.read_text().splitlines()] == list(range(13))


@pytest.mark.slow
def test_two_processes_with_jax_distributed_resume_and_write_the_rows_of_one(tmp_path):
    """jax.distributed on one machine (a local coordinator, CPU collectives over gloo), as on two
    hosts: a run that lost a process during row 4 goes on from the rows both processes agree on;
    each process searches every other batch of 3 positions on its own devices, process 0 writes,
    and the file is the bytes one process writes."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    one = tmp_path / "one.jsonl"
    run_analyze([GAME], str(one), simulations=32, params=PARAMS, trees=3, playouts=16, progress=False)
    lines = one.read_text().splitlines(keepends=True)
    assert len(lines) == 13
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:4]) + lines[4][:30])  # rows 4-12 left: batches [4-6] [7-9] [10-12]
    with socket.socket() as sock:  # a free port for the coordinator
        sock.bind(("localhost", 0))
        port = sock.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, "-m", "gojax", "analyze", GAME, "--out", str(cut), "--simulations",
                               "32", "--leaves", "4", "--playouts-per-leaf", "4", "--seed", "3", "--trees", "3",
                               "--playouts", "16", "--no-progress", "--coordinator", f"localhost:{port}",
                               "--num-processes", "2", "--process-id", str(i)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in (0, 1)]
    outs = [[b.decode() for b in p.communicate(timeout=600)] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs[0][1][-2000:] + outs[1][1][-2000:]
    assert "resuming: 4 rows" in outs[0][1] and "wrote 9 rows" in outs[0][0]  # process 0 writes
    assert cut.read_bytes() == one.read_bytes()
