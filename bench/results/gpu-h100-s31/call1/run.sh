#!/usr/bin/env bash
# Session 31, call 1: build the drift bound (tuning::kWsDriftBound, re-implemented from scratch: the
# session-30 branch was lost); its tests and the ws/split-K tests; a checked product at
# 9728x8192x65536 with the bound; one round of series (cuBLAS, tuned, tuned+leaky, bound on and off).
# Ships the built binaries back so that later calls need not rebuild.
set -uo pipefail
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -80 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r /tmp/bins
cp build/cuda/tilekit build/cuda/tilekit_bench_matmul build/cuda/tilekit_tests /tmp/cublas_baseline /tmp/bins/
ldd build/cuda/tilekit_tests | grep -v "^\s*/lib\|linux-vdso" > $OUT/r/ldd.txt
(tar cf - -C /tmp bins | xz -T8 -6 > $OUT/bins.txz; ls -la $OUT/bins.txz) &
tar cJf $OUT/deps.txz -C /tmp/tilekit-cache deps &
timeout 200 build/cuda/tilekit_tests --gtest_filter='*WarpSpecialised*:*SplitK*' > $OUT/r/ws-tests.log 2>&1
echo "ws tests rc $? $((SECONDS-t0)) s"; grep -E "^\[  (FAILED|PASSED) |^\[==|relative error|Which is|Expected|drift" $OUT/r/ws-tests.log | head -30
wait
S="9728 8192 65536"; T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
for v in on 0; do
  for dt in bf16 f16; do
  TILEKIT_WS_DRIFT=$v build/cuda/tilekit matmul $S --dtype $dt --layout-a col --layout-b col --layout-c col --config $T2 --epilogue leaky_relu --check --reps 2 --warmup 1 > /tmp/chk.log 2>&1
  echo "drift $v $dt rc $?: $(grep -iE "check|rate|drift" /tmp/chk.log | tr '\n' ' ' | cut -c1-300)"; done
done
echo "checks $((SECONDS-t0)) s"
: > $OUT/r/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/r/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/r/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
SH=9728x8192x65536
TKB="build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json"
for r in 1; do
  for dt in bf16 f16; do
    [ $((SECONDS-t0)) -gt 540 ] && break
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    for v in on 0; do for s in tuned leaky; do
      f="$dt/tilekit:tuned/"; [ $s = leaky ] && f="$dt/tilekit:tuned\+leaky_relu/"
      TILEKIT_WS_DRIFT=$v ser d$v$s-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/d$v$s-$dt-$r.json
    done; done
  done
  echo "round $r $((SECONDS-t0)) s"
done
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
        rows[tag[:7]+' '+n].append('%.1f'%b.get('TFLOPS_events',b.get('TFLOPS',0)))
for k in sorted(rows, key=lambda k:(k.split()[1],k.split()[0])): print(k, ' '.join(rows[k]))
PY
echo "done $((SECONDS-t0)) s"
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
