"""SGF in and out through sgfmill: game records for the match runner, `loadsgf`, `printsgf`
and `gojax evaluate`."""

from __future__ import annotations

from sgfmill import sgf

from gojax.kernels.geometry import BLACK, MAX_SIZE, MIN_SIZE, WHITE, opponent
from gojax.kernels.host import Board, IllegalMove

_COLOUR = {BLACK: "b", WHITE: "w"}
_FROM = {"b": BLACK, "w": WHITE}


class SgfError(ValueError):
    """An SGF file that cannot be read or replayed."""


def _point(size: int, move) -> int | None:
    if move is None:
        return None
    row, col = move  # sgfmill: row 0 at the bottom, as ours
    return row * size + col


def _move(size: int, point: int | None):
    return None if point is None else divmod(point, size)


def board_to_sgf(board: Board, setup: dict[int, list[int]] | None = None, result: str | None = None,
                 black: str = "", white: str = "", extra: dict[str, str] | None = None) -> bytes:
    """A game record: `setup` stones (AB/AW), then board.moves."""
    game = sgf.Sgf_game(size=board.size)
    root = game.get_root()
    root.set("KM", board.komi)
    root.set("RU", "Chinese")
    if black:
        root.set("PB", black)
    if white:
        root.set("PW", white)
    if result:
        root.set("RE", result)
    if setup:
        root.set_setup_stones([_move(board.size, p) for p in setup.get(BLACK, [])],
                              [_move(board.size, p) for p in setup.get(WHITE, [])])
        if setup.get(BLACK) and not setup.get(WHITE):
            root.set("HA", len(setup[BLACK]))
    for key, value in (extra or {}).items():
        root.set(key, value)
    node = root
    for color, p in board.moves:
        node = node.new_child()
        node.set_move(_COLOUR[color], _move(board.size, p))
    return game.serialise()


def load_sgf(data: bytes, upto: int | None = None) -> tuple[Board, dict]:
    """Replay an SGF record: (board after `upto` moves (all when None), info dict with keys
    setup, komi, result, handicap, moves (the full list of (colour, point)), history (the
    boards before each move replayed, for undo), notes (what the record did that our rules
    forbid)).

    A record is replayed with basic legality only: the point must be empty and the move no
    suicide.  A ko retake or a repeated whole-board position that the record's own rules
    allowed (situational superko, Japanese rules' long cycles) is played and named in notes;
    positional superko applies to the moves played from there on."""
    try:
        game = sgf.Sgf_game.from_bytes(data)
    except ValueError as err:
        raise SgfError(f"unreadable SGF: {err}") from err
    size = game.get_size()
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise SgfError(f"board size {size} is not supported ({MIN_SIZE}..{MAX_SIZE})")
    try:
        komi = float(game.get_komi())
    except ValueError:
        komi = 7.5
    board = Board(size, komi)
    root = game.get_root()
    try:
        blacks, whites, empties = root.get_setup_stones()
    except ValueError as err:
        raise SgfError(f"bad setup stones: {err}") from err
    setup = {BLACK: [_point(size, m) for m in blacks], WHITE: [_point(size, m) for m in whites]}
    if blacks:
        board.place(setup[BLACK], BLACK)
    if whites:
        board.place(setup[WHITE], WHITE)
    if blacks and not whites:
        board.to_play = WHITE
    if root.has_property("PL"):
        board.to_play = _FROM[root.get("PL")]
    moves = []
    for node in game.get_main_sequence()[1:]:
        try:
            colour, move = node.get_move()
        except ValueError as err:
            raise SgfError(f"bad move: {err}") from err
        if colour is None:
            continue
        moves.append((_FROM[colour], _point(size, move)))
    history, notes = [], []
    for i, (color, p) in enumerate(moves[:upto] if upto is not None else moves):
        history.append(board.copy())
        try:
            waived = board.play_recorded(p, color)
        except IllegalMove as err:
            raise SgfError(f"move {i + 1} ({board.geometry.to_gtp(p)}) is illegal: {err}") from err
        if waived:
            notes.append(f"move {i + 1} ({board.geometry.to_gtp(p)}): {waived}; the record's rules allowed it, so it is"
                         " replayed")
        board.to_play = opponent(color)
    result = root.get("RE") if root.has_property("RE") else None
    handicap = root.get("HA") if root.has_property("HA") else 0
    return board, {"setup": setup, "komi": komi, "result": result, "handicap": handicap, "moves": moves,
                   "history": history, "notes": notes}
