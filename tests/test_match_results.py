"""Match folders read back (`gojax results`): summaries and two folders paired game by game."""

import json

import pytest

from gojax.cli import main
from gojax.match import MatchConfig, run_match
from gojax.match_results import ResultsError, load_folder, paired, sign_test
from tests.helpers import gnugo_path


def write_folder(path, wins: str, opponent="gnugo", size=9, engine="gojax", card=True, forfeit=()):
    """A match folder whose game i `engine` won where wins[i] == "W" (Black in even games)."""
    path.mkdir()
    with open(path / "results.jsonl", "w") as f:
        for i, w in enumerate(wins):
            black, white = (engine, opponent) if i % 2 == 0 else (opponent, engine)
            rec = {"game": i, "black": black, "white": white, "size": size, "komi": 7.5,
                   "winner": engine if w == "W" else opponent, "ended_by": "forfeit" if i in forfeit else "score"}
            f.write(json.dumps(rec) + "\n")
    if card:
        (path / "match.json").write_text(json.dumps({"name_a": engine, "name_b": opponent, "engine_b": opponent,
                                                     "size": size, "komi": 7.5, "alternate": True,
                                                     "vary_seeds": True}))
    return str(path)


def test_sign_test_is_exact_and_two_sided():
    assert sign_test(6, 0) == pytest.approx(2 / 64)
    assert sign_test(0, 6) == sign_test(6, 0)
    assert sign_test(3, 3) == 1.0 and sign_test(0, 0) == 1.0
    assert sign_test(24, 11) == pytest.approx(0.041, abs=0.001)


def test_two_folders_pair_game_by_game(tmp_path):
    new = load_folder(write_folder(tmp_path / "new", "WWWWLLWWWL", engine="gojax_new"))
    base = load_folder(write_folder(tmp_path / "base", "WLWLLWLLWL"))
    p = paired(new, base)
    assert (p["games"], p["wins_new"], p["wins_base"]) == (10, 7, 4)
    assert (p["both"], p["neither"], p["alone_new"], p["alone_base"]) == (3, 2, 4, 1)
    assert p["p_value"] == pytest.approx(sign_test(4, 1))


def test_forfeits_and_unplayed_games_are_left_out(tmp_path):
    new = load_folder(write_folder(tmp_path / "new", "WWWWWW", forfeit=(1,)))
    base = load_folder(write_folder(tmp_path / "base", "LLLL"))
    p = paired(new, base)
    assert p["games"] == 3 and p["alone_new"] == 3 and (p["only_new"], p["only_base"]) == ([4, 5], [1])


def test_folders_of_other_games_are_refused_unless_forced(tmp_path):
    nine = load_folder(write_folder(tmp_path / "nine", "WWLL"))
    with pytest.raises(ResultsError, match="size"):
        paired(nine, load_folder(write_folder(tmp_path / "thirteen", "WWLL", size=13)))
    pachi = load_folder(write_folder(tmp_path / "pachi", "LLLL", opponent="pachi", card=False))
    with pytest.raises(ResultsError, match="pachi"):
        paired(nine, pachi)
    assert paired(nine, pachi, force=True)["alone_new"] == 2


def test_a_folder_without_results_is_a_clear_error(tmp_path, capsys):
    assert main(["results", str(tmp_path / "nowhere")]) == 2
    assert "no results.jsonl" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "results.jsonl").write_text("")
    with pytest.raises(ResultsError, match="no finished game"):
        load_folder(str(tmp_path / "empty"))


def test_the_same_seeds_replay_the_same_games(tmp_path, capsys):
    """Two real runs of GNU Go level 1 against level 3 with the same per-game seeds: game by
    game the same winners, so the paired comparison finds no game won by one run alone."""
    gnugo = gnugo_path()
    runs = []
    for name in ("first", "second"):
        cfg = MatchConfig(engine_a=f"{gnugo} --mode gtp --level 1 --chinese-rules",
                          engine_b=f"{gnugo} --mode gtp --level 3 --chinese-rules", games=4, size=5, komi=0.5,
                          alternate=True, out=str(tmp_path / name), name_a="g1", name_b="g3",
                          gnugo=f"{gnugo} --mode gtp --chinese-rules")
        run_match(cfg, progress=False)
        runs.append(str(tmp_path / name))
    assert main(["results", runs[1], "--versus", runs[0], "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["summary"]["games"] == 4 and out["paired"]["games"] == 4
    assert out["paired"]["alone_new"] == out["paired"]["alone_base"] == 0
    for i in range(4):  # the very same moves
        game = f"games/game{i:04d}.sgf"
        assert (tmp_path / "first" / game).read_text() == (tmp_path / "second" / game).read_text()
