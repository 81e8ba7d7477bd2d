#!/usr/bin/env bash
# Runs HERE (the Debian build machine): packs what building the cuda preset ON THE GPU MACHINE needs
# and that machine cannot fetch, into .carry/gpu-build (ignored by git; carry it to the GPU machine with the
# working tree, about 4 MB):
#   kokkos-src.tar.xz   kokkos/ and kokkos-kernels/ 3.4.01 as extracted from Debian's trilinos source
#   debs/*.deb          Debian's GoogleTest, Google Benchmark, CLI11, nlohmann-json and fmt packages,
#                       and pybind11 and the DLPack header for the Python module (gpu-build.sh --python)
#                       (unpacked there with dpkg -x; the GPU machine has none of them)
#   mpi-debs/*.deb      Debian's OpenMPI 4.1 (mpirun, headers, libraries) and the libraries it loads
#                       that an Ubuntu 24.04 machine lacks (7.6 MB; unpacked by gpu-build.sh --mpi into
#                       its own prefix, used through OPAL_PREFIX). Not its C/C++ runtime (libc6,
#                       libstdc++6, zlib1g: the machine's own, newer ones must stay first).
# Then, on the GPU machine: scripts/dev/gpu-build.sh [--mpi].
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=${TILEKIT_CACHE:-$HOME/.cache/tilekit}
src="$cache/src/kokkos-3.4.01"
[ -f "$src/.complete" ] || { echo "gpu-pack: no Kokkos source in $src yet (run scripts/deps.sh openmp once)" >&2; exit 1; }
out=.carry/gpu-build
rm -rf "$out" && mkdir -p "$out/debs"
tar cJf "$out/kokkos-src.tar.xz" -C "$src" kokkos kokkos-kernels
(cd "$out/debs" && apt-get download -q libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian \
   libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9 pybind11-dev libdlpack-dev >/dev/null 2>&1)
# OpenMPI's closure, without the C/C++ runtime, compilers, Fortran, perl, ssh (single-node runs).
mkdir -p "$out/mpi-debs"
(cd "$out/mpi-debs" && apt-get download -q openmpi-bin libopenmpi3 libopenmpi-dev openmpi-common libpmix2 libmunge2 \
   libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libudev1 libfabric1 libucx0 libibverbs1 librdmacm1 \
   libnl-3-200 libnl-route-3-200 libpsm2-2 libpsm-infinipath1 libnuma1 libltdl7 ibverbs-providers >/dev/null 2>&1)
du -sh "$out"/*
