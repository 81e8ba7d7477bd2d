#!/usr/bin/env bash
# Session 28, call 2: branch ws-192-tma + the stream-K tail of the ws kernel. ws + tail tests;
# Nsight Compute at base clock, 9728x8192x65536, 128x256 and 192x192 with the tail on and off
# (TILEKIT_WS_STREAM_K=0); series per process under the cap (tail on/off, cuBLAS); sanitizers on a
# tail launch; all CUDA tests.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps
tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE/deps
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -60 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
timeout 120 build/cuda/tilekit_tests --gtest_brief=1 --gtest_filter='*WarpSpecialised*:*RepeatedRow*' > $OUT/r/ws-tests.log 2>&1
echo "ws tests rc $? $((SECONDS-t0)) s"; grep -E "FAILED|PASSED|Failure|grid cap|Which is|error" $OUT/r/ws-tests.log | head -16
T1=bm192_bn192_bk64_tm64_tn192_ws_g8_t16_v32
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
for e in 1 0; do for T in $T2 $T1; do
  TILEKIT_WS_STREAM_K=$e build/cuda/tilekit matmul 2100 2100 712 --dtype bf16 --config $T --epilogue bias+gelu --check --reps 1 --warmup 0 | grep -E "check"
done; done
S="9728 8192 65536"
M=gpu__time_duration.sum,sm__cycles_elapsed.max,lts__t_bytes.sum,dram__bytes.sum,launch__grid_size
nt() { echo "$1: $(env $5 timeout 60 ncu --clock-control base --kernel-name-base mangled -k regex:Sm90WgmmaWs -c 1 --metrics $M --csv --print-units base \
    build/cuda/tilekit matmul $S --layout-a col --layout-b col --layout-c col --config $2 --epilogue $4 --reps 1 --warmup 0 --dtype $3 2>/dev/null | grep -E '__' | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$(NF-2)); printf "%s=%s ", $(NF-2), $NF}')"; }
{ for dt in bf16 f16; do nt $dt-256-sk $T2 $dt none X=1; nt $dt-256-nosk $T2 $dt none TILEKIT_WS_STREAM_K=0; nt $dt-256-sk-leaky $T2 $dt leaky_relu X=1; done; nt bf16-192-sk $T1 bf16 none X=1; } > $OUT/r/ncu-ab.txt 2>&1
sed 's/gpu__time_duration.sum/t/; s/sm__cycles_elapsed.max/cyc/' $OUT/r/ncu-ab.txt | cut -c1-200
echo "ncu done $((SECONDS-t0)) s"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 50 > $OUT/r/clocks.csv 2>&1 &
smi=$!
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "error|rejected" /tmp/ser.log | head -3; }
SH=4096,8192,9728x8192x65536
TKB="build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_dtypes=f16,bf16 --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=30 --tk_rep_work=2000 --tk_deadline_s=150 --tk_configs=$T2,$T1 --benchmark_out_format=json"
for r in 1 2 3 4; do
  ser cublas$r /tmp/cublas_baseline --shapes=$SH --dtypes=f16,bf16 --warmup=2 --min_reps=20 --max_reps=30 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas$r.json
  if [ $((r % 2)) = 1 ]; then
    ser sk$r $TKB --benchmark_filter="tilekit:bm" --benchmark_out=$OUT/r/sk$r.json
    TILEKIT_WS_STREAM_K=0 ser nosk$r $TKB --benchmark_filter="tilekit:bm" --benchmark_out=$OUT/r/nosk$r.json
  else
    TILEKIT_WS_STREAM_K=0 ser nosk$r $TKB --benchmark_filter="tilekit:bm" --benchmark_out=$OUT/r/nosk$r.json
    ser sk$r $TKB --benchmark_filter="tilekit:bm" --benchmark_out=$OUT/r/sk$r.json
  fi
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
python3 - $OUT/r <<'PY'
import json,sys,glob,os,collections
d=sys.argv[1]; rows=collections.defaultdict(list)
for f in sorted(glob.glob(d+'/*.json')):
    tag=os.path.basename(f).rstrip('.json').rstrip('0123456789')
    try: j=json.load(open(f))
    except Exception as e: print(f,e); continue
    for b in j.get('benchmarks',[]):
        n=b['name'].replace('/iterations:20/manual_time','').replace('/iterations:30/manual_time','')
        n=n.replace('bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32','256').replace('bm192_bn192_bk64_tm64_tn192_ws_g8_t16_v32','192')
        if 'error_message' in b: print(tag, n, b['error_message'][:100]); continue
        rows[tag+' '+n].append('%.1f'%b.get('TFLOPS_events',b.get('TFLOPS',0)))
for k in sorted(rows, key=lambda k:(k.split()[1],k.split()[0])): print(k, ' '.join(rows[k]))
PY
for tool in racecheck synccheck; do
  for args in "2100 2100 712 --dtype bf16 --layout-c col --epilogue bias+gelu --beta 0.5 --config $T2" "2100 2100 712 --dtype f16 --layout-a row --epilogue leaky_relu --config $T1"; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 build/cuda/tilekit matmul $args --reps 1 --warmup 0 > /tmp/san.log 2>&1
    echo "$tool rc $? : $args"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" /tmp/san.log | head -1
  done
done
echo "sanitizers done $((SECONDS-t0)) s"
timeout $((585 - (SECONDS - t0))) build/cuda/tilekit_tests --gtest_brief=1 > $OUT/r/tests.log 2>&1; echo "tests rc $? $((SECONDS-t0)) s"; tail -3 $OUT/r/tests.log; grep -E "FAILED|Failure" $OUT/r/tests.log | head -5
tar czf /tmp/r.tgz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.tgz $OUT/
echo "all $((SECONDS-t0)) s"
