"""The match runner against real processes: gojax and GNU Go over GTP, resume after a kill,
and forfeits by engines that crash, hang or play illegal moves."""

import dataclasses
import json
import math
import pathlib
import sys

import pytest

from gojax.match import (
    EngineFailure,
    MatchConfig,
    ResumeError,
    format_summary,
    json_safe,
    load_results,
    play_game,
    run_match,
    safe_path,
    start_engine,
    summarize,
    wilson,
)
from tests.helpers import gnugo_path

GOJAX = f"{sys.executable} -m gojax gtp --simulations 64 --leaves 4 --playouts-per-leaf 8 --quiet --no-warmup"
BROKEN = f"{sys.executable} {pathlib.Path(__file__).parent / 'engines' / 'broken_engine.py'}"


def gnugo(level=1):
    return f"{gnugo_path()} --mode gtp --level {level} --chinese-rules"


def test_gojax_plays_gnugo_through_gtp(tmp_path):
    cfg = MatchConfig(engine_a=GOJAX, engine_b=gnugo(), games=1, size=7, out=str(tmp_path), max_moves=40,
                      gnugo=gnugo(), name_a="gojax", name_b="gnugo")
    rec = play_game(cfg, 0)
    assert rec["black"] == "gojax" and rec["moves"] > 10
    assert rec["winner"] in ("gojax", "gnugo", None) and "forfeit" not in rec["reason"]
    sgf = (tmp_path / rec["sgf"]).read_bytes()
    from gojax.sgf import load_sgf
    board, info = load_sgf(sgf)
    assert len(info["moves"]) == rec["moves"] and info["result"] == rec["result"]


def test_a_killed_run_resumes_without_losing_games(tmp_path):
    cfg = MatchConfig(engine_a=gnugo(1), engine_b=gnugo(2), games=3, size=5, out=str(tmp_path),
                      gnugo=gnugo(), name_a="g1", name_b="g2")
    path = tmp_path / "results.jsonl"
    first = play_game(cfg, 0)
    path.write_text(json.dumps(first) + "\n" + '{"game": 1, "bl')  # killed while writing game 1
    summary = run_match(cfg, progress=False, jobs=2)
    records = load_results(str(path))
    assert sorted(r["game"] for r in records) == [0, 1, 2] and summary["games"] == 3
    assert records[0] == first  # the finished game was kept, not replayed
    renamed = dataclasses.replace(cfg, games=4, name_b="someone-else")
    with pytest.raises(ResumeError, match="g1 and g2"):  # resuming another pairing's folder
        run_match(renamed, progress=False)
    assert load_results(str(path)) == records  # refused before touching the results
    # The same names with another engine behind one of them: refused, naming the change, unless --force.
    stronger = dataclasses.replace(cfg, games=4, engine_b=gnugo(3))
    with pytest.raises(ResumeError, match="engine_b: .*level 2.* -> .*level 3"):
        run_match(stronger, progress=False)
    assert load_results(str(path)) == records
    assert run_match(dataclasses.replace(stronger, force=True), progress=False)["games"] == 4
    assert json.loads((tmp_path / "match.json").read_text())["engine_b"] == gnugo(3)


@pytest.mark.parametrize("mode, words", [("illegal", "illegal move"), ("crash", "forfeits"), ("hang", "forfeits")])
def test_broken_engines_forfeit_and_forfeits_are_not_results(tmp_path, mode, words):
    cfg = MatchConfig(engine_a=f"{BROKEN} {mode}", engine_b=gnugo(), games=2, size=5, out=str(tmp_path),
                      gnugo=gnugo(), move_timeout=3, name_a="broken", name_b="gnugo")
    summary = run_match(cfg, progress=False)
    records = load_results(str(tmp_path / "results.jsonl"))
    assert len(records) == 2 and all(r["forfeit"] and r["result"].endswith("+F") for r in records)
    assert any(words in r["reason"] for r in records)
    assert summary["games"] == 0 and summary["forfeits"] == {"broken": 2, "gnugo": 0}
    assert "forfeits (not counted above): broken 2, gnugo 0" in format_summary(summary, "broken", "gnugo")


def test_an_engine_that_missed_its_time_limit_is_killed_at_once_on_close():
    """A hung engine still owes its reply, so it cannot be asked to quit: close() kills it
    rather than waiting twice for a `quit` it never reads."""
    import time

    from gojax.gtp_client import GtpClient, GtpEngineError
    client = GtpClient(f"{BROKEN} hang")
    assert client.send("boardsize 5") == "" and not client.timed_out
    with pytest.raises(GtpEngineError, match="no reply within the time limit"):
        client.send("genmove b", timeout=0.5)
    start = time.monotonic()
    client.close()
    assert client.timed_out and client.proc.poll() is not None and time.monotonic() - start < 2.0


