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


@pytest.mark.parametrize("per_edge", [True, False])
def test_virtual_loss_adds_to_the_movers_losses_and_refreshes_edge_values(per_edge):
    tree = _random_tree(seed=7)
    params = SearchParams()
    rng = np.random.default_rng(2)
    s = rng.permutation(tree.num_nodes)[:60].astype(np.int64)  # one edge per node: distinct
    a = rng.integers(0, tree.num_actions, len(s)).astype(np.int64)
    tree.legal[s, a] = True
    want = {name: getattr(tree, name).copy() for name in ("n", "w", "node_n")}
    white = tree.to_play[s] == 2
    want["n"][s, a] += np.float32(4)
    want["node_n"][s] += np.float32(4)
    want["w"][s[white], a[white]] += np.float32(4)
    jitter, rows = compiled.jitter_rows(tree, s)
    before = tree.value.copy()
    compiled.virtual_loss(tree.n, tree.w, tree.na, tree.wa, tree.node_n, tree.value, tree.to_play, s, a,
                          np.float32(4), jitter, rows, per_edge, 4.0 * params.rave_bias ** 2, float(params.fpu))
    for name, array in want.items():
        assert np.array_equal(getattr(tree, name), array), name
    if per_edge:
        values = select.edge_values(tree, s, a, params).astype(np.float32) + tree.jitter[a]
        assert np.array_equal(tree.value[s, a].view(np.uint32), values.view(np.uint32))
    else:
        assert np.array_equal(tree.value, before)  # the caller refreshes the rows
