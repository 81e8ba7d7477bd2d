#!/usr/bin/env bash
# Runs tilekit's CPU benchmarks on this machine (OpenMP backend), writes the results folder's README.md
# (the command) and regenerates BENCHMARKS.md from all results with scripts/bench-report.py.
#
#   scripts/bench-cpu.sh            full run: matmul f32, f64, f16 at 128..2048 step 128, twice (about
#                                   12 min on 2 idle cores; more while it waits for other users' work)
#   scripts/bench-cpu.sh --quick    128..512 step 128, to check the pipeline (~20 s)
#   scripts/bench-cpu.sh --retime   no new run: re-times the benchmarks of the existing results that
#                                   other processes disturbed, then rewrites the report
#
# Environment: TILEKIT_BENCH_SHAPES / TILEKIT_BENCH_DTYPES / TILEKIT_BENCH_LAYOUT (col, row) override the shapes / types / storage order (syntax:
# tilekit_bench_matmul --help); BENCH_RESULTS (default bench/results/cpu-openmp) is where the JSON
# goes; BENCH_SECTION (default cpu-openmp) names the suite. BENCH_OPENBLAS_BF16=1
# links the benchmark against OpenBLAS 0.3.21 built with BUILD_BFLOAT16 (scripts/openblas-bf16.sh:
# Debian's own does not export cblas_sbgemm), adding the bf16 vendor series; the setting stays in
# build/openmp's CMake cache until TILEKIT_OPENBLAS_LIBRARY is reset. BENCH_HOST_ISA=avx2 (or
# portable) runs tilekit on that host micro-kernel path (TILEKIT_HOST_ISA) and OpenBLAS on its Haswell
# kernels (OPENBLAS_CORETYPE=Haswell), so that an AVX-512 machine measures the AVX2 pair too.
#
# Two processes, each under the settings its libraries are best in (shared/TOOLCHAIN.md):
#   1. tilekit and Kokkos Kernels: Kokkos' OpenMP threads pinned, OMP_PROC_BIND=spread OMP_PLACES=threads;
#   2. OpenBLAS (its own pthread pool): OMP_PROC_BIND unset, since threads it starts from a pinned
#      master inherit that one core (OpenBLAS fell from 140 to 72 GFLOP/s so); OMP_WAIT_POLICY=passive
#      so that Kokkos' threads, running the separate activation pass, sleep instead of spinning
#      against OpenBLAS's threads between calls.
# Both use the same inputs: the same generator and seeds (tilekit/kernels/core/fill.hpp).
# The cores are shared with other users, whose work only ever slows a run down. So each process runs
# BENCH_PASSES times (default 2), the two processes' passes alternating (tilekit, OpenBLAS, tilekit,
# ...), and every benchmark keeps its fastest pass (each pass's figure is the
# median of its iterations); then benchmarks that other processes visibly disturbed (other_cpu_pct >
# 10) are re-timed once the CPUs are idle (up to BENCH_RERUNS times, default 2), likewise kept if faster.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-full}
case $mode in full|--quick|--retime) ;; *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;; esac
shapes=${TILEKIT_BENCH_SHAPES:-128:2048:128}
[ "$mode" = "--quick" ] && shapes=${TILEKIT_BENCH_SHAPES:-128:512:128}
dtypes=${TILEKIT_BENCH_DTYPES:-f32,f64,f16}
results=${BENCH_RESULTS:-bench/results/cpu-openmp}
section=${BENCH_SECTION:-cpu-openmp}
unset TILEKIT_BENCH_SHAPES TILEKIT_BENCH_DTYPES  # passed as flags below, so the JSON records them
passes=${BENCH_PASSES:-2}
if [ "$mode" = "--retime" ]; then  # the shapes and types of the run being re-timed
  ctx() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["context"][sys.argv[2]])' "$@"; }
  shapes=$(ctx "$results/matmul_kokkos.json" matmul_shapes)
  dtypes=$(ctx "$results/matmul_kokkos.json" matmul_dtypes)
