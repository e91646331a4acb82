"""`gojax-katago`: KataGo's command line (subcommands, -config, -override-config) in front of gojax."""

import subprocess
import sys

import pytest

from gojax.katago_cli import UsageError, translate

KATAGO = [sys.executable, "-m", "gojax.katago_cli"]


def test_config_keys_gojax_knows_are_applied_and_the_rest_named_once(tmp_path, capsys):
    cfg = tmp_path / "analysis.cfg"
    cfg.write_text("# KaTrain's file, in part\nreportAnalysisWinratesAs = BLACK\nmaxVisits = 500  # per turn\n"
                   "numAnalysisThreads = 12\nnnCacheSizePowerOfTwo = 20\n")
    args = translate(["analysis", "-model", "m.bin.gz", "-config", str(cfg), "-override-config",
                      "maxVisits=64, homeDataDir=/tmp/x", "--", "--leaves", "4"], log=sys.stderr)
    assert args == ["analysis", "--report-as", "BLACK", "--visits", "64", "--batch", "12", "--leaves", "4"]
    err = capsys.readouterr().err
    assert "homeDataDir, nnCacheSizePowerOfTwo" in err and "-model m.bin.gz" in err
    assert translate(["gtp", "-override-config", "maxVisits=100,maxTime=2"]) == \
        ["gtp", "--simulations", "100", "--seconds", "2"]


@pytest.mark.parametrize("argv, message", [
    ([], "a subcommand is required"),
    (["benchmark"], "'benchmark' is not provided"),
    (["analysis", "-modle", "x"], "unknown argument '-modle'"),
    (["analysis", "-config"], "-config needs a value"),
    (["analysis", "-config", "/no/such.cfg"], "cannot read -config /no/such.cfg"),
    (["analysis", "-override-config", "maxVisits"], "expected K=V, got 'maxVisits'"),
])
def test_bad_command_lines_get_one_line(argv, message):
    with pytest.raises(UsageError, match=message):
        translate(argv)


def test_version_and_usage_over_a_real_process():
    out = subprocess.run(KATAGO + ["version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("gojax ")
    bad = subprocess.run(KATAGO + ["analysis", "-bogus"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown argument '-bogus'" in bad.stderr and "Traceback" not in bad.stderr


def test_gtp_plays_with_the_config_visits(tmp_path):
    cfg = tmp_path / "gtp.cfg"
    cfg.write_text("maxVisits = 32\nponderingEnabled = false\n")
    out = subprocess.run(KATAGO + ["gtp", "-model", "none", "-config", str(cfg), "--", "--leaves", "4",
                                   "--playout-device", "default"],
                         input="boardsize 7\nclear_board\ngenmove b\nquit\n", capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    replies = [line for line in out.stdout.splitlines() if line.startswith("=")]
    assert len(replies) == 4 and replies[2][2:].strip()
    assert "ponderingEnabled" in out.stderr and "] 32 sims in" in out.stderr
