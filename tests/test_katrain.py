"""KaTrain (PyPI `katrain`), the analysis GUI, driving `gojax-katago` through its own engine class.

KaTrain starts the executable its user names as KataGo with `analysis -model M -config C
-override-config homeDataDir=...`; here it is gojax-katago, with KaTrain's own config file."""

import logging
import os
import shutil
import sys
import threading
import time

import pytest

pytest.importorskip("katrain")  # the `test` extra installs it (pyproject.toml)


def _import_katrain():
    """KaTrain's modules, imported here, not when pytest collects: Kivy's import sets the root
    logger to every level and adds handlers, which the rest of the suite must not see."""
    os.environ.setdefault("KIVY_NO_ARGS", "1")  # Kivy would parse pytest's arguments
    os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        from katrain.core import ai, base_katrain, constants, engine, game
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers
    return ai, base_katrain, constants, engine, game


def _gojax_katago() -> str:
    path = shutil.which("gojax-katago") or os.path.join(os.path.dirname(sys.executable), "gojax-katago")
    assert os.path.exists(path), "gojax-katago is not installed: pip install -e ."
    return path


def _wait(engine, seconds: float = 300) -> None:
    deadline = time.time() + seconds
    while not engine.is_idle() and time.time() < deadline:
        time.sleep(0.1)
    assert engine.is_idle(), "KaTrain's queries were not all answered"


@pytest.fixture
def katrain(tmp_path, monkeypatch):
    monkeypatch.setenv("KIVY_HOME", str(tmp_path / "kivy"))
    modules = _import_katrain()
    ai, base_katrain, constants, engine_module, _ = modules
    kt = base_katrain.KaTrainBase(force_package_config=True, debug_level=0)
    errors = []
    kt.log = lambda message, level=0: errors.append(message) if level == constants.OUTPUT_ERROR else None
    config = dict(kt.config("engine"), katago=_gojax_katago(), max_visits=25, fast_visits=16)
    engine = engine_module.KataGoEngine(kt, config)
    yield kt, engine, errors, modules
    engine.shutdown(finish=False)


@pytest.mark.slow
def test_katrain_analyses_finds_alternatives_and_plays_simple_ownership(katrain):
    kt, engine, errors, (ai, _, constants, _, game_module) = katrain
    Game, KaTrainSGF = game_module.Game, game_module.KaTrainSGF
    assert os.path.basename(engine.command[0]) == "gojax-katago" and "-override-config" in engine.command
    game = Game(kt, engine, move_tree=KaTrainSGF.parse_sgf("(;GM[1]FF[4]SZ[9]KM[7.5]RU[Chinese];B[ee];W[cc];B[gc])"))
    _wait(engine)
    nodes = game.root.nodes_in_tree
    assert len(nodes) == 4 and all(n.analysis_complete for n in nodes)
    assert [n.analysis["root"]["visits"] for n in nodes] == [25] * 4  # maxVisits met exactly (K = 4 playouts a leaf)
    # Find alternatives: KaTrain avoids the moves it has (untilDepth 1); the answer has none of them.
    game.redo(3)
    node = game.current_node
    shown = set(node.analysis["moves"])
    answered = threading.Event()
    alternatives = {}

    def callback(analysis, partial):
        if not partial:
            alternatives.update(analysis)
            answered.set()

    engine.request_analysis(node, callback, find_alternatives=True)
    assert answered.wait(300)
    found = {m["move"] for m in alternatives["moveInfos"]}
    assert found and not found & shown
    # The "Simple ownership" AI reads per-move ownership (includeMovesOwnership).
    strategy = constants.AI_SIMPLE_OWNERSHIP
    move, played = ai.generate_ai_move(game, strategy, kt.config(f"ai/{strategy}"))
    assert played is not None and move.player == "W" and not move.is_pass
    assert not errors, errors
