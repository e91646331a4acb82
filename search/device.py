"""The device side of the search: one round of leaf positions, from one tree or many, in ONE call.

A round is G trees x L leaves in two jitted calls: `prepare_round` labels the leaf boards'
chains and computes what the round's new nodes need (legal and capture masks and, for the MoGo
and shape priors, their verdicts: `NodeFeatures`); `play_round` plays K playouts from each
leaf.  The first is small and its answer can come back while the second runs, so that the next
round's descents find this round's nodes with their priors (SearchParams.verdicts_ahead).  Both
are dispatched from the worker thread below, not the search thread.
Leaf i of tree g plays with the keys fold_in(fold_in(key_g, call_g), i): the only key
derivation, so a tree's numbers depend on neither its batch nor the number of devices, and a
tree in a forest plays exactly what it plays alone (tests/test_forest.py).  With several local
devices the rows are split over them (shard_map, one playout loop per device); with playout
worker processes (search/workers.py) this process keeps the first rows, as many as the fastest
cut timed so far (`Simulator._balance`), and the workers play equal shares of the rest, sent
before this process's prepare_round; `_finish` merges the shares (tests/test_workers.py).

`Simulator` owns the two threads that keep the device busy: one dispatches the calls in order,
one waits for each result and copies it to the host while the search thread descends the next
round.  The dispatch needs its own thread because on a GPU a call whose playout loop is a
`while_loop` blocks its caller until the loop ends (XLA reads the loop condition back on the
host every iteration); the wait needs another, or the next dispatch would queue behind it
(docs/history.md has the timings).

Where the playouts run (`Simulator.device`): JAX's default device(s), or the host's CPU.  A lone
search's calls are small (L x K = 32 boards), and on a GPU such a call waits on the latency of
its playout loop's iterations, where the host's CPU may play it sooner (README, "Play it");
`PLAYOUT_DEVICES` names the choices and `Simulator.choose_device` times them.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import statistics
import sys
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels import learnt, policy, prior_net, rules
from gojax.kernels.host import Board
from gojax.kernels.playout import PlayoutConfig, PlayoutResult, pad_to_multiple, run_playouts, sharded_playouts
from gojax.kernels.state import as_packed, geometry_of, packed_komi, packed_size, unpack_fields, with_placeholder_chains
from gojax.search import shape
from gojax.search.params import SearchParams
from gojax.search.workers import BALANCE_RETRY, BALANCE_ROUNDS, BALANCE_SKIP, PlayoutWorker, merge, next_cut


def leaf_prior_codes(states):
    """int8 [L, P]: the MoGo prior's verdicts (kernels/policy.prior_codes) at each leaf position."""
    return jax.vmap(policy.prior_codes)(states)[:, jnp.asarray(geometry_of(states).point_to_cell)]


def round_keys(keys: jax.Array, calls: jax.Array, leaves: int) -> jax.Array:
    """Keys [G * L], tree-major: fold_in(fold_in(keys[g], calls[g]), i) for leaf i of tree g."""
    def per_tree(key, call):
        key = jax.random.fold_in(key, call)
        return jax.vmap(lambda i: jax.random.fold_in(key, i))(jnp.arange(leaves, dtype=jnp.int32))
    return jax.vmap(per_tree)(keys, calls).reshape(-1)


class NodeFeatures(NamedTuple):
    """What the device says of a round's leaf positions, for the new nodes there, before their
    playouts end (the `expand` step, search/steps.py): legal moves, and the verdicts and
    shape strengths the prior reads (numpy on the host, one row per leaf)."""
    legal: np.ndarray  # bool [G * L, P]  points the side to move may play (simple ko, no superko)
    capture: np.ndarray  # bool [G * L, P]  those of them that capture (the host checks superko there)
    prior: np.ndarray | None  # int8 [G * L, P]  kernels/policy.prior_codes; None without the MoGo verdicts
    # int32 [G * L, P]  each point's 3x3 neighbourhood index, colours as they lie
    # (kernels/policy.pattern_index); None unless the prior reads shapes with a diamond model
    pattern: np.ndarray | None = None
    # float32 [G * L, P]  the shape prior's log-strength of each point before its MoGo verdict
    # (search/shape.ShapeModel.point_tables), or the learnt prior's (kernels/learnt.strengths);
    # None unless the prior reads shapes (and its model has no diamonds) or is the learnt one
    shape: np.ndarray | None = None

    def packed(self) -> jax.Array:
        """Inside jit: the verdicts present as ONE float32 array [F, rows, P] (every value is
        exact in float32), so that they come to the host in one copy (`unpacked` undoes it)."""
        return jnp.stack([x.astype(jnp.float32) for x in self if x is not None])

    @classmethod
    def unpacked(cls, rows: np.ndarray, with_prior: bool, with_pattern: bool, with_shape: bool) -> NodeFeatures:
        """On the host: `packed`'s numpy array back as NodeFeatures of the dtypes above."""
        rows = iter(rows)
        legal, capture = next(rows) > 0, next(rows) > 0
        prior = next(rows).astype(np.int8) if with_prior else None
        pattern = next(rows).astype(np.int32) if with_pattern else None
        return cls(legal, capture, prior, pattern, next(rows) if with_shape else None)


