"""gojax: Monte-Carlo Go on accelerators.  The public Python API.

    import gojax, jax
    board = gojax.Board(9)                                   # host twin (kernels/host.py)
    res = gojax.run_playouts(gojax.batch_from_host([board]), jax.random.key(0), 1024)
    res.wins / 1024, res.ownership[0]                        # Black's win rate, ownership [P]
    result = gojax.Search(board, gojax.SearchParams()).run(simulations=3000)
    results = gojax.Forest(boards, gojax.SearchParams()).run(1000)  # a tree per board, one call a round

Layers: kernels (rules, playouts) <- search (the MC-RAVE tree) <- gojax (player, GTP, SGF,
match runner, CLI).  Start at README.md.
"""

import os as _os

__version__ = "0.1.0"  # the one place the version is written (pyproject reads it)

# Run in place from a checkout (`python -m gojax` in the repository root, or a copy of it),
# kernels/ and search/ sit beside gojax/: find gojax.kernels and gojax.search there, as the
# installed package maps them (pyproject's package-dir), and from this checkout, not another.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if (not _os.path.isdir(_os.path.join(__path__[0], "kernels"))
        and _os.path.isfile(_os.path.join(_checkout, "kernels", "__init__.py"))):
    __path__.append(_checkout)

from gojax.evaluate import evaluate, plot_ownership
from gojax.kernels.geometry import BLACK, EMPTY, WHITE, CoordinateError, Geometry
from gojax.kernels.host import Board, IllegalMove
from gojax.kernels.playout import PlayoutConfig, PlayoutResult, empty_boards, run_playouts
from gojax.kernels.state import BoardState, batch_from_host, from_host
from gojax.player import Player, PlayerOptions
from gojax.runtime import enable_gpu_graphs, limit_cpu_threads
from gojax.search.device import Simulator
from gojax.search.forest import Forest, merge_roots
from gojax.search.mcts import MoveStats, Search, SearchResult
from gojax.search.params import SearchParams
from gojax.sgf import SgfError, board_to_sgf, load_sgf

__all__ = [
    "BLACK", "WHITE", "EMPTY", "Geometry", "CoordinateError",
    "Board", "IllegalMove",
    "BoardState", "from_host", "batch_from_host",
    "PlayoutConfig", "PlayoutResult", "run_playouts", "empty_boards",
    "Search", "SearchParams", "SearchResult", "MoveStats", "Simulator", "Forest", "merge_roots",
    "Player", "PlayerOptions",
    "load_sgf", "board_to_sgf", "SgfError",
    "evaluate", "plot_ownership",
    "limit_cpu_threads", "enable_gpu_graphs",
]
