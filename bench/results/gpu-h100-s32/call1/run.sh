#!/usr/bin/env bash
# Session 32, call 1: the ws tile's group size at 9728x8192x65536 with the drift bound on.
# Predicted: a wave of 132 tiles at g16 spans 16 tile-rows x 8.25 tile-columns, 532 KB of A and B
# per K step against 671 KB at g8 (8 x 16.5): ~20% less DRAM traffic, so a little more clock
# under the power cap. Nsight Compute at base clock (g4, g8, g12, g16, g32), then rounds of one
# series a process: cuBLAS, tuned (g8), g16, each without and with leaky_relu.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps && tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -80 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
S="9728 8192 65536"; TB=bm128_bn256_bk64_tm64_tn256_ws_
build/cuda/tilekit matmul $S --dtype bf16 --layout-a col --layout-b col --layout-c col --config ${TB}g16_t12_v32 --epilogue leaky_relu --check --reps 2 --warmup 1 | grep -E "^ws|rate|check"
M=gpu__time_duration.sum,sm__cycles_elapsed.max,dram__bytes.sum,lts__t_bytes.sum
nt() { echo "$1: $(timeout 60 ncu --clock-control base --kernel-name-base mangled -k regex:Sm90WgmmaWs -c 1 --metrics $M --csv --print-units base \
    build/cuda/tilekit matmul $S --layout-a col --layout-b col --layout-c col --config ${TB}g$3_t12_v32 --epilogue none --reps 1 --warmup 0 --dtype $2 2>/dev/null | grep -E '__' | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$(NF-2)); printf "%s=%s ", $(NF-2), $NF}')"; }
{ for g in 8 16 12 32 4; do nt bf16-g$g bf16 $g; done; nt f16-g8 f16 8; nt f16-g16 f16 16; } > $OUT/r/ncu.txt 2>&1
sed 's/gpu__time_duration.sum/t/g; s/sm__cycles_elapsed.max/cyc/g; s/dram__bytes.sum/dram/g; s/lts__t_bytes.sum/l2/g' $OUT/r/ncu.txt
echo "ncu $((SECONDS-t0)) s"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/r/clocks.csv 2>&1 &
smi=$!
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
SH=9728x8192x65536
TKB="build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json"
G16=${TB}g16_t12_v32
for r in $(seq 1 20); do
  [ $((SECONDS-t0)) -gt 545 ] && break
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    if [ $((r % 2)) = 1 ]; then order="g8 g16"; else order="g16 g8"; fi
    for v in $order; do for s in tuned leaky; do
      if [ $v = g8 ]; then f="$dt/tilekit:tuned/"; [ $s = leaky ] && f="$dt/tilekit:tuned\+leaky_relu/"
        ser $v$s-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/$v$s-$dt-$r.json
      else f="$dt/tilekit:$G16/"; [ $s = leaky ] && f="$dt/tilekit:$G16\+leaky_relu/"
        ser $v$s-$dt-$r $TKB --tk_configs=$G16 --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/$v$s-$dt-$r.json; fi
    done; done
  done
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
python3 bench/results/gpu-h100-s31/medians.py $OUT/r
echo "done $((SECONDS-t0)) s"
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
