"""bench/tree_values.py: a tree's node values set against a teacher's, node by node."""

import json
import subprocess
import sys

from bench.tree_values import matched, summary


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_nodes_meet_their_labels_by_game_move_and_branch(tmp_path):
    nodes, labels = tmp_path / "tree_lines.jsonl", tmp_path / "policy.jsonl"
    _write(nodes, [{"game": 1, "move": 30, "branch": [55], "sims": 136, "black_wins": 0.25},
                   {"game": 1, "move": 30, "branch": [52, 61], "sims": 40, "black_wins": 0.75},
                   {"game": 2, "move": 8, "branch": [40], "sims": 300, "black_wins": 0.5},
                   {"game": 3, "move": 9, "branch": [40]}])  # an older line without the node's value
    _write(labels, [{"game": 1, "move": 30, "branch": [52, 61], "value": 0.9, "policy": []},
                    {"game": 1, "move": 30, "branch": [55], "value": 0.1, "policy": []},
                    {"game": 2, "move": 8, "branch": [41], "value": 0.5, "policy": []},
                    {"game": 3, "move": 9, "branch": [40], "value": 0.5, "policy": []}])
    rows = matched(str(nodes), str(labels))
    assert rows == [(1, 136, 0.25, 0.1), (2, 40, 0.75, 0.9)]  # game 2's branch differs; game 3 has no value
    three = rows + [(1, 300, 0.5, 0.5)]
    # tree 0.25, 0.75, 0.5 vs teacher 0.1, 0.9, 0.5: a perfect correlation, squared error 0.015
    assert "correlation +1.000  squared error 0.0150" in summary(three)
    out = subprocess.run([sys.executable, "bench/tree_values.py", "--nodes", str(nodes), "--labels", str(labels)],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("all:      2 nodes") and "depth 2:      1 nodes" in out
    missing = subprocess.run([sys.executable, "bench/tree_values.py", "--nodes", str(nodes), "--labels", str(nodes)],
                             capture_output=True, text=True)
    assert missing.returncode != 0 and "has a label" in missing.stderr


def test_a_value_net_is_screened_on_the_same_nodes_alone_and_mixed(tmp_path):
    """Three nodes of one game packed as bench/teacher_policy.py packs a tree's labels; the value
    net's column must be its own values at those positions, in the labels' order."""
    import numpy as np

    from bench.teacher_policy import pack_tree
    from bench.tree_values import mixes, net_values
    net = "bench/results/teacher/katago9_policy/net9_value.npz"  # a committed net with a value head
    policy = [1.0 / 81] * 81
    labels = [{"game": 0, "move": 2, "branch": [22], "value": 0.3, "policy": policy},  # E3 (Black) after E5 D4
              {"game": 0, "move": 2, "branch": [58, 57], "value": 0.8, "policy": policy},
              {"game": 0, "move": 2, "branch": [22, 23], "value": 0.6, "policy": policy}]
    data = {"moves": np.array([[40, 30, 31, -2]], np.int16), "first_white": np.array([False]),
            "komi": np.array([7.5], np.float32)}
    pack_tree(data, 9, tmp_path, labels, "a test game", "--test")
    _write(tmp_path / "policy.jsonl", labels)
    values = net_values(net, str(tmp_path / "positions.npz"), str(tmp_path / "policy.jsonl"))
    assert set(values) == {(0, 2, (22,)), (0, 2, (58, 57)), (0, 2, (22, 23))}
    assert all(0.0 < v < 1.0 for v in values.values())
    # the same positions through the search's own path (prior_net.black_value on device boards)
    from gojax.kernels import prior_net
    from gojax.kernels.host import Board
    from gojax.kernels.state import batch_from_host
    for branch in [(22,), (58, 57), (22, 23)]:
        board = Board(9)
        for p in [40, 30] + list(branch):
            board.play(p)
        want = float(prior_net.black_value(batch_from_host([board]), net)[0])
        assert abs(values[(0, 2, branch)] - want) < 1e-4
    rows = [(1, 40, 0.5, 0.3), (2, 40, 0.7, 0.8), (2, 40, 0.6, 0.6)]
    keys = [(0, 2, (22,)), (0, 2, (58, 57)), (0, 2, (22, 23))]
    lines = mixes(rows, values, keys)
    assert lines[0].startswith("  the tree alone") and "3 nodes" in lines[0] and "mixed, w = 0.25" in lines[2]
    wrong = tmp_path / "other.jsonl"
    _write(wrong, [dict(r, value=0.5) for r in labels])
    try:
        net_values(net, str(tmp_path / "positions.npz"), str(wrong))
    except SystemExit as err:
        assert "not the --pack" in str(err)
    else:
        raise AssertionError("labels that are not the positions' must be refused")