def _prepare_round(fields: dict, with_prior: bool, with_pattern: bool = False, shape_tables=None,
                   learnt_prior: str | None = None, symmetries: int = 1):
    """The leaf boards (fields: kernels/state.numpy_fields, G x L, tree-major) as device states
    with their chains, and their NodeFeatures.  shape_tables: the shape model's
    ShapeModel.point_tables (device arrays), or None; learnt_prior: the learnt policy's model
    file whose log-strengths are the prior's (NodeFeatures.shape), or None; symmetries: a prior
    net's logits averaged over that many of the board's symmetries (SearchParams.prior_symmetries)."""
    states = jax.vmap(rules.with_chains)(with_placeholder_chains(fields))
    legal, capture = jax.vmap(rules.legal_and_capture_masks)(states)
    g = geometry_of(states)
    cells = jnp.asarray(g.point_to_cell)
    pattern = None
    if with_pattern or shape_tables is not None:
        pattern = jax.vmap(lambda s: policy.pattern_index(s.color, cells))(states)
    shape = None
    if shape_tables is not None:  # summed in ShapeModel.log_strength's order: the host's numbers
        by_pattern, by_line, by_last, by_prev = shape_tables
        to_point = jnp.asarray(g.cell_to_point)

        def row(cell):  # a move's row of the distance tables: its point, or P for none / a pass
            p = to_point[cell]
            return jnp.where(p < 0, g.num_points, p)
        mover = states.to_play.astype(jnp.int32) - 1
        shape = (by_pattern[mover[:, None], pattern] + by_line[None, :] + by_last[row(fields["last"])]
                 + by_prev[row(fields["prev"])])
    if learnt_prior is not None:
        shape = learnt_log_strengths(states, learnt_prior, symmetries)[:, cells]
    return states, NodeFeatures(legal[:, cells], capture[:, cells], leaf_prior_codes(states) if with_prior else None,
                                pattern if with_pattern else None, shape)


def learnt_log_strengths(states, path: str, symmetries: int = 1) -> jax.Array:
    """float32 [boards, M]: the learnt prior's logits per cell: a prior net's (kernels/prior_net.py,
    averaged over `symmetries` of the board's), or the log of kernels/learnt.strengths."""
    if path and prior_net.is_net(path):
        return jax.vmap(lambda s: prior_net.log_strengths(s, path, symmetries))(states)
    return jnp.log(jnp.maximum(jax.vmap(lambda s: learnt.strengths(s, path))(states), 1e-30))


@functools.partial(jax.jit, static_argnames=("with_prior", "with_pattern", "learnt_prior", "value_model",
                                             "symmetries"))
def prepare_round(packed: jax.Array, with_prior: bool, with_pattern: bool = False, shape_tables=None,
                  learnt_prior: str | None = None, value_model: str | None = None, symmetries: int = 1):
    """The leaf boards (kernels/state.packed_fields, G x L rows, tree-major) as device states with
    their chains, their NodeFeatures packed (NodeFeatures.packed), the MoGo verdicts (int8
    [G * L, P] or None, for the playouts' result) and the value head's probability that Black
    wins (float32 [G * L], or None without `value_model`), and the prior's logits (NodeFeatures.shape,
    float32 [G * L, P], or None; play_round's `first_logits`): a small call of its own, so that its
    answer comes back while the playouts of the same boards still run."""
    states, v = _prepare_round(unpack_fields(packed), with_prior, with_pattern, shape_tables, learnt_prior,
                               symmetries)
    value = None
    if value_model:  # NaN at a leaf in tactics: a chain in atari, which the head misreads
        value = jnp.where(jax.vmap(rules.any_chain_in_atari)(states), jnp.nan,
                          prior_net.black_value(states, value_model))
    return states, v.packed(), v.prior, value, v.shape


@functools.partial(jax.jit, static_argnames=("with_prior", "with_pattern", "learnt_prior", "symmetries"))
def leaf_verdicts(packed: jax.Array, with_prior: bool, with_pattern: bool = False, shape_tables=None,
                  learnt_prior: str | None = None, symmetries: int = 1) -> jax.Array:
    """prepare_round's packed NodeFeatures alone (Simulator.verdicts_now): no device states to
    hand back."""
    return _prepare_round(unpack_fields(packed), with_prior, with_pattern, shape_tables, learnt_prior,
                          symmetries)[1].packed()


