#!/usr/bin/env bash
# Runs HERE (the CPU build machine), for carrying a benchmark binary to the GPU machine instead of
# building it there (scripts/dev/gpu-build.sh, the faster way for the cuda preset): builds the preset's
# benchmark binary and copies it, with the shared libraries the GPU machine may lack, into
# .carry/<preset> (ignored by git; carried to the GPU machine):
#   tilekit_bench_matmul.xz   the CUDA build, $ORIGIN rpath, stripped and compressed (59 MB -> 18 MB
#                             for the cuda preset: the GPU machine takes 64 MiB with the tree);
#                             scripts/bench-gpu.sh unpacks it into /tmp
#   libcudart.so.*            the CUDA runtime it links (cuda11: Debian's 11.8, which the GPU machine lacks)
#   libbenchmark.so.1debian   Google Benchmark 1.7.1 (Debian ships it as a shared library only)
#
#   scripts/dev/bench-gpu-prepare.sh [cuda|cuda11]      (default cuda11)
# Then, on the GPU machine: TILEKIT_BENCH_BIN=.carry/<preset> scripts/bench-gpu.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
preset=${1:-cuda11}
case $preset in cuda|cuda11) ;; *) echo "bench-gpu-prepare: preset must be cuda or cuda11 (got '$preset')" >&2; exit 2 ;; esac
prefix=$(scripts/deps.sh "$preset" | tail -n 1)
[ -f "$prefix/tilekit-cuda-root" ] && export CUDA_ROOT=$(cat "$prefix/tilekit-cuda-root")
cmake --preset "$preset" -DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" >/dev/null
cmake --build --preset "$preset" --target tilekit_bench_matmul
dst=.carry/$preset
mkdir -p "$dst"
cp "build/$preset/tilekit_bench_matmul" "$dst/"
for lib in $(ldd "$dst/tilekit_bench_matmul" | awk '/libcudart|libbenchmark/ {print $3}'); do cp -L "$lib" "$dst/"; done
# The revision the binary was built from, for the cuBLAS baseline's JSON context.
sed -n 's/.*tilekit_bench_git_revision = "\(.*\)";/\1/p' "build/$preset/bench/gen/git_revision.cpp" > "$dst/GIT_REVISION"
# The binary must list nothing else that the GPU machine lacks.
missing=$(LD_LIBRARY_PATH= ldd "$dst/tilekit_bench_matmul" | grep -E "not found" || true)
[ -z "$missing" ] || { echo "bench-gpu-prepare: unresolved libraries: $missing" >&2; exit 1; }
strip "$dst/tilekit_bench_matmul"
rm -f "$dst/tilekit_bench_matmul.xz"
xz -T0 -6 "$dst/tilekit_bench_matmul"
ls -l "$dst"
du -sh "$dst"
