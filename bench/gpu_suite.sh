#!/usr/bin/env bash
# The GPU benchmark suite: every throughput figure of bench/ in one command, for a lent GPU
# machine (one call, results under $OUT or ./gpu_out).  Each step has its own time limit and
# a failing step does not stop the others.  Usage:
#
#     OUT=/tmp/gpu bash bench/gpu_suite.sh [quick]
#
# On a machine without the Python packages (sgfmill, pgx, svgwrite), put their wheels in .whl/
# first: the script installs them into /tmp/site.  Figures land in $OUT/*.md and $OUT/suite.log.
# Steps run in order of interest (forests first), so a call cut short keeps the ones that matter;
# suite.log in bench/results/gpu_h100_4 shows each step's start time on an H100: the steps up to
# the real-games forests took 6 minutes there, and the whole suite takes longer than one 10-minute
# call, so bound it with `timeout` and run the rest in a second call (results/gpu_h100_4/README.md).
set -u
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
source "$(dirname "$0")/gpu_env.sh"
LOG=$OUT/suite.log
# quick: tiny sizes, to check the script on a CPU before spending device time.
if [ "${1:-}" = quick ]; then B9="64 128"; B19="16"; SIMS=256; SIMS_BIG=512; FOREST_SIMS=64; BF="256"; else
  B9="1024 16384 65536"; B19="256 4096"; SIMS=3000; SIMS_BIG=10000; FOREST_SIMS=1000; BF="2048 8192 16384"; fi
step() {  # step SECONDS NAME COMMAND...
  local limit=$1 name=$2; shift 2
  echo "=== $name ($(date +%T))" | tee -a "$LOG"
  timeout "$limit" "$@" 2>&1 | tee -a "$LOG" | grep -v '%|' | tail -25
  echo "=== $name: rc ${PIPESTATUS[0]}" | tee -a "$LOG"
}
{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv; nproc;
  $PY -c "import jax, numpy; print('jax', jax.__version__, jax.devices(), 'numpy', numpy.__version__)"; } 2>&1 | tee -a "$LOG"

# The forests first: they are the figures a lent machine is most wanted for.  A fresh machine's
# first forest runs slow (results/gpu_h200_2): a short one first, not a figure.
step 150 "warm-up forest, not a figure" $PY -m gojax bench --search --trees 64 --board 9 --simulations $((FOREST_SIMS / 4)) \
  --repeats 1 --no-progress
# The forest: G searches, one device call per round (issue: >= 100,000 simulations/s at 9x9).
for g in 1 8 64 256; do
  step 150 "forest 9x9 G=$g" $PY -m gojax bench --search --trees $g --board 9 --simulations $FOREST_SIMS --repeats 2 \
    --no-progress --json
done
# K = 8 at twice the simulations: as many leaves, so as much host work, as G = 256 above; it beat
# K = 4 67-33 at equal leaves (results/strength/sp_k8_2000_vs_k4_1000).
step 150 "forest 9x9 G=256 K=8" $PY -m gojax bench --search --trees 256 --board 9 --simulations $((2 * FOREST_SIMS)) \
  --playouts-per-leaf 8 --repeats 2 --no-progress --json
# Four such forests in four processes sharing the GPU, timed together (`--jobs`): one K = 4
# forest is host-bound and leaves the device mostly idle.
step 200 "4 forests 9x9 G=256 --jobs 4" $PY -m gojax bench --search --trees 256 --board 9 --simulations $FOREST_SIMS \
  --jobs 4 --repeats 2 --no-progress --json
# The same forest with its descents in four waves (SearchParams.waves: the same search, less host
# work per leaf, three more small device calls per round; slower on a CPU backend).
step 150 "forest 9x9 G=256 waves=4" $PY -m gojax bench --search --trees 256 --board 9 --simulations $FOREST_SIMS \
  --waves 4 --repeats 2 --no-progress --json
# A lone search (gojax gtp's default shape) with its playouts on the GPU, on the host's CPU, and
# where `--playout-device auto` (gojax gtp's default) puts it: the CPU unless the GPU is clearly faster at warm-up;
# on a GPU each small call waits on its playout loop's latency.
for d in default cpu auto; do
  step 120 "search 9x9 $SIMS L8 K4 playouts on $d" $PY -m gojax bench --search --board 9 --simulations $SIMS \
    --playout-device $d --repeats 2 --no-progress --json
