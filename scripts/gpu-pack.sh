#!/usr/bin/env bash
# Runs HERE (the Debian build machine): packs what building the cuda preset ON THE GPU MACHINE needs
# and that machine cannot fetch, into .carry/gpu-build (ignored by git; name it in the device
# tool's carry list, about 4 MB):
#   kokkos-src.tar.xz   kokkos/ and kokkos-kernels/ 3.4.01 as extracted from Debian's trilinos source
#   debs/*.deb          Debian's GoogleTest, Google Benchmark, CLI11, nlohmann-json and fmt packages
#                       (unpacked there with dpkg -x; the GPU machine has none of them)
# Then, on the GPU machine: scripts/gpu-build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${TILEKIT_CACHE:-$HOME/.cache/tilekit}
src="$cache/src/kokkos-3.4.01"
[ -f "$src/.complete" ] || { echo "gpu-pack: no Kokkos source in $src yet (run scripts/deps.sh openmp once)" >&2; exit 1; }
out=.carry/gpu-build
rm -rf "$out" && mkdir -p "$out/debs"
tar cJf "$out/kokkos-src.tar.xz" -C "$src" kokkos kokkos-kernels
(cd "$out/debs" && apt-get download -q libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian \
   libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9 >/dev/null 2>&1)
du -sh "$out"
