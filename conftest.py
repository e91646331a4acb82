"""Two process-wide settings for the suite, which runs hundreds of JAX compiles in one process.

The persistent XLA compilation cache (gojax/runtime.compile_cache_dir) is a fresh temporary folder
for each run, removed at exit: a test run neither depends on nor fills ~/.cache/gojax/xla, and the
processes the tests start (engines, bench/ scripts, notebooks), and this process after it drops
its in-memory caches, load the kernels compiled earlier in the same run instead of compiling them
again: most of a started process's time is its compiles.
tests/test_gtp_transcripts.py gives its engines a cache of their own to test the cache itself.

JAX's in-memory caches are dropped once the process holds many memory mappings: XLA's CPU backend
maps each compiled playout loop's code in about 500 of them, and a process past the kernel's
vm.max_map_count (65,530 by default) aborts inside its next compile, which is how long suite runs
died late in XLA."""

import atexit
import gc
import os
import shutil
import tempfile

import pytest

# pytest-xdist's workers inherit the folder from the run's first process, which removes it.
_CACHE = os.environ.get("GOJAX_TEST_CACHE", "")
if not _CACHE:
    _CACHE = os.environ["GOJAX_TEST_CACHE"] = tempfile.mkdtemp(prefix="gojax-test-xla-")
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
os.environ["GOJAX_COMPILE_CACHE"] = _CACHE
# The same folder for the other processes the tests start (`python -c`, bench/ scripts, `gojax
# bench`, notebooks), which do not turn gojax's cache on: JAX reads these two variables itself.
os.environ["JAX_COMPILATION_CACHE_DIR"] = _CACHE
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
from gojax.runtime import enable_compile_cache  # noqa: E402  (after the variable its engines inherit)

enable_compile_cache(_CACHE)

MAPPINGS_BEFORE_CLEARING = 45_000  # about 40 playout loops below the limit: each clearing costs recompiles


def _mappings() -> int:
    try:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)
    except OSError:  # no /proc (macOS): nothing to bound
        return 0


@pytest.fixture(autouse=True)
def _bounded_mappings():
    yield
    if _mappings() > MAPPINGS_BEFORE_CLEARING:
        import jax
        jax.clear_caches()
        gc.collect()
