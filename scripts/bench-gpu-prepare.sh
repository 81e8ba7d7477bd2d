#!/usr/bin/env bash
# Runs HERE (the CPU build machine) before a GPU benchmark run: builds the CUDA preset's benchmark
# binary and copies what the GPU machine needs into .carry/cuda (ignored by git; name it in the
# device tool's carry list):
#   tilekit_bench_matmul      CUDA build (sm_80 + sm_90 machine code), $ORIGIN rpath
#   libcudart.so.11.0         Debian's CUDA 11.8 runtime (the GPU machine has only CUDA 13 libraries)
#   libbenchmark.so.1debian   Google Benchmark 1.7.1 (Debian ships it as a shared library only)
# Then, on the GPU machine: scripts/bench-gpu.sh (see there).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh cuda >/dev/null
cmake --preset cuda >/dev/null
cmake --build --preset cuda --target tilekit_bench_matmul
mkdir -p .carry/cuda
cp build/cuda/tilekit_bench_matmul .carry/cuda/
cp -L /usr/lib/x86_64-linux-gnu/libcudart.so.11.0 .carry/cuda/
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian .carry/cuda/
# The revision the binary was built from, for the cuBLAS baseline's JSON context.
sed -n 's/.*tilekit_bench_git_revision = "\(.*\)";/\1/p' build/cuda/bench/gen/git_revision.cpp > .carry/cuda/GIT_REVISION
# The binary must list nothing else that the GPU machine lacks.
missing=$(LD_LIBRARY_PATH= ldd .carry/cuda/tilekit_bench_matmul | grep -E "not found" || true)
[ -z "$missing" ] || { echo "bench-gpu-prepare: unresolved libraries: $missing" >&2; exit 1; }
ls -l .carry/cuda
du -sh .carry/cuda
