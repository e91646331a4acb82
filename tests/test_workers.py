"""Playout worker processes (search/workers.py) play a share of each round and change nothing a
search computes: the same playouts, row for row, as one process plays."""

import dataclasses
import os

import jax
import numpy as np
import pytest

from gojax import runtime
from gojax.kernels.host import Board
from gojax.player import Player, PlayerOptions
from gojax.search.device import Simulator
from gojax.search.mcts import Search
from gojax.search.params import SearchParams
from gojax.search.workers import BALANCE_ROUNDS, BALANCE_SKIP, WorkerError, next_cut

BASE = SearchParams(leaves=4, playouts_per_leaf=4, pool_min_visits=16)


def board(*moves: str, size: int = 7) -> Board:
    b = Board(size)
    for v in moves:
        b.play(b.geometry.from_gtp(v))
    return b


def same(a, b) -> None:
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)


@pytest.fixture(scope="module")
def pair():
    """Simulators with and without a worker, for each setting a test asks for (made once)."""
    made = {}

    def get(params):
        if params not in made:
            made[params] = (Simulator(params), Simulator(params, workers=1))
        return made[params]
    yield get
    for _, shared in made.values():
        shared.close()


@pytest.mark.parametrize("prior, reply, pool", [("shape", 1.0, 0.5), ("mogo", 0.0, 0.0)])
def test_a_round_shared_with_a_worker_plays_what_one_process_plays(pair, prior, reply, pool):
    """One tree and a forest's three trees (rows 0-11, cut 0-6 here and 6-12 there); the first
    moves drawn from the prior's logits (prior_reply) and poolRave's cells travel with the rows."""
    params = dataclasses.replace(BASE, prior=prior, prior_reply=reply, pool_prob=pool)
    alone, shared = pair(params)
    trees = [[board(), board("D4"), board("D4", "C3")], [board("C5")], [board("B2", "F6", "D4")]]
    pools = None
    if pool:
        cells = np.zeros((3, 2, params.pool_size), np.int32)
        cells[:, 0, :3], cells[:, 1, :2] = [10, 20, 30], [11, 21]
        pools = [cells, None, cells[:1]]
    keys = np.asarray(jax.random.key_data(jax.vmap(jax.random.key)(np.arange(3))))
    for call in (1, 2):
        same(alone.dispatch(trees[:1], keys[:1], [call], pools and pools[:1]),
             shared.dispatch(trees[:1], keys[:1], [call], pools and pools[:1]))
        same(alone.dispatch(trees, keys, [call, 5, 9], pools), shared.dispatch(trees, keys, [call, 5, 9], pools))
    assert shared.worker_count == 1


def test_every_cut_of_a_round_plays_the_same_playouts(pair):
    """The rows this process keeps (local_rows, moved by the timing of its rounds) change where
    a row plays, never what: one row here and eleven there, then eleven here and one there."""
    alone, shared = pair(BASE)
    trees = [[board(), board("D4")], [board("C5")], [board("B2", "F6", "D4")]]
    keys = np.asarray(jax.random.key_data(jax.vmap(jax.random.key)(np.arange(3))))
    want = alone.dispatch(trees, keys, [3, 4, 5])
    for mine in (1, 11):
        shared.local_rows[(12, 7)] = mine
        same(want, shared.dispatch(trees, keys, [3, 4, 5]))


def test_the_cut_tries_fewer_rows_here_after_a_block_of_rounds(pair):
    """One tree of four rows (the first rounds of that shape on this simulator): two here, two
    there, until a block is timed."""
    _, sim = pair(BASE)
    keys = np.zeros((1, 2), np.uint32)
    for call in range(BALANCE_SKIP + BALANCE_ROUNDS):
        assert sim.local_rows.get((4, 7), 2) == 2
        sim.dispatch([[board(), board("D4"), board("C3"), board("E5")]], keys, [call])
    assert sim.local_rows[(4, 7)] == 1


def test_the_cut_climbs_to_the_fastest_and_keeps_a_row_on_each_side():
    assert next_cut(8, 1, {4: 0.05}) == 3  # fewer rows here first
    assert next_cut(8, 1, {3: 0.04, 4: 0.05}) == 2
    assert next_cut(8, 1, {2: 0.045, 3: 0.04, 4: 0.05}) == 3  # both neighbours slower: stay
    assert next_cut(8, 1, {3: 0.06, 4: 0.05}) == 5
    assert next_cut(8, 1, {1: 0.05}) == 2  # never none here
    assert next_cut(8, 1, {6: 0.05, 7: 0.04}) == 7  # never none for the worker
    assert next_cut(12, 3, {9: 0.05}) == 8  # three workers keep a row each


