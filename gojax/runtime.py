"""Process-wide JAX settings that must be made before JAX creates its backends.

`compile_cache_dir`: JAX's persistent compilation cache for `gojax gtp` and `gojax evaluate`.

`enable_gpu_graphs`: on a GPU, XLA runs a `while_loop` as separate kernel launches and copies
the loop condition back to the host after every iteration, unless the loop is captured in a
CUDA graph ("command buffers" with WHILE and CONDITIONAL, not in XLA's default set).  A playout
is a loop of moves with a liberty-recount loop inside each move, so at the small batches of a
search the GPU mostly waits for the host; the graphs cut a search's time by nearly half on an
H100 (docs/history.md, 2026-11-23; `bench/gpu_latency.sh`).

`cpu_threads`: how many threads XLA's CPU backend may split one kernel over.  A search sends
small batches (L x K = 32 boards at the default shape): there every fused kernel of a playout
move is a few microseconds of work, and splitting each over two threads costs more in hand-offs
than it gains, so one thread plays them faster and leaves the other core to the search's host
thread (docs/history.md, "XLA's CPU thread pool").  Big batches (`gojax bench`, `gojax
evaluate`, searches of more than SMALL_BATCH boards per call) want every core, so they keep the
default pool (and, but for the bare `gojax bench`, a device per core: below).

`split_cpu_devices`: a process that plays big batches on a CPU backend (forests, `gojax
evaluate`, `gojax analyze`, the arena) gets one virtual XLA device per core, and its batches are
split over them (shard_map) instead of each kernel over the pool's threads: each device's share
runs on a thread of its own, with no hand-offs inside a kernel (bench/README.md, "Threads and
cores").  Small-batch searches keep one device below SPLIT_BOARD: split, they ran slower; on
13x13 and 19x19 a lone search keeps one device on one thread and shares its rounds with a
playout worker process per other core instead (`auto_playout_workers`, search/workers.py),
which beat a device per core in one process.

XLA sizes its CPU thread pool from the process's CPU affinity when the client is created, and
there is no option for it, so `limit_cpu_threads` narrows the affinity for that moment.  The
pool's threads then stay on those cores, and the calling (search) thread gets every core back:
left to itself, Linux often ran the playouts' thread on the search thread's core (each wakes
the other, round after round), which slowed a lone search (bench/README.md,
"Threads and cores").  So that gojax processes on one machine (two engines of a match,
`--jobs`) do not all put their pools on the first core, each claims its pool's cores
(`claim_cores`: a lock per core, held for the process's life); where every core is claimed,
nothing is pinned.  Linux only; elsewhere it does nothing.
"""

from __future__ import annotations

import importlib.metadata
import os

# Distributions whose presence means JAX will pick an accelerator, not the CPU.
_ACCELERATOR_PLUGINS = ("jax-cuda", "jax_cuda", "jax-rocm", "jax_rocm", "libtpu", "jax-metal", "jax_metal")


def backend_is_cpu() -> bool:
    """Whether JAX will run on the CPU, decided without creating a backend: $JAX_PLATFORMS if
    set, else whether an accelerator plugin is installed."""
    platforms = os.environ.get("JAX_PLATFORMS", "").strip().lower()
    if platforms:
        return platforms.split(",")[0] == "cpu"
    names = {(d.metadata["Name"] or "").lower() for d in importlib.metadata.distributions()}
    return not any(n.startswith(_ACCELERATOR_PLUGINS) for n in names)


def limit_cpu_threads(threads: int) -> bool:
    """Create JAX's backends now with XLA's CPU thread pool limited to `threads` threads (call
    before any JAX computation): the pool's threads held on `threads` cores this process claims
    (claim_cores), every other thread left on every core; where no cores can be claimed, the
    pool is limited and nothing is pinned.
    Returns whether the limit was applied: False where the platform has no affinity call,
    `threads` is not below the cores this process may use, or JAX's backends exist already."""
    if not hasattr(os, "sched_setaffinity") or threads < 1 or _backends_exist():
        return False
    allowed = os.sched_getaffinity(0)
    if threads >= len(allowed):
        return False
    own = claim_cores(allowed, threads)
    os.sched_setaffinity(0, own or set(sorted(allowed)[:threads]))
    try:
        import jax
        jax.devices()  # creates the clients; the CPU client sizes its pool from the affinity now
    finally:
        if own:  # the threads JAX made keep the claimed cores; this thread gets every core back
            os.sched_setaffinity(0, allowed)
        else:
            for tid in os.listdir("/proc/self/task"):
                try:
                    os.sched_setaffinity(int(tid), allowed)
                except OSError:  # a thread that has ended since the listing
                    pass
    return True


