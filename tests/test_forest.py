"""A forest of G searches, one device call per round, gives tree for tree what G lone searches give."""

import contextlib
import dataclasses
import logging
import os

import numpy as np
import pytest

from gojax.kernels.geometry import BLACK
from gojax.kernels.host import Board
from gojax.kernels.patterns import neighbourhood_indices
from gojax.search import priors
from gojax.search.device import Simulator
from gojax.search.forest import Forest
from gojax.search.mcts import Search
from gojax.search.params import SearchParams
from gojax.search.shape import DEFAULT_MODEL
from gojax.search.tree import TreeStack


def positions():
    out = []
    for moves in ([], ["D4"], ["C3", "E5", "D4"]):
        b = Board(7)
        for v in moves:
            b.play(b.geometry.from_gtp(v))
        out.append(b)
    return out


@contextlib.contextmanager
def host_priors():
    """The nodes given their prior before their round's verdicts were back, inside the block: on
    the host (priors.initialise without device verdicts: the nodes, a list per call) or from
    Simulator.verdicts_now (a descent's: the boards' places in the call, a range per call)."""
    from gojax.search import priors
    original, now, calls = priors.initialise, Simulator.verdicts_now, []

    def spy(tree, nodes, p, codes=None, patterns=None, shapes=None):
        if codes is None:
            calls.append(list(nodes))
        return original(tree, nodes, p, codes, patterns, shapes)

    def spy_now(self, boards):
        calls.append(range(len(boards)))
        return now(self, boards)

    priors.initialise, Simulator.verdicts_now = spy, spy_now
    try:
        yield calls
    finally:
        priors.initialise, Simulator.verdicts_now = original, now


def summary(r):
    return r.move, [(m.move, m.visits, round(m.q, 6) if m.q == m.q else None) for m in r.moves], round(r.root_value, 6)


@pytest.mark.parametrize("prior, pool, in_flight", [("shape", 0.0, "descend"), ("mogo", 0.0, "descend"),
                                                     ("none", 0.0, "descend"), ("shape", 0.5, "descend"),
                                                     ("shape", 0.0, "stop"), ("shape", 0.0, "sidestep")])
def test_each_tree_matches_a_lone_search_with_its_seed(prior, pool, in_flight):
    """poolRave too: each tree's pools travel with its rows of the round; and descents that stop
    at or step around nodes whose playouts are still on the device."""
    base = SearchParams(leaves=4, playouts_per_leaf=4, prior=prior, pool_prob=pool, pool_min_visits=16,
                        in_flight=in_flight)
    params = [dataclasses.replace(base, seed=s) for s in (3, 5, 7)]
    budgets = [64, 96, 32]  # trees stop at different rounds
    forest = Forest(positions(), params).run(budgets, stop_early=False)
    alone = [Search(b, p).run(simulations=n, stop_early=False) for b, p, n in zip(positions(), params, budgets)]
    for f, a, n in zip(forest, alone, budgets):
        assert summary(f) == summary(a) and f.simulations == a.simulations == n


def test_trees_share_one_stack_unless_their_params_differ():
    """Trees whose params differ only in the seed live side by side in one TreeStack and are
    worked on together; a tree with other params keeps its own arrays.  Either way each tree
    gives what it gives alone."""
    base = SearchParams(leaves=4, playouts_per_leaf=4)
    shared = Forest(positions(), [dataclasses.replace(base, seed=s) for s in (1, 2, 3)])
    stacks = {id(s.tree.stack) for s in shared.searches}
    assert len(stacks) == 1 and shared.searches[0].tree.stack is not None
    assert [s.tree.offset for s in shared.searches] == [0, base.max_nodes, 2 * base.max_nodes]
    mixed = [dataclasses.replace(base, seed=1), dataclasses.replace(base, seed=2, prior_equiv=10.0)]
    forest = Forest(positions()[:2], mixed)
    assert all(s.tree.stack is None for s in forest.searches)
    results = forest.run(48, stop_early=False)
    alone = [Search(b, p).run(simulations=48, stop_early=False) for b, p in zip(positions()[:2], mixed)]
    assert [summary(r) for r in results] == [summary(r) for r in alone]


