"""bench/teacher_games.py: self-play games from drawn openings, one SGF per game, resumable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sgfmill import sgf

from bench.teacher_games import opening_points
from tests.helpers import gnugo_path

ROOT = Path(__file__).parent.parent


def test_openings_are_drawn_from_the_third_to_fifth_lines():
    pts = opening_points(19)
    assert (2, 2) in pts and (4, 9) in pts  # C3, K5
    assert (1, 5) not in pts and (9, 9) not in pts  # the second line, tengen
    assert opening_points(7) == [(r, c) for r in range(2, 5) for c in range(2, 5)]


def test_games_are_written_whole_and_a_rerun_skips_them(tmp_path):
    cmd = [sys.executable, str(ROOT / "bench" / "teacher_games.py"), "--out", str(tmp_path), "--games", "2",
           "--size", "7", "--opening", "3", "--engine", f"{gnugo_path()} --mode gtp --level 0 --chinese-rules"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    files = sorted(tmp_path.glob("*.sgf"))
    assert [f.name for f in files] == ["game_0000.sgf", "game_0001.sgf"]
    for f in files:
        game = sgf.Sgf_game.from_bytes(f.read_bytes())
        assert game.get_size() == 7 and game.get_komi() == 7.5
        moves = [node.get_move() for node in game.get_main_sequence()[1:]]
        assert len(moves) >= 10 and moves[0][0] == "b" and moves[1][0] == "w"
    stamps = [f.stat().st_mtime_ns for f in files]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    assert [f.stat().st_mtime_ns for f in files] == stamps
