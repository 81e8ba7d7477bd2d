#!/usr/bin/env bash
# Session 31, call 3: the drift bound as it merges (branch ws-drift-bound, the main-line consumer
# loop; TILEKIT_WS_DRIFT=N sets the slack). compute-sanitizer racecheck + synccheck on the drift
# test; a bad TILEKIT_WS_DRIFT; 4096^3 and 8192^3 (bound off there) against cuBLAS; rounds of one
# series a process at 9728x8192x65536: cuBLAS, slack 64 (default), slack 8, off.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps && tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -80 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
TILEKIT_SANITIZE_TOOLS="synccheck racecheck" TILEKIT_SANITIZE_FILTER='MatmulTyped/bf16_bf16.WarpSpecialisedDriftBound*' \
  timeout 110 scripts/gpu-sanitize.sh $OUT/r/san > /dev/null 2>&1; echo "sanitize rc $? $((SECONDS-t0)) s"
cat $OUT/r/san/summary.txt 2>/dev/null; for f in $OUT/r/san/*.log; do echo "$f: $(grep -E "SUMMARY|OK \]|FAILED" $f | tr '\n' ' ' | cut -c1-300)"; done
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
A="--layout-a col --layout-b col --layout-c col --config $T2 --epilogue leaky_relu"
TILEKIT_WS_DRIFT=abc build/cuda/tilekit matmul 2048 2048 16384 --dtype bf16 $A --reps 1 --warmup 0; echo "bad env rc $?"
TILEKIT_WS_DRIFT=8 build/cuda/tilekit matmul 9728 8192 65536 --dtype bf16 $A --check --reps 2 --warmup 1 | grep -E "^ws|rate|check"
echo "checks $((SECONDS-t0)) s"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/r/clocks.csv 2>&1 &
smi=$!
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
TKB="build/cuda/tilekit_bench_matmul --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json"
for dt in bf16 f16; do
  ser hcublas-$dt-1 /tmp/cublas_baseline --shapes=4096x4096x4096,8192x8192x8192 --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/hcublas-$dt-1.json
  ser htuned-$dt-1 $TKB --tk_shapes=4096x4096x4096,8192x8192x8192 --tk_dtypes=$dt --benchmark_filter="$dt/tilekit:tuned" --benchmark_out=$OUT/r/htuned-$dt-1.json
done
echo "headline shapes $((SECONDS-t0)) s"
SH=9728x8192x65536
for r in 1 2 3 4 5 6 7 8 9 10; do
  [ $((SECONDS-t0)) -gt 500 ] && break
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    case $((r % 3)) in 1) order="64 8 0";; 2) order="0 64 8";; *) order="8 0 64";; esac
    for v in $order; do for s in tuned leaky; do
      f="$dt/tilekit:tuned/"; [ $s = leaky ] && f="$dt/tilekit:tuned\+leaky_relu/"
      TILEKIT_WS_DRIFT=$v ser d$v$s-$dt-$r $TKB --tk_shapes=$SH --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/d$v$s-$dt-$r.json
    done; done
  done
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
python3 - $OUT/r <<'PY'
import json,sys,glob,os,collections
d=sys.argv[1]; rows=collections.defaultdict(list)
for f in sorted(glob.glob(d+'/*.json'), key=lambda f:int(f.rsplit('-',1)[1].split('.')[0])):
    tag=os.path.basename(f).split('-')[0]
    try: j=json.load(open(f))
    except Exception as e: print(f,e); continue
    for b in j.get('benchmarks',[]):
        n=b['name'].split('/iterations')[0]
        if 'error_message' in b: print(f, n, b['error_message'][:100]); continue
        rows[tag[:7]+' '+n].append('%.1f'%b.get('TFLOPS_events',b.get('TFLOPS',0)))
for k in sorted(rows, key=lambda k:(k.split()[1],k.split()[0])): print(k, ' '.join(rows[k]))
PY
echo "done $((SECONDS-t0)) s"
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
