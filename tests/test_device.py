"""Where the playouts run (--playout-device): JAX's default device, the host's CPU, or the faster
of the two for the search's own calls.  A search must come out the same whichever is named (on a
GPU machine: the GPU against the host's CPU), and the timing must pick one of them."""

import io

import jax
import pytest

from gojax.kernels.geometry import BLACK
from gojax.kernels.host import Board
from gojax.player import Player, PlayerOptions
from gojax.search.device import Simulator, auto_pick, device_name, playout_candidates
from gojax.search.mcts import Search
from gojax.search.params import SearchParams


def position() -> Board:
    b = Board(7)
    for v in ("D4", "C3", "E5"):
        b.play(b.geometry.from_gtp(v))
    return b


def summary(r):
    return r.move, [(m.move, m.visits, round(m.q, 6) if m.q == m.q else None) for m in r.moves], round(r.root_value, 6)


ACCELERATOR = jax.default_backend() != "cpu"


def test_the_choices_name_the_default_device_and_the_hosts_cpu():
    cpu = jax.devices("cpu")[0]
    assert playout_candidates("default") == [None]
    if ACCELERATOR:  # the default device and the CPU, timed against each other
        assert playout_candidates("cpu") == [cpu]
        assert playout_candidates("auto") == [None, cpu]
        assert device_name(None).startswith(jax.default_backend())
    else:  # the default devices are the CPU's (all of them, where the process split it): nothing to choose
        assert playout_candidates("cpu") == playout_candidates("auto") == [None]
        assert device_name(None) == "cpu x1"
    assert device_name(cpu) == "cpu"
    with pytest.raises(ValueError, match="one of auto, default, cpu"):
        playout_candidates("tpu")


@pytest.mark.parametrize("fields", [{}, {"cmc_prob": 0.5, "policy": "uniform"}, {"prior": "mogo"}])
def test_a_search_on_the_named_cpu_is_the_default_devices_search(fields):
    """The playouts, the round's verdicts, the shape prior's tables and the CMC tables all follow
    the simulator's device."""
    params = SearchParams(leaves=4, playouts_per_leaf=4, seed=3, **fields)
    default = Search(position(), params).run(simulations=96, stop_early=False)
    cpu = Simulator(params, device=jax.devices("cpu")[0])
    assert cpu.devices == 1
    named = Search(position(), params, cpu).run(simulations=96, stop_early=False)
    assert summary(named) == summary(default)


def test_auto_keeps_the_cpu_unless_the_other_device_is_clearly_faster():
    cpu = jax.devices("cpu")[0]
    assert auto_pick([(10.0, None), (11.0, cpu)]) is cpu  # 9% less time: a tie, the CPU keeps it
    assert auto_pick([(8.0, None), (11.0, cpu)]) is None  # 27% less time: the accelerator
    assert auto_pick([(12.0, None), (11.0, cpu)]) is cpu


def test_auto_times_each_candidate_and_keeps_its_pick():
    params = SearchParams(leaves=4, playouts_per_leaf=4, seed=5)
    sim = Simulator(params)
    cpu = jax.devices("cpu")[0]
    times = sim.choose_device(position(), 2, [None, cpu], calls=3)
    assert set(times) == {"cpu x1", "cpu"} and all(ms > 0 for ms in times.values())
    kept = auto_pick([(times["cpu x1"], None), (times["cpu"], cpu)])
    assert sim.device is kept and device_name(kept) == next(iter(times))  # the kept one first
    r = Search(position(), params, sim).run(simulations=64, stop_early=False)
    assert summary(r) == summary(Search(position(), params).run(simulations=64, stop_early=False))


def test_a_player_with_auto_warms_up_and_plays_where_there_is_one_device():
    log = io.StringIO()
    player = Player(7, options=PlayerOptions(simulations=64, playout_device="auto", log=log, verbose=False),
                    params=SearchParams(leaves=4, playouts_per_leaf=4))
    assert player.warm_up() > 0
    # One candidate: no timing, no choice to report; two: the choice on the log.
    assert ("playouts on" in log.getvalue()) == ACCELERATOR
    assert player.think(BLACK).simulations == 64
    kept = player.simulator.device
    player.set_rules("tromp-taylor")  # a new simulator keeps the device
    assert player.simulator.device == kept and (ACCELERATOR or kept is None)  # None: the CPU's devices
    with pytest.raises(ValueError, match="playout device"):
        Player(7, options=PlayerOptions(playout_device="gpu0"))


def test_prior_reply_needs_logits_the_device_computes():
    """--prior-reply draws the first playout move from the prior's logits: a prior without
    device logits (MoGo's rules) is a clear error before any round, and so is a negative T."""
    with pytest.raises(ValueError, match="prior-reply"):
        Simulator(SearchParams(prior="mogo", prior_reply=1.0)).plan(9)
    assert Simulator(SearchParams(prior="net", prior_reply=1.0)).plan(9).learnt_prior
    with pytest.raises(ValueError, match="prior_reply"):
        SearchParams(prior_reply=-1.0)
