#!/usr/bin/env bash
# The forest's GPU figures alone, for a lent machine with little device time left (the full set
# is bench/gpu_suite.sh): G = 256 from real games at K = 4 (against another checkout, when BASE
# names one); a lone search's playouts on the GPU and where --playout-device auto puts them; four
# forests sharing the GPU (--jobs 4); --waves 4 and K = 8; `gojax analyze` in one and in four
# processes; the host's own cost per leaf on this machine's core.  Usage:
#
#     OUT=/tmp/gpu [BASE=DIR] bash bench/gpu_forest.sh [quick]
#
# quick: tiny sizes, to check the script on a CPU before spending device time.
# BASE: a checkout of an earlier commit (`git archive COMMIT | tar -x -C DIR`), timed in the same
# call, alternating with this one: machines of one kind differ by more than a host change is
# worth (results/gpu_h100_3/README.md).  Figures land in $OUT/forest.log.
set -u
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
source "$(dirname "$0")/gpu_env.sh"
LOG=$OUT/forest.log
step() {  # step SECONDS NAME COMMAND...
  local limit=$1 name=$2; shift 2
  echo "=== $name ($(date +%T))" | tee -a "$LOG"
  timeout "$limit" "$@" 2>&1 | tee -a "$LOG" | grep -v '%|' | tail -4
  echo "=== $name: rc ${PIPESTATUS[0]}" | tee -a "$LOG"
}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc; git log --oneline -1 2>/dev/null;
  $PY -c "import jax; print('jax', jax.__version__, jax.devices())"; } 2>&1 | tee -a "$LOG"
GAMES=bench/results/strength/pachi_3000_m25/games
if [ "${1:-}" = quick ]; then G=4; S=64; else G=256; S=1000; fi
forest() {  # forest NAME CHECKOUT EXTRA...: a G = 256 forest from real games
  local name=$1 dir=$2; shift 2
  step 120 "$name" env PYTHONPATH="$dir${PYTHONPATH:+:$PYTHONPATH}" $PY -m gojax bench --search --trees $G --board 9 \
    --sgf $GAMES/game00{01,07,09,11,13,15,16,22}.sgf --move 30 --repeats 3 --no-progress --json "$@"
}
# A fresh machine's first forest runs slow (results/gpu_h200_1, gpu_h200_2): a short one first,
# not a figure.
forest "warm-up, not a figure" "$PWD" --simulations $((S / 4)) --repeats 1
if [ -n "${BASE:-}" ]; then  # in the order this, BASE, BASE, this: a drift favours neither
  forest "G=$G real games, this checkout (1)" "$PWD" --simulations $S
  forest "G=$G real games, BASE (1)" "$BASE" --simulations $S
  forest "G=$G real games, BASE (2)" "$BASE" --simulations $S
  forest "G=$G real games, this checkout (2)" "$PWD" --simulations $S
else
  forest "G=$G real games" "$PWD" --simulations $S
fi
# A lone search (gojax gtp's shape) with its playouts on the GPU and where `--playout-device
# auto` (gojax gtp's default) puts them; then four G = 256 forests sharing the GPU, timed together.
if [ "${1:-}" = quick ]; then LONE=256; else LONE=3000; fi
for d in default auto; do
  step 90 "search 9x9 $LONE L8 K4 playouts on $d" $PY -m gojax bench --search --board 9 --simulations $LONE \
    --playout-device $d --repeats 2 --no-progress --json
done
forest "4 x G=$G real games --jobs 4" "$PWD" --simulations $S --jobs 4 --repeats 2
forest "G=$G real games waves=4" "$PWD" --simulations $S --waves 4
forest "G=$G real games K=8" "$PWD" --simulations $((2 * S)) --playouts-per-leaf 8
analyze_jobs $S 150  # many searches over processes (gojax analyze --jobs; gpu_env.sh)
step 120 "host replay G=$G" $PY bench/host_replay.py --trees $G --simulations $S --replays 2
echo "forest done $(date +%T)" | tee -a "$LOG"
