"""gojax driven by a GUI's own GTP library: Sabaki's @sabaki/gtp (node), as Sabaki drives engines.

The package is installed into tests/js (`npm install`) on the first run; the script prints what a GUI would
read, and this test checks it the way Sabaki shows it: candidate moves with win rates in
1/10,000, priors that are probabilities, principal variations that start with the move."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

JS = pathlib.Path(__file__).parent / "js"


def test_sabaki_gtp_library_reads_analysis_genmove_and_sgf():
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("needs node and npm (Debian: apt-get install nodejs npm); .ci/run has them")
    if not (JS / "node_modules" / "@sabaki" / "gtp").exists():  # first run on a fresh clone
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=JS, check=True, timeout=300,
                       capture_output=True)
    proc = subprocess.run(["node", str(JS / "drive_gojax.js"), sys.executable, "--quiet", "--leaves", "4",
                           "--playouts-per-leaf", "4", "--simulations", "64"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    shown = json.loads(proc.stdout)
    assert shown["name"] == shown["nextCommand"] == "gojax" and shown["analysisEnded"]
    moves = shown["analysis"]
    assert moves and all(m["pv"][0] == m["move"] and int(m["visits"]) > 0 for m in moves)
    assert all(0 <= int(m["winrate"]) <= 10000 and 0 <= int(m["lcb"]) <= int(m["winrate"]) for m in moves)
    assert sum(int(m["prior"]) for m in moves) <= 10000
    assert [int(m["order"]) for m in moves] == list(range(len(moves)))
    assert shown["genmove"][0] in "ABCDEFGHJ" or shown["genmove"] in ("pass", "resign")
    assert shown["sgf"].startswith("(;") and ";B[ee]" in shown["sgf"]