@functools.partial(jax.jit, static_argnames=("leaves", "k", "config", "devices", "value_weight", "first_temperature"))
def play_round(states, keys: jax.Array, calls: jax.Array, pool: jax.Array | None,
               cmc: tuple[jax.Array, jax.Array] | None, leaves: int, k: int, config: PlayoutConfig,
               devices: int = 1, value: jax.Array | None = None, value_weight: float = 0.0,
               first_logits: jax.Array | None = None, first_temperature: float = 1.0) -> PlayoutResult:
    """One round's playouts: states (prepare_round) hold G x L leaf positions, tree-major; keys
    uint32 [G, 2] the trees' raw key data (jax.random.key_data); calls int32 [G] their round
    counters; pool int32 [G * L, 2, k] poolRave cells or None; cmc the CMC tables or None (one
    tree, one device); value float32 [G * L] the value head's Black win probability or None
    (`mix_value`, with `value_weight`); first_logits float32 [G * L, P] the prior's logits at the
    leaves, or None: each playout's first move is drawn from them at `first_temperature`
    (SearchParams.prior_reply; kernels/playout.first_moves).  Returns the PlayoutResult of the
    G * L leaves."""
    per_leaf = round_keys(jax.random.wrap_key_data(keys), calls, leaves)
    if first_logits is not None:
        first_logits = first_logits / first_temperature
    if devices == 1:
        res = run_playouts(states, per_leaf, k, config, pool=pool, cmc=cmc, first_logits=first_logits)
    else:
        res = _sharded(states, per_leaf, pool, k, config, devices, first_logits)
    return res if value is None else mix_value(res, value, value_weight)


@functools.partial(jax.jit, static_argnames=("leaves", "lo", "k", "config"))
def play_share(packed: jax.Array, keys: jax.Array, calls: jax.Array, pool: jax.Array | None,
               first_logits: jax.Array | None, leaves: int, lo: int, k: int, config: PlayoutConfig) -> PlayoutResult:
    """K playouts from each of rows lo .. lo + n of a round played elsewhere (search/workers.py):
    `packed` those n rows (kernels/state.packed_fields), keys and calls the whole round's
    (play_round's), pool and first_logits (divided by the temperature) those rows' or None.
    The rows play what play_round plays for them: their keys are round_keys' rows lo .. lo + n."""
    states = jax.vmap(rules.with_chains)(with_placeholder_chains(unpack_fields(packed)))
    per_leaf = round_keys(jax.random.wrap_key_data(keys), calls, leaves)[lo:lo + packed.shape[0]]
    return run_playouts(states, per_leaf, k, config, pool=pool, first_logits=first_logits)


@functools.partial(jax.jit, static_argnames=("leaves", "hi", "k", "config"))
def play_first_share(states, keys: jax.Array, calls: jax.Array, pool: jax.Array | None,
                     first_logits: jax.Array | None, leaves: int, hi: int, k: int, config: PlayoutConfig) -> PlayoutResult:
    """play_round's playouts of a round's rows 0 .. hi alone (states, pool and first_logits the
    whole round's), this process's share where workers play the rest (Simulator._round)."""
    per_leaf = round_keys(jax.random.wrap_key_data(keys), calls, leaves)[:hi]
    first = jax.tree.map(lambda x: x[:hi], states)
    return run_playouts(first, per_leaf, k, config, pool=None if pool is None else pool[:hi],
                        first_logits=None if first_logits is None else first_logits[:hi])


def mix_value(res: PlayoutResult, value: jax.Array, weight: float) -> PlayoutResult:
    """Each playout's outcome z (Black's) as the tree backs it up, mixed with the leaf's value
    estimate v (float32 [rows], Black's): z' = (1 - weight) z + weight v, the leaf evaluation of
    Silver et al. 2016 (there lambda weighs the rollout; here `weight` the value).  The AMAF
    statistics take z' too: MC-RAVE blends a node's MC and AMAF values, which must share one
    scale, and the head's values sit far from the playouts' (KataGo gives Black 6% on the empty
    9x9 board at komi 7.5).  A leaf whose v is NaN (in tactics: prepare_round) or whose game is
    already over keeps the playouts' own outcomes."""
    keep = (res.first_move[:, 0] == -2) | jnp.isnan(value)  # [rows]; -2: over at the start, the exact score
    v = jnp.nan_to_num(value)
    z = jnp.where(keep[:, None], res.z, (1.0 - weight) * res.z + weight * v[:, None])
    amaf = jnp.where(keep[:, None, None], res.amaf_wins,
                     (1.0 - weight) * res.amaf_wins + weight * v[:, None, None] * res.amaf_count)
    return res.replace(z=z, wins=z.sum(1), amaf_wins=amaf)


def _sharded(states, keys, pool, k: int, config: PlayoutConfig, devices: int, first_logits=None) -> PlayoutResult:
    """run_playouts with the rows split over the first `devices` devices (padded, then cut back)."""
    n = keys.shape[0]
    fn, _ = sharded_playouts(devices, k, config, local=True)  # a search is its own process's work
    return jax.tree.map(lambda x: x[:n], fn(*pad_to_multiple(states, keys, devices, pool, first_logits)))


# The most rows of one `Simulator.verdicts_now` call; smaller calls are padded to a power of two
# (four shapes to compile, at warm-up): most calls serve one or two boards
# (bench/results/forest/README.md), and a row padded costs as much as a row used.
VERDICT_BLOCK = 8


