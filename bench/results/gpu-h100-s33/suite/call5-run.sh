#!/usr/bin/env bash
# Session 33, call 5 (tree of 3096d7a, built by call 4 on the same warm machine): the headline
# f16/bf16/tf32 suite again, as its 971bdd8 run (BENCHMARKS gpu-h100), with the shipped cache.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { grep -E "error" /tmp/build.log | head -30; tail -30 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > /tmp/clocks.csv 2>&1 &
smi=$!
TILEKIT_BENCH_SHAPES=512,1024,2048,4096,8192,9728x8192x65536@f16+bf16 TILEKIT_BENCH_DTYPES=f16,bf16,tf32 TILEKIT_BENCH_BUDGET_S=276 scripts/bench-gpu.sh
kill $smi; xz -c /tmp/clocks.csv > $OUT/clocks.csv.xz
ls -la $OUT
