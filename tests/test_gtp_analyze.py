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


def analysis_lines(command: str) -> list[str]:
    p = subprocess.Popen([sys.executable, "-m", "gojax", "gtp", "--quiet", "--leaves", "4", "--playouts-per-leaf", "8",
                          "--size", "7"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, bufsize=1)
    try:
        p.stdin.write(f"play b d4\n{command}\n")
        p.stdin.flush()
        assert p.stdout.readline() == "=\n" and p.stdout.readline() == "\n" and p.stdout.readline() == "=\n"
        first = p.stdout.readline()
        p.stdin.write("quit\n")
        p.stdin.flush()
        p.communicate(timeout=120)
    finally:
        p.kill()
    return first.split("info move ")[1:]


def fields(entry: str) -> dict[str, str]:
    words = entry.split(" pv ")[0].split()
    return dict(zip(words[1::2], words[2::2]))


def test_lz_analyze_priors_are_probabilities_that_sum_to_at_most_one():
    entries = [fields(e) for e in analysis_lines("lz-analyze w 20")]
    priors = [int(e["prior"]) for e in entries]
    assert entries and sum(priors) <= 10000 and all(0 <= int(e["winrate"]) <= 10000 for e in entries)
    assert [int(e["order"]) for e in entries] == sorted(int(e["order"]) for e in entries)


def test_kata_analyze_reports_fractions_and_ownership_from_the_top_row():
    line = analysis_lines("kata-analyze w 20 ownership true")
    entries = [fields(e) for e in line]
    assert entries and all(0.0 <= float(e["winrate"]) <= 1.0 and -1 <= float(e["utility"]) <= 1 for e in entries)
    assert sum(float(e["prior"]) for e in entries) <= 1.0 + 1e-6
    ownership = [float(x) for x in line[-1].split(" ownership ")[1].split()]
    assert len(ownership) == 49 and ownership[3 * 7 + 3] < -0.5  # D4: Black's stone, from White's side


def test_lz_genmove_analyze_searches_once_reports_and_plays():
    """Leela Zero's lz-genmove_analyze: info lines during the genmove's own search (its budget,
    here exactly 4,000 simulations), then `play MOVE`; one search, not an analysis and a genmove."""
    out = subprocess.run([sys.executable, "-m", "gojax", "gtp", "--leaves", "4", "--playouts-per-leaf", "8", "--size",
                          "7", "--simulations", "4000", "--exact-simulations"],
                         input="play b d4\n5 lz-genmove_analyze w 5\n6 showboard\nquit\n", capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    reply = out.stdout.split("=5\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert reply[-1].startswith("play ") and all(line.startswith("info move ") for line in reply[:-1])
    searches = [line for line in out.stderr.splitlines() if " sims in " in line]
    assert len(searches) == 1 and "] 4000 sims in " in searches[0].replace(",", "")
    assert "Black to play" in out.stdout.split("=6", 1)[1]  # the move was played
