#!/usr/bin/env bash
# Session 32, call 3 (branch ws-multicast, same tree as call 2): all CUDA tests; compute-sanitizer
# racecheck + synccheck on the cluster test (bf16); rounds of one series a process at
# 9728x8192x65536: cuBLAS, tuned (g8) and g16, both with clusters (the default there).
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps && [ -d $TILEKIT_CACHE/deps/kokkos-3.4.01-cuda ] || tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { grep -E "error|Error" /tmp/build.log | head -30; tail -30 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
[ -x /tmp/cublas_baseline ] || nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
(cd build/cuda && timeout 260 ctest --output-on-failure > $OUT/r/ctest.log 2>&1; echo "ctest rc $?" >> $OUT/r/ctest.log)
echo "$(tail -1 $OUT/r/ctest.log) $((SECONDS-t0)) s"; grep -E "tests passed|Failed|FAILED|\*\*\*" $OUT/r/ctest.log | head -12
TILEKIT_SANITIZE_TOOLS="racecheck synccheck" TILEKIT_SANITIZE_FILTER='*bf16_bf16.WarpSpecialisedClusters*' \
  timeout 170 scripts/gpu-sanitize.sh /tmp/san > /dev/null 2>&1; echo "sanitize rc $? $((SECONDS-t0)) s"; cat /tmp/san/summary.txt
cp /tmp/san/summary.txt $OUT/r/sanitize-summary.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/r/clocks.csv 2>&1 &
smi=$!
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
SH=9728x8192x65536; G16=bm128_bn256_bk64_tm64_tn256_ws_g16_t12_v32
TKB="build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json"
for r in $(seq 1 30); do
  [ $((SECONDS-t0)) -gt ${LIMIT:-560} ] && break
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    if [ $((r % 2)) = 1 ]; then order="g8 g16"; else order="g16 g8"; fi
    for v in $order; do for s in tuned leaky; do
      if [ $v = g8 ]; then f="$dt/tilekit:tuned/"; [ $s = leaky ] && f="$dt/tilekit:tuned\+leaky_relu/"
        ser mc$v$s-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/mc$v$s-$dt-$r.json
      else f="$dt/tilekit:$G16/"; [ $s = leaky ] && f="$dt/tilekit:$G16\+leaky_relu/"
        ser mc$v$s-$dt-$r $TKB --tk_configs=$G16 --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/mc$v$s-$dt-$r.json; fi
    done; done
  done
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
python3 bench/results/gpu-h100-s31/medians.py $OUT/r
echo "done $((SECONDS-t0)) s"
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