def _resident_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the resident size from /proc")
def test_a_stack_commits_memory_only_for_the_nodes_in_use():
    """128 trees of 20,000 nodes (6.2 GB of 9x9 node arrays) with a root each: only the pages
    of the roots' rows become resident, not a 2 MB huge page per node array per tree (about
    18 MB a tree, 2.3 GB in all, with numpy's own allocation)."""
    before = _resident_kb()
    stack = TreeStack(9, 20000, 128)
    for tree in stack.trees:
        tree.add(Board(9), -1, -1)
    assert _resident_kb() - before < 100_000, "more than 100 MB resident for 128 roots"


def test_trees_are_reused_after_a_move_as_alone():
    params = SearchParams(leaves=4, playouts_per_leaf=4, seed=2)
    forest = Forest(positions()[:2], params)
    forest.run(64)
    for s in forest.searches:
        b = s.root_board.copy()
        b.play(forest.searches[0].tree.boards[0].geometry.from_gtp("B2"))
        assert s.advance(b) in (True, False)
    assert all(r.simulations >= 32 for r in forest.run(32))


def test_a_forest_refuses_what_it_cannot_share():
    with pytest.raises(ValueError, match="same L"):
        Forest(positions()[:2], [SearchParams(leaves=4), SearchParams(leaves=8)])
    with pytest.raises(ValueError, match="one size"):
        Forest([Board(7), Board(9)], SearchParams())
    with pytest.raises(ValueError, match="contextual Monte-Carlo"):
        Forest([Board(7)] * 2, SearchParams(cmc_prob=0.5))
    Forest([Board(7)], SearchParams(cmc_prob=0.5))  # a forest of one: a lone search's tables


def test_root_parallel_player_merges_the_trees_roots():
    import io

    from gojax.kernels.geometry import BLACK, WHITE
    from gojax.player import Player, PlayerOptions
    params = SearchParams(leaves=4, playouts_per_leaf=4, seed=1)
    p = Player(7, 7.5, params, PlayerOptions(simulations=96, trees=3, log=io.StringIO(), resign=False))
    move = p.genmove(BLACK)
    r = p.last
    assert move is not None and r.simulations == 96 and sum(m.visits for m in r.moves) <= 96
    assert r.moves[0].move == r.move and r.pv[0] == r.move
    p.genmove(WHITE)  # the trees are advanced and reused
    assert p.last.simulations == 96


@pytest.mark.parametrize("in_flight", ["stop", "sidestep"])
def test_descents_give_no_node_its_prior_on_the_host_unless_asked(in_flight):
    """in_flight stop: a round's descents that reach one of the round's (or the last round's)
    new nodes end there, so the tree grows by fewer nodes than it has leaves; sidestep: they take
    the parent's next best action instead, so every leaf is a new node.  Either way no node but
    the root is given its prior on the host."""
    params = SearchParams(leaves=8, playouts_per_leaf=4, in_flight=in_flight, seed=1)
    with host_priors() as on_host:
        search = Search(positions()[0], params)
        result = search.run(simulations=320, stop_early=False)
    assert on_host == [[0]]  # the root alone, when the search was made
    if in_flight == "stop":
        assert result.nodes < 1 + 320 // 4
    else:
        assert result.nodes == 1 + 320 // 4
    assert bool(search.tree.initialised[:result.nodes].all())


def forest_with_host_priors(trees: int, **settings):
    """A forest of `trees` trees (480 simulations each, L8 x K4, seeds 1 ..) run with `settings`:
    its trees, and the nodes that got their prior on the host (no device verdicts)."""
    with host_priors() as calls:
        base = SearchParams(leaves=8, playouts_per_leaf=4, **settings)
        forest = Forest(positions()[:trees], [dataclasses.replace(base, seed=s) for s in range(1, trees + 1)])
        forest.run(480, stop_early=False)
    return [s.tree for s in forest.searches], [n for nodes in calls for n in nodes]


