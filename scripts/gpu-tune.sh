#!/usr/bin/env bash
# On the GPU machine, from the repository root, with the CUDA build in .carry/cuda: run the tests,
# then tuning sweeps whose caches are shipped in tuning/results. Everything lands in $OUT.
set -u
bin=.carry/cuda
out=${OUT:-/tmp/tilekit-gpu}
mkdir -p "$out"
nvidia-smi -L
$bin/tilekit_tests --gtest_brief=1 2>&1 | tail -4
bash tests/cli_bad_input.sh $bin/tilekit 2>&1 | tail -1
for s in 1024 4096; do $bin/tilekit matmul $s $s $s --check | grep -E "config|rate|check"; done
t0=$(date +%s)
$bin/tilekit tune matmul --sizes ${TUNE_F32_SIZES:-256:4096:256} --dtype f32 --strategy random --budget ${TUNE_BUDGET:-12} \
  --cache "$out/cache" --out "$out/tune-f32" -q | tail -20
for t in f16 bf16 f64 i8; do
  $bin/tilekit tune matmul --sizes ${TUNE_SIZES:-512,1024,2048,4096} --dtype $t --strategy random --budget ${TUNE_BUDGET:-12} \
    --cache "$out/cache" --out "$out/tune-$t" -q | tail -7
done
echo "tuning took $(( $(date +%s) - t0 )) s"
$bin/tilekit matmul 4096 4096 4096 --check -v 2>&1 | grep -E "auto|rate|check"
(cd "$out" && tar czf tune-reports.tgz tune-* && rm -rf tune-*)
