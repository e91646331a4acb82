"""Bad paths and numbers are refused before any work, with one line and exit code 2."""

import pytest

from gojax.cli import main
from tests.helpers import gnugo_path

DATA = "tests/data"


def refused(capsys, argv) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    message = str(exc.value.code) if isinstance(exc.value.code, str) else out.err
    assert exc.value.code not in (0, None), message
    assert "Traceback" not in message
    return message


@pytest.mark.parametrize("value", ["0", "-5", "many"])
def test_simulations_must_be_positive(capsys, value):
    for argv in (["gtp", "--simulations", value], ["bench", "--search", "--simulations", value]):
        assert "--simulations" in refused(capsys, argv)


def test_counts_and_sizes_are_checked(capsys):
    assert "--games" in refused(capsys, ["match", "--black", "x", "--white", "y", "--games", "0", "--out", "m"])
    assert "board size must be 2..19" in refused(capsys, ["match", "--black", "x", "--white", "y", "--size", "25",
                                                           "--out", "m"])
    assert "--n" in refused(capsys, ["scaling", "--n", "100", "-3", "--out", "s"])
    assert "--playouts" in refused(capsys, ["evaluate", DATA, "--playouts", "0", "--out", "e.jsonl"])


def test_an_out_folder_that_is_a_file_or_cannot_be_written_is_refused(tmp_path, capsys):
    afile = tmp_path / "results.txt"
    afile.write_text("keep me")
    engine = f"{gnugo_path()} --mode gtp"
    for cmd in (["match", "--black", engine, "--white", engine], ["scaling"]):
        assert "is a file, not a folder" in refused(capsys, cmd + ["--out", str(afile)])
        assert "cannot write to --out /proc/gojax" in refused(capsys, cmd + ["--out", "/proc/gojax"])
    assert afile.read_text() == "keep me"


def test_evaluate_refuses_bad_outputs_before_any_work(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    assert "cannot write to --out" in refused(capsys, ["evaluate", DATA, "--out", "/proc/gojax/rows.jsonl"])
    (tmp_path / "dir.jsonl").mkdir()
    assert "is a folder" in refused(capsys, ["evaluate", DATA, "--out", str(tmp_path / "dir.jsonl")])
    assert "cannot write to --plot" in refused(capsys, ["evaluate", f"{DATA}/game_b.sgf", "--out", str(out),
                                                        "--plot", "/proc/gojax-plots"])
    assert not out.exists()


def test_evaluate_refuses_missing_and_corrupt_games_and_writes_nothing(tmp_path, capsys):
    corrupt = tmp_path / "corrupt.sgf"
    corrupt.write_text("(;GM[1]SZ[9];B[ee];W[")
    out = tmp_path / "rows.jsonl"
    message = refused(capsys, ["evaluate", f"{DATA}/game_b.sgf", str(tmp_path / "missing.sgf"), str(corrupt),
                               "--out", str(out), "--no-progress"])
    assert "2 SGF file(s) cannot be read" in message and "missing.sgf: No such file" in message
    assert "corrupt.sgf" in message and not out.exists()
    (tmp_path / "empty").mkdir()
    assert "no SGF files" in refused(capsys, ["evaluate", str(tmp_path / "empty"), "--out", str(out)])


def test_the_python_evaluate_refuses_a_missing_file(tmp_path):
    import gojax
    from gojax.evaluate import SgfInputError
    with pytest.raises(SgfInputError, match="nothing.sgf"):
        gojax.evaluate(str(tmp_path / "nothing.sgf"), playouts=8)


def test_a_missing_or_corrupt_shape_model_is_refused_at_start(tmp_path, capsys):
    assert "--shape-model missing.npz: No such file" in refused(capsys, ["gtp", "--shape-model", "missing.npz"])
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file")
    assert f"--shape-model {bad}" in refused(capsys, ["gtp", "--shape-model", str(bad)])


def test_gtp_compiles_only_the_board_size_the_gui_asks_for():
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "gojax", "gtp", "--leaves", "2", "--playouts-per-leaf", "2",
                           "--simulations", "8"], input="boardsize 5\nclear_board\ngenmove b\nquit\n",
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.count("=") == 4, proc.stderr
    assert "compiled the 5x5 kernels" in proc.stderr and "9x9" not in proc.stderr


def test_version_is_written_once_and_lizzie_gets_one_it_accepts():
    import io
    from importlib.metadata import version

    import gojax
    from gojax.gtp import GtpEngine
    from gojax.gtp_commands import GtpCommands
    from gojax.player import Player, PlayerOptions
    assert version("gojax") == gojax.__version__
    for lizzie, expected in ((False, gojax.__version__), (True, "0.17.0")):
        out = io.StringIO()
        player = Player(options=PlayerOptions(log=io.StringIO()))
        GtpEngine(GtpCommands(player, lizzie=lizzie), out=out, log=io.StringIO()).serve(io.StringIO("version\n"))
        assert out.getvalue() == f"= {expected}\n\n"


