#!/usr/bin/env bash
# Session 33, call 1 (tree: main 1dadf0f + the long-K group default g16 + `--strategy listed`):
# build from the carried sources; the defaults/tuner tests; `tilekit tune matmul` at 9728x8192x65536,
# f16 and bf16, column-major: the shape's default (now g16) and g8, g12 named with --also,
# 30 timed repetitions each, into a copy of the shipped H100 cache (2% tie tolerance, as shipped).
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { grep -E "error" /tmp/build.log | head -30; tail -30 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
mkdir -p $OUT/r
build/cuda/tilekit_tests --gtest_filter='MatmulDefaults.*:MatmulPlan.*:SearchStrategy.*:ConfigAuto.*:WinnerIndex.*' > $OUT/r/tests.log 2>&1
echo "tests rc $? $((SECONDS-t0)) s"; grep -E "PASSED|FAILED|Failure" $OUT/r/tests.log | head
mkdir -p $OUT/cache && cp tuning/results/cuda__*.json $OUT/cache/
T=bm128_bn256_bk64_tm64_tn256_ws_
for dt in f16 bf16; do
  timeout 150 build/cuda/tilekit tune matmul --sizes 9728x8192x65536 --dtype $dt --layout-a col --layout-b col --layout-c col \
    --strategy listed --also ${T}g8_t12_v32 --also ${T}g12_t12_v32 --reps 30 --warmup 2 --no-baselines -q \
    --cache $OUT/cache --out $OUT/rep-$dt > $OUT/r/tune-$dt.log 2>&1
  echo "$dt rc $? $((SECONDS-t0)) s"; tail -12 $OUT/r/tune-$dt.log
done
ls -R $OUT | head -30