def bucket(n: int) -> int:
    """The rows (or trees) a device call of n is padded to: the next power of two, so that a
    few shapes are compiled."""
    return 1 << (n - 1).bit_length()


@functools.cache
def _cpu_device():
    """This process's CPU as a JAX device (with several processes, its own); None where JAX runs
    without its CPU backend (JAX_PLATFORMS=cuda): `verdicts_now` then runs on the default device."""
    try:
        return jax.local_devices(backend="cpu")[0]
    except RuntimeError:
        return None


# --playout-device: "default", JAX's default device(s) (a GPU where there is one, the rows split
# over every local device); "cpu", the host's CPU; "auto", the host's CPU unless the default
# device plays the search's own call shape clearly faster, timed when it warms up
# (Simulator.choose_device).
PLAYOUT_DEVICES = ("auto", "default", "cpu")

# "auto" keeps an accelerator only where its calls take at most this share of the CPU's time:
# a lone search's calls take about as long on a GPU as on its host's CPU, and a GPU shared by
# several engines serves their calls in turn while each keeps a core (bench/results/gpu_h100_4).
AUTO_CPU_MARGIN = 0.8


def playout_candidates(choice: str) -> list:
    """The devices `choice` (PLAYOUT_DEVICES) lets the playouts run on, as Simulator.device
    values (None: JAX's default device); one where the default device is the CPU already.
    ValueError for an unknown choice, or "cpu" where JAX runs without its CPU backend."""
    if choice not in PLAYOUT_DEVICES:
        raise ValueError(f"playout device {choice!r}: one of {', '.join(PLAYOUT_DEVICES)}")
    cpu = _cpu_device()
    if choice == "default":
        return [None]
    if cpu is None:
        if choice == "cpu":
            raise ValueError("playout device cpu: JAX runs without its CPU backend here (JAX_PLATFORMS)")
        return [None]
    if jax.local_devices()[0].platform == "cpu":
        return [None]  # the default devices are the CPU's (one per core where the process split it)
    if choice == "cpu":
        return [cpu]
    return [None, cpu]


def device_name(device) -> str:
    """A Simulator.device as a person reads it: 'cpu', 'gpu x1' (None: JAX's default devices)."""
    if device is None:
        return f"{jax.devices()[0].platform} x{jax.device_count()}"
    return device.platform


def auto_pick(times: list[tuple[float, object]]):
    """The device "auto" keeps, of (milliseconds per call, Simulator.device) pairs: the fastest,
    but the host's CPU unless the fastest takes at most AUTO_CPU_MARGIN of the CPU's time."""
    best_ms, best = min(times, key=lambda t: t[0])
    cpu_ms, cpu = next(((ms, d) for ms, d in times if d is not None and d.platform == "cpu"), (None, None))
    return cpu if cpu is not None and best_ms > AUTO_CPU_MARGIN * cpu_ms else best


class _Shares(NamedTuple):
    """A round whose rows playout workers share (Simulator._round), on its way."""
    local: PlayoutResult  # this process's share, dispatched
    workers: list  # the PlayoutWorkers its other shares went to, in row order
    value: jax.Array | None  # play_round's value and value_weight, mixed in once merged
    weight: float
    prior: jax.Array | None  # the start_prior of the whole round
    key: tuple[int, int]  # (rows, board size): the key of Simulator.local_rows
    mine: int  # this process's rows of it
    sent_at: float  # time.monotonic() before its shares were sent


class Submitted(NamedTuple):
    """A round on its way: futures of its NodeFeatures (None unless asked for) and its result."""
    verdicts: concurrent.futures.Future | None
    result: concurrent.futures.Future


class PriorPlan(NamedTuple):
    """What a round's NodeFeatures hold for the prior on one board size (Simulator.plan)."""
    with_prior: bool  # MoGo's verdicts
    with_pattern: bool  # each point's 3x3 neighbourhood, for a shape model with diamonds (summed on the host)
    shape_model: str | None  # the shape model the device sums (NodeFeatures.shape), or None
    learnt_prior: str | None  # the learnt model or net whose logits NodeFeatures.shape holds, or None
    value_model: str | None = None  # the net whose value head is mixed into the playouts' outcomes, or None
    symmetries: int = 1  # a prior net's logits averaged over this many of the board's symmetries
    value_weight: float = 0.0  # w of the value head's mix (SearchParams.value_weight, resolved)

    @classmethod
    def of(cls, params: SearchParams) -> PriorPlan:
        """The plan of parameters resolved for a board size (SearchParams.for_size)."""
        # The shape prior's sums come from the device (NodeFeatures.shape) unless its model has
        # diamonds: the host then needs each point's 3x3 neighbourhood (NodeFeatures.pattern).
        sums = params.uses_shapes and not shape.load_model(params.shape_model).uses_diamond
        return cls(params.uses_mogo_verdicts, params.uses_shapes and not sums,
                   params.shape_model if sums else None, params.prior_model_path,
                   params.value_model or None if params.value_weight > 0 else None, params.prior_symmetries,
                   params.value_weight)