fi

scripts/deps.sh openmp >/dev/null
if [ "${BENCH_OPENBLAS_BF16:-0}" = 1 ]; then
  # OpenBLAS 0.3.21 built from Debian's source with BUILD_BFLOAT16 (scripts/openblas-bf16.sh), for
  # the bf16 vendor series (cblas_sbgemm); the benchmark binary then links it for every series.
  ob=$(scripts/openblas-bf16.sh)
  cmake --preset openmp -DTILEKIT_OPENBLAS_INCLUDE_DIR="$ob/include" -DTILEKIT_OPENBLAS_LIBRARY="$ob/lib/libopenblas.so" \
    -UTILEKIT_OPENBLAS_HAS_SBGEMM >/dev/null
fi
cmake --preset openmp >/dev/null
cmake --build --preset openmp --target tilekit_bench_matmul
bin=build/openmp/tilekit_bench_matmul
mkdir -p "$results"
if [ "$mode" = "--retime" ]; then
  echo "$(date -u +%FT%TZ) scripts/bench-cpu.sh --retime: re-timing what other processes disturbed" >> "$results/run.txt"
else
  rm -f "$results"/matmul_*.json "$results"/run.txt
fi
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

# pass NAME N FILTER ENV...: pass N of one process under ENV; from the second on, the fastest pass is
# kept per benchmark.
pass() {
  local name=$1 n=$2 filter=$3
  shift 3
  wait_idle "$name (pass $n of $passes)"
  env "$@" "$bin" "${common[@]}" --benchmark_filter="$filter" --benchmark_out="$results/pass.json"
  after "$name (pass $n of $passes)"
  if [ "$n" = 1 ]; then
    mv "$results/pass.json" "$results/$name"
  else
    python3 scripts/bench-rerun.py best "$results/$name" "$results/pass.json" | tee -a "$results/run.txt"
    rm -f "$results/pass.json"
  fi
}
# retime NAME FILTER ENV...: up to BENCH_RERUNS re-timings of what other processes disturbed (> 10% of
# the CPUs).
retime() {
  local name=$1 filter=$2 n again
  shift 2
  for n in $(seq 1 "${BENCH_RERUNS:-2}"); do
    again=$(python3 scripts/bench-rerun.py filter "$results/$name")
    [ -n "$again" ] || break
    echo "== re-timing $(echo "$again" | tr '|' '\n' | wc -l) disturbed benchmarks of $name (pass $n)"
    wait_idle "$name (re-timing, pass $n)"
    env "$@" "$bin" "${common[@]}" --benchmark_filter="$again" --benchmark_out="$results/rerun.json"
    after "$name (re-timing, pass $n)"
    python3 scripts/bench-rerun.py best "$results/$name" "$results/rerun.json" | tee -a "$results/run.txt"
    rm -f "$results/rerun.json"
  done
}

# The copy series (Kokkos::deep_copy of the shape's bytes: the memory-bound floor that the shape
# set's targets are stated against) runs under Kokkos' settings, in the first process.
isa=()
blas=()
if [ -n "${BENCH_HOST_ISA:-}" ]; then
  isa=(TILEKIT_HOST_ISA="$BENCH_HOST_ISA")
  # (the OpenBLAS process takes the path too: its peak_frac counter is then of the same peak)
  blas=(TILEKIT_HOST_ISA="$BENCH_HOST_ISA")
  [ "$BENCH_HOST_ISA" != avx512 ] && blas+=(OPENBLAS_CORETYPE=Haswell)
