#!/usr/bin/env bash
# Session 33, call 3 (same tree as call 2): the 30 rounds of call 2 again, types in the other order
# (f16 first), to see the spread between calls: cuBLAS (and cuBLAS + a separate leaky_relu pass),
# tilekit:tuned and tilekit:tuned+leaky_relu at 9728x8192x65536, column-major, one series a process.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { grep -E "error" /tmp/build.log | head -30; tail -30 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
[ -x /tmp/cublas_baseline ] || nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/r/clocks.csv 2>&1 &
smi=$!
mkdir -p $OUT/r/series; : > $OUT/r/series/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/series/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/series/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
SH=9728x8192x65536
TKB="build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json"
for r in $(seq 1 30); do
  [ $((SECONDS-t0)) -gt ${LIMIT:-540} ] && break
  for dt in f16 bf16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/series/cublas-$dt-$r.json
    if [ $((r % 2)) = 1 ]; then order="tuned leaky"; else order="leaky tuned"; fi
    for s in $order; do
      f="$dt/tilekit:tuned/"; [ $s = leaky ] && f="$dt/tilekit:tuned\+leaky_relu/"
      ser $s-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/series/$s-$dt-$r.json
    done
  done
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
python3 bench/results/gpu-h100-s31/medians.py $OUT/r/series
grep -h '"config"\|tk_config\|"label"' $OUT/r/series/tuned-f16-1.json $OUT/r/series/leaky-bf16-1.json | sort | uniq -c | head
xz $OUT/r/clocks.csv
echo "done $((SECONDS-t0)) s"
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
