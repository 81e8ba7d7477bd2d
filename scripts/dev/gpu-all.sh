#!/usr/bin/env bash
# One device call on the H100 (from the repository root, CUDA binaries in $TILEKIT_BIN, default
# build/cuda from scripts/dev/gpu-build.sh, else .carry/cuda): tests, tuning
# sweeps (into $OUT/cache, which the benchmarks' "tuned" series then read), the matmul benchmarks
# against cuBLAS and Kokkos Kernels (scripts/bench-gpu.sh), and the elementwise benchmark.
set -u
bin=${TILEKIT_BIN:-$( [ -x build/cuda/tilekit ] && echo build/cuda || echo .carry/cuda )}
export TILEKIT_BIN=$bin TILEKIT_BENCH_BIN=$bin
out=${OUT:-/tmp/tilekit-gpu}
mkdir -p "$out"
export TILEKIT_TUNING_DIR="$out/cache"
t0=$SECONDS
TUNE_STRATEGY=random TUNE_BUDGET=${TUNE_BUDGET:-24} TUNE_BUDGET_OTHER=${TUNE_BUDGET_OTHER:-12} \
  bash scripts/dev/gpu-tune.sh 2>&1 | tail -60
echo "== tuning done at $((SECONDS - t0)) s"
$bin/tilekit_bench_elementwise --benchmark_out="$out/elementwise_cuda.json" --benchmark_out_format=json \
  > /tmp/elementwise.log 2>&1
grep -E "elementwise/" /tmp/elementwise.log | cut -c1-150
echo "== elementwise bench done at $((SECONDS - t0)) s"
TILEKIT_BENCH_BUDGET_S=$(( ${BENCH_BUDGET:-560} - (SECONDS - t0) )) bash scripts/bench-gpu.sh 2>&1 | tail -40
echo "== all done at $((SECONDS - t0)) s"