def assert_same_trees(these, those):
    """Every node's statistics, prior and cached value bit for bit the same."""
    for a, b in zip(these, those):
        k = a.num_nodes
        assert k == b.num_nodes > 50
        for name in ("child", "legal", "initialised", "n", "w", "na", "wa", "node_n", "prior", "value"):
            assert (getattr(a, name)[:k] == getattr(b, name)[:k]).all(), name


@pytest.mark.parametrize("trees", [1, 3])
def test_verdicts_ahead_change_no_statistic_and_save_host_priors(trees):
    """With the leaf verdicts sent ahead of the playouts, the next round's descents find the
    last round's nodes with their device priors: every node's statistics, prior and cached
    value are what the host priors gave them, bit for bit, and fewer nodes get a host prior."""
    off, host_off = forest_with_host_priors(trees, verdicts_ahead=False)
    on, host_on = forest_with_host_priors(trees, verdicts_ahead=True)
    assert_same_trees(off, on)
    assert 2 * len(host_on) < len(host_off)


@pytest.mark.parametrize("trees", [1, 3])
def test_waves_change_no_statistic_and_take_same_round_priors_off_the_host(trees):
    """SearchParams.waves: a round's descents in waves, each wave's new nodes given their
    priors by a device call before the next wave descends.  Every node's statistics, prior and
    cached value are bit for bit those of one wave; with a wave per descent no node but the
    roots gets its prior on the host."""
    runs = {w: forest_with_host_priors(trees, waves=w) for w in (1, 2, 8)}
    assert_same_trees(runs[1][0], runs[2][0])
    assert_same_trees(runs[1][0], runs[8][0])
    assert len(runs[8][1]) == trees  # the roots
    if trees > 1:  # a lone tree on 7x7 meets none of its round's new nodes again here
        assert trees < len(runs[2][1]) < len(runs[1][1])
    with pytest.raises(ValueError, match="waves"):
        SearchParams(leaves=4, waves=5)


def test_nodes_expand_after_their_own_simulations_in_a_forest_as_alone():
    """expand_after: a node gets children only once N simulations went through it; the leaves
    below a younger node are played without a new node.  Fewer nodes, every simulation counted,
    and tree for tree what a lone search gives."""
    base = SearchParams(leaves=4, playouts_per_leaf=4, expand_after=8)
    params = [dataclasses.replace(base, seed=s) for s in (3, 5)]
    forest = Forest(positions()[:2], params)
    results = forest.run(160, stop_early=False)
    alone = [Search(b, p).run(simulations=160, stop_early=False) for b, p in zip(positions()[:2], params)]
    assert [summary(r) for r in results] == [summary(r) for r in alone]
    for search, r in zip(forest.searches, results):
        t = search.tree
        assert sum(m.visits for m in r.moves) == 160
        assert 1 + 160 // 16 < r.nodes < 1 + 160 // 4  # some leaves made a node, not all
        kids = t.parent[1:r.nodes]
        assert (t.sims[kids] >= 8).all()


def test_the_verdicts_ahead_are_the_rounds_own():
    """Simulator.submit(ahead=True): the NodeFeatures that come back before the playouts are
    the legal and capture masks and MoGo codes of the same leaf positions (row for row, padded
    rows included), equal to what the round's result carries."""
    from gojax.search.device import Simulator
    params = SearchParams(leaves=4, playouts_per_leaf=2)
    sim = Simulator(params)
    rows = [positions(), positions()[1:]]  # two trees, the second with one leaf fewer (padded)
    call = sim.submit(rows, np.zeros((2, 2), np.uint32), [1, 1], ahead=True)
    v, r = call.verdicts.result(), call.result.result()
    assert v.legal.shape == (8, 49) and v.prior.dtype == np.int8
    np.testing.assert_array_equal(v.legal, r.start_legal)
    np.testing.assert_array_equal(v.capture, r.start_capture)
    np.testing.assert_array_equal(v.prior, r.start_prior)
    g = positions()[2].geometry
    assert v.legal[2, g.from_gtp("D4")] == 0 and v.legal[2, g.from_gtp("A1")] == 1  # C3 E5 D4: D4 taken
    assert sim.submit(rows, np.zeros((2, 2), np.uint32), [2, 2]).verdicts is None
    # The default shape prior's sums come with them; a model with diamonds reads each point's
    # 3x3 neighbourhood off them instead: the host's index, colours as they lie (every point,
    # empty or not, so the padded rows too).
    assert v.shape is not None and v.pattern is None
    diamond = Simulator(dataclasses.replace(params, shape_model=str(DEFAULT_MODEL.with_name("shape9_diamond.npz"))))
    v = diamond.submit(rows, np.zeros((2, 2), np.uint32), [1, 1], ahead=True).verdicts.result()
    boards = [b for bs in rows for b in bs + [bs[0]] * (4 - len(bs))]
    np.testing.assert_array_equal(v.pattern, neighbourhood_indices(np.stack([b.stones for b in boards]), 7, BLACK))
    assert Simulator(dataclasses.replace(params, prior="mogo")).submit(rows, np.zeros((2, 2), np.uint32), [1, 1],
                                                                      ahead=True).verdicts.result().pattern is None


