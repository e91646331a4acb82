"""Time Simulator.verdicts_now (the default 9x9 prior, a position after 20 random moves) for 1, 2, 4 and 8
boards: medians of 30 calls after one to compile.  Run from the repository root."""

import random
import time

import numpy as np

from gojax.kernels.host import Board
from gojax.kernels.state import packed_fields
from gojax.search.device import Simulator
from gojax.search.params import SearchParams

sim = Simulator(SearchParams().for_size(9))
board = Board(9)
random.seed(0)
for _ in range(20):
    board.play(random.choice(board.legal_points()))
rows = packed_fields([board] * 8)
for n in (1, 2, 4, 8):
    sim.verdicts_now(rows[:n])
    times = []
    for _ in range(30):
        t = time.perf_counter()
        sim.verdicts_now(rows[:n])
        times.append(time.perf_counter() - t)
    print(n, "%.3f ms" % (1e3 * np.median(times)))
