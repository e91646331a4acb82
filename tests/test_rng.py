"""kernels/rng.py: the playout loop's Threefry-2x32 stream."""

import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels import rng


def test_threefry_matches_the_random123_known_answers():
    # Known-answer vectors of Threefry-2x32-20 (Random123's kat_vectors; also in JAX's tests).
    cases = [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
             ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
             ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]
    for key, counter, want in cases:
        got = rng.threefry2x32(*(jnp.uint32(v) for v in key + counter))
        assert tuple(int(v) for v in got) == want


def test_a_boards_words_depend_on_its_key_and_the_move_alone():
    keys = jax.random.split(jax.random.key(7), 5)
    all_words = rng.step_words(rng.board_keys(keys, 5), jnp.int32(3), 4)
    alone = rng.step_words(rng.board_keys(keys[2:3], 1), jnp.int32(3), 4)
    assert all_words.shape == (5, 4) and all_words.dtype == jnp.uint32
    assert np.array_equal(all_words[2], alone[0])
    later = rng.step_words(rng.board_keys(keys, 5), jnp.int32(4), 4)
    assert len(set(np.asarray(all_words).ravel().tolist()) | set(np.asarray(later).ravel().tolist())) == 40


def test_the_words_look_uniform():
    keys = rng.board_keys(jax.random.key(0), 4096)
    words = np.asarray(rng.step_words(keys, jnp.int32(0), 4)).ravel()
    bits = (words[:, None] >> np.arange(32, dtype=np.uint32)) & 1
    # 16,384 words: each bit is set with frequency 1/2 +- 4 standard errors (0.0156).
    assert np.all(np.abs(bits.mean(0) - 0.5) < 0.016)
    top = words >> 24  # the gate bytes' resolution: 256 values, 64 expected each
    counts = np.bincount(top, minlength=256)
    chi2 = ((counts - 64.0) ** 2 / 64.0).sum()
    assert chi2 < 340  # 255 degrees of freedom; p ~ 0.0003
