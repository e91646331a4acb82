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
