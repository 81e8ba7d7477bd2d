#!/usr/bin/env bash
# Session 30, call 2: branch ws-trace + a drift bound (TILEKIT_WS_DRIFT=D steps, TILEKIT_WS_DRIFT_CHUNK=S):
# no team's producer more than ~D K steps ahead of the slowest team. 9728x8192x65536 column-major,
# 128x256 ws tile. Traces (globaltimer + clock64 per tile) under the cap; Nsight Compute at base
# clock; one-series-per-process runs against cuBLAS; a checked product.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps
tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE/deps
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -60 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/t
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
for v in 0 64; do TILEKIT_WS_DRIFT=$v build/cuda/tilekit matmul 9728 8192 8192 --dtype bf16 --layout-a col --layout-b col --layout-c col --config $T2 --epilogue leaky_relu --check --reps 1 --warmup 0 | grep -E "check" | sed "s/^/drift $v: /"; done
app() { local tag=$1 dt=$2; shift 2
  env "$@" TILEKIT_WS_TRACE=$OUT/t/$tag build/cuda/tilekit matmul 9728 8192 65536 --dtype $dt --layout-a col --layout-b col --layout-c col --config $T2 --epilogue none --reps 4 --warmup 1 > $OUT/t/$tag.log 2>&1
  echo "$tag $(grep -E "^rate" $OUT/t/$tag.log)"; }
for r in a b; do
  app free-bf16-$r bf16 X=1; app d32-bf16-$r bf16 TILEKIT_WS_DRIFT=32 TILEKIT_WS_DRIFT_CHUNK=8
  app d64-bf16-$r bf16 TILEKIT_WS_DRIFT=64; app d128-bf16-$r bf16 TILEKIT_WS_DRIFT=128
  app free-f16-$r f16 X=1; app d64-f16-$r f16 TILEKIT_WS_DRIFT=64
done
echo "traces $((SECONDS-t0)) s"
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,lts__t_bytes.sum
nt() { echo "$1: $(env $3 timeout 60 ncu --clock-control base --kernel-name-base mangled -k regex:Sm90WgmmaWs -c 1 --metrics $M --csv --print-units base \
    build/cuda/tilekit matmul 9728 8192 65536 --layout-a col --layout-b col --layout-c col --config $T2 --epilogue none --reps 1 --warmup 0 --dtype $2 2>/dev/null | grep -E '__' | awk -F'","' '{gsub(/"/,"",$NF); gsub(/"/,"",$(NF-2)); printf "%s=%s ", $(NF-2), $NF}')"; }
{ for dt in bf16 f16; do nt $dt-free $dt X=1; nt $dt-d32 $dt "TILEKIT_WS_DRIFT=32 TILEKIT_WS_DRIFT_CHUNK=8"; nt $dt-d64 $dt TILEKIT_WS_DRIFT=64; nt $dt-free2 $dt X=1; nt $dt-d64b $dt TILEKIT_WS_DRIFT=64; done; } > $OUT/t/ncu.txt 2>&1
sed 's/gpu__time_duration.sum/t/g; s/sm__cycles_elapsed.max/cyc/g; s/sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed/tensor/g; s/dram__bytes.sum/dram/g; s/lts__t_bytes.sum/l2/g' $OUT/t/ncu.txt | cut -c1-200
echo "ncu $((SECONDS-t0)) s"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/t/clocks.csv 2>&1 &
smi=$!
: > $OUT/t/windows.txt
ser() { local tag=$1; shift
  echo "$tag start $(date +%H:%M:%S.%N | cut -c1-12)" >> $OUT/t/windows.txt
  "$@" > /tmp/ser.log 2>&1; local rc=$?
  echo "$tag end $(date +%H:%M:%S.%N | cut -c1-12) rc $rc" >> $OUT/t/windows.txt; grep -iE "rejected|abort|what\(\)" /tmp/ser.log | head -3; }
SH=9728x8192x65536
TKB="build/cuda/tilekit_bench_matmul --tk_shapes=$SH --tk_warmup=2 --tk_min_reps=20 --tk_max_reps=20 --tk_rep_work=2000 --tk_deadline_s=150 --benchmark_out_format=json"
for r in 1 2 3; do
  [ $((SECONDS-t0)) -gt 520 ] && break
  for dt in bf16 f16; do
    ser cublas-$dt-$r /tmp/cublas_baseline --shapes=$SH --dtypes=$dt --warmup=2 --min_reps=20 --max_reps=20 --rep_work=2000 --deadline_s=120 --out=$OUT/t/cublas-$dt-$r.json
    if [ $((r % 2)) = 1 ]; then order="64 0"; else order="0 64"; fi
    for v in $order; do for s in tuned leaky; do
      f="$dt/tilekit:tuned/"; [ $s = leaky ] && f="$dt/tilekit:tuned\+leaky_relu/"
      TILEKIT_WS_DRIFT=$v ser d$v$s-$dt-$r $TKB --tk_dtypes=$dt --benchmark_filter="$f" --benchmark_out=$OUT/t/d$v$s-$dt-$r.json
    done; done
  done
  echo "round $r $((SECONDS-t0)) s"
done
kill $smi
python3 - $OUT/t <<'PY'
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
echo "done $((SECONDS-t0)) s"
tar cJf /tmp/t.txz -C $OUT t && rm -rf $OUT/t && mv /tmp/t.txz $OUT/
