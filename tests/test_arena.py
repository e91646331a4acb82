"""The batched arena plays the games that `gojax match` plays between processes: gojax against gojax, or
against GNU Go and other GTP engines in their own processes (which forfeit their own games only)."""

import dataclasses
import io
import pathlib
import sys

import pytest

from gojax.arena import ArenaEngine, ExternalEngine, engine_from_command, run_arena
from gojax.engine_config import EngineConfig
from gojax.match import EngineFailure, MatchConfig, load_results, run_match
from gojax.search.params import SearchParams
from gojax.sgf import load_sgf
from tests.helpers import gnugo_path

PARAMS = SearchParams(leaves=4, playouts_per_leaf=4)
ENGINES = (ArenaEngine("gojax-64", EngineConfig(PARAMS, 64)), ArenaEngine("gojax-32", EngineConfig(PARAMS, 32)))


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
    summary = run_arena(*ENGINES, arena_cfg,
                        parallel=2, progress=False)
    by_gtp = {r["game"]: r for r in load_results(str(tmp_path / "gtp" / "results.jsonl"))}
    by_arena = {r["game"]: r for r in load_results(str(tmp_path / "arena" / "results.jsonl"))}
    assert sorted(by_arena) == [0, 1] and summary["games"] == 2
    for game in (0, 1):
        assert moves_of(tmp_path / "arena", by_arena[game]) == moves_of(tmp_path / "gtp", by_gtp[game])
        assert by_arena[game]["result"] == by_gtp[game]["result"]
        assert (by_arena[game]["black"], by_arena[game]["white"]) == (by_gtp[game]["black"], by_gtp[game]["white"])
    more = dataclasses.replace(arena_cfg, games=3)  # resumes: only game 2 is played
    run_arena(*ENGINES, more, progress=False)
    assert [r["game"] for r in load_results(str(tmp_path / "arena" / "results.jsonl"))] == [0, 1, 2]


@pytest.mark.parametrize("opening", [False, True])
def test_against_gnugo_the_arena_plays_the_games_of_gtp_processes(tmp_path, opening):
    """gojax's moves batched in one forest, GNU Go in a process per game: the same games, move
    for move, as `gojax match` between two processes (both engines are deterministic for a seed);
    with an opening too, each engine told its moves first."""
    referee = f"{gnugo_path()} --mode gtp --chinese-rules"
    gnugo = f"{gnugo_path()} --mode gtp --level 1 --chinese-rules"
    openings = ()
    if opening:
        (tmp_path / "open.sgf").write_text("(;FF[4]GM[1]SZ[5]KM[3.5];B[cc];W[bd])")
        openings = (str(tmp_path / "open.sgf"),)
    cfg = MatchConfig(engine_a=gtp(32), engine_b=gnugo, games=2, size=5, komi=3.5, out=str(tmp_path / "gtp"),
                      gnugo=referee, name_a="gojax-32", name_b="gnugo", openings=openings)
    run_match(cfg, progress=False, jobs=2)
    arena_cfg = dataclasses.replace(cfg, out=str(tmp_path / "arena"))
    a, b = engine_from_command("gojax-32", gtp(32)), engine_from_command("gnugo", gnugo)
    assert isinstance(a, ArenaEngine) and a.config.simulations == 32 and a.params.leaves == 4
    assert isinstance(b, ExternalEngine)
    run_arena(a, b, arena_cfg, parallel=2, progress=False)
    by_gtp = {r["game"]: r for r in load_results(str(tmp_path / "gtp" / "results.jsonl"))}
    by_arena = {r["game"]: r for r in load_results(str(tmp_path / "arena" / "results.jsonl"))}
    for game in (0, 1):
        assert moves_of(tmp_path / "arena", by_arena[game]) == moves_of(tmp_path / "gtp", by_gtp[game])
        assert by_arena[game]["result"] == by_gtp[game]["result"]
        assert by_arena[game]["commands"]["gnugo"] == by_gtp[game]["commands"]["gnugo"]  # the same per-game seed
        assert by_arena[game].get("opening") == by_gtp[game].get("opening") == (openings[0] if opening else None)
        if opening:
            assert moves_of(tmp_path / "arena", by_arena[game])[:2] == [(1, 12), (2, 6)]  # C3, B2


BROKEN = f"{sys.executable} {pathlib.Path(__file__).parent / 'engines' / 'broken_engine.py'}"


