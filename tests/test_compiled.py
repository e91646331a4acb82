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
    tree.prior[:] = rng.random(shape).astype(np.float32)
    tree.initialised[:] = rng.random(nodes) < 0.9
    return tree


@pytest.mark.parametrize("settings", [
    {}, {"schedule": "hand"}, {"selection": "uct"}, {"selection": "uct", "uct_c": 0.7, "fpu": 0.3},
    {"rave_c": 0.1}, {"schedule": "hand", "rave_c": 0.2}, {"fpu": 0.0}, {"rave_bias": 0.1}, {"puct": 1.5},
    {"selection": "uct", "puct": 0.5}])
@pytest.mark.parametrize("per_row", [False, True])
def test_refresh_gives_the_bits_of_values_plus_jitter(settings, per_row):
    tree = _random_tree(seed=len(settings))
    params = dataclasses.replace(SearchParams(), **settings)
    rng = np.random.default_rng(1)
    nodes = rng.permutation(tree.num_nodes)[:200].astype(np.int64)
    jitter = (rng.random((len(nodes), tree.num_actions) if per_row else tree.num_actions) * 1e-6).astype(np.float32)
    want = select.values(tree, nodes, params) + jitter
    select.refresh(tree, nodes, params, jitter)  # compiled.refresh, with the PUCT term where asked
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


def test_compiled_backup_gives_the_bits_of_the_numpy_backup_with_rule_first():
    """Paths that replay points (captures, ko) and pass, share their root and end with or
    without a new node; virtual loss on them; tables in halves; win sums made uneven by a prior:
    the compiled backup and the numpy one (backup._path_credits's rule "first") agree bit for bit."""
    from gojax.search import backup
    from gojax.search.backup import Leaf
    rng = np.random.default_rng(11)
    tree = _random_tree(seed=3, nodes=400)
    tree.w[:] += rng.random(tree.w.shape).astype(np.float32) * 3  # a prior's M * H: not halves
    tree.wa[:] += rng.random(tree.wa.shape).astype(np.float32) * 3
    pass_action, leaves = tree.pass_action, []
    for _ in range(24):  # node 0 the root of every path; T actions lead through T or T + 1 nodes
        actions = rng.choice([0, 1, 2, 3, pass_action], rng.integers(0, 9)).tolist()
        m = max(len(actions) + int(rng.integers(0, 2)), 1)
        nodes = [0] + rng.permutation(np.arange(1, tree.num_nodes))[:m - 1].tolist()
        leaves.append(Leaf(nodes, actions, None, virtual=float(rng.integers(0, 2) * 4)))
    n, k = len(leaves), 4
    wins = rng.integers(0, 2 * k + 1, n).astype(np.float32) / 2
    first = rng.integers(-2, 81, (n, k))
    z = rng.integers(0, 3, (n, k)).astype(np.float32) / 2
    count = rng.integers(0, 2 * k + 1, (n, 2, 81)).astype(np.float32) / 2
    won = np.floor(count * rng.random(count.shape)).astype(np.float32)
    score = rng.integers(-40, 40, n).astype(np.float32) + 0.5
    names = ("n", "w", "na", "wa", "node_n", "sims", "wins", "score")
    before = {name: getattr(tree, name).copy() for name in names}
    backup.backup_round(tree, leaves, k, wins, first, z, count, won, "first", score)
    got = {name: getattr(tree, name).copy() for name in names}
    for name in names:
        getattr(tree, name)[:] = before[name]
    pairs = backup._pairs(leaves, None)
    backup._back_up_totals(tree, pairs, None, k, wins, score)
    backup._back_up_mc_edges(tree, pairs, None, k, wins, np.array([leaf.virtual for leaf in leaves], np.float32),
                             first, z)
    backup._back_up_amaf(tree, pairs, leaves, None, k, wins, count, won, "first")
    for name in names:
        assert np.array_equal(getattr(tree, name).view(np.uint32), got[name].view(np.uint32)), name
