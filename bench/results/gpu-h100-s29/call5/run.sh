#!/usr/bin/env bash
# Session 29, call E: branch ws-wave-split (main + split-K fix + the ws wave split: the rows of whole
# waves on the 128x256 tile, the rest on the 64x128 tile in a second launch). Split tests + ws
# tests; Nsight Compute at base clock (both kernels of a split launch), split on / off
# (TILEKIT_WS_WAVE_SPLIT=0); series under the power cap against cuBLAS; all CUDA tests.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps
tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE/deps
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -60 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
timeout 150 build/cuda/tilekit_tests --gtest_brief=1 --gtest_filter='*WarpSpecialised*:*RepeatedRow*:*Tf32*' > $OUT/r/ws-tests.log 2>&1
echo "ws tests rc $? $((SECONDS-t0)) s"; grep -E "FAILED|PASSED|Failure|Which is|rows" $OUT/r/ws-tests.log | head -8
for dt in bf16 f16; do for ep in none leaky_relu; do
  build/cuda/tilekit matmul 9728 8192 8192 --dtype $dt --layout-a col --layout-b col --layout-c col --epilogue $ep --check --reps 1 --warmup 0 | grep -E "config|check"
done; done
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,launch__grid_size
nt() { echo "$1: $(env $5 timeout 60 ncu --clock-control base --kernel-name-base mangled -k regex:Sm90WgmmaWs -c 2 --metrics $M --csv --print-units base \
    build/cuda/tilekit matmul 9728 8192 65536 --layout-a col --layout-b col --layout-c col --config $T2 --epilogue $3 --reps 1 --warmup 0 --dtype $2 2>/dev/null | grep -E '__' | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$(NF-2)); printf "%s=%s ", $(NF-2), $NF}')"; }
{ for rep in 1 2; do for dt in bf16 f16; do
    nt $dt-split-$rep $dt none X=1; nt $dt-nosplit-$rep $dt none TILEKIT_WS_WAVE_SPLIT=0
    [ $rep = 1 ] && { nt $dt-split-leaky $dt leaky_relu X=1; nt $dt-nosplit-leaky $dt leaky_relu TILEKIT_WS_WAVE_SPLIT=0; }
  done; done; } > $OUT/r/ncu-ab.txt 2>&1
sed 's/gpu__time_duration.sum/t/g; s/sm__cycles_elapsed.max/cyc/g; s/sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed/tensor/g; s/dram__bytes.sum/dram/g; s/launch__grid_size/grid/g' $OUT/r/ncu-ab.txt | cut -c1-300
echo "ncu done $((SECONDS-t0)) s"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/r/clocks.csv 2>&1 &
smi=$!
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
SH=9728x8192x65536
TKB="build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json"
for r in 1 2 3; do
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    if [ $((r % 2)) = 1 ]; then order="1 0"; else order="0 1"; fi
    for v in $order; do
      TILEKIT_WS_WAVE_SPLIT=$v ser split$v-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$dt/tilekit:tuned" --benchmark_out=$OUT/r/split$v-$dt-$r.json
    done
  done
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
python3 - $OUT/r <<'PY'
import json,sys,glob,os,collections
d=sys.argv[1]; rows=collections.defaultdict(list)
for f in sorted(glob.glob(d+'/*.json')):
    tag=os.path.basename(f).split('-')[0]
    try: j=json.load(open(f))
    except Exception as e: print(f,e); continue
    for b in j.get('benchmarks',[]):
        n=b['name'].split('/iterations')[0]
        if 'error_message' in b: print(f, n, b['error_message'][:100]); continue
        rows[tag+' '+n].append('%.1f'%b.get('TFLOPS_events',b.get('TFLOPS',0)))
for k in sorted(rows, key=lambda k:(k.split()[1],k.split()[0])): print(k, ' '.join(rows[k]))
PY
timeout $((585 - (SECONDS - t0))) build/cuda/tilekit_tests --gtest_brief=1 > $OUT/r/tests.log 2>&1; echo "tests rc $? $((SECONDS-t0)) s"; tail -3 $OUT/r/tests.log; grep -E "FAILED|Failure" $OUT/r/tests.log | head -5
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
echo "all $((SECONDS-t0)) s"
