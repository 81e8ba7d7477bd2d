#!/usr/bin/env bash
# Session 33, call 6 (tree of 3096d7a, same warm machine as calls 4-5): call 5's headline
# f16/bf16/tf32 suite five more times back to back, to show how far its rows move between runs
# (the BENCHMARKS gpu-h100 rows are call 5's run; these are the spread around it).
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { grep -E "error" /tmp/build.log | head -30; tail -30 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
for i in 2 3 4 5 6; do
  OUT=$OUT/run$i TILEKIT_BENCH_SHAPES=512,1024,2048,4096,8192,9728x8192x65536@f16+bf16 TILEKIT_BENCH_DTYPES=f16,bf16,tf32 \
    TILEKIT_BENCH_BUDGET_S=276 scripts/bench-gpu.sh > /tmp/suite-$i.log 2>&1; echo "run $i rc $?"
  rm -f $OUT/run$i/*.log
done
tar cJf /tmp/runs.txz -C $OUT . && rm -rf $OUT/run* && mv /tmp/runs.txz $OUT/
