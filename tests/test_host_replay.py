"""bench/host_replay.py and bench/host_ab.py: the host-cost benchmarks run end to end."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAME = os.path.join(ROOT, "bench", "results", "strength", "pachi_3000_m25", "games", "game0000.sgf")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu")
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_host_ab_replays_one_checkout_against_itself_pair_by_pair(tmp_path):
    """Two copies of this checkout, each recording and then replaying (a replay that built another
    tree would stop the run), alternating; one JSON line with both sides' replays and the ratios.
    The positions are a real record's after 20 moves (--sgf)."""
    out = tmp_path / "ab.jsonl"
    proc = _run("bench/host_ab.py", ".", ".", "--pairs", "2", "--cpu", "-1", "--json", str(out), "--",
                "--trees", "2", "--simulations", "16", "--sgf", GAME, "--move", "20")
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = json.loads(out.read_text().splitlines()[-1])
    assert row["pairs"] == 2 and len(row["base_ms_per_leaf"]) == 2 and len(row["new_ms_per_leaf"]) == 2
    assert all(ms > 0 for ms in row["base_ms_per_leaf"] + row["new_ms_per_leaf"])
    ratios = sorted(b / a for a, b in zip(row["base_ms_per_leaf"], row["new_ms_per_leaf"]))  # pair by pair
    assert (row["ratio_min"], row["ratio_median"], row["ratio_max"]) == (ratios[0], statistics.median(ratios),
                                                                          ratios[-1])
    assert row["base_fastest"] == min(row["base_ms_per_leaf"]) and row["new_fastest"] == min(row["new_ms_per_leaf"])
    assert row["ratio_fastest"] == row["new_fastest"] / row["base_fastest"]
    assert "B / A pair by pair" in proc.stdout and "fastest replays" in proc.stdout


def test_host_replay_names_an_unreadable_record_and_stops():
    proc = _run("bench/host_replay.py", "--sgf", "no/such/game.sgf")
    assert proc.returncode != 0
    assert "no/such/game.sgf" in proc.stderr and "Traceback" not in proc.stderr


def test_host_replay_idle_series_times_the_same_work_without_its_sleep():
    """--idle S replays the same forest again with S seconds of sleep before each round's results:
    a series of its own with its ratio to the plain replays, its host work counted without the
    sleep (half a second per round here: counted, the figure would be half a second or more; the
    work of these tiny forests is a small fraction of that)."""
    proc = _run("bench/host_replay.py", "--trees", "2", "--simulations", "16", "--replays", "2", "--idle", "0.5")
    assert proc.returncode == 0, proc.stderr[-2000:]
    idle = next(line for line in proc.stdout.splitlines() if line.startswith("idle 0.5 s per round: "))
    assert float(idle.split("host work ")[1].split(" s per forest")[0]) < 0.5
    assert "CPU per leaf over the base's, replay by replay" in proc.stdout
