#!/usr/bin/env bash
# On the GPU machine, from the repository root, with the CUDA binaries in $TILEKIT_BIN (default
# build/cuda from scripts/dev/gpu-build.sh, else .carry/cuda): run the tests,
# then the tuning sweeps whose caches are shipped in tilekit/tuning/results. Results land in $OUT: the
# cache file and one archive of the sweep reports (CSV, JSON, SVG per sweep).
#
# Environment: TUNE_TYPES (default "f32 f16 bf16 f64 i8"): the matmul input types to sweep;
# TUNE_SEED=1 starts from the shipped cache (tilekit/tuning/results/cuda__*.json), so the returned file is
# the shipped one with the swept entries replaced; TUNE_STRATEGY/TUNE_BUDGET (f32) and
# TUNE_BUDGET_OTHER (other types, random) bound the sweeps; f16/bf16 always also try every
# tensor-core tile (--also), so a random budget cannot skip them; TUNE_EW=0 skips elementwise.
set -u
bin=${TILEKIT_BIN:-$( [ -x build/cuda/tilekit ] && echo build/cuda || echo .carry/cuda )}
out=${OUT:-/tmp/tilekit-gpu}
mkdir -p "$out/cache"
nvidia-smi -L
[ "${TUNE_SEED:-0}" = 1 ] && cp tilekit/tuning/results/cuda__*.json "$out/cache/"
$bin/tilekit_tests --gtest_brief=1 2>&1 | tail -4
bash tests/cli_bad_input.sh $bin/tilekit 2>&1 | tail -1
t0=$(date +%s)
rep=/tmp/tilekit-tune-reports
mkdir -p $rep
for t in ${TUNE_TYPES:-f32 f16 bf16 f64 i8}; do
  if [ "$t" = f32 ]; then
    $bin/tilekit tune matmul --sizes ${TUNE_F32_SIZES:-256:4096:256} --dtype f32 --strategy ${TUNE_STRATEGY:-exhaustive} \
      --budget ${TUNE_BUDGET:-0} --cache "$out/cache" --out $rep/matmul-f32 -q | tail -19
    continue
  fi
  also=()
  if [ "$t" = f16 ] || [ "$t" = bf16 ]; then
    # Every tensor-core tile at each group size, with its team shape: one warp per warp tile
    # (_tc), or 4 warps per 64-row warpgroup (_wg); 32 vector lanes per team member.
    for c in $($bin/tilekit info --json | python3 -c '
import json, re, sys
for t in json.load(sys.stdin)["matmul_tiles"].split(", "):
    m = re.fullmatch(r"bm(\d+)_bn(\d+)_bk\d+_tm(\d+)_tn(\d+)_(tc|wg)", t)
    if m:
        bm, bn, tm, tn = (int(m.group(i)) for i in range(1, 5))
        warps = (bm // tm) * (bn // tn) if m.group(5) == "tc" else bm // 64 * 4
        print(f"{t}:{warps}")'); do
      for g in 1 4 8 16; do also+=(--also "${c%%:*}_g${g}_t${c##*:}_v32"); done
    done
  fi
  $bin/tilekit tune matmul --sizes ${TUNE_SIZES:-512,1024,2048,4096} --dtype $t --strategy random --budget ${TUNE_BUDGET_OTHER:-24} \
    "${also[@]}" --cache "$out/cache" --out $rep/matmul-$t -q | tail -8
done
if [ "${TUNE_EW:-1}" = 1 ]; then
  for t in f32 f16; do
    $bin/tilekit tune elementwise --sizes ${TUNE_EW_SIZES:-16384x8192,4096x4096,1024x1024} --op add --dtype $t \
      --cache "$out/cache" --out $rep/elementwise-add-$t -q | tail -5
  done
fi
echo "tuning took $(( $(date +%s) - t0 )) s"
rm -f "$out"/cache/*.lock
tar czf "$out/tune-reports.tgz" -C $rep .
