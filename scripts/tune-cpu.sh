#!/usr/bin/env bash
# The CPU tuning sweeps whose cache is shipped in tilekit/tuning/results (OpenMP backend, this machine).
# Run on IDLE cores: any other process (a build, a test run) stalls OpenMP teams and ruins the
# timings. About 27 minutes (1600 s) on 2 idle EPYC cores.
#
#   scripts/tune-cpu.sh [OUT]   cache -> OUT/cache/*.json, reports -> OUT/reports (default /tmp/tilekit-tune-cpu)
#
# Then copy OUT/cache/openmp__*.json into tilekit/tuning/results/ and rebuild: `--config auto` uses it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${TILEKIT_BIN:-build/openmp}
out=${1:-/tmp/tilekit-tune-cpu}
rep=$out/reports
mkdir -p "$out/cache" "$rep"
# Kokkos' threads pinned one per core (shared/TOOLCHAIN.md).
export OMP_PROC_BIND=spread OMP_PLACES=threads
t0=$(date +%s)
$bin/tilekit tune matmul --sizes ${TUNE_F32_SIZES:-256:2048:256} --dtype f32 \
  --cache "$out/cache" --out "$rep/matmul-f32" -q | tail -12
$bin/tilekit tune matmul --sizes ${TUNE_F64_SIZES:-256:2048:256} --dtype f64 --no-baselines \
  --cache "$out/cache" --out "$rep/matmul-f64" -q | tail -12
for t in f16 bf16 i8; do
  $bin/tilekit tune matmul --sizes ${TUNE_SIZES:-256,512,1024,2048} --dtype $t --no-baselines \
    --cache "$out/cache" --out "$rep/matmul-$t" -q | tail -8
done
for t in f32 f16; do
  $bin/tilekit tune elementwise --sizes ${TUNE_EW_SIZES:-16384x8192,4096x4096,1024x1024} --op add --dtype $t \
    --cache "$out/cache" --out "$rep/elementwise-add-$t" -q | tail -5
done
echo "tuning took $(( $(date +%s) - t0 )) s"
rm -f "$out"/cache/*.lock
