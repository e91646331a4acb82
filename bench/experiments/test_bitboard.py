"""The bitboard layout (bench/experiments/bitboard.py) plays the same Go as the host twin."""

import jax
import numpy as np
import pytest

from bench.experiments.bitboard import Layout, bitboard_playouts, empty_bitboards, to_points
from gojax.kernels.geometry import BLACK, WHITE
from gojax.kernels.host import Board


@pytest.mark.parametrize("size,batch", [(5, 64), (9, 32)])
def test_bitboard_playouts_replay_on_the_host(size, batch):
    z, moves, hist, final = bitboard_playouts(empty_bitboards(size, batch), jax.random.PRNGKey(3), size,
                                              record_moves=True)
    hist, moves, z = np.asarray(hist), np.asarray(moves), np.asarray(z)
    captures = 0
    for i in range(batch):
        board = Board(size)
        for p in hist[i][hist[i] > -2]:
            if p >= 0:
                assert not board.is_eye(int(p), board.to_play)
                captures += len(board.play(int(p), superko=False))  # raises if illegal
            else:  # a pass: nothing but own eyes and illegal points was left
                mover = board.to_play
                ok = [q for q in board.legal_points(superko=False) if not board.is_eye(q, mover)]
                assert ok == [], (i, board)
                board.play(None)
        assert len(board.moves) == moves[i]
        assert np.array_equal(to_points(final.black[i], size), board.stones == BLACK)
        assert np.array_equal(to_points(final.white[i], size), board.stones == WHITE)
        expected = 1.0 if board.score() > 0 else 0.0 if board.score() < 0 else 0.5
        assert z[i] == expected
    assert captures > 0  # the replay exercised captures


def test_layout_sizes():
    assert Layout(9).words == 3 and Layout(19).words == 12
