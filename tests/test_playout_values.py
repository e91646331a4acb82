"""bench/playout_values.py: playout values against a teacher's, on balance-policy's held-out positions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.playout_values import measure, playout_values
from bench.step_parts import parse_setting
from gojax.learn_policy import balance_positions, balance_split

DATA = Path(__file__).parent / "data" / "teacher_small.npz"  # 6 games, bench/teacher_data.py's format
VALUES = Path(__file__).parent / "data" / "teacher_small_values.npz"  # KataGo values of 8 of its positions


def test_the_error_is_measured_on_balance_policys_held_out_positions():
    r = measure(str(VALUES), str(DATA), (0.0, 1.0), 4, ["uniform:policy=uniform"], seed=3, held_out=0.5)
    packed, target, _ = balance_positions(str(DATA), str(VALUES))
    test = balance_split(len(target), 0.5, 0)[0]
    assert r["positions"] == len(test) == 4
    v = playout_values(packed[test], parse_setting("uniform:policy=uniform")[1], 4, seed=3)
    assert set(np.unique(v * 4)) <= {0, 1, 2, 3, 4}  # means of 4 outcomes (no ties at komi 7.5)
    assert r["settings"]["uniform"]["mse"] == pytest.approx(float(((v - target[test]) ** 2).mean()))
    assert r["teacher_variance"] == pytest.approx(float(target[test].var()))


def test_a_value_range_that_holds_no_position_is_a_clear_error():
    with pytest.raises(ValueError, match="no position's value"):
        measure(str(VALUES), str(DATA), (0.4, 0.4), 4, ["mogo"])