@pytest.mark.parametrize("mode, words", [("nostart", "ModuleNotFoundError"), ("crash-first", "broken_engine: crashing")])
def test_an_engine_that_dies_before_its_first_move_stops_the_match_with_its_error(tmp_path, mode, words):
    cfg = MatchConfig(engine_a=gnugo(), engine_b=f"{BROKEN} {mode}", games=4, size=5, out=str(tmp_path),
                      gnugo=gnugo(), name_a="gnugo", name_b="broken")
    for jobs in (1, 2):
        with pytest.raises(EngineFailure, match=words):
            run_match(cfg, progress=False, jobs=jobs)
    assert load_results(str(tmp_path / "results.jsonl")) == []  # no game is scored for anyone


def test_a_mistyped_engine_exits_non_zero_with_one_line(tmp_path, capsys):
    from gojax.cli import main
    code = main(["match", "--black", gnugo(), "--white", "gnugoo --mode gtp", "--games", "2", "--size", "5",
                 "--out", str(tmp_path / "m" / "n"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot start 'gnugoo --mode gtp" in err and "No such file" in err and "Elo" not in capsys.readouterr().out
    assert not (tmp_path / "m").exists()  # a run that saved nothing leaves no folder behind


def test_a_gojax_folder_in_the_working_directory_cannot_shadow_the_engine(tmp_path, monkeypatch):
    (tmp_path / "gojax").mkdir()  # a clone's parent directory holds the repository folder `gojax`
    monkeypatch.chdir(tmp_path)
    assert safe_path(f"{sys.executable} -m gojax gtp --quiet").split()[1] == "-P"
    engine = start_engine(f"{sys.executable} -m gojax gtp --quiet --no-warmup", 5, 7.5)
    try:
        assert engine.send("name") == "gojax"
    finally:
        engine.close()


def test_summary_statistics():
    recs = [{"game": i, "black": "a" if i % 2 == 0 else "b", "white": "b" if i % 2 == 0 else "a",
             "winner": "a" if i < 3 else "b", "sec_per_move": {"a": 1.0, "b": 2.0}, "reason": "score"}
            for i in range(4)]
    s = summarize(recs, "a", "b")
    assert s["win_rate"] == 0.75 and s["wins"] == {"a": 3, "b": 1}
    assert s["elo"] == pytest.approx(190.8, abs=0.5) and s["elo_95"][0] < s["elo"] < s["elo_95"][1]


def test_two_games_won_give_a_wide_interval_not_a_point():
    recs = [{"game": i, "black": "ab"[i % 2], "white": "ba"[i % 2], "winner": "a", "reason": "score"} for i in (0, 1)]
    s = summarize(recs, "a", "b")
    lo, hi = s["win_rate_95"]
    assert s["win_rate"] == 1.0 and hi == 1.0 and lo == pytest.approx(0.342, abs=1e-3)  # Wilson's 95% interval
    assert s["elo"] == math.inf and s["elo_95"][0] == pytest.approx(-113, abs=1)
    text = format_summary(s, "a", "b")
    assert "95% interval 0.342 .. 1.000" in text and "too few for a figure" in text and "+- 0.000" not in text
    assert json_safe(s)["elo"] is None  # strict JSON: an unbounded Elo is null
    assert wilson(50, 100) == pytest.approx((0.404, 0.596), abs=1e-3)


def test_engines_are_named_after_their_program_or_python_module():
    from gojax.cli import _engine_name
    assert _engine_name("/usr/games/gnugo --mode gtp --level 10") == "gnugo"
    assert _engine_name("/usr/bin/python3.11 -m gojax gtp --simulations 1000") == "gojax"
    assert _engine_name("python -u engine.py") == "python"


def test_every_game_gets_its_own_seed(tmp_path):
    from gojax.match import seeded
    assert seeded("gnugo --mode gtp", 4).endswith("--seed 5")
    assert seeded("gojax gtp --seed 2 --quiet", 3) == "gojax gtp --quiet --seed 200009"
    assert seeded("my-engine --rng {game}", 7) == "my-engine --rng 7" and seeded("other", 1) == "other"
    # Behind a wrapper (a checkout elsewhere, a nice level) the engine still gets its seed.
    assert seeded("env -C /tmp/wt python -m gojax gtp --seed 1", 3) == "env -C /tmp/wt python -m gojax gtp --seed 100006"
    assert seeded("nice -n 5 /usr/games/gnugo --mode gtp", 0).endswith("--seed 1")
    assert seeded("/opt/pachi/pachi -t =3000 threads=1", 4) == "/opt/pachi/pachi -s 5 -t =3000 threads=1"
    # Deterministic engines would repeat the same game with the same colours; seeds make them differ.
    cfg = MatchConfig(engine_a=gnugo(1), engine_b=gnugo(1), games=3, size=7, alternate=True, out=str(tmp_path),
                      gnugo=gnugo(), name_a="x", name_b="y")
    games = [play_game(cfg, i) for i in (0, 2)]
    sgfs = [(tmp_path / g["sgf"]).read_bytes().split(b";B[", 1)[1] for g in games]
    assert sgfs[0] != sgfs[1]


def test_an_interrupted_parallel_run_stops_at_once_and_resumes(tmp_path):
    """^C (SIGINT) on `gojax match --jobs 2`: the games in progress are abandoned before their
    next move, the process exits, results.jsonl holds only whole games, and the same command
    finishes the match."""
    import signal
    import subprocess
    import time
    out = tmp_path / "m"
    cmd = [sys.executable, "-m", "gojax", "match", "--black", gnugo(1), "--white", gnugo(1), "--games", "40",
           "--size", "9", "--alternate", "--jobs", "2", "--out", str(out), "--no-progress"]
    # A shell's background job starts with SIGINT ignored, and the child would inherit that
    # (then Python installs no KeyboardInterrupt handler).  A handler, unlike "ignore", is
    # reset to the default at exec: hold one while starting the child (no preexec_fn, which
    # is unsafe in a process with JAX's threads).
    held = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, held)
    path = out / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (path.exists() and path.read_text().count("\n") >= 1):
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    t0 = time.time()
    _, err = proc.communicate(timeout=60)
    assert time.time() - t0 < 20 and proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    kept = load_results(str(path))
    assert 1 <= len(kept) < 40 and all(r["moves"] > 0 for r in kept)
    # Resume with a smaller total: the kept games count, only the missing ones are played.
    total = len(kept) + 2
    cmd[cmd.index("40")] = str(total)
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    again = load_results(str(path))
    assert sorted(r["game"] for r in again) == list(range(total))
    assert [r for r in again if r["game"] in {k["game"] for k in kept}] == kept


def test_games_start_from_the_openings_with_each_engine_on_both_sides(tmp_path):
    from gojax.match import OpeningError, opening_files
    from gojax.sgf import load_sgf
    openings = tmp_path / "openings"
    openings.mkdir()
    # 7x7: Black C3, White E5, Black pass; then it is White's turn.
    (openings / "a.sgf").write_text("(;FF[4]GM[1]SZ[7]KM[7.5];B[ce];W[ec];B[])")
    (openings / "b.sgf").write_text("(;FF[4]GM[1]SZ[7]KM[7.5];B[dd])")
    cfg = MatchConfig(engine_a=gnugo(1), engine_b=gnugo(1), games=4, size=7, alternate=True,
                      out=str(tmp_path / "out"), gnugo=gnugo(), name_a="x", name_b="y",
                      openings=opening_files([str(openings)]), max_moves=12)
    summary = run_match(cfg, progress=False)
    records = sorted(load_results(str(tmp_path / "out" / "results.jsonl")), key=lambda r: r["game"])
    assert summary["games"] == 4
    assert [pathlib.Path(r["opening"]).name for r in records] == ["a.sgf", "a.sgf", "b.sgf", "b.sgf"]
    assert [r["black"] for r in records] == ["x", "y", "x", "y"]
    for rec, first in zip(records, [[(1, 16), (2, 32), (1, None)]] * 2 + [[(1, 24)]] * 2):
        _, info = load_sgf((tmp_path / "out" / rec["sgf"]).read_bytes())
        assert info["moves"][:len(first)] == first and len(info["moves"]) > len(first)
        assert "forfeit" not in rec["reason"]
    # Bad openings are refused before any game starts.
    (openings / "c.sgf").write_text("(;FF[4]GM[1]SZ[9];B[ee])")
    cfg.openings = opening_files([str(openings)])
    with pytest.raises(OpeningError, match="board size 9"):
        run_match(dataclasses.replace(cfg, out=str(tmp_path / "out2")), progress=False)
    assert not (tmp_path / "out2").exists()
    with pytest.raises(OpeningError, match="no such file"):
        opening_files([str(tmp_path / "missing.sgf")])


@pytest.mark.slow
def test_two_processes_with_jax_distributed_play_the_games_of_one(tmp_path):
    """`gojax match --coordinator ...` in two processes on one machine: each plays its half of
    every round, process 0 writes results.jsonl, and the records are those one process writes
    (but the seconds per move).  A run cut short resumes with the same two commands."""
    import os
    import socket
    import subprocess
    common = ["--black", gnugo(1), "--white", gnugo(2), "--games", "5", "--size", "5", "--alternate",
              "--name-black", "g1", "--name-white", "g2", "--no-progress"]
    env = dict(os.environ, JAX_PLATFORMS="cpu")

    def two_processes(out):
        with socket.socket() as sock:  # a fresh coordinator port for each run
            sock.bind(("localhost", 0))
            port = sock.getsockname()[1]
        procs = [subprocess.Popen([sys.executable, "-m", "gojax", "match", *common, "--out", str(out),
                                   "--coordinator", f"localhost:{port}", "--num-processes", "2", "--process-id",
                                   str(i)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in (0, 1)]
        for p in procs:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0, err.decode()[-2000:]

    def games(out):
        return sorted(({k: v for k, v in r.items() if k != "sec_per_move"} for r in load_results(str(out / "results.jsonl"))),
                      key=lambda r: r["game"])

    two, one = tmp_path / "two", tmp_path / "one"
    two_processes(two)
    from gojax.cli import main
    assert main(["match", *common, "--out", str(one)]) == 0
    assert games(two) == games(one) and len(games(one)) == 5
    lines = (two / "results.jsonl").read_text().splitlines(keepends=True)
    (two / "results.jsonl").write_text("".join(lines[:2]) + lines[2][:25])  # cut short in game 3
    two_processes(two)
    assert games(two) == games(one)


def test_an_in_process_engine_plays_the_game_its_gtp_process_plays(tmp_path):
    """match.Game drives either kind of engine: gojax as a Player in this process (InProcessEngine)
    against GNU Go makes, move for move, the game that `gojax gtp` in its own process makes."""
    import io

    from gojax.engine_config import EngineConfig
    from gojax.kernels.geometry import BLACK, WHITE
    from gojax.match import Game
    from gojax.player import Player
    from gojax.sgf import load_sgf
    cfg = MatchConfig(engine_a=GOJAX, engine_b=gnugo(), games=1, size=7, out=str(tmp_path / "gtp"), max_moves=40,
                      gnugo=gnugo(), name_a="gojax", name_b="gnugo", vary_seeds=False)
    by_gtp = play_game(cfg, 0)
    config = EngineConfig.from_command(GOJAX)
    player = Player(7, cfg.komi, config.params, config.player_options(io.StringIO(), verbose=False))
    here = dataclasses.replace(cfg, out=str(tmp_path / "here"))
    game = Game(here, 0, {BLACK: "gojax", WHITE: "gnugo"}, {BLACK: config.command(), WHITE: gnugo()},
                players={BLACK: player})
    try:
        game.start(here)
        assert not game.external_to_move()
        while not game.over:
            game.answer(*game.ask(here.move_timeout), here)
        by_game = game.record(here)
    finally:
        game.close()
    moves = [load_sgf((pathlib.Path(c.out) / r["sgf"]).read_bytes())[1]["moves"] for c, r in
             ((cfg, by_gtp), (here, by_game))]
    assert moves[0] == moves[1] and len(moves[0]) > 10
    assert by_game["result"] == by_gtp["result"] and by_game["commands"]["gojax"] == config.command()


def test_a_19x19_scaling_plot_draws_mogos_19x19_column_beside_gojax(tmp_path):
    from gojax.scaling import plot
    rows = [{"study": "selfplay", "n": n, "win_rate": w, "win_lo": w - 0.1, "win_hi": w + 0.1, "elo": 100.0,
             "elo_lo": 50.0, "elo_hi": 150.0} for n, w in ((250, 0.8), (500, 0.75))]
    assert sorted(plot(rows, str(tmp_path / "s19.png"), 19)) == ["MoGo, 2N vs N, 19x19 (Lee et al., Table 1)", "gojax"]
    assert plot(rows, str(tmp_path / "s13.png"), 13) == ["gojax"]  # nothing published on 13x13
    assert (tmp_path / "s19.png").stat().st_size > 0
