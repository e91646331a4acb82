"""lz-analyze over real pipes: info lines stream until the next command arrives, then the
reply ends with a blank line and the next command is answered."""

import subprocess
import sys


def test_lz_analyze_streams_until_the_next_command():
    p = subprocess.Popen([sys.executable, "-m", "gojax", "gtp", "--quiet", "--leaves", "4", "--playouts-per-leaf", "8",
                          "--size", "7"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, bufsize=1)
    try:
        p.stdin.write("play b d4\n7 lz-analyze w 10\n")
        p.stdin.flush()
        assert p.stdout.readline() == "=\n" and p.stdout.readline() == "\n"
        assert p.stdout.readline() == "=7\n"
        first = p.stdout.readline()
        assert first.startswith("info move ") and " visits " in first and " winrate " in first and " pv " in first
        p.stdin.write("8 name\nquit\n")
        p.stdin.flush()
        rest = p.communicate(timeout=120)[0]
    finally:
        p.kill()
    body, _, after = (first + rest).partition("\n\n")  # the analysis ends with a blank line
    assert all(line.startswith("info move ") for line in body.split("\n") if line)
    assert after.startswith("=8 gojax\n\n")
