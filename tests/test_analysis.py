"""`gojax analysis` over real pipes, speaking KataGo's JSON analysis protocol."""

import json
import subprocess
import sys

import pytest

ENGINE = [sys.executable, "-m", "gojax", "analysis", "--leaves", "4", "--playouts-per-leaf", "4"]


def ask(*queries, extra=()) -> tuple[list[dict], str]:
    proc = subprocess.run(ENGINE + list(extra), input="".join(json.dumps(q) + "\n" if isinstance(q, dict) else q + "\n"
                                                              for q in queries),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


@pytest.mark.slow
def test_the_documented_example_query_gets_one_response_per_turn():
    # KataGo's docs/Analysis_Engine.md example (19x19, two handicap stones, Tromp-Taylor).
    example = {"id": "foo", "initialStones": [["B", "Q4"], ["B", "C4"]], "moves": [["W", "P5"], ["B", "P6"]],
               "rules": "tromp-taylor", "komi": 7.5, "boardXSize": 19, "boardYSize": 19, "analyzeTurns": [0, 1, 2],
               "maxVisits": 16}
    replies, stderr = ask(example)
    assert "Started, ready to begin handling requests" in stderr
    assert sorted(r["turnNumber"] for r in replies) == [0, 1, 2] and all(r["id"] == "foo" for r in replies)
    for r in replies:
        assert not r["isDuringSearch"] and r["rootInfo"]["visits"] >= 16
        infos = r["moveInfos"]
        assert [m["order"] for m in infos] == list(range(len(infos)))
        assert all(set(m) >= {"move", "visits", "winrate", "prior", "lcb", "utility", "order", "pv"} for m in infos)
        assert all(0 <= m["winrate"] <= 1 and m["pv"][0] == m["move"] for m in infos)
        assert sum(m["prior"] for m in infos) <= 1 + 1e-6


def test_ownership_policy_and_perspective():
    # White to move with a black stone on E5: the black stone is White's loss, from White's side.
    query = {"id": "own", "initialStones": [["B", "E5"]], "moves": [], "initialPlayer": "W", "rules": "chinese",
             "komi": 7.5, "boardXSize": 9, "boardYSize": 9, "maxVisits": 32, "includeOwnership": True,
             "includePolicy": True}
    (mover,), _ = ask(query)
    (black,), _ = ask(query, extra=["--report-as", "BLACK"])
    e5 = 4 * 9 + 4  # row-major from A9: row 9 - 5 = 4, column E = 4
    assert len(mover["ownership"]) == 81 and mover["ownership"][e5] < -0.5 and black["ownership"][e5] == -mover["ownership"][e5]
    assert mover["rootInfo"]["winrate"] == pytest.approx(1 - black["rootInfo"]["winrate"], abs=1e-6)
    policy = mover["policy"]
    assert len(policy) == 82 and policy[e5] == -1 and sum(p for p in policy if p > 0) == pytest.approx(1, abs=1e-4)


def test_bad_queries_get_errors_and_the_engine_goes_on():
    good = {"id": "ok", "moves": [["B", "C3"]], "rules": "chinese", "boardXSize": 7, "boardYSize": 7, "maxVisits": 16}
    replies, _ = ask("not json", {"id": "x", "moves": [["B", "Z9"]], "boardXSize": 7, "boardYSize": 7},
                     {"id": "y", "moves": [["B", "C3"], ["W", "C3"]], "boardXSize": 7, "boardYSize": 7},
                     {"id": "z", "moves": [], "boardXSize": 7, "boardYSize": 9},
                     {"id": "v", "action": "query_version"}, good)
    by_id = {r.get("id"): r for r in replies}
    assert "could not parse json" in replies[0]["error"] and "id" not in replies[0]
    assert by_id["x"]["field"] == "moves" and "Z9" in by_id["x"]["error"]
    assert by_id["y"]["field"] == "moves" and "occupied" in by_id["y"]["error"]
    assert by_id["z"]["field"] == "boardYSize"
    assert by_id["v"]["version"] and by_id["ok"]["turnNumber"] == 1 and by_id["ok"]["moveInfos"]


def test_terminate_answers_the_queued_turns_with_no_results():
    game = {"id": "long", "moves": [["B", "C3"], ["W", "E5"], ["B", "D4"]], "rules": "chinese", "boardXSize": 7,
            "boardYSize": 7, "analyzeTurns": [0, 1, 2, 3], "maxVisits": 200}
    # One turn at a time (--batch 1): the terminate line arrives while turn 0 is searched.
    replies, _ = ask(game, {"id": "t", "action": "terminate", "terminateId": "long"}, extra=["--batch", "1"])
    turns = [r for r in replies if r.get("id") == "long"]
    assert {"id": "t", "action": "terminate", "terminateId": "long"} in replies
    assert len(turns) == 4 and any(r.get("noResults") for r in turns)


def test_turns_searched_together_answer_as_turns_searched_alone():
    game = {"id": "g", "moves": [["B", "C3"], ["W", "E5"], ["B", "D4"]], "rules": "chinese", "boardXSize": 7,
            "boardYSize": 7, "analyzeTurns": [0, 1, 2, 3], "maxVisits": 48, "includeOwnership": True}
    together, _ = ask(game, extra=["--batch", "8"])
    alone, _ = ask(game, extra=["--batch", "1"])
    key = lambda r: r["turnNumber"]  # noqa: E731
    assert sorted(together, key=key) == sorted(alone, key=key) and len(alone) == 4


@pytest.mark.slow
def test_katagoanal_a_katago_client_from_pypi_analyses_a_game_through_gojax(tmp_path):
    """katagoanal (PyPI) starts `katago analysis -config C -model M`, waits for KataGo's ready
    line on stderr and sends one query for every turn of a game: pointed at a two-line wrapper
    script, it gets gojax's answers, with a win rate and a score for every turn and move."""
    import stat

    from KataGoAnal.katago_driver import KataGoDriver
    from KataGoAnal.sgf_io import Game
    wrapper = tmp_path / "katago"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m gojax "$@" --leaves 4 --playouts-per-leaf 4\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    game = Game.from_bytes(b"(;GM[1]FF[4]SZ[9]KM[7.5]RU[Chinese];B[ee];W[cc];B[gc];W[cg];B[eg])")
    with KataGoDriver(str(wrapper), str(tmp_path / "analysis.cfg"), str(tmp_path / "model.bin.gz"),
                      startup_timeout=300) as katago:
        turns = katago.analyze_game(game, max_visits=48)
    assert [t["turn"] for t in turns] == list(range(6))
    for t in turns:
        assert t["visits"] >= 48 and 0 <= t["winrate"] <= 1 and isinstance(t["score_lead"], float)
        assert t["move_infos"] and [m["order"] for m in t["move_infos"]] == list(range(len(t["move_infos"])))
        assert all(isinstance(m["scoreLead"], float) and m["visits"] > 0 for m in t["move_infos"])
    assert turns[0]["current_player"] == "B" and turns[1]["current_player"] == "W"


POSITION = {"moves": [["B", "E5"]], "rules": "chinese", "komi": 7.5, "boardXSize": 7,
            "boardYSize": 7}


def test_override_settings_report_winrates_for_black_per_query_and_name_the_rest_once():
    # White to move; KaTrain asks every query for Black's view and sends wideRootNoise each time.
    plain = {"id": "side", **POSITION, "maxVisits": 32}
    black = {"id": "black", **POSITION, "maxVisits": 32,
             "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", "wideRootNoise": 0.04}}
    again = {**black, "id": "again"}
    replies, _ = ask(plain, black, again)
    answers = {r["id"]: r for r in replies if "turnNumber" in r}
    warnings = [r for r in replies if "warning" in r]
    assert answers["black"]["rootInfo"]["winrate"] == pytest.approx(1 - answers["side"]["rootInfo"]["winrate"], abs=1e-6)
    assert answers["black"]["rootInfo"]["scoreLead"] == pytest.approx(-answers["side"]["rootInfo"]["scoreLead"], abs=1e-4)
    assert len(warnings) == 1 and "wideRootNoise" in warnings[0]["warning"]


