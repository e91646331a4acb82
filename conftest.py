"""Two process-wide settings for the suite, which runs hundreds of JAX compiles in one process.

The persistent XLA compilation cache is off (gojax/runtime.compile_cache_dir): a test run must not
depend on, or fill, what ~/.cache/gojax/xla holds.  Every in-process command and every engine a
test starts inherits the setting; tests/test_gtp_transcripts.py gives its engines a cache of their
own to test the cache itself.

JAX's in-memory caches are dropped once the process holds many memory mappings: XLA's CPU backend
maps each compiled playout loop's code in about 500 of them, and a process past the kernel's
vm.max_map_count (65,530 by default) aborts inside its next compile, which is how long suite runs
died late in XLA."""

import gc
import os

import pytest

os.environ["GOJAX_COMPILE_CACHE"] = "off"

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
