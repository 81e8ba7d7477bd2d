#!/usr/bin/env bash
# Session 31, call 4: the drift bound's default now chunks of 8 and a slack of 8 (call 3's best);
# rounds of one series a process at 9728x8192x65536: cuBLAS, slack 8 (default), 4, 2.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps && tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -80 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
build/cuda/tilekit matmul 9728 8192 65536 --dtype f16 --layout-a col --layout-b col --layout-c col --config $T2 --epilogue leaky_relu --check --reps 2 --warmup 1 | grep -E "^ws|rate|check"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/r/clocks.csv 2>&1 &
smi=$!
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
TKB="build/cuda/tilekit_bench_matmul --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json"
SH=9728x8192x65536
for r in 1 2 3 4 5 6 7 8 9 10 11 12; do
  [ $((SECONDS-t0)) -gt 370 ] && break
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    case $((r % 3)) in 1) order="d 4 2";; 2) order="2 d 4";; *) order="4 2 d";; esac
    for v in $order; do for s in tuned leaky; do
      f="$dt/tilekit:tuned/"; [ $s = leaky ] && f="$dt/tilekit:tuned\+leaky_relu/"
      if [ $v = d ]; then ser d8$s-$dt-$r $TKB --tk_shapes=$SH --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/d8$s-$dt-$r.json
      else TILEKIT_WS_DRIFT=$v ser d$v$s-$dt-$r $TKB --tk_shapes=$SH --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/d$v$s-$dt-$r.json; fi
    done; done
  done
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
echo "done $((SECONDS-t0)) s"