def test_avoid_moves_and_allow_moves_limit_the_root():
    avoid = ["D4", "D5", "C4", "E4", "pass"]
    replies, _ = ask({"id": "avoid", **POSITION, "maxVisits": 64,
                      "avoidMoves": [{"player": "W", "moves": avoid, "untilDepth": 1},
                                     {"player": "B", "moves": ["A1"], "untilDepth": 1}]},
                     {"id": "allow", **POSITION, "maxVisits": 64,
                      "allowMoves": [{"player": "W", "moves": ["A1", "G7"], "untilDepth": 1}]},
                     {"id": "bad", **POSITION, "avoidMoves": [{"player": "W", "moves": ["Z9"], "untilDepth": 1}]})
    by_id = {r["id"]: r for r in replies}
    searched = {m["move"] for m in by_id["avoid"]["moveInfos"]}
    assert searched and not searched & set(avoid)
    assert {m["move"] for m in by_id["allow"]["moveInfos"]} == {"A1", "G7"}
    assert by_id["allow"]["rootInfo"]["visits"] == 64
    assert by_id["bad"]["field"] == "avoidMoves" and "Z9" in by_id["bad"]["error"]


def test_moves_ownership_and_exact_visits():
    # L4 x K4 = 16 playouts a round: 21 and 37 are met exactly, not rounded up to 32 and 48.
    replies, _ = ask({"id": "own", **POSITION, "maxVisits": 21, "includeOwnership": True,
                      "includeMovesOwnership": True},
                     {"id": "more", **POSITION, "maxVisits": 37, "reportDuringSearchEvery": 60})
    by_id = {r["id"]: r for r in replies}
    infos = by_id["own"]["moveInfos"]
    assert by_id["own"]["rootInfo"]["visits"] == 21 and by_id["more"]["rootInfo"]["visits"] == 37
    assert all(len(m["ownership"]) == 49 and all(-1 <= o <= 1 for o in m["ownership"]) for m in infos)
    # The root's ownership is the visit-weighted mean of the moves' (every playout goes through one).
    mean = [sum(m["visits"] * m["ownership"][i] for m in infos) / 21 for i in range(49)]
    assert mean == pytest.approx(by_id["own"]["ownership"], abs=1e-4)
    assert "ownership" not in by_id["more"]["moveInfos"][0]


def test_higher_priority_queries_are_answered_first():
    first = {"id": "first", **POSITION, "maxVisits": 400}
    low = {"id": "low", **POSITION, "maxVisits": 16}
    high = {"id": "high", **POSITION, "maxVisits": 16, "priority": 5}
    replies, _ = ask(first, low, high, extra=["--batch", "1"])
    order = [r["id"] for r in replies]
    assert order.index("high") < order.index("low")


def test_max_time_stops_a_turn_before_its_visits():
    replies, _ = ask({"id": "t", **POSITION, "maxVisits": 10_000_000, "overrideSettings": {"maxTime": 0.5}},
                     {"id": "bad", **POSITION, "overrideSettings": {"maxTime": -1}})
    by_id = {r["id"]: r for r in replies}
    assert 0 < by_id["t"]["rootInfo"]["visits"] < 10_000_000
    assert by_id["bad"]["field"] == "overrideSettings" and "maxTime" in by_id["bad"]["error"]