def test_the_progress_bar_shows_the_group_in_play_move_by_move(tmp_path):
    # results.jsonl gets a group only when its last game ends: the bar tells how far it is
    log = io.StringIO()
    cfg = MatchConfig(engine_a="a", engine_b="b", games=2, size=5, komi=3.5, out=str(tmp_path),
                      gnugo=f"{gnugo_path()} --mode gtp --chinese-rules", name_a="gojax-64", name_b="gojax-32")
    run_arena(*ENGINES, cfg, parallel=2, log=log)
    shown = log.getvalue()
    assert "group of 2: moves 1-1, 0 ended" in shown and ", 2 ended" in shown
    assert len(load_results(str(tmp_path / "results.jsonl"))) == 2


def test_an_external_engine_that_crashes_forfeits_its_game_only(tmp_path):
    referee = f"{gnugo_path()} --mode gtp --chinese-rules"
    cfg = MatchConfig(engine_a=gtp(16), engine_b=f"{BROKEN} crash", games=2, size=5, out=str(tmp_path),
                      gnugo=referee, name_a="gojax", name_b="broken", move_timeout=10)
    summary = run_arena(engine_from_command("gojax", gtp(16)), ExternalEngine("broken", f"{BROKEN} crash"), cfg,
                        parallel=2, progress=False)
    records = load_results(str(tmp_path / "results.jsonl"))
    assert len(records) == 2 and all(r["forfeit"] and r["winner"] == "gojax" for r in records)
    assert summary["forfeits"] == {"gojax": 0, "broken": 2}
    cfg_first = dataclasses.replace(cfg, out=str(tmp_path / "first"), engine_b=f"{BROKEN} crash-first")
    with pytest.raises(EngineFailure, match="broken_engine: crashing"):  # broken, not beaten: the run stops
        run_arena(engine_from_command("gojax", gtp(16)), ExternalEngine("broken", f"{BROKEN} crash-first"),
                  cfg_first, parallel=2, progress=False)
    assert load_results(str(tmp_path / "first" / "results.jsonl")) == []


def test_scaling_plays_a_point_in_the_arena(tmp_path, capsys):
    from gojax.cli import main
    out = tmp_path / "s"
    assert main(["scaling", "--study", "selfplay", "--n", "16", "--games", "2", "--size", "5", "--parallel-games", "2",
                 "--engine-options", "--leaves 4 --playouts-per-leaf 4", "--out", str(out), "--no-progress"]) == 0
    rows = load_results(str(out / "selfplay_32_vs_16" / "results.jsonl"))
    assert len(rows) == 2 and rows[0]["commands"]["gojax-32"].startswith("arena: ")
    assert (out / "scaling.csv").exists()
    # Two arena processes of one game each play the same games
    two = tmp_path / "two"
    assert main(["scaling", "--study", "selfplay", "--n", "16", "--games", "2", "--size", "5", "--parallel-games", "1",
                 "--jobs", "2", "--engine-options", "--leaves 4 --playouts-per-leaf 4", "--out", str(two),
                 "--no-progress"]) == 0
    by_one = {r["game"]: r for r in rows}
    by_two = {r["game"]: r for r in load_results(str(two / "selfplay_32_vs_16" / "results.jsonl"))}
    assert sorted(by_two) == [0, 1]
    for game in (0, 1):
        assert moves_of(two / "selfplay_32_vs_16", by_two[game]) == moves_of(out / "selfplay_32_vs_16", by_one[game])
        assert by_two[game]["result"] == by_one[game]["result"]
    assert main(["match", "--black", gtp(16) + " --seconds 1", "--white", gtp(16), "--parallel-games", "2",
                 "--out", str(tmp_path / "m")]) == 2  # the arena plays by simulations
    assert "--seconds" in capsys.readouterr().err


def test_gojax_match_parallel_games_against_gnugo(tmp_path):
    from gojax.cli import main
    gnugo = f"{gnugo_path()} --mode gtp --level 1 --chinese-rules"
    out = tmp_path / "m"
    assert main(["match", "--black", gtp(16), "--white", gnugo, "--games", "2", "--size", "5", "--alternate",
                 "--parallel-games", "2", "--name-black", "gojax", "--name-white", "gnugo", "--out", str(out),
                 "--no-progress"]) == 0
    rows = load_results(str(out / "results.jsonl"))
    assert [r["black"] for r in rows] == ["gojax", "gnugo"] and all(not r["forfeit"] for r in rows)
    assert rows[0]["commands"]["gojax"].startswith("arena: ") and "--seed 2" in rows[1]["commands"]["gnugo"]


def test_a_bad_gojax_setting_in_an_arena_command_is_a_value_error_naming_it():
    """A library reading `gojax gtp` commands gets ValueError (the match prints it), not SystemExit."""
    with pytest.raises(ValueError, match="--resign-threshold must be in"):
        engine_from_command("a", "gojax gtp --resign-threshold 2")
    with pytest.raises(ValueError, match="policy model /no/model.npz: no such file"):
        engine_from_command("a", "gojax gtp --prior learnt --prior-model /no/model.npz")
