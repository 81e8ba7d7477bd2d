#!/usr/bin/env bash
# Runs HERE after a GPU benchmark run: copies the JSON files that scripts/bench-gpu.sh wrote to $OUT
# (copied back from the GPU machine into FOLDER) to bench/results/<section>/, records TILEKIT_BENCH_COMMAND
# (the command that ran there) in that folder's README.md and regenerates BENCHMARKS.md with
# scripts/bench-report.py.
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
if [ -n "${TILEKIT_BENCH_COMMAND:-}" ]; then
  # The folder's README.md records how its JSON was made; scripts/bench-report.py quotes its Command line.
  rev=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["context"].get("git_revision","?"))' \
    "$results/matmul_cuda_tilekit.json" 2>/dev/null || echo unknown)
  printf '# %s\n\nCopied by scripts/bench-gpu-report.sh on %s from a run of revision %s on the GPU machine:\n\nCommand: `%s`\n' \
    "$results" "$(date -u +%Y-%m-%d)" "$rev" "$TILEKIT_BENCH_COMMAND" > "$results/README.md"
else
  echo "bench-gpu-report: set TILEKIT_BENCH_COMMAND to record the run's command in $results/README.md"
fi
"$py" scripts/bench-report.py
