#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, after scripts/dev/gpu-build.sh (binaries in
# $TILEKIT_BIN, default build/cuda): the shape set of the benchmarks beside the squares.
#   1. sweeps the thin kernel's configs (tilekit tune matmul, column-major operands as the
#      benchmarks run them) on the thin shapes, starting from the shipped H100 cache, so the
#      returned cache is the shipped one plus these entries;
#   2. runs scripts/bench-gpu.sh on the shape set (cuBLAS, tilekit, Kokkos Kernels and the copy
#      floor of each shape, in one run).
# Results in $OUT: the cache file, the sweep reports (one archive) and bench-gpu.sh's files.
#
# Environment: SHAPES_TYPES (default f32), SHAPES_TUNE (default 1; 0 skips the sweep), SHAPES_SQUARES
# (squares benchmarked in the same run, default 512,1024,2048,4096,8192),
# TILEKIT_BENCH_BUDGET_S (default 300).
set -u
bin=${TILEKIT_BIN:-build/cuda}
out=${OUT:-/tmp/tilekit-shapes}
mkdir -p "$out/cache"
export LD_LIBRARY_PATH=/tmp/tilekit-sysdeps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
thin=1x4096x4096,4096x1x4096,16x8192x8192,8192x16x8192,1048576x1x1
shapes=${SHAPES_SQUARES:-512,1024,2048,4096,8192},$thin,8192x8192x16,4096x4096x64,9728x8192x65536
t0=$SECONDS
if [ "${SHAPES_TUNE:-1}" = 1 ]; then
  cp tilekit/tuning/results/cuda__*.json "$out/cache/"
  rep=/tmp/tilekit-shape-reports
  for t in ${SHAPES_TYPES:-f32}; do
    "$bin/tilekit" tune matmul --sizes "$thin,8192x8192x16,4096x4096x64" --dtype "$t" --layout-a col --layout-b col \
      --layout-c col --no-baselines --cache "$out/cache" --out "$rep/matmul-$t-shapes" -q 2>&1 | tail -12
  done
  tar czf "$out/shape-tune-reports.tar.gz" -C "$rep" .
  echo "== sweeps done in $((SECONDS - t0)) s"
  # The benchmarks' tuned series: the swept cache as the user's tuning cache.
  export TILEKIT_TUNING_DIR="$out/cache"
fi
TILEKIT_BENCH_SHAPES=$shapes TILEKIT_BENCH_DTYPES=${SHAPES_TYPES:-f32} \
  TILEKIT_BENCH_BUDGET_S=${TILEKIT_BENCH_BUDGET_S:-300} scripts/bench-gpu.sh
echo "== gpu-shapes done in $((SECONDS - t0)) s"
