#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, with the CUDA benchmark binary in
# $TILEKIT_BENCH_BIN or $TILEKIT_BIN (default build/cuda, built there by scripts/dev/gpu-build.sh, else
# .carry/cuda, made on the build machine by scripts/dev/bench-gpu-prepare.sh). In one invocation:
#   1. builds the cuBLAS baseline (bench/cublas_baseline.cu) with this machine's own nvcc,
#   2. runs it, then tilekit_bench_matmul (tilekit + Kokkos Kernels), on the same shapes and types,
#   3. writes to $OUT: matmul_cuda_cublas.json, matmul_cuda_tilekit.json (with a _row or _kmajor
#      suffix for those storage orders), cublas.log, tilekit.log, gpu.txt.
# It keeps within TILEKIT_BENCH_BUDGET_S seconds (default 540, under a 600 s limit per command on the GPU machine):
# each program skips, with the reason in its JSON, any benchmark whose series' rate on the previous
# shape says it would end past its deadline (e.g. tilekit or Kokkos Kernels at 9728x8192x65536).
# Back on the build machine: scripts/dev/bench-gpu-report.sh <folder with the returned files>.
#
# Environment: TILEKIT_BENCH_SHAPES (default 128:4096:128,8192,9728x8192x65536@f16),
# TILEKIT_BENCH_DTYPES (default f32,f64,f16), TILEKIT_BENCH_BUDGET_S (default 540, shared by the
# layouts), TILEKIT_BENCH_LAYOUTS (storage orders, comma-separated: col, row, kmajor; default col),
# TILEKIT_BENCH_ZOO=1 (the shapes of bench/shapes/gpu-zoo.txt, only the tilekit:auto series beside
# cuBLAS, no activation series), TILEKIT_BENCH_FILTER (a --benchmark_filter regex for tilekit's side).
set -uo pipefail
t0=$SECONDS
bin=${TILEKIT_BENCH_BIN:-${TILEKIT_BIN:-$( [ -x build/cuda/tilekit_bench_matmul ] && echo build/cuda || echo .carry/cuda )}}
out=${OUT:-/tmp/tilekit-bench}
mkdir -p "$out"
shapes=${TILEKIT_BENCH_SHAPES:-128:4096:128,8192,9728x8192x65536@f16}
dtypes=${TILEKIT_BENCH_DTYPES:-f32,f64,f16}
budget=${TILEKIT_BENCH_BUDGET_S:-540}
layouts=${TILEKIT_BENCH_LAYOUTS:-col}
filter=${TILEKIT_BENCH_FILTER:-}
activation=1
if [ "${TILEKIT_BENCH_ZOO:-0}" = 1 ]; then
  shapes=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' bench/shapes/gpu-zoo.txt | grep -v '^$' | paste -sd, -)
  filter=${filter:-tilekit:auto/}
  activation=0
fi
unset TILEKIT_BENCH_SHAPES TILEKIT_BENCH_DTYPES TILEKIT_BENCH_LAYOUT  # passed as flags, so the JSON records them
# Repetitions: timed iterations = 500 GFLOP / (2MNK), clamped to [5, 100], after 2 warm-ups.
warmup=2 min_reps=5 max_reps=100 rep_work=500

# A carried folder may hold the binary compressed (scripts/dev/bench-gpu-prepare.sh: under the
# GPU machine's 64 MiB carry limit): unpacked, with its libraries, into /tmp first.
if [ ! -x "$bin/tilekit_bench_matmul" ] && [ -f "$bin/tilekit_bench_matmul.xz" ]; then
  unpacked=/tmp/tilekit-bench-bin
  mkdir -p "$unpacked"
  cp "$bin"/lib* "$bin"/GIT_REVISION "$unpacked"/ 2>/dev/null
  xz -dc "$bin/tilekit_bench_matmul.xz" > "$unpacked/tilekit_bench_matmul" && chmod +x "$unpacked/tilekit_bench_matmul"
  bin=$unpacked
fi
[ -x "$bin/tilekit_bench_matmul" ] || { echo "bench-gpu: no $bin/tilekit_bench_matmul (run scripts/dev/gpu-build.sh there, or scripts/dev/bench-gpu-prepare.sh here and carry .carry/cuda)"; exit 1; }
rev=$(cat "$bin/GIT_REVISION" 2>/dev/null || sed -n 's/.*tilekit_bench_git_revision = "\(.*\)";/\1/p' "$bin/bench/gen/git_revision.cpp" 2>/dev/null || echo unknown)
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv
  nvcc --version | tail -2
  nproc
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

echo "== building the cuBLAS baseline ($((SECONDS - t0)) s)"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
have_cublas=0
"$nvcc" -O3 -std=c++17 -arch=sm_90 -I. -o /tmp/cublas_baseline bench/cublas_baseline.cu -lcublas && have_cublas=1
[ "$have_cublas" = 1 ] || echo "bench-gpu: the cuBLAS baseline did not build; tilekit runs without it" | tee "$out/cublas.log"
IFS=, read -r -a layout_list <<< "$layouts"
n_layouts=${#layout_list[@]}
for i in "${!layout_list[@]}"; do
  layout=${layout_list[$i]}
  suffix=$([ "$layout" = col ] || echo "_$layout")
  # This layout's share of what is left of the budget; cuBLAS at most a third of it.
  share=$(( (budget - (SECONDS - t0) - 15) / (n_layouts - i) ))
  end=$(( SECONDS - t0 + share ))
  if [ "$have_cublas" = 1 ]; then
    echo "== cuBLAS baseline, $layout ($((SECONDS - t0)) s)"
    /tmp/cublas_baseline --shapes="$shapes" --dtypes="$dtypes" --warmup=$warmup --min_reps=$min_reps \
      --max_reps=$max_reps --rep_work=$rep_work --deadline_s=$(( share / 3 )) --git_revision="$rev" \
      --layout="$layout" --activation=$activation \
      --out="$out/matmul_cuda_cublas$suffix.json" >> "$out/cublas.log" 2>&1
    echo "cublas_baseline exit status $?"
    tail -2 "$out/cublas.log"
  fi
  left=$(( end - (SECONDS - t0) ))
  echo "== tilekit + Kokkos Kernels, $layout ($((SECONDS - t0)) s; deadline $left s)"
  "$bin/tilekit_bench_matmul" --tk_shapes="$shapes" --tk_dtypes="$dtypes" --tk_warmup=$warmup \
    --tk_min_reps=$min_reps --tk_max_reps=$max_reps --tk_rep_work=$rep_work --tk_deadline_s=$left \
    --tk_layout="$layout" ${filter:+--benchmark_filter="$filter"} \
    --benchmark_out="$out/matmul_cuda_tilekit$suffix.json" --benchmark_out_format=json >> "$out/tilekit.log" 2>&1
  echo "tilekit_bench_matmul exit status $?"
done
# A short table for the reply (the full ones are made on the build machine from the JSON).
python3 scripts/report.py --stdout --only-shapes '^(1024|2048|4096|8192|9728)x' --section gpu --title summary \
  --command scripts/bench-gpu.sh "$out"/matmul_cuda_*.json 2>&1 | grep -E "^(###|\||Not|- [0-9])" | cut -c1-400
echo "== done in $((SECONDS - t0)) s; files in $out:"
ls -l "$out"
