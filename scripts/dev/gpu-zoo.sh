#!/usr/bin/env bash
# Runs ON THE GPU MACHINE after scripts/dev/gpu-build.sh: the GPU shape zoo (bench/shapes/gpu-zoo.txt)
# for every type in row-major and column-major storage, and i8 with K-major operands as well
# (torch._int_mm's layout), the tilekit:auto and tilekit:default series beside cuBLAS in the same run
# (cuBLAS int8 always with its K-major operands). JSON and logs into $OUT/zoo-<layout>/; back here,
# copy them to bench/results/gpu-<card>-zoo-<layout>/ and run `python3 scripts/bench-report.py`.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/tilekit-zoo}
budget=${TILEKIT_ZOO_BUDGET_S:-150}  # per layout; the whole zoo took under 30 s per layout on an H200
run() {  # layout, types
  OUT="$out/zoo-$1" TILEKIT_BENCH_ZOO=1 TILEKIT_BENCH_LAYOUTS="$1" TILEKIT_BENCH_DTYPES="$2" \
    TILEKIT_BENCH_FILTER='tilekit:(auto|default)/' TILEKIT_BENCH_BUDGET_S="$budget" scripts/bench-gpu.sh \
    > "$out/zoo-$1.log" 2>&1
  echo "zoo $1 ($2): exit status $?"
}
mkdir -p "$out"
run row f16,bf16,f32,tf32,f64,i8
run col f16,bf16,f32,tf32,f64,i8
run kmajor i8
for layout in row col kmajor; do python3 scripts/dev/zoo-ratios.py "$out/zoo-$layout" tilekit:auto tilekit:default; done
