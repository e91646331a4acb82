"""bench/step_parts.py: a playout step's time under settings that leave parts out."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from bench.step_parts import main, midgame_boards, parse_setting

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_a_setting_names_playout_config_fields_over_mogo_defaults():
    name, cfg = parse_setting("no_save:save_prob=0,cycle_window=0")
    assert name == "no_save" and cfg.policy == "mogo" and cfg.save_prob == 0.0 and cfg.cycle_window == 0
    assert parse_setting("uniform:policy=uniform")[1].policy == "uniform"
    assert parse_setting("mogo")[1] == parse_setting("mogo:")[1]


@pytest.mark.parametrize("text", ["x:save=0", "x:save_prob", "x:cycle_window=many"])
def test_a_bad_setting_is_a_clear_error(text):
    with pytest.raises(ValueError, match="--setting"):
        parse_setting(text)


def test_the_boards_hold_the_share_of_stones_asked_for():
    boards = midgame_boards(9, 3, 0.2, seed=1)
    assert [int((b.stones != 0).sum()) >= 17 for b in boards] == [True] * 3
    assert [b.stones.tolist() for b in boards] == [b.stones.tolist() for b in midgame_boards(9, 3, 0.2, seed=1)]


def test_every_setting_runs_the_same_loop_iterations():
    # as a user runs it: its own process (and XLA compiles it outside the suite's state)
    out = subprocess.run([sys.executable, "bench/step_parts.py", "--board", "9", "--batch", "4", "--repeats", "1",
                          "--stones", "0.1", "--setting", "mogo", "--setting", "uniform:policy=uniform", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, check=True).stdout
    r = json.loads(out.splitlines()[-1])
    # the caps 81 // 8 and 81 // 4: no playout from 8 stones ends sooner
    assert r["iterations"] == {"mogo": [10, 20], "uniform": [10, 20]}
    assert r["vs_first"]["mogo"] == 1.0 and set(r["us_per_step"]) == {"mogo", "uniform"}  # no timing asserted
    assert "uniform" in out.splitlines()[-2]


def test_bad_numbers_are_refused_before_any_work():
    with pytest.raises(SystemExit):
        main(["--stones", "1.5"])