done
# The same search on the GPU testing its playout loop's end every 4 and every 16 moves
# (--steps-per-test: the same moves; unmeasurable on a CPU): what the per-iteration test costs
# the 32-board call.
for n in 4 16; do
  step 120 "search 9x9 $SIMS L8 K4 playouts on default, steps-per-test $n" $PY -m gojax bench --search --board 9 \
    --simulations $SIMS --playout-device default --steps-per-test $n --repeats 2 --no-progress --json
done
# Four such searches at once in four processes (four engines on one machine), their playouts on
# the GPU, on the host's cores, and where `auto` puts them (results/gpu_h100_4: on the GPU four
# ran no faster together than one).
for d in default cpu auto; do
  step 150 "4 searches 9x9 $SIMS L8 K4 --jobs 4, playouts on $d" $PY -m gojax bench --search --board 9 \
    --simulations $SIMS --playout-device $d --jobs 4 --no-progress --json
done
# Forests from move 30 of eight real games (their trees are narrower: more host work per leaf),
# and the host's own cost per leaf on this machine's core, with the device's results replayed.
GAMES=bench/results/strength/pachi_3000_m25/games
for g in 64 256; do
  step 150 "forest 9x9 G=$g real games" $PY -m gojax bench --search --trees $g --board 9 --simulations $FOREST_SIMS \
    --repeats 2 --sgf $GAMES/game00{01,07,09,11,13,15,16,22}.sgf --move 30 --no-progress --json
done
step 150 "forest 9x9 G=256 real games waves=4" $PY -m gojax bench --search --trees 256 --board 9 \
  --simulations $FOREST_SIMS --waves 4 --repeats 2 --sgf $GAMES/game00{01,07,09,11,13,15,16,22}.sgf --move 30 \
  --no-progress --json
step 200 "host replay G=64" $PY bench/host_replay.py --trees 64 --simulations $FOREST_SIMS --replays 3
# G = 256 is the host-bound shape: its live host CPU per leaf against this replay's.
step 200 "host replay G=256" $PY bench/host_replay.py --trees 256 --simulations $FOREST_SIMS --replays 2
analyze_jobs $FOREST_SIMS 200  # many searches over processes (gojax analyze --jobs; gpu_env.sh)

# The device's ceiling at the forests' batches (G x L x K playouts per call, MoGo policy):
# G = 64 and 256 at K = 4, and 256 at K = 8.
for b in $BF; do
  step 90 "gojax bench 9x9 B=$b mogo" $PY -m gojax bench --board 9 --batch $b --policy mogo --no-progress
done

# MoGo / uniform throughput ratio (issue 5's bar: at least 40%).
step 200 "policy_throughput" $PY bench/policy_throughput.py --sizes 9 19 --batches $B9 \
  --batches-19 $B19 --repeats 5 --out "$OUT/policy_throughput.md"

# Whole searches: simulations/s and host share at several batch shapes.
for shape in "8 4" "16 16" "16 64" "64 16" "64 64"; do
  set -- $shape
  step 120 "search 9x9 $SIMS L$1 K$2" $PY -m gojax bench --search --board 9 --simulations $SIMS --leaves $1 \
    --playouts-per-leaf $2 --repeats 2 --no-progress --json
done
step 120 "search 9x9 $SIMS_BIG L64 K32" $PY -m gojax bench --search --board 9 --simulations $SIMS_BIG --leaves 64 \
  --playouts-per-leaf 32 --repeats 2 --no-progress --json
step 120 "search 19x19 $SIMS_BIG L32 K32" $PY -m gojax bench --search --board 19 --simulations $SIMS_BIG --leaves 32 \
  --playouts-per-leaf 32 --repeats 1 --no-progress --json

# Bare playouts, the README's main job, at GPU batch sizes.
for b in $B9; do
  step 90 "gojax bench 9x9 B=$b uniform" $PY -m gojax bench --board 9 --batch $b --policy uniform --no-progress
done
for b in $B19; do
  step 90 "gojax bench 19x19 B=$b uniform" $PY -m gojax bench --board 19 --batch $b --policy uniform --no-progress
done

# gojax vs pgx.
step 200 "compare_pgx" $PY bench/compare_pgx.py --boards 9 19 --batches $B9 --repeats 3 \
  --pgx-max-batch-19 4096 --out "$OUT"

# Per-point vs bitboard layout.
step 150 "layouts" $PY bench/experiments/layouts.py --sizes 9 19 --batches $B9 --batches-19 $B19 --repeats 5 \
  --out "$OUT/layouts.md"
grep -h '"simulations_per_sec"' "$LOG" > "$OUT/search.jsonl"
echo "suite done $(date +%T)"
