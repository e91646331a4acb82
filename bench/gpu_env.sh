# Sourced by the bench/gpu_*.sh scripts: the Python environment on a lent machine, and the
# steps gpu_suite.sh and gpu_forest.sh share.  Wheels of packages it lacks (sgfmill, pgx, svgwrite) may travel in .whl/; they are
# installed into /tmp/site.  JAX takes GPU memory as it goes (several processes may share it).
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
if [ -d .whl ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi

# analyze_jobs SIMULATIONS SECONDS: `gojax analyze` of four real games' 269 positions at --trees 64
# in one process and in four (one forest's host thread leaves a GPU mostly idle), then the two
# outputs' md5 (the same rows either way).  Needs the caller's `step` and $LOG.
analyze_jobs() {
  local games=bench/results/strength/pachi_3000_m25/games j
  for j in 1 4; do
    rm -f "/tmp/analyze_j$j.jsonl"
    step "$2" "analyze 269 positions G=64 jobs=$j" bash -c "time $PY -m gojax analyze $games/game00{01,07,09,11}.sgf \
      --simulations $1 --trees 64 --jobs $j --no-progress --out /tmp/analyze_j$j.jsonl"
  done
  md5sum /tmp/analyze_j*.jsonl 2>&1 | tee -a "$LOG"
}