def claim_cores(allowed: set[int], n: int) -> set[int] | None:
    """`n` of the `allowed` cores that no other live gojax process holds for its XLA pool, held
    for this process's life (an exclusive lock on a file per core in $GOJAX_CORE_CLAIMS, by
    default gojax-cores in the temporary folder; the locks go when the process ends), or None
    when fewer than n are free."""
    import fcntl
    import tempfile
    folder = os.environ.get("GOJAX_CORE_CLAIMS") or os.path.join(tempfile.gettempdir(), "gojax-cores")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    got: dict[int, int] = {}  # core -> the descriptor holding its lock
    for core in sorted(allowed):
        try:
            fd = os.open(os.path.join(folder, str(core)), os.O_RDONLY | os.O_CREAT, 0o644)
        except OSError:  # a file this user may not open: not ours to claim
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        got[core] = fd
        if len(got) == n:
            return set(got)  # the descriptors stay open: closing one would free its core
    for fd in got.values():
        os.close(fd)
    return None


def split_cpu_devices() -> int | None:
    """Create JAX's backends now with one virtual CPU device per core this process may use
    (`--xla_force_host_platform_device_count`), on a CPU backend only, and never over the user's
    own setting.  A big batch split over them (shard_map: a forest's rounds, gojax.evaluate) runs
    one share per device, each on its own thread, which beats one kernel split over every core
    (bench/README.md, "Threads and cores").  $XLA_FLAGS is put back at once, so that processes
    started later (GTP engines of a match, small-batch searches, which run slower split) do not
    inherit it.  Returns the device count, or None where nothing was done."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" in flags or _backends_exist() or not backend_is_cpu():
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if cores < 2:
        return None
    os.environ["XLA_FLAGS"] = (flags + " " if flags else "") + f"--xla_force_host_platform_device_count={cores}"
    try:
        import jax
        jax.devices()  # the CPU client reads the flag as it is created
    finally:
        if flags:
            os.environ["XLA_FLAGS"] = flags
        else:
            del os.environ["XLA_FLAGS"]
    return cores


def _backends_exist() -> bool:
    """Whether JAX has created its backends already (then the pool's size is settled)."""
    try:
        from jax._src import xla_bridge
        return xla_bridge.backends_are_initialized()
    except (ImportError, AttributeError):  # a JAX without the call: assume not yet
        return False


# Searches at most this many boards per device call run on one XLA thread by default: on the
# 2-core CPU 32 and 64 boards ran faster on one thread, 256 on both (docs/history.md, "XLA's
# CPU thread pool").
SMALL_BATCH = 64

# From this board size on, a search's call is long enough (a playout of ~400 moves on 19x19)
# that its boards split over a device per core beat one thread even at the default 32 boards
# (bench/RESULTS.md, "19x19 on two cores"); below it, one thread wins.
SPLIT_BOARD = 13


def auto_cpu_threads(boards_per_call: int | None, on_cpu: bool, board_size: int | None = None) -> int:
    """The automatic --cpu-threads: 1 for a small-batch search on the CPU below SPLIT_BOARD,
    else 0 (every core)."""
    small = boards_per_call is not None and boards_per_call <= SMALL_BATCH
    return 1 if on_cpu and small and (board_size or 0) < SPLIT_BOARD else 0


def auto_playout_workers(cpu_threads: int | None, boards_per_call: int | None, big_batches: bool = False) -> int:
    """Playout worker processes (search/workers.py) for a search process on a CPU backend: one
    per core but its own for a search of at most SMALL_BATCH boards per call with the threads
    left automatic; 0 elsewhere (--cpu-threads given, big batches, an accelerator, one core).
    They start at the first round on a board of SPLIT_BOARD or more (Simulator's `share_from`):
    below it one thread plays a round fastest, which is what this process has either way, so
    an engine told `boardsize 19` after starting on 9x9 gets them too."""
    if cpu_threads is not None or big_batches or boards_per_call is None or boards_per_call > SMALL_BATCH:
        return 0
    if not backend_is_cpu():
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores - 1


def start_playout_worker(compile_cache: str | None = None) -> None:
    """A playout worker process's settings (search/workers.py), before its JAX starts: XLA's
    pool on one thread on a core no other gojax process holds, and its parent's compile cache."""
    limit_cpu_threads(1)
    if compile_cache:
        enable_compile_cache(compile_cache)


def playout_worker_setup():
    """start_playout_worker with this process's compile cache, as a picklable callable (Simulator's
    `worker_setup`)."""
    import functools

    import jax
    return functools.partial(start_playout_worker, jax.config.jax_compilation_cache_dir or None)


def configure_cpu_threads(requested: int | None, boards_per_call: int | None,
                          playouts_on_cpu: bool = False, board_size: int | None = None) -> int | None:
    """The CLI's policy.  requested: --cpu-threads (0 = every core; None = automatic: one thread
    for a search of at most SMALL_BATCH boards per device call on a CPU backend, or whose
    playouts may run on the CPU beside an accelerator (`playouts_on_cpu`: --playout-device cpu
    or auto), every core otherwise).  boards_per_call: L x K for search commands, None for the
    others; board_size: the board the process searches (None: not known).  Returns the limit
    applied, None if none."""
    if requested is None:
        requested = auto_cpu_threads(boards_per_call, playouts_on_cpu or backend_is_cpu(), board_size)
    if requested and limit_cpu_threads(requested):
        return requested
    return None


# XLA's default command-buffer types plus the two control-flow ones.
GPU_COMMAND_BUFFERS = "FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN,WHILE,CONDITIONAL"


def enable_gpu_graphs(force: bool = False) -> bool:
    """Capture XLA's GPU while loops in CUDA graphs: add --xla_gpu_enable_command_buffer to
    $XLA_FLAGS.  Only before JAX creates its backends (XLA reads the flags then), only when JAX
    will pick an accelerator (or `force`), and never over a command-buffer setting of the
    user's own.  Returns whether the flag was added."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_gpu_enable_command_buffer" in flags or _backends_exist():
        return False
    if not force and backend_is_cpu():
        return False
    os.environ["XLA_FLAGS"] = (flags + " " if flags else "") + f"--xla_gpu_enable_command_buffer={GPU_COMMAND_BUFFERS}"
    return True


def gpu_graphs_on() -> bool:
    """Whether $XLA_FLAGS puts XLA's while loops in CUDA graphs (WHILE among the command-buffer
    types): how a GPU figure was measured, which its reports say (gojax.bench.device_description)."""
    for flag in os.environ.get("XLA_FLAGS", "").split():
        if flag.startswith("--xla_gpu_enable_command_buffer="):
            return "WHILE" in flag.split("=", 1)[1].upper().split(",")
    return False


def compile_cache_dir() -> str | None:
    """Where `gojax gtp` and `gojax evaluate` keep compiled XLA executables between runs:
    $GOJAX_COMPILE_CACHE, else ~/.cache/gojax/xla; None when $GOJAX_COMPILE_CACHE is "off" or
    empty.  A GTP engine restarted by a GUI or a match then skips most of its compile (docs/history.md,
    2026-11-23)."""
    path = os.environ.get("GOJAX_COMPILE_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "gojax", "xla"))
    return None if path.strip().lower() in ("", "off", "0", "none") else path


def enable_compile_cache(path: str) -> None:
    import jax
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


def configure_process(compile_cache: bool, cpu_threads: int | None = None,
                      boards_per_call: int | None = None, playouts_on_cpu: bool = False,
                      big_batches: bool = False, board_size: int | None = None,
                      playout_workers: int | None = None) -> int | None:
    """A gojax process's JAX settings, before anything creates a backend: GPU graphs, the
    compile cache (if `compile_cache`), the XLA CPU threads (configure_cpu_threads), and on a
    CPU backend with the threads left automatic, one virtual device per core where the process
    plays big batches (`big_batches`, more than SMALL_BATCH boards per call, or a search on a
    board of SPLIT_BOARD or more: split_cpu_devices) unless playout worker processes share its
    rounds (`playout_workers`; None: auto_playout_workers): then one thread on a core of its
    own.  Returns the thread limit applied."""
    enable_gpu_graphs()
    if compile_cache and (path := compile_cache_dir()):
        enable_compile_cache(path)
    if playout_workers is None:
        playout_workers = auto_playout_workers(cpu_threads, boards_per_call, big_batches)
    if playout_workers and cpu_threads is None:
        cpu_threads = 1  # this process's share on one thread of its own core; the workers take the rest
    applied = configure_cpu_threads(cpu_threads, boards_per_call, playouts_on_cpu, board_size)
    # A search splits exactly where it would not get one thread on a CPU (auto_cpu_threads).
    search_splits = boards_per_call is not None and auto_cpu_threads(boards_per_call, True, board_size) == 0
    if cpu_threads is None and applied is None and (big_batches or search_splits):
        split_cpu_devices()
    return applied


def share_gpu_memory() -> None:
    """GPU memory taken as needed instead of XLA's default, three quarters of the device up front:
    for processes that share a GPU (`gojax gtp` engines, two in a self-play match or one beside
    a GUI's other engine; an analysis server; the workers of `--jobs`), whose search rounds need
    little.  Before JAX creates its backends; $XLA_PYTHON_CLIENT_PREALLOCATE, if set, wins."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def start_worker(cpu_threads: int | None = None) -> None:
    """A worker process's settings (`gojax analyze --jobs`, the arena's `--jobs`): those of
    `configure_process`, and GPU memory shared (`share_gpu_memory`).  ^C is the parent's to
    handle: it keeps what is written and ends the workers."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    share_gpu_memory()
    configure_process(True, cpu_threads, big_batches=True)


def gather_bytes(data: bytes) -> list[bytes]:
    """Every process's `data`, in process order, in every process (jax.distributed): two
    all-gathers, the lengths, then the bytes padded to the longest."""
    import numpy as np
    from jax.experimental import multihost_utils
    lengths = np.asarray(multihost_utils.process_allgather(np.array([len(data)], np.int64))).reshape(-1)
    buf = np.zeros(max(int(lengths.max()), 1), np.uint8)
    buf[:len(data)] = np.frombuffer(data, np.uint8)
    every = np.asarray(multihost_utils.process_allgather(buf)).reshape(len(lengths), -1)
    return [bytes(row[:n]) for row, n in zip(every, lengths)]
