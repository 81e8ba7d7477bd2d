#!/usr/bin/env bash
# Runs HERE after a GPU benchmark run: copies the JSON files that scripts/bench-gpu.sh wrote to $OUT
# (returned by the device tool into FOLDER) to bench/results/<section>/ and writes that section of
# BENCHMARKS.md with its plots.
#
#   scripts/dev/bench-gpu-report.sh FOLDER [SECTION]    SECTION defaults to gpu-h100
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${1:?usage: scripts/dev/bench-gpu-report.sh FOLDER [SECTION]}
section=${2:-gpu-h100}
results=bench/results/$section
mkdir -p "$results"
cp "$src"/matmul_cuda_*.json "$results"/
[ -f "$src/gpu.txt" ] && cp "$src/gpu.txt" "$results"/
py=python3
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
done
device=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["context"].get("device","GPU"))' \
  "$results/matmul_cuda_tilekit.json" 2>/dev/null || echo GPU)
"$py" scripts/report.py --section "$section" --title "GPU: $device (CUDA backend)" \
  --command "${TILEKIT_BENCH_COMMAND:-scripts/bench-gpu.sh (on the GPU machine)}" \
  --out BENCHMARKS.md --plots docs/bench "$results"/matmul_cuda_*.json
