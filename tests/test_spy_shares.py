"""bench/spy_shares.py: shares of a py-spy profile under one function."""

from __future__ import annotations

import pytest

from bench.spy_shares import main, shares

RAW = """\
<module> (b.py:1);main.<locals>.record (b.py:2);Forest.run (f.py:1);descend_trees (m.py:1) 50
<module> (b.py:1);main.<locals>.replay (b.py:3);Forest.run (f.py:1);descend_trees (m.py:1);Board.after (h.py:1) 30
<module> (b.py:1);main.<locals>.replay (b.py:3);Forest.run (f.py:1);descend_trees (m.py:1) 10
<module> (b.py:1);main.<locals>.replay (b.py:3);Forest.run (f.py:1);defend (t.py:1);defend (t.py:2) 20
<module> (b.py:1);main.<locals>.replay (b.py:3);Forest.__init__ (f.py:9) 40
 7
"""


def test_shares_count_the_samples_inside_the_function_through_the_other():
    total, inclusive, own = shares(RAW.splitlines(), "Forest.run", "main.<locals>.replay")
    assert total == 60  # the recording's 50, the construction's 40 and py-spy's unattributed 7 left out
    # inclusive: a recursion counts once per stack (defend 20, not 40); self: the innermost frame
    assert inclusive == {"Forest.run": 60, "descend_trees": 40, "Board.after": 30, "defend": 20}
    assert own == {"Board.after": 30, "descend_trees": 10, "defend": 20}
    assert shares(RAW.splitlines(), "Forest.run")[0] == 110
    # a group: the stacks through any of its functions, each once (Board.after's 30 are under
    # descend_trees too); a function that never ran adds nothing
    grouped = shares(RAW.splitlines(), "Forest.run", "main.<locals>.replay",
                     {"boards": {"Board.after", "descend_trees"}, "ladders": {"defend", "nowhere"}})[1]
    assert grouped["boards"] == 40 and grouped["ladders"] == 20


def test_the_script_prints_shares_and_refuses_what_is_not_a_profile(tmp_path, capsys):
    raw = tmp_path / "spy.txt"
    raw.write_text(RAW)
    assert main([str(raw), "--under", "main.<locals>.replay", "--show", "Board.after,nowhere"]) == 0
    out = capsys.readouterr().out
    assert "60 samples inside Forest.run" in out and " 50.0%  Board.after" in out and "  0.0%  nowhere" in out
    assert main([str(raw), "--under", "main.<locals>.replay", "--group", "boards=Board.after,defend"]) == 0
    assert "group boards (inclusive, each sample once): 83.3%" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="give NAME=function"):
        main([str(raw), "--group", "boards"])
    raw.write_text("descend_trees (m.py:1) many\n")
    with pytest.raises(SystemExit, match="line 1: not py-spy's raw format"):
        main([str(raw)])
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(SystemExit, match="no sample inside 'Forest.run'"):
        main([str(empty)])
    with pytest.raises(SystemExit, match="no/such.txt"):
        main(["no/such.txt"])
