import time, numpy as np, jax
from gojax.search.device import Simulator
from gojax.search.params import SearchParams
from gojax.kernels.host import Board
from gojax.kernels.state import packed_fields
p = SearchParams().for_size(9)
sim = Simulator(p)
b = Board(9)
import random
random.seed(0)
for _ in range(20):
    pts = b.legal_points(); b.play(random.choice(pts))
rows = packed_fields([b]*8)
for n in (1,2,4,8):
    sim.verdicts_now(rows[:n])
    ts=[]
    for _ in range(30):
        t=time.perf_counter(); sim.verdicts_now(rows[:n]); ts.append(time.perf_counter()-t)
    print(n, "%.3f ms" % (1e3*np.median(ts)))
