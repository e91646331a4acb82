#!/usr/bin/env bash
# The host side of a forest on a lent GPU machine, where the forest is host-bound: (1) a py-spy
# profile of one G = 256 forest bench (read it with bench/spy_shares.py), and (2) P forest
# processes at once sharing the one GPU (`gojax bench --jobs P`), each its own host core (the
# device has room: a G = 256 forest keeps it busy a fifth of the time).  Usage:
#
#     OUT=/tmp/gpu bash bench/gpu_host.sh [quick]
#
# py-spy travels as a wheel in .whl/ (installed into /tmp/site by gpu_env.sh).
set -u
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
source "$(dirname "$0")/gpu_env.sh"
LOG=$OUT/host.log
if [ "${1:-}" = quick ]; then G=16; SIMS=64; PROCS="2"; else G=256; SIMS=1000; PROCS="2 4"; fi
SPY=$(command -v py-spy || echo /tmp/site/bin/py-spy)
BENCH=(-m gojax bench --search --trees $G --board 9 --simulations $SIMS --no-progress --json)

echo "=== py-spy G=$G ($(date +%T))" | tee -a "$LOG"
timeout 150 "$SPY" record -r 200 -f raw -o "$OUT/spy_g$G.txt" -- $PY "${BENCH[@]}" --repeats 2 2>&1 \
  | grep -v '%|' | tee -a "$LOG" | tail -8
$PY bench/spy_shares.py "$OUT/spy_g$G.txt" --top 30 2>&1 | tee -a "$LOG"

# P processes at once sharing the GPU (`gojax bench --jobs P`: each compiles, then all start
# their timed forests together): the sum of their rates and the simulations over the window.
for p in $PROCS; do
  echo "=== $p processes x G=$G ($(date +%T))" | tee -a "$LOG"
  timeout 300 $PY "${BENCH[@]}" --repeats 3 --jobs "$p" 2>&1 | grep -v '%|' | tee -a "$LOG" | tail -5
done
echo "host suite done $(date +%T)"
