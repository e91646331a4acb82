"""The batched arena plays the games that two `gojax gtp` processes play under `gojax match`."""

import dataclasses
import sys

from gojax.arena import ArenaEngine, run_arena
from gojax.match import MatchConfig, load_results, run_match
from gojax.search.params import SearchParams
from gojax.sgf import load_sgf
from tests.helpers import gnugo_path

PARAMS = SearchParams(leaves=4, playouts_per_leaf=4)


def gtp(simulations: int) -> str:
    return (f"{sys.executable} -m gojax gtp --quiet --no-warmup --leaves 4 --playouts-per-leaf 4 "
            f"--simulations {simulations}")


def moves_of(folder, record):
    _, info = load_sgf((folder / record["sgf"]).read_bytes())
    return info["moves"]


def test_arena_games_are_the_games_of_gtp_processes(tmp_path):
    referee = f"{gnugo_path()} --mode gtp --chinese-rules"
    cfg = MatchConfig(engine_a=gtp(64), engine_b=gtp(32), games=2, size=5, komi=3.5, out=str(tmp_path / "gtp"),
                      gnugo=referee, name_a="gojax-64", name_b="gojax-32")
    run_match(cfg, progress=False)
    arena_cfg = dataclasses.replace(cfg, out=str(tmp_path / "arena"))
    summary = run_arena(ArenaEngine("gojax-64", 64, PARAMS), ArenaEngine("gojax-32", 32, PARAMS), arena_cfg,
                        parallel=2, progress=False)
    by_gtp = {r["game"]: r for r in load_results(str(tmp_path / "gtp" / "results.jsonl"))}
    by_arena = {r["game"]: r for r in load_results(str(tmp_path / "arena" / "results.jsonl"))}
    assert sorted(by_arena) == [0, 1] and summary["games"] == 2
    for game in (0, 1):
        assert moves_of(tmp_path / "arena", by_arena[game]) == moves_of(tmp_path / "gtp", by_gtp[game])
        assert by_arena[game]["result"] == by_gtp[game]["result"]
        assert (by_arena[game]["black"], by_arena[game]["white"]) == (by_gtp[game]["black"], by_gtp[game]["white"])
    more = dataclasses.replace(arena_cfg, games=3)  # resumes: only game 2 is played
    run_arena(ArenaEngine("gojax-64", 64, PARAMS), ArenaEngine("gojax-32", 32, PARAMS), more, progress=False)
    assert [r["game"] for r in load_results(str(tmp_path / "arena" / "results.jsonl"))] == [0, 1, 2]


def test_scaling_plays_a_point_in_the_arena(tmp_path, capsys):
    from gojax.cli import main
    out = tmp_path / "s"
    assert main(["scaling", "--study", "selfplay", "--n", "16", "--games", "2", "--size", "5", "--parallel-games", "2",
                 "--engine-options", "--leaves 4 --playouts-per-leaf 4", "--out", str(out), "--no-progress"]) == 0
    rows = load_results(str(out / "selfplay_32_vs_16" / "results.jsonl"))
    assert len(rows) == 2 and rows[0]["commands"]["gojax-32"].startswith("arena: ")
    assert (out / "scaling.csv").exists()
    assert main(["scaling", "--study", "gnugo", "--n", "16", "--parallel-games", "2", "--out", str(out)]) == 2
    assert "--study selfplay" in capsys.readouterr().err
