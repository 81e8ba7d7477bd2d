#!/usr/bin/env bash
# Session 32, call 2 (branch ws-multicast): the 128x256 ws tile as two-team clusters sharing B
# through TMA multicast, from 256 K steps. Tests (ws, cluster test), sanitizer on the cluster test,
# checked products at 9728x8192x65536, Nsight Compute at base clock with clusters on and off
# (TILEKIT_WS_MULTICAST=0), then rounds of one series a process at g16: cuBLAS, off, on.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps && [ -d $TILEKIT_CACHE/deps/kokkos-3.4.01-cuda ] || tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { grep -E "error|Error" /tmp/build.log | head -30; tail -30 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
[ -x /tmp/cublas_baseline ] || nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
timeout 200 build/cuda/tilekit_tests --gtest_filter='*WarpSpecialised*' > $OUT/r/ws-tests.log 2>&1; echo "ws tests rc $? $((SECONDS-t0)) s"
grep -E "^\[  (PASSED|FAILED)|FAILED|Failure|expected|Which is|multicast" $OUT/r/ws-tests.log | head -30; tail -3 $OUT/r/ws-tests.log
S="9728 8192 65536"; G16=bm128_bn256_bk64_tm64_tn256_ws_g16_t12_v32
for dt in bf16 f16; do for mc in 1 0; do
TILEKIT_WS_MULTICAST=$mc build/cuda/tilekit matmul $S --dtype $dt --layout-a col --layout-b col --layout-c col --config $G16 --epilogue leaky_relu --check --reps 3 --warmup 1 | grep -E "^ws|rate|check"
done; done
echo "checks $((SECONDS-t0)) s"
M=gpu__time_duration.sum,sm__cycles_elapsed.max,dram__bytes.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
nt() { echo "$1: $(env $3 timeout 60 ncu --clock-control base --kernel-name-base mangled -k regex:Sm90WgmmaWs -c 1 --metrics $M --csv --print-units base \
    build/cuda/tilekit matmul $S --layout-a col --layout-b col --layout-c col --config $G16 --epilogue none --reps 1 --warmup 0 --dtype $2 2>/dev/null | grep -E '__' | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$(NF-2)); printf "%s=%s ", $(NF-2), $NF}')"; }
{ for dt in bf16 f16; do nt $dt-mc $dt TILEKIT_WS_MULTICAST=1; nt $dt-off $dt TILEKIT_WS_MULTICAST=0; done; } > $OUT/r/ncu.txt 2>&1
sed 's/gpu__time_duration.sum/t/g; s/sm__cycles_elapsed.max/cyc/g; s/dram__bytes.sum/dram/g; s/lts__t_bytes.sum/l2/g; s/lts__t_sectors_srcunit_tex_op_read.sum/l2rd_sect/g; s/sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed/tensor/g' $OUT/r/ncu.txt
echo "ncu $((SECONDS-t0)) s"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/r/clocks.csv 2>&1 &
smi=$!
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
SH=9728x8192x65536
TKB="build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json --tk_configs=$G16"
for r in $(seq 1 30); do
  [ $((SECONDS-t0)) -gt ${LIMIT:-540} ] && break
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    if [ $((r % 2)) = 1 ]; then order="mc off"; else order="off mc"; fi
    for v in $order; do for s in tuned leaky; do
      f="$dt/tilekit:$G16/"; [ $s = leaky ] && f="$dt/tilekit:$G16\+leaky_relu/"
      mc=1; [ $v = off ] && mc=0
      TILEKIT_WS_MULTICAST=$mc ser $v$s-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/$v$s-$dt-$r.json
    done; done
  done
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
python3 bench/results/gpu-h100-s31/medians.py $OUT/r
echo "done $((SECONDS-t0)) s"
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