def test_bench_search_runs_the_repeats_asked_for(capsys):
    import json
    assert main(["bench", "--search", "--board", "5", "--simulations", "16", "--leaves", "2", "--playouts-per-leaf",
                 "2", "--repeats", "5", "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["repeats"] == 5


def test_search_flags_come_from_the_dataclass_and_land_in_it():
    import dataclasses

    from gojax.cli import build_parser, search_params
    from gojax.search.params import SearchParams
    for command in (["gtp"], ["bench", "--search"], ["analysis"], ["analyze", "x.sgf", "--out", "x.jsonl"]):
        args = build_parser().parse_args(command)
        assert search_params(args) == SearchParams()
    args = build_parser().parse_args(["gtp", "--rave-bias", "0.05", "--shape-hard-verdicts", "--policy", "uniform",
                                      "--playouts-per-leaf", "2", "--rules", "tromp-taylor", "--seed", "7"])
    p = search_params(args)
    assert (p.rave_bias, p.shape_hard_verdicts, p.policy, p.playouts_per_leaf, p.rules, p.seed) == \
        (0.05, True, "uniform", 2, "tromp-taylor", 7)
    flagged = {f.name for f in dataclasses.fields(SearchParams) if "help" in f.metadata}
    assert {"leaves", "rave_bias", "prior", "policy", "nakade_prob", "rules", "mercy"} <= flagged


def test_search_settings_out_of_range_are_named_as_typed(capsys):
    for value in ("2", "-3"):
        assert "--resign-threshold must be in [0, 1)" in refused(capsys, ["gtp", "--resign-threshold", value])
    assert "--max-nodes must be >= 2, got -5" in refused(capsys, ["gtp", "--max-nodes", "-5"])


def test_pattern_and_shape_files_that_are_not_tables_get_one_line(tmp_path, capsys):
    text = tmp_path / "notes.npy"
    text.write_text("not numpy")
    for argv in (["gtp", "--playout-patterns"], ["analysis", "--playout-patterns"],
                 ["analyze", f"{DATA}/game_b.sgf", "--out", str(tmp_path / "rows.jsonl"), "--playout-patterns"]):
        message = refused(capsys, argv + [str(text)])
        assert "not a playout pattern table" in message and "allow_pickle" not in message
        assert "No such file" in refused(capsys, argv + [str(tmp_path / "missing.npy")])
    assert not (tmp_path / "rows.jsonl").exists()
    message = refused(capsys, ["gtp", "--prior", "shape", "--shape-model", str(text)])
    assert "not a shape model" in message and "allow_pickle" not in message


def test_learn_prior_names_a_missing_folder(tmp_path, capsys):
    message = refused(capsys, ["learn-prior", str(tmp_path / "no-such-runs"), "--out", str(tmp_path / "p.npz")])
    assert "no-such-runs: no such folder" in message


def test_a_mistyped_option_is_shown_with_its_subcommands_usage(capsys):
    message = refused(capsys, ["gtp", "--simulatoins", "5"])
    assert "gojax gtp: error: unrecognized arguments: --simulatoins 5" in message
    assert "usage: gojax gtp" in message and "{bench,gtp" not in message


def test_an_engine_that_exits_at_once_is_reported_with_its_exit_code():
    import sys

    from gojax.gtp_client import GtpClient, GtpEngineError
    client = GtpClient(f"{sys.executable} -c 'import sys; sys.exit(3)'")
    with pytest.raises(GtpEngineError, match="exit code 3"):
        client.send("name")
    client.close()


def test_seconds_alone_are_a_time_per_move_with_no_simulation_cap():
    from gojax.engine_config import EngineConfig
    read = EngineConfig.from_command
    assert read("gojax gtp --seconds 2").simulations is None
    assert read("gojax gtp").simulations == 3000
    assert read("gojax gtp --seconds 2 --simulations 500").simulations == 500


def test_an_engine_config_and_its_gtp_command_read_back_the_same():
    """EngineConfig.command() writes the `gojax gtp` command that from_command reads back to an
    equal configuration, whatever program starts it; settings at their defaults are left out."""
    import dataclasses

    from gojax.engine_config import EngineConfig
    from gojax.search.params import SearchParams
    params = SearchParams(leaves=4, rave_bias=0.005, prior="mogo", verdicts_ahead=False, seed=7, resign_threshold=0.2)
    for config in (EngineConfig(), EngineConfig(params, 1000, exact=True, trees=2, playout_device="cpu"),
                   EngineConfig(params, None, seconds=1.5, resign=False)):
        for program in ("gojax", "/usr/bin/python3 -P -m gojax", "env -C /tmp/x gojax"):
            cmd = config.command(program, "--quiet")
            back = EngineConfig.from_command(cmd)
            expected = config if config.resign else dataclasses.replace(
                config, params=dataclasses.replace(config.params, resign_threshold=0.0))
            assert back == expected, cmd
    assert EngineConfig().command() == "gojax gtp --simulations 3000"
    assert "--no-verdicts-ahead" in EngineConfig(params).command() and "--seed 7" in EngineConfig(params).command()


def test_a_bad_engine_config_is_a_value_error_naming_the_option():
    import pytest

    from gojax.engine_config import EngineConfig
    from gojax.search.params import SearchParams
    with pytest.raises(ValueError, match="not a `gojax gtp` command"):
        EngineConfig.from_command("gnugo --mode gtp")
    with pytest.raises(ValueError, match="--leaves: invalid int value"):
        EngineConfig.from_command("gojax gtp --leaves many")
    with pytest.raises(ValueError, match="--exact-simulations needs --simulations"):
        EngineConfig(simulations=None, seconds=2, exact=True)
    with pytest.raises(ValueError, match="--playout-device must be one of"):
        EngineConfig(playout_device="tpu9")
    with pytest.raises(ValueError, match="SearchParams.virtual_loss = 2.0 has no `gojax gtp` option"):
        EngineConfig(SearchParams(virtual_loss=2.0)).command()
