#!/usr/bin/env bash
# Session 29, call D: branch ws-wave-sync (main's kernel + an env-gated experiment: producers of all
# teams kept within a chunk of S K steps of each other, TILEKIT_WS_WAVE_SYNC=S). Nsight Compute at
# base clock, 9728x8192x65536: cycles, tensor-pipe activity, L2 and DRAM bytes, off / S = ktiles
# (tile) / 64 / 16, twice each, bf16 and f16; group sizes 8 / 32; series under the power cap;
# ws tests with the sync on; all CUDA tests.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps
tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE/deps
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -60 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__bytes.sum
nt() { echo "$1: $(env $5 timeout 60 ncu --clock-control base --kernel-name-base mangled -k regex:Sm90WgmmaWs -c 1 --metrics $M --csv --print-units base \
    build/cuda/tilekit matmul 9728 8192 65536 --layout-a col --layout-b col --layout-c col --config $2 --epilogue $4 --reps 1 --warmup 0 --dtype $3 2>/dev/null | grep -E '__' | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$(NF-2)); printf "%s=%s ", $(NF-2), $NF}')"; }
G8=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
G32=bm128_bn256_bk64_tm64_tn256_ws_g32_t12_v32
{ for rep in 1 2; do for dt in bf16 f16; do
    nt $dt-off-$rep $G8 $dt none X=1
    nt $dt-tile-$rep $G8 $dt none TILEKIT_WS_WAVE_SYNC=1024
    nt $dt-s16-$rep $G8 $dt none TILEKIT_WS_WAVE_SYNC=16
    if [ $rep = 1 ]; then nt $dt-s64-$rep $G8 $dt none TILEKIT_WS_WAVE_SYNC=64; nt $dt-g32-$rep $G32 $dt none X=1; nt $dt-g32-s16-$rep $G32 $dt none TILEKIT_WS_WAVE_SYNC=16; fi
  done; done; } > $OUT/r/ncu-ab.txt 2>&1
sed 's/gpu__time_duration.sum/t/; s/sm__cycles_elapsed.max/cyc/; s/sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed/tensor%/; s/,[0-9]\{3\},[0-9]\{3\} / G /g' $OUT/r/ncu-ab.txt | cut -c1-200
echo "ncu done $((SECONDS-t0)) s"
TILEKIT_WS_WAVE_SYNC=16 timeout 100 build/cuda/tilekit_tests --gtest_brief=1 --gtest_filter='*WarpSpecialised*:*Tf32*' > $OUT/r/ws-tests-sync.log 2>&1
echo "ws tests (sync 16) rc $? $((SECONDS-t0)) s"; grep -E "FAILED|PASSED|Failure" $OUT/r/ws-tests-sync.log | head -5
TILEKIT_WS_WAVE_SYNC=16 build/cuda/tilekit matmul 9728 8192 4096 --dtype bf16 --config $G8 --epilogue leaky_relu --check --reps 1 --warmup 0 | grep -E "check|rate"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/r/clocks.csv 2>&1 &
smi=$!
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
SH=9728x8192x65536
TKB="build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json"
for r in 1 2; do
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    for v in 0 16; do
      TILEKIT_WS_WAVE_SYNC=$v ser sync$v-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$dt/tilekit:tuned" --benchmark_out=$OUT/r/sync$v-$dt-$r.json
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
