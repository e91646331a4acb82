"""bench/kernel_ab.py: another checkout's kernels built beside this one's, in one process."""

from __future__ import annotations

import pathlib

import jax
import numpy as np
import pytest

from bench.kernel_ab import base_kernels, main
from gojax.kernels import policy, rules
from gojax.kernels.host import Board
from gojax.kernels.state import batch_from_host

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_base_kernels_are_modules_of_their_own_that_call_each_other():
    base = base_kernels(str(ROOT))
    assert base["rules"] is not rules and base["policy"] is not policy
    assert base["policy"].rules is base["rules"]  # `from gojax.kernels import rules` re-pointed
    assert base["playout"].policy is base["policy"] and base["playout"].rules is base["rules"]
    assert base["playout"].select_uniform is base["policy"].select_uniform  # a name imported from policy


def test_the_base_kernels_play_by_the_same_rules_here():
    base = base_kernels(str(ROOT))
    board = Board(5)
    for move in ("C3", "B3", "D3", "C2", "C4"):
        board.play(board.geometry.from_gtp(move))
    state = batch_from_host([board])
    ours = jax.vmap(rules.legal_mask)(state)
    theirs = jax.vmap(base["rules"].legal_mask)(state)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_a_folder_without_kernels_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="must be a gojax checkout"):
        main([str(tmp_path), "--rounds", "1"])
