"""`gojax.evaluate` and `gojax evaluate`: device-count independence, resume, reproducible rows."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import gojax
from gojax.evaluate import evaluate, run_evaluate

DATA = pathlib.Path(__file__).parent / "data"


def test_win_rate_stderr_and_ownership():
    b = gojax.Board(9)
    r = evaluate([b], playouts=256, seed=3)
    p = r["win_rate"][0]
    assert 0 < p < 1 and np.isclose(r["stderr"][0], np.sqrt(p * (1 - p) / 256))
    assert r["ownership"].shape == (1, 81) and np.all(np.abs(r["ownership"]) <= 1)
    assert r["amaf_value"].shape == (1, 2, 81)


def test_a_playout_config_replaces_the_policy_name():
    from gojax.kernels.playout import PlayoutConfig
    from gojax.search.params import SearchParams
    b = gojax.Board(9)
    by_name = evaluate([b], playouts=16, policy="mogo", seed=5)
    by_config = evaluate([b], playouts=16, config=PlayoutConfig(policy="mogo"), seed=5)
    assert np.array_equal(by_name["win_rate"], by_config["win_rate"])
    assert np.array_equal(by_name["ownership"], by_config["ownership"])
    # A search's playouts (mercy rule, MoGo rules) are another policy: other games, same shapes.
    searched = evaluate([b], playouts=16, config=SearchParams(two_lib_prob=1.0).playout_config(), seed=5)
    assert searched["ownership"].shape == (1, 81)
    assert not np.array_equal(searched["ownership"], by_name["ownership"])


def test_positions_from_sgf_paths_and_arrays():
    from_file = evaluate(str(DATA / "game_b.sgf"), playouts=8, seed=2)
    assert from_file["win_rate"].shape == (13,)  # the start and 12 moves
    from gojax.evaluate import sgf_positions
    boards = [b for _, _, b in sgf_positions([str(DATA / "game_b.sgf")])]
    from_arrays = evaluate(gojax.batch_from_host(boards), playouts=8, seed=2)
    np.testing.assert_array_equal(from_file["ownership"], from_arrays["ownership"])


def test_results_do_not_depend_on_the_batch():
    boards = [gojax.Board(9) for _ in range(3)]
    boards[1].play(40)
    together = evaluate(boards, playouts=32, seed=1)
    alone = evaluate([boards[1]], playouts=32, seed=1, start_index=1)
    np.testing.assert_array_equal(together["ownership"][1], alone["ownership"][0])
    assert together["win_rate"][1] == alone["win_rate"][0]


def test_same_rows_on_one_and_on_four_devices(tmp_path):
    """This process has one CPU device; a process started with four writes the same bytes."""
    import jax
    games = [str(DATA / "game_a.sgf"), str(DATA / "game_b.sgf")]
    script = ("import sys, json, jax; from gojax.evaluate import run_evaluate; "
              "assert jax.device_count() == 4, jax.devices(); "
              f"run_evaluate({games!r}, sys.argv[1], playouts=16, batch=8, progress=False)")
    one, four = tmp_path / "d1.jsonl", tmp_path / "d4.jsonl"
    assert jax.device_count() == 1
    run_evaluate(games, str(one), playouts=16, batch=8, progress=False)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", script, str(four)], check=True, env=env, timeout=600)
    assert four.read_bytes() == one.read_bytes() and one.read_bytes().count(b"\n") == 31 + 13  # every position


def test_resume_and_byte_identical_reruns(tmp_path):
    out = tmp_path / "rows.jsonl"
    run_evaluate([str(DATA / "game_b.sgf")], str(out), playouts=16, batch=4, progress=False)
    full = out.read_bytes()
    lines = full.splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:5]) + lines[5][:20])  # a run killed mid-row
    written = run_evaluate([str(DATA / "game_b.sgf")], str(out), playouts=16, batch=4, progress=False)
    assert written == len(lines) - 5 and out.read_bytes() == full
    rows = [json.loads(line) for line in full.splitlines()]
    assert [r["move"] for r in rows] == list(range(13)) and rows[0]["to_play"] == "B"
    assert rows[1]["to_play"] == "W" and rows[1]["win_rate_for"] == "B"  # Black's view, named in the row


def test_cli_csv_and_plot(tmp_path):
    out, plots = tmp_path / "rows.csv", tmp_path / "plots"
    subprocess.run([sys.executable, "-m", "gojax", "evaluate", str(DATA / "game_b.sgf"), "--playouts", "8",
                    "--batch", "5", "--out", str(out), "--plot", str(plots), "--no-progress"], check=True, timeout=300)
    header, first = out.read_text().splitlines()[:2]
    assert header.startswith("file,move,to_play,win_rate") and header.endswith(",win_rate_for")
    assert first.endswith(",B")
    # One map per game, of its last position, however many batches the game spans (13 positions, 3 batches).
    assert sorted(p.name for p in plots.iterdir()) == ["game_b_move12.png"]


def test_search_on_four_devices_equals_one_device():
    """A round's rows split over the devices (3 leaves: padded to 4), poolRave rows with them:
    a process with four CPU devices finds what this one (one device) finds."""
    import jax

    from gojax import Board, Search, SearchParams
    script = ("import sys, jax; from gojax import Board, Search, SearchParams; "
              "assert jax.device_count() == 4; "
              "p = SearchParams(leaves=3, playouts_per_leaf=8, seed=3, pool_prob=0.5, pool_min_visits=24); "
              "r = Search(Board(7), p).run(simulations=480, stop_early=False); "
              "print([(m.move, m.visits) for m in r.moves[:8]], r.value)")
    assert jax.device_count() == 1
    p = SearchParams(leaves=3, playouts_per_leaf=8, seed=3, pool_prob=0.5, pool_min_visits=24)
    r = Search(Board(7), p).run(simulations=480, stop_early=False)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    four = subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=600, capture_output=True,
                          text=True).stdout
    assert four.strip() == f"{[(m.move, m.visits) for m in r.moves[:8]]} {r.value}"


@pytest.mark.slow
def test_two_processes_with_jax_distributed_write_the_rows_of_one(tmp_path):
    """jax.distributed on one machine (a local coordinator, CPU collectives over gloo): each
    process plays its device's share of every batch, process 0 writes, and the rows are the
    bytes one process writes for the same seed."""
    import socket
    with socket.socket() as s:
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    games = [str(DATA / "game_a.sgf"), str(DATA / "game_b.sgf")]
    script = ("import sys, jax; jax.config.update('jax_cpu_collectives_implementation', 'gloo'); "
              "jax.distributed.initialize(coordinator_address='localhost:' + sys.argv[3], num_processes=2, "
              "process_id=int(sys.argv[2])); assert jax.device_count() == 2 and jax.process_count() == 2; "
              "from gojax.evaluate import run_evaluate; "
              f"run_evaluate({games!r}, sys.argv[1], playouts=16, batch=8, progress=False)")
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=1")
    two = tmp_path / "two.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", script, str(two), str(i), str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in (0, 1)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()[-2000:]
    one = tmp_path / "one.jsonl"
    run_evaluate(games, str(one), playouts=16, batch=8, progress=False)
    assert two.read_bytes() == one.read_bytes() and one.read_bytes().count(b"\n") == 31 + 13
