#!/usr/bin/env bash
# One lent-GPU call: the suite (cut at SUITE_S seconds), then the forest at G=256 from real games
# against BASE (order this, BASE, BASE, this), then the host replay at G=256 (host-bound shape).
set -u
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
SUITE_S=${SUITE_S:-400}; S=${S:-1000}; G=${G:-256}; Q=${1:-}
start=$(date +%s)
OUT=$OUT timeout $SUITE_S bash bench/gpu_suite.sh $Q > "$OUT/suite_stdout.txt" 2>&1
echo "suite rc $? after $(( $(date +%s) - start )) s"
source bench/gpu_env.sh
LOG=$OUT/pair.log
GAMES=bench/results/strength/pachi_3000_m25/games
run() {  # run NAME DIR
  echo "=== $1 ($(date +%T))" | tee -a "$LOG"
  timeout 60 env PYTHONPATH="$2:/tmp/site" $PY -m gojax bench --search --trees $G --board 9 \
    --sgf $GAMES/game00{01,07,09,11,13,15,16,22}.sgf --move 30 --repeats 2 --no-progress --json --simulations $S \
    2>&1 | tee -a "$LOG" | grep -v '%|' | tail -3
}
run "this (1)" "$PWD"; run "BASE (1)" "$PWD/.ab_base/25e3f6e"; run "BASE (2)" "$PWD/.ab_base/25e3f6e"; run "this (2)" "$PWD"
echo "=== host replay G=$G ($(date +%T))" | tee -a "$LOG"
timeout 70 $PY bench/host_replay.py --trees $G --simulations $S --replays 2 2>&1 | tee -a "$LOG" | tail -8
echo "all done after $(( $(date +%s) - start )) s" | tee -a "$LOG"
