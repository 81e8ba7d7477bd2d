#!/usr/bin/env bash
# Session 29, call C: the ws consumer loop without 64-bit step arithmetic and without descriptors
# rebuilt from addresses (RingPosition, wgmma_step_from). ws tests; Nsight Compute at base clock
# (cycles, tensor-pipe activity, L2 bytes; source view of bf16 none); series per process under the
# power cap against cuBLAS; all CUDA tests.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps
tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE/deps
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -60 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
timeout 120 build/cuda/tilekit_tests --gtest_brief=1 --gtest_filter='*WarpSpecialised*:*RepeatedRow*:*Tf32*' > $OUT/r/ws-tests.log 2>&1
echo "ws tests rc $? $((SECONDS-t0)) s"; grep -E "FAILED|PASSED|Failure" $OUT/r/ws-tests.log | head -8
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__bytes.sum
nt() { echo "$1: $(timeout 60 ncu --clock-control base --kernel-name-base mangled -k regex:Sm90WgmmaWs -c 1 --metrics $M --csv --print-units base \
    build/cuda/tilekit matmul $2 --layout-a col --layout-b col --layout-c col --config $T2 --epilogue $4 --reps 1 --warmup 0 --dtype $3 2>/dev/null | grep -E '__' | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$(NF-2)); printf "%s=%s ", $(NF-2), $NF}')"; }
{ for dt in bf16 f16; do for ep in none leaky_relu; do nt "$dt-big-$ep" "9728 8192 65536" $dt $ep; done; nt $dt-8192 "8192 8192 8192" $dt none; nt $dt-4096 "4096 4096 4096" $dt none; done; } > $OUT/r/ncu-ab.txt 2>&1
sed 's/gpu__time_duration.sum/t/; s/sm__cycles_elapsed.max/cyc/; s/sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed/tensor%/' $OUT/r/ncu-ab.txt | cut -c1-220
timeout 150 ncu --clock-control base --kernel-name-base mangled --section SourceCounters --section WarpStateStats --section SpeedOfLight -k regex:Sm90WgmmaWs -c 1 -f -o /tmp/lean \
  build/cuda/tilekit matmul 9728 8192 65536 --layout-a col --layout-b col --layout-c col --config $T2 --epilogue none --reps 1 --warmup 0 --dtype bf16 > /dev/null 2>&1
ncu -i /tmp/lean.ncu-rep --page source --csv --print-source sass > $OUT/r/lean-bf16-none.sass.csv 2>&1
ncu -i /tmp/lean.ncu-rep --page details --print-details all > $OUT/r/lean-bf16-none.details.txt 2>&1
echo "ncu done $((SECONDS-t0)) s"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/r/clocks.csv 2>&1 &
smi=$!
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
SH=8192,9728x8192x65536
for r in 1 2 3; do
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    for s in tuned 'tuned\+leaky_relu'; do
      tag=$( [ "$s" = tuned ] && echo tk || echo tkleaky )
      ser $tag-$dt-$r build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_dtypes=$dt --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 \
        --benchmark_filter="$dt/tilekit:$s/" --benchmark_out_format=json --benchmark_out=$OUT/r/$tag-$dt-$r.json
    done
  done
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
python3 - $OUT/r <<'PY'
import json,sys,glob,os,collections
d=sys.argv[1]; rows=collections.defaultdict(list)
for f in sorted(glob.glob(d+'/*.json')):
    try: j=json.load(open(f))
    except Exception as e: print(f,e); continue
    for b in j.get('benchmarks',[]):
        n=b['name'].split('/iterations')[0]
        if 'error_message' in b: print(f, n, b['error_message'][:100]); continue
        rows[n].append('%.1f'%b.get('TFLOPS_events',b.get('TFLOPS',0)))
for k in sorted(rows): print(k, ' '.join(rows[k]))
PY
timeout $((585 - (SECONDS - t0))) build/cuda/tilekit_tests --gtest_brief=1 > $OUT/r/tests.log 2>&1; echo "tests rc $? $((SECONDS-t0)) s"; tail -3 $OUT/r/tests.log; grep -E "FAILED|Failure" $OUT/r/tests.log | head -5
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
echo "all $((SECONDS-t0)) s"
