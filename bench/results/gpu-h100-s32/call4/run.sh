#!/usr/bin/env bash
# Session 32, call 4 (branch ws-multicast, same tree as calls 2-3): the tuner at 9728x8192x65536,
# column-major, f16 and bf16: the shape-aware default (g8), one random pick, and g12, g16 (--also),
# 30 timed repetitions each, into a copy of the shipped H100 cache.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps && [ -d $TILEKIT_CACHE/deps/kokkos-3.4.01-cuda ] || tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
mkdir -p $OUT/cache && cp tuning/results/cuda__*.json $OUT/cache/
T=bm128_bn256_bk64_tm64_tn256_ws_
for dt in f16 bf16; do
  timeout 170 build/cuda/tilekit tune matmul --sizes 9728x8192x65536 --dtype $dt --layout-a col --layout-b col --layout-c col \
    --strategy random --budget 1 --seed 32 --also ${T}g16_t12_v32 --also ${T}g12_t12_v32 --reps 30 --warmup 2 --no-baselines -q \
    --cache $OUT/cache --out $OUT/rep-$dt 2>&1 | tail -12
  echo "$dt rc $? $((SECONDS-t0)) s"
done
ls -R $OUT | head -30
