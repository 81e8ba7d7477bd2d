#!/usr/bin/env bash
# On the GPU machine, from the repository root, with the CUDA build in .carry/cuda: run the tests,
# then the tuning sweeps whose caches are shipped in tuning/results. Results land in $OUT: the
# cache file and one archive of the sweep reports (CSV, JSON, SVG per sweep).
set -u
bin=.carry/cuda
out=${OUT:-/tmp/tilekit-gpu}
mkdir -p "$out"
nvidia-smi -L
$bin/tilekit_tests --gtest_brief=1 2>&1 | tail -4
bash tests/cli_bad_input.sh $bin/tilekit 2>&1 | tail -1
t0=$(date +%s)
rep=/tmp/tilekit-tune-reports
mkdir -p $rep
$bin/tilekit tune matmul --sizes ${TUNE_F32_SIZES:-256:4096:256} --dtype f32 --strategy ${TUNE_STRATEGY:-exhaustive} \
  --budget ${TUNE_BUDGET:-0} --cache "$out/cache" --out $rep/matmul-f32 -q | tail -19
for t in f16 bf16 f64 i8; do
  $bin/tilekit tune matmul --sizes ${TUNE_SIZES:-512,1024,2048,4096} --dtype $t --strategy random --budget ${TUNE_BUDGET_OTHER:-24} \
    --cache "$out/cache" --out $rep/matmul-$t -q | tail -6
done
for t in f32 f16; do
  $bin/tilekit tune elementwise --sizes ${TUNE_EW_SIZES:-16384x8192,4096x4096,1024x1024} --op add --dtype $t \
    --cache "$out/cache" --out $rep/elementwise-add-$t -q | tail -5
done
echo "tuning took $(( $(date +%s) - t0 )) s"
rm -f "$out"/cache/*.lock
tar czf "$out/tune-reports.tgz" -C $rep .
