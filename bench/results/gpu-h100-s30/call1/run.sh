#!/usr/bin/env bash
# Session 30, call 1: branch ws-trace (main + ws-wave-sync + per-tile globaltimer stamps,
# TILEKIT_WS_TRACE). 9728x8192x65536 column-major, 128x256 ws tile: traces of free-running teams
# (bf16, f16) and of teams in lockstep (TILEKIT_WS_WAVE_SYNC=1024, 64), under the power cap, with a
# clock/power log.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps
tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE/deps
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -60 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
mkdir -p $OUT/t
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/t/clocks.csv 2>&1 &
smi=$!
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
app() { local tag=$1 dt=$2; shift 2
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/t/windows.txt
  env "$@" TILEKIT_WS_TRACE=$OUT/t/$tag build/cuda/tilekit matmul 9728 8192 65536 --dtype $dt --layout-a col --layout-b col --layout-c col --config $T2 --epilogue none --reps 4 --warmup 1 > $OUT/t/$tag.log 2>&1
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $?" >> $OUT/t/windows.txt; grep -iE "ms|TFLOP" $OUT/t/$tag.log | tail -2; }
app free-bf16-a bf16 X=1
app free-f16-a f16 X=1
app sync1024-bf16 bf16 TILEKIT_WS_WAVE_SYNC=1024
app sync64-bf16 bf16 TILEKIT_WS_WAVE_SYNC=64
app free-bf16-b bf16 X=1
app free-f16-b f16 X=1
kill $smi
ls $OUT/t | head -50
echo "done $((SECONDS-t0)) s"
tar cJf /tmp/t.txz -C $OUT t && rm -rf $OUT/t && mv /tmp/t.txz $OUT/