fi
# OpenBLAS's own path on an AVX-512 CPU that its DYNAMIC_ARCH detection does not know: 0.3.21 takes
# an Emerald Rapids (family 6 model 207) for a Prescott (SSE3 kernels, a fifth of its speed); the
# baseline is the vendor's fastest path, so such a CPU gets the SkylakeX kernels (the AVX-512 ones).
if [ "${BENCH_HOST_ISA:-avx512}" = avx512 ] && [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then
  lib=$(ldd "$bin" | awk '/libopenblas/ {print $3; exit}')
  core=$(python3 -c 'import ctypes, sys; l = ctypes.CDLL(sys.argv[1]); l.openblas_get_corename.restype = ctypes.c_char_p
print(l.openblas_get_corename().decode())' "$lib" 2>/dev/null || true)
  case $core in
    SkylakeX|Cooperlake|SapphireRapids|"") ;;
    *) echo "== OpenBLAS detects this AVX-512 CPU as $core: its series runs with OPENBLAS_CORETYPE=SkylakeX" |
         tee -a "$results/run.txt"
       blas+=(OPENBLAS_CORETYPE=SkylakeX) ;;
  esac
fi
tk_filter='/(tilekit[^/]*|kokkos_kernels|copy)/'
tk_env=(OMP_PROC_BIND=spread OMP_PLACES=threads "${isa[@]}")
ob_env=(-u OMP_PROC_BIND -u OMP_PLACES OMP_WAIT_POLICY=passive "${blas[@]}")
# The passes alternate between the two processes, so that a slow spell of a shared machine (another
# tenant's load on a cloud VM's host, invisible inside it) falls on both sides alike.
if [ "$mode" != "--retime" ]; then
  for n in $(seq 1 "$passes"); do
    echo "== tilekit + Kokkos Kernels + copy (OMP_PROC_BIND=spread OMP_PLACES=threads), pass $n"
    pass matmul_kokkos.json "$n" "$tk_filter" "${tk_env[@]}"
    echo "== OpenBLAS (OMP_PROC_BIND unset, OMP_WAIT_POLICY=passive), pass $n"
    pass matmul_openblas.json "$n" '/openblas' "${ob_env[@]}"
  done
fi
retime matmul_kokkos.json "$tk_filter" "${tk_env[@]}"
retime matmul_openblas.json '/openblas' "${ob_env[@]}"

# The report needs matplotlib for its plots: the first python3 that has it (Debian: python3-matplotlib).
py=python3
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
done
cmd="scripts/bench-cpu.sh"
[ "$mode" = "--quick" ] && cmd="$cmd --quick"
[ "$shapes" != "128:2048:128" ] && [ "$mode" != "--quick" ] && cmd="TILEKIT_BENCH_SHAPES=$shapes $cmd"
[ "$dtypes" != "f32,f64,f16" ] && cmd="TILEKIT_BENCH_DTYPES=$dtypes $cmd"
[ -n "${BENCH_HOST_ISA:-}" ] && cmd="BENCH_HOST_ISA=$BENCH_HOST_ISA $cmd"
[ -n "${TILEKIT_BENCH_LAYOUT:-}" ] && cmd="TILEKIT_BENCH_LAYOUT=$TILEKIT_BENCH_LAYOUT $cmd"
[ "$results" != bench/results/cpu-openmp ] && cmd="BENCH_RESULTS=$results BENCH_SECTION=$section $cmd"
if grep -q -- "--retime" "$results/run.txt" 2>/dev/null; then
  cmd="$cmd, then scripts/bench-cpu.sh --retime"
fi
# The folder's README.md records how its JSON was made; scripts/bench-report.py quotes its Command line.
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- 2>/dev/null || rev="$rev (with uncommitted changes)"
cat > "$results/README.md" <<README
# $results

Written by scripts/bench-cpu.sh on $(date -u +%Y-%m-%d) at commit $rev, from the repository root:

Command: \`$cmd\`

Each process ran $passes times, the two alternating, and every benchmark keeps its fastest run (other users' work on shared
cores only slows runs down); benchmarks during which other processes took more than 10% of the CPUs
were re-timed once the cores were idle. \`run.txt\`: the load before and after each pass, and the
re-timed benchmarks.
README
"$py" scripts/bench-report.py
grep -q "\"id\": \"$section\"" scripts/bench-report.py ||
  echo "bench-cpu: $results is not among the suites of scripts/bench-report.py (SUITES); add it there to report it"
