"""Shared helpers: ASCII boards, GTP vertices, and the device kernels for one board."""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gojax.kernels import rules
from gojax.kernels.geometry import BLACK, WHITE
from gojax.kernels.host import Board
from gojax.kernels.state import from_host


def board(text: str, to_play: str = "B", komi: float = 7.5) -> Board:
    return Board.from_ascii(text, BLACK if to_play.upper() == "B" else WHITE, komi)


def vertices(b: Board, points) -> set[str]:
    return {b.geometry.to_gtp(int(p)) for p in points}


@functools.cache
def device_fns():
    """Jitted single-board kernels (compiled once per board size by jit's cache)."""
    return dict(
        legal=jax.jit(functools.partial(rules.legal_mask, exclude_eyes=False)),
        legal_playout=jax.jit(functools.partial(rules.legal_mask, exclude_eyes=True)),
        eyes=jax.jit(rules.eye_mask),
        play=jax.jit(rules.play),
        area=jax.jit(rules.area),
    )


def device_legal(b: Board, exclude_eyes: bool = False) -> set[str]:
    f = device_fns()["legal_playout" if exclude_eyes else "legal"]
    mask = np.asarray(f(from_host(b)))[b.geometry.point_to_cell]
    return vertices(b, np.flatnonzero(mask))


def device_play(b: Board, vertex: str) -> Board:
    """Play on the device from b; returns a host board holding the device's stones and ko."""
    g = b.geometry
    p = g.from_gtp(vertex)
    cell = 0 if p is None else int(g.point_to_cell[p])
    s, _ = device_fns()["play"](from_host(b), jnp.int32(cell))
    out = b.copy()
    out.stones = np.asarray(s.color)[g.point_to_cell].astype(np.int8)
    ko_cell = int(s.ko)
    out.ko = None if ko_cell == 0 else int(g.cell_to_point[ko_cell])
    return out


def gnugo_path() -> str:
    """GNU Go's binary (Debian installs it to /usr/games); fails loudly when missing."""
    import shutil
    for path in (shutil.which("gnugo"), "/usr/games/gnugo", "/usr/bin/gnugo"):
        if path and os.path.exists(path):
            return path
    pytest.fail("GNU Go is not installed: `apt-get install gnugo` (.ci/run does this)")
