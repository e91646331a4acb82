"""The tree's packed positions (Tree.pos) and the host boards made on demand (NodeBoards)."""

import numpy as np

from gojax.kernels.host import Board
from gojax.kernels.state import packed_after_pass, packed_after_plain, packed_fields
from gojax.search.forest import Forest
from gojax.search.params import SearchParams


def played(size: int, moves: list[str]) -> Board:
    b = Board(size)
    for v in moves:
        b.play(b.geometry.from_gtp(v) if v != "pass" else None)
    return b


def test_a_plain_moves_and_a_passes_rows_are_the_boards():
    """packed_after_plain and packed_after_pass give packed_fields of the host twin's boards."""
    b = played(7, ["D4", "D5", "C5", "pass", "E5"])
    rows = packed_fields([b, b])
    points = [b.geometry.from_gtp("B2"), b.geometry.from_gtp("F6")]
    assert (packed_after_plain(rows, np.array(points), b.geometry)
            == packed_fields([b.after(p, plain=True) for p in points])).all()
    once = b.after(None)
    assert (packed_after_pass(rows) == packed_fields([once, once])).all()
    assert (packed_after_pass(packed_fields([once])) == packed_fields([once.after(None)])).all()


def replayed(tree, root: int, node: int) -> Board:
    """Node's position by the host twin: its root's board and the tree moves down to it."""
    actions = []
    while node != root:
        actions.append(int(tree.parent_action[node]))
        node = int(tree.parent[node])
    b = tree.boards[root]
    for a in reversed(actions):
        b = b.after(None if a == tree.pass_action else a)
    return b


def check_nodes(tree, root: int) -> int:
    """Every node's row, superko fields and board (made now where it had none) are its
    position's; returns how many nodes had no board before."""
    lazy = [i for i in range(tree.num_nodes) if tree.boards.held(i) is None]
    for i in range(tree.num_nodes):
        want = replayed(tree, root, i)
        got = tree.boards[i]
        assert (got.hash, got.to_play, got.ko, got.passes, got.peak_stones, got.emptied) == \
               (want.hash, want.to_play, want.ko, want.passes, want.peak_stones, want.emptied), i
        assert got.seen == set(want.seen) and (got.stones == want.stones).all()
        assert (tree.pos[i] == packed_fields([want])[0]).all(), i
        assert (tree.stones[i], tree.peak[i], tree.emptied[i]) == \
               (np.count_nonzero(want.stones), want.peak_stones, bool(want.emptied)), i
        anchor = tree.boards.held(int(tree.anchor[i]))
        assert anchor is not None and anchor.emptied == want.emptied, i
    return len(lazy)


def test_nodes_made_by_plain_moves_and_passes_get_their_boards_on_demand():
    """After a capture (so that superko tests apply) and on an empty board, in a forest: most
    nodes are made without a host board, and each one's row, superko fields and board made on
    demand are those of replaying its path; after a move that keeps the subtree, again."""
    taken = played(7, ["D4", "D5", "C5", "A1", "E5", "A2", "D6"])  # White's D5 is taken
    assert taken.emptied
    forest = Forest([taken, Board(7)], SearchParams(leaves=4, playouts_per_leaf=4, seed=3))
    forest.run(256, stop_early=False)
    for s in forest.searches:
        assert check_nodes(s.tree, s.root) > s.tree.num_nodes // 2
    s = forest.searches[0]
    best = int(np.argmax(s.tree.n[s.root]))
    b = s.root_board.copy()
    b.play(None if best == s.tree.pass_action else best)
    assert s.advance(b)
    check_nodes(s.tree, s.root)


def test_a_lone_searchs_nodes_get_their_boards_on_demand_too():
    """A lone search makes its leaves one at a time (steps._descend_one): the same rows and fields."""
    from gojax.search.mcts import Search
    taken = played(7, ["D4", "D5", "C5", "A1", "E5", "A2", "D6"])
    search = Search(taken, SearchParams(leaves=4, playouts_per_leaf=4, seed=5))
    search.run(simulations=256, stop_early=False)
    assert check_nodes(search.tree, search.root) > search.tree.num_nodes // 2
