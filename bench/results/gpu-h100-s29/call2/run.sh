#!/usr/bin/env bash
# Session 29, call B (warm machine, incremental build): + the split-K workspace fix. Split-K tests,
# Nsight Compute source view of the 128x256 ws kernel (bf16 none / leaky_relu, 9728x8192x65536,
# base clock; mangled kernel names), then all CUDA tests.
set -uo pipefail
export TILEKIT_CACHE=/tmp/tilekit-cache
t0=$SECONDS
scripts/gpu-build.sh build > /tmp/build.log 2>&1 || { tail -60 /tmp/build.log; exit 1; }
grep "^==" /tmp/build.log
mkdir -p $OUT/r
timeout 120 build/cuda/tilekit_tests --gtest_filter='MatmulSplitK.*' > $OUT/r/splitk-new.log 2>&1
echo "split-K tests (new workspace) rc $? $((SECONDS-t0)) s"; grep -E "^\[  (FAILED|PASSED|     OK) |relative error" $OUT/r/splitk-new.log | head -8
S="9728 8192 65536"
T2=bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32
SEC="--section SourceCounters --section WarpStateStats --section InstructionStats --section SpeedOfLight"
prof() { local tag=$1; shift
  timeout 150 ncu --clock-control base --kernel-name-base mangled $SEC -c 1 -f -o /tmp/$tag "$@" > $OUT/r/$tag.prof.log 2>&1; echo "$tag rc $?"
  ncu -i /tmp/$tag.ncu-rep --page source --csv --print-source sass > $OUT/r/$tag.sass.csv 2> $OUT/r/$tag.sass.err
  ncu -i /tmp/$tag.ncu-rep --page details --print-details all > $OUT/r/$tag.details.txt 2>&1
  wc -l $OUT/r/$tag.sass.csv; head -c 300 $OUT/r/$tag.sass.err; }
for ep in none leaky_relu; do
  prof tk-bf16-$ep -k regex:Sm90WgmmaWs build/cuda/tilekit matmul $S --layout-a col --layout-b col --layout-c col --config $T2 --epilogue $ep --reps 1 --warmup 0 --dtype bf16
done
echo "ncu done $((SECONDS-t0)) s"
timeout $((585 - (SECONDS - t0))) build/cuda/tilekit_tests --gtest_brief=1 > $OUT/r/tests.log 2>&1; echo "tests rc $? $((SECONDS-t0)) s"; tail -3 $OUT/r/tests.log; grep -E "FAILED|Failure" $OUT/r/tests.log | head -5
tar cJf /tmp/r.txz -C $OUT r && rm -rf $OUT/r && mv /tmp/r.txz $OUT/
echo "all $((SECONDS-t0)) s"
