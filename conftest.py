"""The suite runs without gojax's persistent XLA compilation cache (gojax/runtime.compile_cache_dir):
runs on one machine aborted in XLA inside JAX's cache reads and writes, and a test run must not
depend on, or fill, what ~/.cache/gojax/xla holds.  Every in-process command and every engine a
test starts inherits the setting; tests/test_gtp_transcripts.py gives its engines a cache of their
own to test the cache itself."""

import os

os.environ["GOJAX_COMPILE_CACHE"] = "off"