@pytest.mark.parametrize("prior", ["shape", "shape_wins"])
def test_shape_priors_from_the_devices_neighbourhoods_equal_the_hosts(prior):
    """A new node's shape prior from the device's neighbourhood indices, or from its partial
    strengths (the round's verdicts), is the one the host computes from the node's board and
    the tree, bit for bit, for Black and White to move."""
    params = SearchParams(leaves=4, playouts_per_leaf=2, prior=prior)
    search = Search(positions()[2], params)
    search.run(simulations=96, stop_early=False)
    tree = search.tree
    nodes = np.arange(1, tree.num_nodes)
    assert set(tree.to_play[nodes].tolist()) == {1, 2}
    boards = [tree.boards[n] for n in nodes]
    near = neighbourhood_indices(np.stack([b.stones for b in boards]), 7, BLACK)  # what the device sends
    rows, acts = np.nonzero(tree.legal[nodes])
    point = acts != tree.pass_action
    want = priors._heuristic(tree, nodes, rows, acts, params, None)
    got = priors._heuristic(tree, nodes, rows, acts, params, None, near)
    np.testing.assert_array_equal(got, want)
    assert point.sum() > 100
    v = Simulator(params).verdicts_now(boards)
    assert v.shape is not None and v.shape.dtype == np.float32
    codes = priors._heuristic(tree, nodes, rows, acts, params, v.prior, v.pattern, v.shape)
    np.testing.assert_array_equal(codes, want)


def test_verdicts_now_give_what_the_host_twin_gives():
    """The verdicts a forest's descents ask for mid-round (nodes of the round itself), from
    compiled code on the host's CPU in blocks of at most 8, padded to a power of two: each
    board's legal points (simple ko) and MoGo values as the host twin computes them, for more
    boards than one block holds (8, then 3 padded to 4)."""
    boards = []
    for moves in (["D4", "C4", "E4", "D5", "D3"], ["C3", "E5", "D4", "pass"], ["B2", "B3", "C2", "C3"]):
        b = Board(7)
        for v in moves:
            b.play(None if v == "pass" else b.geometry.from_gtp(v))
        boards.append(b)
    boards = ((positions() + boards) * 2)[:11]
    v = Simulator(SearchParams()).verdicts_now(boards)
    assert v.legal.shape == v.prior.shape == (11, 49)
    for i, b in enumerate(boards):
        points = b.legal_points(superko=False)
        assert np.flatnonzero(v.legal[i]).tolist() == points
        np.testing.assert_array_equal(priors.values_from_codes(b, points, v.prior[i]), priors.mogo_values(b, points))


def test_a_forest_benchmark_compiles_nothing_while_it_times(caplog):
    """`gojax bench --search --trees G` compiles before its timed forests: the round's shapes and
    every block of same-round verdicts (a first timed forest that met a new block size paid a
    compile on the search thread, counted as host CPU per leaf)."""
    import jax

    from gojax.bench import bench_forest
    with contextlib.ExitStack() as timed:
        bench_forest(board=5, simulations=128, trees=8, params=SearchParams(leaves=4, playouts_per_leaf=4),
                     repeats=1, policy_repeats=0, progress=False, ready=lambda: timed.enter_context(jax.log_compiles()))
    # jax.log_compiles reports at WARNING (compiles outside it log at DEBUG).
    assert not [r.getMessage() for r in caplog.records if "Compiling" in r.getMessage() and r.levelno >= logging.WARNING]


