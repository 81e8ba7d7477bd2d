#!/usr/bin/env bash
# Session 31, call 2: drift bound + a leaner ws loop (stage ring and barrier phase in 32-bit
# registers, descriptors offset from the first buffer's; branch ws-lean). Full CUDA tests;
# compute-sanitizer racecheck + synccheck on the ws tests; Nsight Compute at base clock (bound on
# and off); rounds of one series a process against cuBLAS at 9728x8192x65536. Ships binaries back.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps && tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -80 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r /tmp/bins
cp build/cuda/tilekit build/cuda/tilekit_bench_matmul build/cuda/tilekit_tests /tmp/cublas_baseline /tmp/bins/
(tar cf - -C /tmp bins | xz -T4 -6 | split -b 15M - $OUT/bins.txz.) &
(cd build/cuda && timeout 240 ctest --output-on-failure > $OUT/r/ctest.log 2>&1; echo "ctest rc $?" >> $OUT/r/ctest.log)
echo "$(tail -1 $OUT/r/ctest.log) $((SECONDS-t0)) s"; grep -E "tests passed|Failed|FAILED|\*\*\*" $OUT/r/ctest.log | head -12
TILEKIT_SANITIZE_TOOLS="racecheck synccheck" TILEKIT_SANITIZE_FILTER='*WarpSpecialisedDriftBound*:*WarpSpecialisedTilesMatchReference*' \
  timeout 150 scripts/gpu-sanitize.sh /tmp/san > /dev/null 2>&1; echo "sanitize rc $? $((SECONDS-t0)) s"; cat /tmp/san/summary.txt
cp /tmp/san/summary.txt $OUT/r/sanitize-summary.txt
wait
S="9728 8192 65536"; T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
build/cuda/tilekit matmul $S --dtype f16 --layout-a col --layout-b col --layout-c col --config $T2 --epilogue leaky_relu --check --reps 2 --warmup 1 | grep -E "^ws|rate|check"
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,lts__t_bytes.sum,smsp__inst_executed.sum
nt() { echo "$1: $(env $3 timeout 60 ncu --clock-control base --kernel-name-base mangled -k regex:Sm90WgmmaWs -c 1 --metrics $M --csv --print-units base \
    build/cuda/tilekit matmul $S --layout-a col --layout-b col --layout-c col --config $T2 --epilogue none --reps 1 --warmup 0 --dtype $2 2>/dev/null | grep -E '__' | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$(NF-2)); printf "%s=%s ", $(NF-2), $NF}')"; }
{ for dt in bf16 f16; do nt $dt-on $dt X=1; nt $dt-off $dt TILEKIT_WS_DRIFT=0; done; } > $OUT/r/ncu.txt 2>&1
sed 's/gpu__time_duration.sum/t/g; s/sm__cycles_elapsed.max/cyc/g; s/sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed/tensor/g; s/dram__bytes.sum/dram/g; s/lts__t_bytes.sum/l2/g; s/smsp__inst_executed.sum/inst/g' $OUT/r/ncu.txt
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
for r in 1 2 3 4 5 6 7 8; do
  [ $((SECONDS-t0)) -gt 530 ] && break
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/r/cublas-$dt-$r.json
    if [ $((r % 2)) = 1 ]; then order="on 0"; else order="0 on"; fi
    for v in $order; do for s in tuned leaky; do
      f="$dt/tilekit:tuned/"; [ $s = leaky ] && f="$dt/tilekit:tuned\+leaky_relu/"
      TILEKIT_WS_DRIFT=$v ser d$v$s-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/r/d$v$s-$dt-$r.json
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
ls -la $OUT
