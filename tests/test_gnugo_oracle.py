"""GNU Go as the external rules oracle for the host twin.

Random games (including captures, ko fights and passes) are played on the host twin and in
`gnugo --mode gtp --chinese-rules --positional-superko`; after every move the stones
(`list_stones`) and the legal moves of the side to play (`all_legal`) must agree.
"""

import numpy as np
import pytest

from gojax.gtp_client import GtpClient
from gojax.kernels.geometry import BLACK
from gojax.kernels.host import Board
from tests.helpers import gnugo_path


def vertices(board, points):
    return sorted(board.geometry.to_gtp(p) for p in points)


@pytest.mark.parametrize("size, moves, seed", [(5, 80, 0), (7, 120, 1), (9, 160, 2)])
def test_host_twin_agrees_with_gnugo(size, moves, seed):
    rng = np.random.default_rng(seed)
    b = Board(size)
    cmd = [gnugo_path(), "--mode", "gtp", "--chinese-rules", "--positional-superko"]
    with GtpClient(cmd) as gnugo:
        gnugo.send(f"boardsize {size}")
        gnugo.send("clear_board")
        for t in range(moves):
            color = "black" if b.to_play == BLACK else "white"
            legal = b.legal_points()
            assert sorted(gnugo.send(f"all_legal {color}").split()) == vertices(b, legal), f"move {t}\n{b}"
            p = None if (not legal or rng.random() < 0.02) else int(rng.choice(legal))
            b.play(p)
            gnugo.send(f"play {color} {b.geometry.to_gtp(p)}")
            for who, c in (("black", 1), ("white", 2)):
                assert sorted(gnugo.send(f"list_stones {who}").split()) == vertices(b, np.flatnonzero(b.stones == c))
            if b.game_over:
                break
