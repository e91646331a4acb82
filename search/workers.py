"""Playout worker processes: a share of each round's boards played by another process on a core
of its own (Simulator's `workers`).

On a CPU a round's boards split over a device per core of ONE process ran 1.3x slower than the
same boards split over two processes on the same cores (bench/RESULTS.md, "19x19 playouts on two
cores"), so a lone 13x13 or 19x19 search on a CPU sends all but its own share to workers.  A
worker is a Python process running `main`: it runs the setup its maker gives (the application's
gojax/runtime.start_playout_worker: XLA on one thread on a core no other gojax process holds),
then answers requests on its stdin with
results on its stdout, pickled, in order.  A request is one share of a round: its leaf boards as
packed rows (kernels/state.packed_fields), the round's keys and counters with the share's first
row (each leaf's key is search/device.round_keys' row, wherever it plays), and its rows of the
poolRave cells and first-move logits; the answer is the share's PlayoutResult as numpy.  The playouts are the ones one process
plays (tests/test_workers.py), so the search digest does not change.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable

import numpy as np

from gojax.kernels.playout import PlayoutConfig, PlayoutResult


class WorkerError(RuntimeError):
    """A playout worker failed or ended; its message says why."""


class PlayoutWorker:
    """One worker process (module docstring) playing K playouts per leaf with `config`.
    `send` and `receive` pair up in order: one thread may send while another receives."""

    def __init__(self, k: int, config: PlayoutConfig, setup: Callable[[], None] | None = None):
        """`setup`: a picklable callable the worker runs before JAX starts (its process settings), or None."""
        env = dict(os.environ, JAX_PLATFORMS="cpu")  # one CPU device: the parent's flags may split it
        env["XLA_FLAGS"] = " ".join(f for f in env.get("XLA_FLAGS", "").split()
                                    if "xla_force_host_platform_device_count" not in f)
        self._proc = subprocess.Popen([sys.executable, "-c", "from gojax.search.workers import main; main()"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._send_obj(("start", k, config, setup))

    def _send_obj(self, obj) -> None:
        try:
            pickle.dump(obj, self._proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            raise WorkerError(f"playout worker {self._proc.pid} ended (exit {self._proc.poll()})") from err

    def send(self, packed: np.ndarray, keys: np.ndarray, calls: np.ndarray, lo: int, leaves: int,
             pool: np.ndarray | None, first_logits: np.ndarray | None) -> None:
        """Start a share, rows lo .. lo + n of a round (search/device.play_share): packed int32
        [n, C + 6]; keys uint32 [G, 2] and calls int32 [G] the round's; leaves L; pool int32
        [n, 2, s] or None; first_logits float32 [n, P] (divided by the temperature) or None."""
        self._send_obj(("play", packed, keys, calls, lo, leaves, pool, first_logits))

    def receive(self) -> PlayoutResult:
        """The oldest share's PlayoutResult (numpy); WorkerError if the worker failed."""
        try:
            kind, value = pickle.load(self._proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError) as err:
            raise WorkerError(f"playout worker {self._proc.pid} ended (exit {self._proc.poll()}); "
                              f"its stderr says why") from err
        if kind == "error":
            raise WorkerError(f"playout worker {self._proc.pid}: {value}")
        return PlayoutResult(**value)

    def close(self) -> None:
        """End the worker (it exits when its stdin closes)."""
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()


def merge(results: list[PlayoutResult]) -> PlayoutResult:
    """The shares' results as one, rows in order (numpy or device arrays; no CMC tables)."""
    fields = {}
    for name in results[0].__dataclass_fields__:
        parts = [getattr(r, name) for r in results]
        fields[name] = None if parts[0] is None else np.concatenate([np.asarray(p) for p in parts])
    return PlayoutResult(**fields)


# Simulator.local_rows times a cut over this many rounds (their median seconds per round); the
# first rounds at a new cut compile (here and in the workers) and are not counted; after this
# many blocks at the best cut its neighbours are timed again (the tree's work per round grows).
BALANCE_ROUNDS = 16
BALANCE_SKIP = 2
BALANCE_RETRY = 64


def next_cut(rows: int, workers: int, timed: dict[int, float]) -> int:
    """This process's rows for the next block of rounds of `rows` rows shared with `workers`
    workers, given the median seconds per round `timed` at the cuts tried: a neighbour of the
    fastest cut not yet timed (fewer rows here first: this process also runs the host's tree
    and each round's prepare_round), else the fastest.  Each worker keeps a row, and so does
    this process."""
    best = min(timed, key=timed.get)
    for cut in (best - 1, best + 1):
        if 1 <= cut <= rows - workers and cut not in timed:
            return cut
    return best


def _serve(inp, out) -> None:
    """The worker's loop: a "start" message, then "play" requests until stdin closes."""
    _, k, config, setup = pickle.load(inp)
    if setup is not None:
        setup()
    import jax

    from gojax.search.device import play_share
    while True:
        try:
            msg = pickle.load(inp)
        except EOFError:
            return
        try:
            _, packed, keys, calls, lo, leaves, pool, first_logits = msg
            res = jax.device_get(play_share(packed, keys, calls, pool, first_logits, leaves, lo, k, config))
            answer = ("ok", {name: getattr(res, name) for name in res.__dataclass_fields__})
        except Exception as err:  # the parent raises it as a WorkerError
            answer = ("error", f"{type(err).__name__}: {err}")
        pickle.dump(answer, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()


def main() -> None:
    """A worker process: answers on the real stdout; anything printed goes to stderr."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _serve(sys.stdin.buffer, out)
