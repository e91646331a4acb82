"""KaTrain (PyPI `katrain`), the analysis GUI, driving `gojax-katago` through its own engine class.

KaTrain starts the executable its user names as KataGo with `analysis -model M -config C
-override-config homeDataDir=...`; here it is gojax-katago, with KaTrain's own config file."""

import os
import shutil
import sys
import threading
import time

import pytest

os.environ.setdefault("KIVY_NO_ARGS", "1")  # Kivy would parse pytest's arguments
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
katrain_engine = pytest.importorskip("katrain.core.engine")

from katrain.core.ai import generate_ai_move  # noqa: E402
from katrain.core.base_katrain import KaTrainBase  # noqa: E402
from katrain.core.constants import AI_SIMPLE_OWNERSHIP, OUTPUT_ERROR  # noqa: E402
from katrain.core.game import Game, KaTrainSGF  # noqa: E402


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
    kt = KaTrainBase(force_package_config=True, debug_level=0)
    errors = []
    kt.log = lambda message, level=0: errors.append(message) if level == OUTPUT_ERROR else None
    config = dict(kt.config("engine"), katago=_gojax_katago(), max_visits=25, fast_visits=16)
    engine = katrain_engine.KataGoEngine(kt, config)
    yield kt, engine, errors
    engine.shutdown(finish=False)


@pytest.mark.slow
def test_katrain_analyses_finds_alternatives_and_plays_simple_ownership(katrain):
    kt, engine, errors = katrain
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
    move, played = generate_ai_move(game, AI_SIMPLE_OWNERSHIP, kt.config(f"ai/{AI_SIMPLE_OWNERSHIP}"))
    assert played is not None and move.player == "W" and not move.is_pass
    assert not errors, errors
