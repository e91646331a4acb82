#!/usr/bin/env bash
# Several `gojax match` runs at once on one machine (many cores, one GPU shared by every gojax
# process), stopped cleanly after a wall-clock limit.  Each match resumes from RUNS/NAME if a
# previous call left results there; at the end every match folder is packed into
# $OUT/runs.tgz and a summary table is printed.
#
#     OUT=/tmp/o RUNS=runs/gpu LIMIT=540 bash bench/gpu_matches.sh MATCHFILE
#
# MATCHFILE: one match per line, fields separated by '|':
#     name | jobs | games | black command | white command | referee (gnugo or gojax) [| match options]
# `{py}` in a command is replaced by this script's Python.  GNU Go is found on PATH.
#
# MATCH_PLATFORM=cpu runs every gojax engine on the CPU, one XLA thread each.  Measured on an
# H100 machine (2026-11-22): fourteen engine processes sharing the one GPU ran 10-20x slower per
# move than one alone (gojax's search is host-bound, with many small device calls per move, and
# separate processes' GPU contexts take turns), so parallel matches belong on the cores.
set -u
OUT=${OUT:-gpu_out}; RUNS=${RUNS:-runs/gpu}; LIMIT=${LIMIT:-540}
mkdir -p "$OUT" "$RUNS"
source "$(dirname "$0")/gpu_env.sh"
[ -d .gnugo/bin ] && export PATH=$PWD/.gnugo/bin:$PATH
if [ "${MATCH_PLATFORM:-}" = cpu ]; then
  export JAX_PLATFORMS=cpu XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
fi
names=()
while IFS='|' read -r name jobs games black white referee extra; do
  name=$(echo $name); [ -z "$name" ] && continue; case $name in \#*) continue;; esac
  black=${black//\{py\}/$PY}; white=${white//\{py\}/$PY}
  names+=("$name")
  # SIGINT first: the match runner records nothing half-done and the next call resumes.
  timeout -s INT -k 30 "$LIMIT" $PY -m gojax match --black "$(echo $black)" --white "$(echo $white)" \
    --games $games --alternate --jobs $jobs --referee $(echo $referee) --out "$RUNS/$name" \
    --name-black "${name}-A" --name-white "${name}-B" --no-progress --json ${extra:-} > "$OUT/$name.log" 2>&1 &
done < "$1"
wait
tar czf "$OUT/runs.tgz" -C "$RUNS" .
$PY - "$RUNS" "${names[@]}" <<'EOF'
import sys
from gojax.match import format_summary, load_results, summarize
runs = sys.argv[1]
rows = []
for name in sys.argv[2:]:
    recs = load_results(f"{runs}/{name}/results.jsonl")
    a, b = f"{name}-A", f"{name}-B"
    if not recs:
        rows.append(f"| {name} | 0 | | | | | |"); continue
    s = summarize(recs, a, b)
    print(f"## {name}\n" + format_summary(s, a, b))
    lo, hi = s["elo_95"]
    t = s["sec_per_move"]
    rows.append(f"| {name} | {s['games']} | {s['wins'][a]:g}-{s['wins'][b]:g} | {s['win_rate']:.3f} +- {s['stderr']:.3f} | "
                f"{s['elo']:+.0f} ({lo:+.0f} .. {hi:+.0f}) | {t[a]:.2f} / {t[b]:.2f} | {s['forfeits']} |")
print("\n| match | games | A-B | A win rate | Elo A-B (95%) | s/move A / B | forfeits |\n|---|---|---|---|---|---|---|")
print("\n".join(rows))
EOF
