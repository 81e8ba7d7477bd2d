#!/usr/bin/env bash
# Session 29, call A: main + the new split-K test (the old workspace layout): the test must fail.
# Nsight Compute source view (SASS with stall samples per instruction) of the 128x256 ws kernel
# (bf16, none and leaky_relu) and cuBLAS's kernel at 9728x8192x65536, base clock.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
mkdir -p $TILEKIT_CACHE/deps
tar xJf .carry/kokkos-cuda-deps.tar.xz -C $TILEKIT_CACHE/deps
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -60 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
nvcc -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas || exit 1
mkdir -p $OUT/r
timeout 120 build/cuda/tilekit_tests --gtest_filter='MatmulSplitK.*' > $OUT/r/splitk-old.log 2>&1
echo "split-K tests (old workspace) rc $? $((SECONDS-t0)) s"; grep -E "^\[  (FAILED|PASSED|     OK) |relative error|Which is" $OUT/r/splitk-old.log | head -12
ncu --help | grep -iE "^ *--page|print-source|source-folders" > $OUT/r/ncu-help.txt
S="9728 8192 65536"
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
SEC="--section SourceCounters --section WarpStateStats --section InstructionStats --section SpeedOfLight"
prof() { local tag=$1; shift
  timeout 150 ncu --clock-control base $SEC -c 1 -f -o /tmp/$tag "$@" > $OUT/r/$tag.prof.log 2>&1; echo "$tag rc $?"
  ncu -i /tmp/$tag.ncu-rep --page source --csv --print-source sass > $OUT/r/$tag.sass.csv 2> $OUT/r/$tag.sass.err
  ncu -i /tmp/$tag.ncu-rep --page details --print-details all > $OUT/r/$tag.details.txt 2>&1
  wc -l $OUT/r/$tag.sass.csv; head -c 300 $OUT/r/$tag.sass.err; }
for ep in none leaky_relu; do
  prof tk-bf16-$ep -k regex:Sm90WgmmaWs build/cuda/tilekit matmul $S --layout-a col --layout-b col --layout-c col --config $T2 --epilogue $ep --reps 1 --warmup 0 --dtype bf16
done
prof cublas-bf16 -k regex:nvjet /tmp/cublas_baseline --shapes=9728x8192x65536 --dtypes=bf16 --warmup=0 --min_reps=1 --max_reps=1
echo "ncu done $((SECONDS-t0)) s"
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
echo "all $((SECONDS-t0)) s"
