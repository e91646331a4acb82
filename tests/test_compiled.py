"""The compiled host loops (search/compiled.py) give the numpy expressions' bits."""

import dataclasses

import numpy as np
import pytest

from gojax.search import compiled, select
from gojax.search.params import SearchParams
from gojax.search.tree import Tree


def _random_tree(seed: int, nodes: int = 300) -> Tree:
    """A 9x9 tree whose rows hold counts and win sums in halves, as backups leave them, some
    actions with no MC or no AMAF data, some illegal, some nodes never visited."""
    rng = np.random.default_rng(seed)
    tree = Tree(9, nodes)
    tree.num_nodes = nodes
    shape = (nodes, tree.num_actions)
    for count, wins in (("n", "w"), ("na", "wa")):
        c = rng.integers(0, 80, shape).astype(np.float32) / 2
        c[rng.random(shape) < 0.3] = 0
        getattr(tree, count)[:] = c
        getattr(tree, wins)[:] = np.floor(rng.random(shape) * (2 * c + 1)) / 2
    tree.node_n[:] = tree.n.sum(1)
    tree.node_n[:4] = 0
    tree.to_play[:] = rng.integers(1, 3, nodes)
    tree.legal[:] = rng.random(shape) < 0.8
    return tree


@pytest.mark.parametrize("settings", [
    {}, {"schedule": "hand"}, {"selection": "uct"}, {"selection": "uct", "uct_c": 0.7, "fpu": 0.3},
    {"rave_c": 0.1}, {"schedule": "hand", "rave_c": 0.2}, {"fpu": 0.0}, {"rave_bias": 0.1}])
@pytest.mark.parametrize("per_row", [False, True])
def test_refresh_gives_the_bits_of_values_plus_jitter(settings, per_row):
    tree = _random_tree(seed=len(settings))
    params = dataclasses.replace(SearchParams(), **settings)
    rng = np.random.default_rng(1)
    nodes = rng.permutation(tree.num_nodes)[:200].astype(np.int64)
    jitter = (rng.random((len(nodes), tree.num_actions) if per_row else tree.num_actions) * 1e-6).astype(np.float32)
    want = select.values(tree, nodes, params) + jitter
    compiled.refresh(tree, nodes, params, jitter)
    got = tree.value[nodes]
    assert np.isneginf(got[~tree.legal[nodes]]).all()
    assert np.array_equal(want.view(np.uint32), got.view(np.uint32))
