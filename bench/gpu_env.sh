# Sourced by bench/gpu_suite.sh and bench/gpu_matches.sh: the Python environment on a lent
# machine.  Wheels of packages it lacks (sgfmill, pgx, svgwrite) may travel in .whl/; they are
# installed into /tmp/site.  JAX takes GPU memory as it goes (several processes may share it).
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
if [ -d .whl ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
