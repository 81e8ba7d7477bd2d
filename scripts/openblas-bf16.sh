#!/usr/bin/env bash
# Builds OpenBLAS 0.3.21 from Debian 12's own source package with BUILD_BFLOAT16=1, so the CPU
# benchmark can compare tilekit's bf16 matmul with OpenBLAS's cblas_sbgemm: Debian's binary package
# is built without it (cblas.h declares cblas_sbgemm, libopenblas does not export it). Same version
# and the same kernels Debian's DYNAMIC_ARCH build picks on this CPU (TARGET, default COOPERLAKE:
# the AVX-512 BF16 kernels); LAPACK and Fortran left out. Built once into
# $TILEKIT_CACHE/deps/openblas-0.3.21-bf16-<target> (default cache ~/.cache/tilekit).
#
#   scripts/openblas-bf16.sh            prints the install prefix (building it first if needed)
#
# Then configure the benchmark against it (bench/CMakeLists.txt link-tests cblas_sbgemm):
#   cmake build/openmp -DTILEKIT_OPENBLAS_INCLUDE_DIR=<prefix>/include -DTILEKIT_OPENBLAS_LIBRARY=<prefix>/lib/libopenblas.so
# (scripts/bench-cpu.sh does this when BENCH_OPENBLAS_BF16=1).
set -euo pipefail
target=${OPENBLAS_TARGET:-COOPERLAKE}
cache=${TILEKIT_CACHE:-$HOME/.cache/tilekit}
prefix="$cache/deps/openblas-0.3.21-bf16-${target,,}"
if [ -f "$prefix/.complete" ]; then echo "$prefix"; exit 0; fi
work=$(mktemp -d /tmp/openblas-bf16.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source --download-only openblas=0.3.21+ds-4 >&2)
tar xJf "$work"/openblas_0.3.21+ds.orig.tar.xz -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
[ -n "$src" ] || { echo "openblas-bf16: no source tree in $work" >&2; exit 1; }
opts=(TARGET="$target" DYNAMIC_ARCH=0 BUILD_BFLOAT16=1 NO_LAPACK=1 NO_FORTRAN=1 NOFORTRAN=1 USE_OPENMP=0
      USE_THREAD=1 NUM_THREADS=64 NO_STATIC=1)
make -C "$src" -j"$(nproc)" "${opts[@]}" libs shared >&2
make -C "$src" "${opts[@]}" PREFIX="$prefix.tmp" install >&2
rm -rf "$prefix" && mv "$prefix.tmp" "$prefix" && touch "$prefix/.complete"
echo "$prefix"
