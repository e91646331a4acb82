"""Random words for the playout loop: Threefry-2x32, 20 rounds (Salmon et al. 2011, the generator
behind jax.random's default keys), written out round by round.

Why not jax.random inside the loop: on the CPU JAX lowers every threefry call to a 5-iteration
while loop, and a playout move with per-board keys needs four of them (fold_in, bits, fold_in,
bits): about 80 tiny kernels per move, as many as the rest of a uniform move.  Written out, the
20 rounds are one elementwise kernel that XLA fuses with its consumers, on any backend.

The stream: each board gets a 64-bit key once per playout batch (`board_keys`, from the JAX key
by jax.random); move t's words are threefry(board key, counter (t, j)) for j = 0, 1, ...  A
counter-based generator: no state is carried from move to move.

Shapes: B boards; keys uint32 [B, 2].
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def _rotl(x: jax.Array, r: int) -> jax.Array:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(k0: jax.Array, k1: jax.Array, x0: jax.Array, x1: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Threefry-2x32-20 of the counter (x0, x1) under the key (k0, k1), all uint32 (broadcast)."""
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def board_keys(key: jax.Array, boards: int) -> jax.Array:
    """uint32 [B, 2]: a key per board from one JAX key (board b gets fold_in(key, b)) or from
    [B] JAX keys (used as they are)."""
    if key.ndim == 0:
        key = jax.vmap(lambda b: jax.random.fold_in(key, b))(jnp.arange(boards))
    return jax.random.key_data(key).astype(jnp.uint32).reshape(boards, 2)


def step_words(keys: jax.Array, t: jax.Array, n: int) -> jax.Array:
    """uint32 [B, n]: the n random words of move t for each board (n <= 4 uses two hashes)."""
    t = jnp.asarray(t, jnp.uint32)
    words = []
    for j in range(-(-n // 2)):
        y0, y1 = threefry2x32(keys[:, 0], keys[:, 1], t, np.uint32(j))
        words += [y0, y1]
    return jnp.stack(words[:n], axis=1)
