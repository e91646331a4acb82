"""The suite's own XLA compilation cache: gojax keeps compiled executables in ~/.cache/gojax/xla
between runs (gojax/runtime.compile_cache_dir), and a test run must neither read what earlier
runs or other versions left there nor fill the user's cache.  Every in-process command and every
engine a test starts inherits $GOJAX_COMPILE_CACHE; a test that wants another sets its own."""

import os
import shutil
import tempfile

_CACHE = tempfile.mkdtemp(prefix="gojax-test-xla-")
os.environ["GOJAX_COMPILE_CACHE"] = _CACHE


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE, ignore_errors=True)
