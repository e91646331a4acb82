"""Host memory per node of a G = 64 forest (1,000 simulations a tree) from move N of three arena
games: tracemalloc over the forest's construction and search.  `python memory.py N`, run from a
checkout (PYTHONPATH=checkout for another commit's code)."""

import dataclasses
import gc
import sys
import tracemalloc

import gojax.bench as gb
from gojax.search.forest import Forest
from gojax.search.params import SearchParams

GAMES = "bench/results/forest/selfplay_1000_arena/selfplay_2000_vs_1000/games"


def forest(boards):
    return Forest(boards, [dataclasses.replace(SearchParams(), seed=i) for i in range(len(boards))])


def main() -> None:
    move = int(sys.argv[1])
    pos = gb.record_positions([f"{GAMES}/game{n}.sgf" for n in ("0041", "0061", "0087")], move)
    boards = [pos[i % len(pos)] for i in range(64)]
    forest(boards).run(64)  # compiled before the measurement
    tracemalloc.start()
    f = forest(boards)
    f.run(1000)
    gc.collect()
    cur, peak = tracemalloc.get_traced_memory()
    nodes = sum(s.tree.num_nodes for s in f.searches)
    print(f"move {move}: {nodes} nodes, traced {cur / 1e6:.1f} MB now, {peak / 1e6:.1f} MB peak, "
          f"{cur / nodes:.0f} bytes per node")


if __name__ == "__main__":
    main()