@pytest.mark.parametrize("in_flight", ["descend", "stop"])
def test_a_search_with_a_worker_is_the_same_search(pair, in_flight):
    """Rounds in flight while the next descends (submit) and verdicts ahead: the same tree."""
    params = dataclasses.replace(BASE, in_flight=in_flight)
    alone, shared = pair(params)
    start = board("D4", "C3")
    a = Search(start, params, alone).run(simulations=96, stop_early=False)
    b = Search(start, params, shared).run(simulations=96, stop_early=False)
    assert (a.move, a.simulations, a.nodes) == (b.move, b.simulations, b.nodes)
    assert [(m.move, m.visits, m.q if m.visits else None) for m in a.moves] == \
        [(m.move, m.visits, m.q if m.visits else None) for m in b.moves]


def test_a_worker_that_dies_is_a_clear_error_not_a_hang():
    sim = Simulator(BASE, workers=1)
    keys = np.zeros((1, 2), np.uint32)
    sim.dispatch([[board()]], keys, [1])
    sim._workers[0]._proc.kill()
    sim._workers[0]._proc.wait()
    with pytest.raises(WorkerError, match="ended"):
        sim.dispatch([[board()]], keys, [2])
    sim.close()


def test_new_rules_keep_the_players_workers():
    """kgs-rules makes a new simulator; its worker, with what it compiled, carries over."""
    player = Player(7, 7.5, BASE, PlayerOptions(simulations=32, verbose=False, playout_workers=1))
    assert player.simulator.worker_count == 0  # started by the first round it shares
    assert player.genmove(player.board.to_play) is not None
    pid = player.simulator._workers[0]._proc.pid
    player.set_rules("tromp-taylor")
    assert player.simulator.worker_count == 1 and player.simulator._workers[0]._proc.pid == pid
    assert player.genmove(player.board.to_play) is not None
    player.simulator.close()


def test_workers_start_at_the_first_round_on_a_board_they_share():
    """share_from 9: a 7x7 round stays in this process (and its result is one process's), a 9x9
    round starts the worker; a 7x7 round after it is still not shared."""
    alone, shared = Simulator(BASE), Simulator(BASE, workers=1, share_from=9)
    keys = np.zeros((1, 2), np.uint32)
    same(alone.dispatch([[board()]], keys, [1]), shared.dispatch([[board()]], keys, [1]))
    assert shared.worker_count == 0
    nine = [[Board(9), board("E5", size=9)]]
    same(alone.dispatch(nine, keys, [2]), shared.dispatch(nine, keys, [2]))
    assert shared.worker_count == 1
    shared._workers[0]._proc.kill()  # a share sent to it now would fail: none is
    shared._workers[0]._proc.wait()
    same(alone.dispatch([[board()]], keys, [3]), shared.dispatch([[board()]], keys, [3]))
    shared.close()


def test_workers_are_chosen_for_a_small_batch_search_on_a_cpu_only():
    cores = len(os.sched_getaffinity(0))
    assert runtime.auto_playout_workers(None, 32) == cores - 1  # any size: they start on 13x13 and more
    assert runtime.auto_playout_workers(1, 32) == 0  # --cpu-threads given: the user's layout
    assert runtime.auto_playout_workers(None, 256) == 0  # forests split over devices
    assert runtime.auto_playout_workers(None, 32, big_batches=True) == 0
    assert runtime.auto_playout_workers(None, None) == 0  # not a search


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: no workers")
def test_a_gtp_engine_told_boardsize_13_plays_with_a_worker_that_ends_with_it():
    """As a GUI starts it: no --size (9x9, played in this process alone), then `boardsize 13`."""
    import subprocess
    import sys
    import time
    proc = subprocess.Popen([sys.executable, "-m", "gojax", "gtp", "--simulations", "64"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, JAX_PLATFORMS="cpu", GOJAX_COMPILE_CACHE="off"))

    def ask(command):
        proc.stdin.write(command + "\n")
        proc.stdin.flush()
        lines = [proc.stdout.readline()]
        while lines[-1].strip():
            lines.append(proc.stdout.readline())
        return "".join(lines).strip()
    def children():
        return subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert ask("genmove b").startswith("= ") and children() == []  # 9x9: no worker
    assert ask("boardsize 13") == "=" and ask("clear_board") == "="
    first = ask("genmove b")
    workers = children()
    assert first.startswith("= ") and ask("play w K10") == "=" and ask("genmove b").startswith("= ")
    assert len(workers) == 1  # the engine's one child: its worker
    ask("quit")
    proc.wait(timeout=60)
    assert "1 playout worker process(es)" in proc.stderr.read()
    for _ in range(100):  # its stdin closed with the engine: it ends
        if not os.path.exists(f"/proc/{workers[0]}"):
            break
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{workers[0]}")
