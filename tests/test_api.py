"""The public API: what README and gojax/__init__.py promise works as written."""

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
