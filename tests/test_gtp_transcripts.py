"""Golden GTP transcripts (tests/gtp/*.gtp) against a real `gojax gtp` process over pipes.

Transcript format: `> line` is sent as it is; the lines after it, up to the next `>`, are the
expected reply without its closing blank line.  `~ regex` lines match one reply line by regular
expression; a bare `?` accepts any error reply.  Fixed seed, small search budget."""

import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent / "gtp"
ENGINE = [sys.executable, "-m", "gojax", "gtp", "--simulations", "256", "--leaves", "4",
          "--playouts-per-leaf", "16", "--seed", "1", "--quiet", "--no-warmup",
          "--prior", "mogo"]  # genmove.gtp's "take the capture" is MoGo's rule; the shape prior at
#                             256 simulations may prefer D1, which also wins


def parse(path):
    steps, current = [], None
    for raw in path.read_text().splitlines():
        if raw.startswith("> "):
            current = (raw[2:], [])
            steps.append(current)
        elif raw.startswith("#") and current is None:
            continue
        elif current is not None and raw != "":
            current[1].append(raw)
    return steps


@pytest.mark.parametrize("path", sorted(HERE.glob("*.gtp")), ids=lambda p: p.stem)
def test_transcript(path):
    steps = parse(path)
    sent = "".join(cmd + "\n" for cmd, _ in steps)
    proc = subprocess.run(ENGINE, input=sent, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = proc.stdout.split("\n\n")
    assert got[-1] == "", "every reply ends with a blank line"
    got = got[:-1]
    expected = [(cmd, exp) for cmd, exp in steps if not cmd.lstrip().startswith("#") and cmd.strip()]
    assert len(got) == len(expected), f"{len(got)} replies for {len(expected)} commands:\n{proc.stdout}"
    for (cmd, exp), reply in zip(expected, got):
        lines = reply.split("\n")
        if exp == ["?"]:
            assert lines[0].startswith("?"), f"{cmd!r}: {reply!r}"
            continue
        assert len(lines) == len(exp), f"{cmd!r}: {reply!r} vs {exp!r}"
        for want, line in zip(exp, lines):
            if want.startswith("~ "):
                assert re.fullmatch(want[2:], line), f"{cmd!r}: {line!r} !~ {want[2:]!r}"
            else:
                assert line.rstrip() == want.rstrip(), f"{cmd!r}: {line!r} != {want!r}"


def test_a_restarted_engine_reuses_its_compiled_kernels_and_plays_the_same(tmp_path):
    """GOJAX_COMPILE_CACHE: the first process fills the cache, the second loads from it and
    gives the same replies (same seed); "off" writes nothing."""
    import os
    cache = tmp_path / "xla"
    cmd = [sys.executable, "-m", "gojax", "gtp", "--simulations", "64", "--leaves", "4",
           "--playouts-per-leaf", "4", "--seed", "3", "--quiet"]
    session = "play b E5\ngenmove w\nquit\n"

    home = tmp_path / "home"  # where the default cache (~/.cache/gojax/xla) would go

    def run(setting):
        env = dict(os.environ, GOJAX_COMPILE_CACHE=setting, HOME=str(home))
        proc = subprocess.run(cmd, input=session, capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    first = run(str(cache))
    entries = sorted(p.name for p in cache.iterdir())
    assert entries, "the first run wrote no compiled executables"
    assert run(str(cache)) == first
    assert sorted(p.name for p in cache.iterdir()) == entries, "the second run compiled something new"
    assert run("off") == first and not home.exists()
