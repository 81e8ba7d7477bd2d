#!/usr/bin/env bash
# Session 29, call G (warm, the build of call E = branch ws-wave-split f5add7e): one series per process
# under the power cap, 9728x8192x65536, bf16 and f16: cuBLAS (+ a separate leaky_relu pass), tilekit
# tuned and tuned+leaky_relu with the wave split on and off (TILEKIT_WS_WAVE_SPLIT=0); 3 rounds,
# the split's order alternating; nvidia-smi clock log.
set -uo pipefail
mkdir -p $OUT/r
ls build/cuda/tilekit_bench_matmul /tmp/cublas_baseline > /dev/null || exit 1
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
    for v in $order; do for s in tuned leaky; do
      f="$dt/tilekit:tuned/"; [ $s = leaky ] && f="$dt/tilekit:tuned\+leaky_relu/"
      TILEKIT_WS_WAVE_SPLIT=$v ser split$v$s-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/split$v$s-$dt-$r.json
    done; done
  done
  echo "round $r $SECONDS s"
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
        rows[tag[:6]+' '+n].append('%.1f'%b.get('TFLOPS_events',b.get('TFLOPS',0)))
for k in sorted(rows, key=lambda k:(k.split()[1],k.split()[0])): print(k, ' '.join(rows[k]))
PY
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
