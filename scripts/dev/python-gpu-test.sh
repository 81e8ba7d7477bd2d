#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, with .carry/gpu-build made here by
# scripts/dev/gpu-pack.sh: builds the Python module for CUDA (scripts/dev/gpu-build.sh test --python:
# Kokkos position-independent, the cuda-python preset, the pytest suite against PyTorch, CuPy and
# JAX where installed), then runs bench/python_gemm.py (tilekit.gemm against torch.matmul, table,
# plots, host overhead per call) into $OUT/python-bench.
#
#   scripts/dev/python-gpu-test.sh [--no-bench] [bench arguments...]
#
# Environment: PYTHON (default python3: the one with torch), as gpu-build.sh takes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=1
[ "${1:-}" = --no-bench ] && { bench=0; shift; }
t0=$SECONDS
scripts/dev/gpu-build.sh test --python
[ "$bench" = 1 ] || exit 0
out=${OUT:-/tmp}/python-bench
mkdir -p "$out"
PYTHONPATH=build/cuda-python/python "${PYTHON:-python3}" bench/python_gemm.py --out "$out" "$@" 2>&1 | tee "$out/python_gemm.txt"
echo "== python-gpu-test.sh done in $((SECONDS - t0)) s"