class Simulator:
    """Plays rounds for one search or a forest of them.  With contextual Monte-Carlo on it also
    owns the CMC tables (device arrays [2, P, P]): each round's pair statistics are added to
    them on the device, over one game (one tree)."""

    def __init__(self, params: SearchParams, config: PlayoutConfig | None = None, device=None, workers: int = 0,
                 worker_setup=None, share_from: int = 0):
        """`device`: the jax Device the playouts run on; None: JAX's default device, the rows
        split over every local device.  `workers`: playout worker processes (search/workers.py)
        that each play an equal share of every round's rows after this process's own share, on
        a core of their own (the CPU only; none with contextual Monte-Carlo), started at the first
        round on a board of `share_from` x `share_from` or more (smaller boards' rounds stay in
        this process); `worker_setup`: the picklable callable each runs first (PlayoutWorker's
        `setup`)."""
        self.device = device
        self.leaves = params.leaves
        self.k = params.playouts_per_leaf
        self.config = config or params.playout_config()
        self.pool_size = params.pool_size if self.config.pool_prob > 0 else 0
        self.params = params  # its prior may be `auto`: what it computes is per board size (`plan`)
        self._plans: dict[int, PriorPlan] = {}
        self._shape_tables: dict = {}  # (board size, device) -> ShapeModel.point_tables on that device
        self.cmc = None
        self._cmc_size = None
        self._worker: concurrent.futures.ThreadPoolExecutor | None = None  # dispatches, in order
        self._fetcher: concurrent.futures.ThreadPoolExecutor | None = None  # waits, copies to the host
        # Wall time inside verdicts_now: the caller's wait for the CPU backend, where a CPU
        # device's calls queue behind its playouts (a forest counts it as device wait).
        self.verdicts_now_seconds = 0.0
        self._value_off_said: set[float] = set()  # komis at which value_applies said no
        self._worker_setup = worker_setup
        self._wanted = workers if self.config.cmc_prob == 0 else 0
        self.share_from = share_from
        self._workers: list[PlayoutWorker] = []  # started by _sharing
        # (rows of a round, board size) -> this process's rows of it, timed by `_balance`: this
        # process also runs the host's tree and each round's prepare_round (the net, where the
        # prior is one), so an equal share of the playouts can keep the workers waiting.
        self.local_rows: dict[tuple[int, int], int] = {}
        self._block: dict[tuple[int, int], list[float]] = {}  # seconds of the rounds at the cut now
        self._timed: dict[tuple[int, int], dict[int, float]] = {}  # cut -> median seconds per round
        self._blocks: dict[tuple[int, int], int] = {}
        self._last_done = 0.0  # time.monotonic() when the last shared round came back

    @property
    def worker_count(self) -> int:
        """The playout worker processes started so far (at the first round they share)."""
        return len(self._workers)

    def _sharing(self, size: int) -> list[PlayoutWorker]:
        """The workers that share a round on `size` x `size` boards, started where not yet:
        none below `share_from`, where a round is too short for a share to pay."""
        if size < self.share_from:
            return []
        while len(self._workers) < self._wanted:
            self._workers.append(PlayoutWorker(self.k, self.config, self._worker_setup))
        return self._workers

    def take_workers(self, other: Simulator) -> None:
        """Play with `other`'s playout workers from now on (a simulator replacing it: new rules),
        or as many fresh ones, at the next round they share, where their playouts differ."""
        self._worker_setup, self.share_from = other._worker_setup, other.share_from
        self._wanted = other._wanted if self.config.cmc_prob == 0 else 0
        if (other.k, other.config) == (self.k, self.config) and self._wanted:
            self._workers, other._workers = other._workers, []
        else:
            other.close()

    def close(self) -> None:
        """End the playout worker processes (they end with this process anyway)."""
        for w in self._workers:
            w.close()
        self._workers = []

    @property
    def devices(self) -> int:
        """The devices a round's rows are split over: one for a chosen device, and with CMC (its
        tables feed each round into the next: one device, calls in order)."""
        return 1 if self.device is not None or self.config.cmc_prob > 0 else jax.local_device_count()

    def plan(self, size: int) -> PriorPlan:
        """What this simulator's rounds on `size` x `size` boards compute for the prior."""
        if size not in self._plans:
            plan = PriorPlan.of(self.params.for_size(size))
            if self.params.prior_reply > 0 and plan.shape_model is None and plan.learnt_prior is None:
                raise ValueError(f"--prior-reply needs a prior whose move logits the device computes (net, learnt, "
                                 f"or shape without diamonds); the prior on {size}x{size} is "
                                 f"{self.params.for_size(size).prior}")
            self._plans[size] = plan
        return self._plans[size]

    def submit(self, rows: list[list[Board]], keys: np.ndarray, calls, pools=None, ahead: bool = False) -> Submitted:
        """`dispatch` on the worker thread; the futures hold its results as numpy.  With `ahead`
        the round's NodeFeatures come back first, as soon as the device has them, while the
        playouts still run (SearchParams.verdicts_ahead)."""
        if self._worker is None:
            self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="gojax-device")
            self._fetcher = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="gojax-fetch")
        prepared = concurrent.futures.Future() if ahead else None
        started = self._worker.submit(self._round, rows, keys, calls, pools, prepared)
        # The fetcher waits in submission order: these verdicts before this round's playouts.
        size = rows_size(rows[0])
        verdicts = self._fetcher.submit(lambda: self._unpack(jax.device_get(prepared.result()), size)) if ahead else None
        return Submitted(verdicts, self._fetcher.submit(lambda: jax.device_get(self._finish(started.result()))))

    def verdicts(self, boards: list[Board], rows: int) -> NodeFeatures:
        """The NodeFeatures of `boards` alone (no playouts), padded to `rows` boards with the
        first (one shape per size of forest), as numpy: SearchParams.waves.  Called on the
        search's thread, so it may queue behind a round's playouts on the device."""
        return self._verdicts_on(_padded(boards, rows), self.device)

    def verdicts_now(self, boards: list[Board] | np.ndarray) -> NodeFeatures:
        """The NodeFeatures of a few `boards` (host boards, or their packed rows: nodes a descent reaches before their round's
        verdicts are back), as numpy, computed on the host's CPU backend in blocks of at most
        VERDICT_BLOCK rows, each padded to a power of two: compiled code several times faster
        than the host twin's Python verdicts (kernels/host.py, search/priors.mogo_values; equal
        by test), and, on a GPU machine, not queued behind the device's playouts (where the
        playouts run on the CPU backend, they wait for its share of the round in flight:
        bench/results/forest/README.md, "Pauses and a queue")."""
        t0 = time.perf_counter()
        cpu = _cpu_device()
        blocks = []
        for i in range(0, len(boards), VERDICT_BLOCK):
            block = boards[i:i + VERDICT_BLOCK]
            n = len(block)
            rows = bucket(n)
            v = self._verdicts_on(_padded(block, rows), cpu)
            blocks.append(v if rows == n else NodeFeatures(*(None if x is None else x[:n] for x in v)))
        self.verdicts_now_seconds += time.perf_counter() - t0
        if len(blocks) == 1:
            return blocks[0]
        return NodeFeatures(*(None if f[0] is None else np.concatenate(f) for f in zip(*blocks)))

    def dispatch(self, rows: list[list[Board]], keys: np.ndarray, calls, pools=None) -> PlayoutResult:
        """Start one round (asynchronously; `jax.device_get` the result to wait for it).

        rows[g]: tree g's leaf boards (at most L, host boards or their packed rows,
        kernels/state.packed_fields, or all trees' rows as one int32 [G, L, C + 6]; padded here
        with its first, so every call has one shape per number of trees); keys uint32 [G, 2]; calls int [G]; pools None or one
        int32 [len(rows[g]), 2, pool_size] (or None) per tree.  Result row g * L + i is leaf i
        of tree g; its start_prior holds the MoGo verdicts when the prior uses them.  With
        playout workers it returns when the workers' shares are back."""
        return self._finish(self._round(rows, keys, calls, pools))

    def _round(self, rows, keys, calls, pools, prepared: concurrent.futures.Future | None = None) -> PlayoutResult:
        """`dispatch` on this simulator's device, handing the round's NodeFeatures (device
        arrays) to `prepared` before the playouts are dispatched: on a GPU that dispatch blocks
        until the playout loop ends.  A failure reaches `prepared`'s waiter too."""
        try:
            with jax.default_device(self.device) if self.device is not None else contextlib.nullcontext():
                g, L = len(rows), self.leaves
                if isinstance(rows, np.ndarray) and rows.shape[1] == L:  # [G, L, C + 6]: as it comes
                    packed = rows.reshape(g * L, -1)
                else:
                    packed = np.concatenate([as_packed(_padded(bs, L)) for bs in rows])
                size = packed_size(packed)
                pool = self._pool_cells(g, pools)
                cmc = None
                if self.config.cmc_prob > 0:
                    if g != 1:
                        raise ValueError("contextual Monte-Carlo keeps one tree's tables: one tree per call")
                    cmc = self._cmc_tables(size)
                plan = self.plan(size)
                value_model = plan.value_model if self.value_applies(plan, packed_komi(packed)) else None
                reply = self.params.prior_reply
                keys, calls = np.asarray(keys, np.uint32), np.asarray(calls, np.int32)
                shared = cmc is None and len(packed) > 1 and bool(self._sharing(size))
                sent_at = time.monotonic()
                if shared:  # this process's rows first, the rest in equal shares
                    n, w = len(packed), len(self._workers)
                    mine = self.local_rows.setdefault((n, size), round(n / (1 + w)))
                    cut = [0] + [mine + round(i * (n - mine) / w) for i in range(w + 1)]
                if shared and reply <= 0:  # the workers start before this process's prepare_round
                    sent = self._send_shares(packed, keys, calls, pool, None, cut)
                states, verdicts, prior, value, logits = prepare_round(
                    packed, plan.with_prior, plan.with_pattern,
                    self.shape_tables(size, self.device), plan.learnt_prior, value_model, plan.symmetries)
                if prepared is not None:
                    prepared.set_result(verdicts)
                if shared:
                    first = None if reply <= 0 else logits / reply
                    if reply > 0:  # the workers need the logits: they wait for prepare_round
                        sent = self._send_shares(packed, keys, calls, pool, np.asarray(first), cut)
                    local = play_first_share(states, keys, calls, pool, first, L, cut[1], self.k, self.config)
                    return _Shares(local, sent, value, plan.value_weight if value_model else 0.0, prior,
                                   (n, size), mine, sent_at)
                res = play_round(states, keys, calls, pool, cmc,
                                 L, self.k, self.config, self.devices, value,
                                 plan.value_weight if value_model else 0.0,
                                 logits if reply > 0 else None, reply if reply > 0 else 1.0)
        except Exception as err:
            if prepared is not None and not prepared.done():  # its waiter must not wait forever
                prepared.set_exception(err)
            raise
        if cmc is not None:
            self.cmc = (cmc[0] + res.cmc_wins, cmc[1] + res.cmc_count)
        return res.replace(start_prior=prior)

    def _send_shares(self, packed: np.ndarray, keys: np.ndarray, calls: np.ndarray, pool, first_logits,
                     cut: list[int]) -> list:
        """Rows cut[i + 1] .. cut[i + 2] of a round to worker i (the first share, to cut[1], is
        this process's); returns the workers sent to, in row order (`_finish` collects them)."""
        sent = []
        for w, lo, hi in zip(self._workers, cut[1:], cut[2:]):
            if hi > lo:
                w.send(packed[lo:hi], keys, calls, lo, self.leaves, None if pool is None else pool[lo:hi],
                       None if first_logits is None else first_logits[lo:hi])
                sent.append(w)
        return sent

    def _finish(self, res):
        """A round's PlayoutResult: `res` itself, or its shares (_Shares) collected and merged,
        their ends weighed for the next rounds' cut (`_balance`)."""
        if not isinstance(res, _Shares):
            return res
        merged = merge([jax.device_get(res.local)] + [w.receive() for w in res.workers])
        self._balance(res)
        if res.value is not None:
            merged = mix_value(merged, res.value, res.weight)
        return merged.replace(start_prior=res.prior)

    def _balance(self, res: _Shares) -> None:
        """Time one shared round (from its send, or the round before's end where it was sent
        earlier, to its last share back) at its cut, and after workers.BALANCE_ROUNDS rounds
        move the cut by workers.next_cut: the playouts are the same at every cut, so only the
        time changes."""
        done = time.monotonic()
        seconds, self._last_done = done - max(self._last_done, res.sent_at), done
        if res.mine != self.local_rows[res.key]:  # sent before the cut moved
            return
        block = self._block.setdefault(res.key, [])
        block.append(seconds)
        if len(block) < BALANCE_SKIP + BALANCE_ROUNDS:
            return
        timed = self._timed.setdefault(res.key, {})
        timed[res.mine] = statistics.median(block[BALANCE_SKIP:])
        block.clear()
        self._blocks[res.key] = self._blocks.get(res.key, 0) + 1
        if self._blocks[res.key] % BALANCE_RETRY == 0:  # time the neighbours again
            timed = self._timed[res.key] = {res.mine: timed[res.mine]}
        self.local_rows[res.key] = next_cut(res.key[0], len(self._workers), timed)

    def value_applies(self, plan: PriorPlan, komi: float) -> bool:
        """Is the plan's value head mixed in at `komi`?  Only at the komi it was fitted at (its
        planes do not see the komi); elsewhere the playouts count alone, said once on stderr."""
        if plan.value_model is None:
            return False
        fitted = prior_net.load_value(plan.value_model).komi
        if komi == fitted:
            return True
        if komi not in self._value_off_said:
            self._value_off_said.add(komi)
            print(f"gojax: the value head of {plan.value_model} was fitted at komi {fitted:g}; at komi {komi:g} "
                  f"the playouts count alone", file=sys.stderr, flush=True)
        return False

    def _pool_cells(self, g: int, pools) -> np.ndarray | None:
        """poolRave's cells for the call, int32 [G * L, 2, pool_size] (empty slots 0), or None."""
        if not self.pool_size:
            return None
        pool = np.zeros((g * self.leaves, 2, self.pool_size), np.int32)
        for t, tp in enumerate(pools or []):
            if tp is not None:
                pool[t * self.leaves: t * self.leaves + len(tp)] = tp
        return pool

    def _verdicts_on(self, boards: list[Board], device=None) -> NodeFeatures:
        """leaf_verdicts of `boards` (padded by the caller) computed on `device` (None: the
        default device), as numpy."""
        rows = as_packed(boards)
        size = packed_size(rows)
        plan = self.plan(size)
        with jax.default_device(device) if device is not None else contextlib.nullcontext():
            packed = leaf_verdicts(rows, plan.with_prior, plan.with_pattern,
                                   self.shape_tables(size, device), plan.learnt_prior, plan.symmetries)
        return self._unpack(np.asarray(packed), size)

    def _unpack(self, rows: np.ndarray, size: int) -> NodeFeatures:
        """The packed verdicts of one of this simulator's calls on `size` x `size` boards."""
        plan = self.plan(size)
        return NodeFeatures.unpacked(rows, plan.with_prior, plan.with_pattern,
                                     plan.shape_model is not None or plan.learnt_prior is not None)

    def shape_tables(self, size: int, device=None):
        """The shape prior's ShapeModel.point_tables for `size`, kept on `device` (None: the
        default device) after the first call; None where the device sums no shapes."""
        model_path = self.plan(size).shape_model
        if model_path is None:
            return None
        key = (size, device)
        if key not in self._shape_tables:
            model = shape.load_model(model_path)
            self._shape_tables[key] = tuple(jax.device_put(t, device) for t in model.point_tables(size))
        return self._shape_tables[key]

    def shapes_for(self, params: SearchParams, verdicts: NodeFeatures, size: int):
        """verdicts.shape where it is the prior of searches with `params` on `size` x `size`
        boards (their model is this simulator's; a forest may hold trees of other models), else None."""
        plan = self.plan(size)
        if params.prior_model_path is not None:
            same = params.prior_model_path == plan.learnt_prior and params.prior_symmetries == plan.symmetries
            return verdicts.shape if same else None
        return verdicts.shape if params.uses_shapes and params.shape_model == plan.shape_model else None

    def _cmc_tables(self, size: int):
        if self.cmc is None or self._cmc_size != size:
            p = size * size
            self.cmc = (jnp.zeros((2, p, p), jnp.float32), jnp.zeros((2, p, p), jnp.float32))
            self._cmc_size = size
        return self.cmc

    def new_game(self) -> None:
        """Forget the CMC tables (they are learned over one game)."""
        self.cmc = None

    def warm_up(self, board: Board, trees: int = 1) -> float:
        """Compile for this board size and batch shape, for every number of trees a forest of
        `trees` sends (powers of two up to it: search/forest.py), and `verdicts_now`'s; returns
        the seconds."""
        t0 = time.perf_counter()
        for g in (1 << i for i in range((trees - 1).bit_length() + 1)):
            jax.block_until_ready(self.dispatch([[board]] * g, np.zeros((g, 2), np.uint32), [1] * g).wins)
        if trees > 1:  # a forest's same-round nodes (a lone search's use the host twin)
            self.warm_up_verdicts_now(board)
        self.new_game()
        return time.perf_counter() - t0

    def warm_up_verdicts_now(self, board: Board) -> None:
        """Compile `verdicts_now` for every block shape it uses (one per power of two up to
        VERDICT_BLOCK), so that no search pays a compile when a round first meets that many
        same-round nodes."""
        for n in (1 << i for i in range(VERDICT_BLOCK.bit_length())):
            self.verdicts_now([board] * n)

    def choose_device(self, board: Board, trees: int, candidates: list, calls: int = 8) -> dict[str, float]:
        """Warm up on each of `candidates` (Simulator.device values), time a round of `trees`
        trees from `board` on each (the median of `calls` calls one after another, each waited
        for, as a search waits for its rounds) and keep the one `auto_pick` picks.  Returns the
        milliseconds per call by device_name, the kept one first."""
        g = bucket(trees)
        rows, keys = [[board] * self.leaves] * g, np.zeros((g, 2), np.uint32)
        times = []
        for device in candidates:
            self.device = device
            self.warm_up(board, trees)
            took = []
            for c in range(calls):
                t0 = time.perf_counter()
                jax.block_until_ready(self.dispatch(rows, keys, [c] * g).wins)
                took.append(time.perf_counter() - t0)
            times.append((1e3 * statistics.median(took), device))
        self.device = auto_pick(times)
        self.new_game()
        times.sort(key=lambda t: (t[1] is not self.device, t[0]))
        return {device_name(d): ms for ms, d in times}


def rows_size(rows) -> int:
    """The board size of one tree's leaves: host boards, or packed rows (kernels/state.packed_fields)."""
    return packed_size(rows) if isinstance(rows, np.ndarray) else rows[0].size


def _padded(rows, n: int):
    """Host boards (a list) or packed rows (an array) padded to `n` with copies of the first."""
    if len(rows) >= n:
        return rows
    if isinstance(rows, np.ndarray):
        return np.concatenate([rows, np.repeat(rows[:1], n - len(rows), axis=0)])
    return list(rows) + [rows[0]] * (n - len(rows))
