#!/usr/bin/env bash
# Small-batch latency on a GPU under different XLA flags: the default search shape (L8 x K4 =
# 32 boards per call) makes ~100 device calls per 3,000-simulation search, each a playout loop
# with a liberty-recount loop inside every move.  XLA runs a GPU while_loop by reading its
# condition back on the host every iteration unless the loop is captured in a CUDA graph
# (command buffers with WHILE / CONDITIONAL).  gojax's CLI adds WHILE and CONDITIONAL on a GPU
# unless XLA_FLAGS names command buffers itself (gojax/runtime.py), so the first row names the
# set without them.  (The 2026-11-23 measurement's first row ran before that default existed,
# with XLA_FLAGS empty: XLA's own default set.)  Usage, on a lent GPU machine:
#
#     OUT=/tmp/gpu bash bench/gpu_latency.sh
set -u
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
source "$(dirname "$0")/gpu_env.sh"
LOG=$OUT/latency.log
for flags in "--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN" \
    "--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN,WHILE,CONDITIONAL" \
    "--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN,WHILE,CONDITIONAL --xla_gpu_graph_min_graph_size=1"; do
  echo "=== XLA_FLAGS='$flags' ($(date +%T))" | tee -a "$LOG"
  XLA_FLAGS="$flags" timeout 150 $PY -m gojax bench --board 9 --batch 32 --policy mogo --repeats 10 --no-progress \
    2>&1 | grep -E "playouts/s|batch time|compile|Error|error" | tee -a "$LOG"
  XLA_FLAGS="$flags" timeout 150 $PY -m gojax bench --search --board 9 --simulations 3000 --leaves 8 \
    --playouts-per-leaf 4 --repeats 2 --no-progress --json 2>&1 | grep -E "^\{|simulations/s|host|device alone|Error|error" \
    | tee -a "$LOG"
done
