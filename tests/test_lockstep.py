"""Random games played move by move on the device kernels and on the host twin.

Each batch row plays its own game; after every move the boards, ko points, capture counts and
legal masks must match the host's, and at the end so must the area scores.  `play_batch` runs
with a recount budget of one row, so its compaction loop must serve several capturing rows in
one move without mixing them up (batch rows independent).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gojax.kernels import rules
from gojax.kernels.host import Board
from gojax.kernels.state import batch_from_host, from_host, numpy_fields, packed_fields, stack, unpack_fields

legal_batch = jax.jit(jax.vmap(functools.partial(rules.legal_mask, exclude_eyes=False)))
masks_batch = jax.jit(jax.vmap(rules.legal_and_capture_masks))
label_batch = jax.jit(jax.vmap(rules.with_chains))
eyes_batch = jax.jit(jax.vmap(rules.eye_mask))
play_batch = jax.jit(rules.play_batch, static_argnames="recount_rows")
area_batch = jax.jit(jax.vmap(rules.area))
unpack = jax.jit(unpack_fields)


@pytest.mark.parametrize("size, rows, moves, check_every, seed", [
    (5, 6, 150, 1, 0),
    (9, 4, 250, 1, 1),
    pytest.param(19, 2, 420, 6, 2, marks=pytest.mark.slow),
    (7, 3, 200, 1, 3),
])
def test_device_matches_host_move_by_move(size, rows, moves, check_every, seed):
    rng = np.random.default_rng(seed)
    hosts = [Board(size) for _ in range(rows)]
    state = stack([from_host(b) for b in hosts])
    g = hosts[0].geometry
    for t in range(moves):
        if t % check_every == 0:
            legal = np.asarray(legal_batch(state))[:, g.point_to_cell]
            legal2, capture = (np.asarray(x)[:, g.point_to_cell] for x in masks_batch(state))
            # Chains labelled on the device from the colours alone = the host's labelling.
            want, got = batch_from_host(hosts), label_batch(batch_from_host(hosts, chains=False))
            for field in want.__dataclass_fields__:  # chains, and the vectorised copy of the rest
                np.testing.assert_array_equal(np.asarray(getattr(got, field)), np.asarray(getattr(want, field)))
            np.testing.assert_array_equal(legal2, legal)
            # The one-array form the search sends (ko, passes, the last two moves as they come).
            fields, unpacked = numpy_fields(hosts), unpack(packed_fields(hosts))
            for name, want_field in fields.items():
                assert unpacked[name].dtype == want_field.dtype, name
                np.testing.assert_array_equal(np.asarray(unpacked[name]), want_field, err_msg=name)
            eyes = np.asarray(eyes_batch(state, state.to_play))[:, g.point_to_cell]
        cells = []
        for r, b in enumerate(hosts):
            host_legal = b.legal_points(superko=False)
            if t % check_every == 0:
                np.testing.assert_array_equal(np.flatnonzero(legal[r]), host_legal,
                                              err_msg=f"row {r} move {t}\n{b}")
                np.testing.assert_array_equal(eyes[r], [b.is_eye(p, b.to_play) for p in range(size * size)])
                # Capture mask: a legal point next to an opponent chain with one liberty.
                stones, root, libs = b.chain_arrays()
                nb = g.neighbor_table
                takes = ((stones[nb] == 3 - b.to_play) & (libs[root[nb]] == 1)).any(1)
                np.testing.assert_array_equal(capture[r], takes & legal[r], err_msg=f"row {r} move {t}\n{b}")
                # The search's legal moves for a new node: device masks less superko on the host.
                assert b.superko_filter(legal[r], capture[r]) == b.legal_points()
            # Mostly random legal moves (eye fills included), sometimes a pass.
            p = None if (not host_legal or rng.random() < 0.03) else int(rng.choice(host_legal))
            captured = b.play(p, superko=False)
            cells.append(0 if p is None else g.point_to_cell[p])
            b._last_captured = len(captured)
        state, n_captured = play_batch(state, jnp.asarray(cells, jnp.int32), recount_rows=1)
        color = np.asarray(state.color)[:, g.point_to_cell]
        for r, b in enumerate(hosts):
            np.testing.assert_array_equal(color[r], b.stones, err_msg=f"row {r} move {t}")
            assert int(state.ko[r]) == (0 if b.ko is None else g.point_to_cell[b.ko])
            assert int(n_captured[r]) == b._last_captured
            assert int(state.to_play[r]) == b.to_play
    # Pseudo-liberties equal a fresh recount from scratch.
    np.testing.assert_array_equal(np.asarray(state.libs), np.asarray(stack([from_host(b) for b in hosts]).libs))
    owner, diff = area_batch(state.color)
    for r, b in enumerate(hosts):
        black, white, host_owner = b.area()
        assert int(diff[r]) == black - white
        np.testing.assert_array_equal(np.asarray(owner[r])[g.point_to_cell], host_owner)


def test_single_board_play_matches_batched_play():
    rng = np.random.default_rng(7)
    b = Board(9)
    single = from_host(b)
    batched = stack([single])
    play = jax.jit(rules.play)
    for _ in range(120):
        pts = b.legal_points(superko=False)
        p = int(rng.choice(pts)) if pts else None
        b.play(p, superko=False)
        cell = jnp.int32(0 if p is None else b.geometry.point_to_cell[p])
        single, _ = play(single, cell)
        batched, _ = play_batch(batched, cell[None], recount_rows=1)
        for field in ("color", "chain", "libs", "ko", "to_play", "passes"):
            np.testing.assert_array_equal(np.asarray(getattr(single, field)), np.asarray(getattr(batched, field))[0])