def test_same_round_verdicts_count_as_device_wait_not_host_work(monkeypatch):
    """A descent that meets a node of its own round waits for that node's verdicts from compiled
    code (Simulator.verdicts_now; on a CPU backend they queue behind the round's playouts).  The
    forest's timing counts that wait with the device's, not as host work: made slow here, it
    lands wholly in device_wait_seconds, and host plus wait never exceed the wall time."""
    import time

    slow = Simulator._verdicts_on

    def slower(self, boards, device=None):
        time.sleep(0.02)
        return slow(self, boards, device)

    monkeypatch.setattr(Simulator, "_verdicts_on", slower)
    with host_priors() as calls:
        forest = Forest(positions(), [SearchParams(leaves=8, playouts_per_leaf=4, seed=s) for s in (1, 2, 3)])
        forest.run(480, stop_early=False)
    t, waited = forest.last_timing, forest.simulator.verdicts_now_seconds
    assert any(isinstance(c, range) for c in calls) and waited >= 0.02
    assert t["device_wait_seconds"] >= waited
    assert t["host_seconds"] + t["device_wait_seconds"] <= t["seconds"] + 1e-6
    assert t["host_seconds"] < t["seconds"] - waited + 1e-6


@pytest.mark.parametrize("budgets", [[25, 32], [3, 1], [37, 16]])
def test_exact_budgets_are_spent_to_the_playout(budgets):
    # L4 x K4 = 16 playouts a round; without `exact` 25 would round up to 32.
    params = SearchParams(leaves=4, playouts_per_leaf=4)
    board = Board(9, 7.5)
    forest = Forest([board, board], params)
    results = forest.run(budgets, stop_early=False, exact=True)
    for search, r, budget in zip(forest.searches, results, budgets):
        tree = search.tree
        assert r.simulations == budget == tree.sims[search.root] == sum(m.visits for m in r.moves)
        assert tree.na.min() >= 0 and (tree.n >= 0).all()  # the dropped leaves' virtual loss is gone
    rounded = Forest([board], params).run(25, stop_early=False)
    assert rounded[0].simulations == 32


def test_a_player_with_exact_simulations_spends_them_all():
    from gojax.player import Player, PlayerOptions
    params = SearchParams(leaves=4, playouts_per_leaf=4)
    for trees in (1, 2):
        player = Player(7, 7.5, params, PlayerOptions(simulations=38, exact=True, verbose=False, trees=trees))
        assert player.think(BLACK).simulations == 38


def test_the_learnt_prior_from_the_rounds_verdicts_equals_the_hosts():
    """--prior learnt: a new node's prior from the round's verdicts (the learnt model's
    log-strengths, computed with the playouts' leaf positions) is the one the host computes
    for the node's board; the search plays on 9x9, the model's board size."""
    board = Board(9, 7.5)
    for v in ("E5", "C3", "G7", "D4"):
        board.play(board.geometry.from_gtp(v))
    params = SearchParams(leaves=4, playouts_per_leaf=2, prior="learnt")
    search = Search(board, params)
    search.run(simulations=96, stop_early=False)
    tree = search.tree
    nodes = np.arange(1, tree.num_nodes)
    assert set(tree.to_play[nodes].tolist()) == {1, 2}
    rows, acts = np.nonzero(tree.legal[nodes])
    want = priors._heuristic(tree, nodes, rows, acts, params, None)
    v = Simulator(params).verdicts_now([tree.boards[n] for n in nodes])
    assert v.shape is not None
    got = priors._heuristic(tree, nodes, rows, acts, params, v.prior, v.pattern, v.shape)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    point = acts != tree.pass_action
    assert len(np.unique(np.round(want[point], 4))) > 5  # the model ranks the moves: not one flat value
