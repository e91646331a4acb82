"""`gojax analyze`: a search per position, many trees at once, resumable and byte-identical."""

import json
import pathlib

from gojax.analyze import run_analyze
from gojax.search.params import SearchParams

GAME = str(pathlib.Path(__file__).parent / "data" / "game_b.sgf")
PARAMS = SearchParams(leaves=4, playouts_per_leaf=4, seed=3)


def test_rows_do_not_depend_on_the_forest_size_and_a_killed_run_resumes(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run_analyze([GAME], str(a), simulations=32, params=PARAMS, trees=8, playouts=16, progress=False)
    run_analyze([GAME], str(b), simulations=32, params=PARAMS, trees=3, playouts=16, progress=False)
    assert a.read_bytes() == b.read_bytes()
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    assert [r["move"] for r in rows] == list(range(13))  # the start and the 12 moves of game_b
    first = rows[0]
    assert first["best_move"] == first["pv"][0] == first["top_moves"][0]["move"] and first["simulations"] == 32
    assert len(first["ownership"]) == 81 and 0 <= first["search_win_rate"] <= 1
    lines = a.read_text().splitlines(keepends=True)
    a.write_text("".join(lines[:5]) + lines[5][:20])  # killed while writing row 5
    assert run_analyze([GAME], str(a), simulations=32, params=PARAMS, trees=8, playouts=16, progress=False) == 8
    assert a.read_bytes() == b.read_bytes()


def test_worker_processes_write_the_same_rows_in_order(tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    run_analyze([GAME], str(one), simulations=16, params=PARAMS, trees=4, playouts=8, progress=False)
    two.write_text("".join(one.read_text().splitlines(keepends=True)[:2]))  # a run killed after row 2
    # positions 2-12 in batches of 4: [2..5], [6..9], [10..12] over two workers, written in order
    assert run_analyze([GAME], str(two), simulations=16, params=PARAMS, trees=4, playouts=8, progress=False,
                       jobs=2, cpu_threads=1) == 11
    assert two.read_bytes() == one.read_bytes()
