#!/usr/bin/env bash
# The host side of a forest on a lent GPU machine, where the forest is host-bound: (1) a py-spy
# profile of one G = 256 forest bench (read it with bench/spy_shares.py), and (2) P forest
# processes at once sharing the one GPU, each its own host core (the device has room: a
# G = 256 forest keeps it busy a fifth of the time).  Usage:
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

# P processes at once: each prints its own median rate over 3 repeats, timed while the others
# run (they start together; compile takes about the same time in each).
for p in $PROCS; do
  echo "=== $p processes x G=$G ($(date +%T))" | tee -a "$LOG"
  for i in $(seq 1 "$p"); do
    timeout 150 $PY "${BENCH[@]}" --repeats 3 --seed "$i" > "$OUT/procs${p}_$i.txt" 2>&1 &
  done
  wait
  for i in $(seq 1 "$p"); do grep -h -e 'simulations/s' -e 'host CPU' "$OUT/procs${p}_$i.txt" | tee -a "$LOG"; done
  tail -qn1 "$OUT"/procs${p}_*.txt | $PY -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith('{')]
print(f'{len(rows)} processes at once: {sum(r[\"simulations_per_sec\"] for r in rows):,.0f} simulations/s together')" \
    | tee -a "$LOG"
  rm -f "$OUT"/procs${p}_*.txt
done
echo "host suite done $(date +%T)"
