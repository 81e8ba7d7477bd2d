#!/usr/bin/env bash
# Runs tilekit's CPU benchmarks on this machine (OpenMP backend) and writes the CPU section of
# BENCHMARKS.md from the measured JSON.
#
#   scripts/bench-cpu.sh            full run: matmul f32, f64, f16 at 128..2048 step 128 (~6 min, 2 cores)
#   scripts/bench-cpu.sh --quick    128..512 step 128, to check the pipeline (~20 s)
#
# Environment: TILEKIT_BENCH_SHAPES / TILEKIT_BENCH_DTYPES override the shapes / types (syntax:
# tilekit_bench_matmul --help); BENCH_RESULTS (default bench/results/cpu-openmp) is where the JSON
# goes; BENCH_SECTION (default cpu-openmp) names the BENCHMARKS.md section.
#
# Two processes, each under the settings its libraries are best in (shared/TOOLCHAIN.md):
#   1. tilekit and Kokkos Kernels: Kokkos' OpenMP threads pinned, OMP_PROC_BIND=spread OMP_PLACES=threads;
#   2. OpenBLAS (its own pthread pool): OMP_PROC_BIND unset, since threads it starts from a pinned
#      master inherit that one core (OpenBLAS fell from 140 to 72 GFLOP/s so); OMP_WAIT_POLICY=passive
#      so that Kokkos' threads, running the separate activation pass, sleep instead of spinning
#      against OpenBLAS's threads between calls.
# Both use the same inputs: the same generator and seeds (kernels/fill.hpp). Benchmarks that other
# processes disturbed (shared cores) are re-timed once the CPUs are idle again (BENCH_RERUNS passes).
set -euo pipefail
cd "$(dirname "$0")/.."

shapes=${TILEKIT_BENCH_SHAPES:-128:2048:128}
[ "${1:-}" = "--quick" ] && shapes=${TILEKIT_BENCH_SHAPES:-128:512:128}
dtypes=${TILEKIT_BENCH_DTYPES:-f32,f64,f16}
results=${BENCH_RESULTS:-bench/results/cpu-openmp}
section=${BENCH_SECTION:-cpu-openmp}
unset TILEKIT_BENCH_SHAPES TILEKIT_BENCH_DTYPES  # passed as flags below, so the JSON records them

scripts/deps.sh openmp >/dev/null
cmake --preset openmp >/dev/null
cmake --build --preset openmp --target tilekit_bench_matmul
bin=build/openmp/tilekit_bench_matmul
mkdir -p "$results"
rm -f "$results"/matmul_*.json "$results"/run.txt
common=(--tk_shapes="$shapes" --tk_dtypes="$dtypes" --benchmark_out_format=json)

# The cores may be shared (other users' builds): an OpenMP barrier waiting on a descheduled thread
# turns microseconds into scheduler time slices. Wait (up to BENCH_WAIT_IDLE_S, default 600 s) until
# the CPUs are at least 90% idle over 5 s, and record the load around each process.
busy_pct() {  # CPU busy percentage over 5 s, from /proc/stat
  local a b
  a=($(head -1 /proc/stat)); sleep 5; b=($(head -1 /proc/stat))
  local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
  for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
  echo $(( total > 0 ? 100 * (total - idle) / total : 0 ))
}
wait_idle() {
  local waited=0 limit=${BENCH_WAIT_IDLE_S:-600} busy
  while busy=$(busy_pct); [ "$busy" -gt 10 ] && [ $waited -lt "$limit" ]; do
    echo "   (CPUs ${busy}% busy; waiting for them to go idle)"; waited=$((waited + 5))
  done
  echo "$(date -u +%FT%TZ) $1: CPUs ${busy}% busy over 5 s before start; loadavg $(cut -d' ' -f1-3 /proc/loadavg)" \
    | tee -a "$results/run.txt"
}
after() {
  echo "$(date -u +%FT%TZ) $1: done; loadavg $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min)" | tee -a "$results/run.txt"
}

# run NAME FILTER ENV...: one process under ENV, then up to BENCH_RERUNS (default 2) re-timings of
# the benchmarks that other processes disturbed (> 10% of the CPUs; other_cpu_pct), merged in.
run() {
  local name=$1 filter=$2 pass again
  shift 2
  wait_idle "$name"
  env "$@" "$bin" "${common[@]}" --benchmark_filter="$filter" --benchmark_out="$results/$name"
  after "$name"
  for pass in $(seq 1 "${BENCH_RERUNS:-2}"); do
    again=$(python3 scripts/bench-rerun.py filter "$results/$name")
    [ -n "$again" ] || break
    echo "== re-timing $(echo "$again" | tr '|' '\n' | wc -l) disturbed benchmarks of $name (pass $pass)"
    wait_idle "$name (re-timing, pass $pass)"
    env "$@" "$bin" "${common[@]}" --benchmark_filter="$again" --benchmark_out="$results/rerun.json"
    after "$name (re-timing, pass $pass)"
    python3 scripts/bench-rerun.py merge "$results/$name" "$results/rerun.json" | tee -a "$results/run.txt"
    rm -f "$results/rerun.json"
  done
}

echo "== tilekit + Kokkos Kernels (OMP_PROC_BIND=spread OMP_PLACES=threads)"
run matmul_kokkos.json '/(tilekit|kokkos_kernels)' OMP_PROC_BIND=spread OMP_PLACES=threads

echo "== OpenBLAS (OMP_PROC_BIND unset, OMP_WAIT_POLICY=passive)"
run matmul_openblas.json '/openblas' -u OMP_PROC_BIND -u OMP_PLACES OMP_WAIT_POLICY=passive

# The report needs matplotlib for its plots: the first python3 that has it (Debian: python3-matplotlib).
py=python3
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
done
cmd="scripts/bench-cpu.sh${1:+ $1}"
[ "$shapes" != "128:2048:128" ] && [ "${1:-}" != "--quick" ] && cmd="TILEKIT_BENCH_SHAPES=$shapes $cmd"
[ "$dtypes" != "f32,f64,f16" ] && cmd="TILEKIT_BENCH_DTYPES=$dtypes $cmd"
notes="Load around the runs (\`$results/run.txt\`; the 2 cores may be shared with other users' work):"$'\n'
notes+=$(sed 's/^/- /' "$results/run.txt")
"$py" scripts/report.py --section "$section" --title "CPU: OpenMP backend ($(nproc) cores)" \
  --command "$cmd" --out BENCHMARKS.md --plots docs/bench --notes "$notes" "$results"/matmul_*.json
