#!/usr/bin/env bash
# Installs what tilekit needs on a Debian 12 machine and builds Kokkos + Kokkos Kernels 3.4.01
# for one backend when no installed Kokkos is found.
#
#   scripts/deps.sh <serial|openmp|cuda|hip>   -> prints the Kokkos install prefix on its last line
#
# Heavy builds are cached outside the source tree, keyed by version and backend:
#   ${TILEKIT_CACHE:-$HOME/.cache/tilekit}/deps/kokkos-3.4.01-<backend>
# A second run finds the cache and returns at once.
set -euo pipefail

backend=${1:-openmp}
case "$backend" in serial|openmp|cuda|hip) ;; *)
  echo "deps.sh: unknown backend '$backend' (allowed: serial, openmp, cuda, hip)" >&2; exit 2;;
esac

KOKKOS_VERSION=3.4.01
cache=${TILEKIT_CACHE:-$HOME/.cache/tilekit}
prefix="$cache/deps/kokkos-$KOKKOS_VERSION-$backend"
src="$cache/src/kokkos-$KOKKOS_VERSION"
log="$cache/logs"
mkdir -p "$cache/deps" "$cache/src" "$log"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
say() { echo "[deps] $*" >&2; }

# --- apt sources: source packages and the contrib/non-free components ------------------------
# Derived from the machine's own Debian entry (its URIs and Signed-By lines), so no registry host
# name is written here.
ensure_apt_sources() {
  local extra=/etc/apt/sources.list.d/tilekit-extra.sources
  [ -f "$extra" ] && return 0
  local base=/etc/apt/sources.list.d/debian.sources
  if [ ! -f "$base" ]; then
    say "no $base; assuming apt already has deb-src and non-free entries"; return 0
  fi
  local uris signed
  uris=$(awk '/^URIs:/{print; exit}' "$base")
  signed=$(awk '/^Signed-By:/{print; exit}' "$base")
  say "adding deb-src and contrib/non-free entries ($extra)"
  # deb-src for every component; binary entries only for the components the base entry lacks.
  printf 'Types: deb-src\n%s\nSuites: bookworm bookworm-updates\nComponents: main contrib non-free\n%s\n\nTypes: deb\n%s\nSuites: bookworm bookworm-updates\nComponents: contrib non-free\n%s\n' \
    "$uris" "$signed" "$uris" "$signed" | $SUDO tee "$extra" >/dev/null
  APT_UPDATED=""
}

APT_UPDATED=""
apt_install() {
  local missing=()
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ -z "$APT_UPDATED" ]; then $SUDO apt-get update -qq >&2; APT_UPDATED=1; fi
  say "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

ensure_apt_sources
apt_install build-essential cmake ninja-build ccache dpkg-dev git \
  libbenchmark-dev libgtest-dev libgmock-dev libopenblas-dev libcli11-dev nlohmann-json3-dev libfmt-dev \
  python3-matplotlib
case "$backend" in
  cuda) apt_install nvidia-cuda-toolkit g++-11 ;;
  hip)  apt_install hipcc libamdhip64-dev rocm-device-libs ;;
esac

if [ -n "${Kokkos_ROOT:-}" ]; then
  say "Kokkos_ROOT is set: using the Kokkos at $Kokkos_ROOT (nothing built)"
  echo "$Kokkos_ROOT"; exit 0
fi
if [ -f "$prefix/.complete" ]; then
  say "using cached Kokkos $KOKKOS_VERSION ($backend) at $prefix"
  echo "$prefix"; exit 0
fi

# --- Kokkos sources from Debian's trilinos source package --------------------------------------
if [ ! -f "$src/.complete" ]; then
  dl="$cache/src/trilinos-dl"
  mkdir -p "$dl"
  if ! ls "$dl"/trilinos_*.orig.tar.* >/dev/null 2>&1; then
    say "downloading Debian's trilinos source package (about 166 MB)"
    (cd "$dl" && apt-get source --download-only trilinos >&2)
  fi
  tarball=$(ls "$dl"/trilinos_*.orig.tar.* | head -1)
  say "extracting packages/kokkos and packages/kokkos-kernels from $(basename "$tarball")"
  rm -rf "$src" "$cache/src/extract" && mkdir -p "$cache/src/extract"
  tar xzf "$tarball" -C "$cache/src/extract" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  top=$(ls -d "$cache/src/extract"/*/packages)
  mkdir -p "$src"
  mv "$top/kokkos" "$src/kokkos"; mv "$top/kokkos-kernels" "$src/kokkos-kernels"
  rm -rf "$cache/src/extract" "$dl"
  touch "$src/.complete"
fi

# --- configure + build + install ----------------------------------------------------------------
jobs=$(nproc)
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$prefix"
        -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
kokkos_opts=(-DKokkos_ENABLE_SERIAL=ON)
kk_opts=(-DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF
         -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_INST_COMPLEX_FLOAT=OFF
         -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_OFFSET_INT=OFF
         -DKokkosKernels_INST_OFFSET_SIZE_T=OFF -DKokkosKernels_INST_ORDINAL_INT=OFF
         -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF)
compiler=(-DCMAKE_CXX_COMPILER=g++)
case "$backend" in
  serial) ;;
  openmp) kokkos_opts+=(-DKokkos_ENABLE_OPENMP=ON) ;;
  cuda)
    # Debian's CUDA 11.8 needs g++-11; Kokkos 3.4 knows no Hopper arch, so sm_90 machine code is
    # appended beside sm_80 through NVCC_APPEND_FLAGS (nvcc_wrapper refuses two arch flags).
    export PATH=/usr/bin:$PATH NVCC_WRAPPER_DEFAULT_COMPILER=g++-11
    export NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=sm_90"
    compiler=(-DCMAKE_CXX_COMPILER="$src/kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_80)
    kokkos_opts+=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON)
    kk_opts+=(-DKokkosKernels_ENABLE_TPL_CUBLAS=OFF -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF) ;;
  hip)
    compiler=(-DCMAKE_CXX_COMPILER=hipcc)
    kokkos_opts+=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_VEGA908=ON) ;;
esac

bdir="$cache/build/kokkos-$KOKKOS_VERSION-$backend"
rm -rf "$bdir" "$prefix"
say "building Kokkos $KOKKOS_VERSION ($backend); log: $log/kokkos-$backend.log"
{ cmake -S "$src/kokkos" -B "$bdir/kokkos" "${common[@]}" "${compiler[@]}" "${kokkos_opts[@]}" &&
  cmake --build "$bdir/kokkos" -j "$jobs" && cmake --install "$bdir/kokkos"; } >"$log/kokkos-$backend.log" 2>&1 \
  || { tail -30 "$log/kokkos-$backend.log" >&2; say "Kokkos build failed ($backend)"; exit 1; }
# Kokkos Kernels without pre-instantiation: gemm is instantiated in tilekit's own sources.
kk_compiler=("${compiler[@]}")
[ "$backend" = cuda ] && kk_compiler=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_80)
say "building Kokkos Kernels $KOKKOS_VERSION ($backend); log: $log/kokkoskernels-$backend.log"
{ cmake -S "$src/kokkos-kernels" -B "$bdir/kk" "${common[@]}" "${kk_compiler[@]}" "${kk_opts[@]}" \
    -DKokkos_ROOT="$prefix" &&
  cmake --build "$bdir/kk" -j "$jobs" && cmake --install "$bdir/kk"; } >"$log/kokkoskernels-$backend.log" 2>&1 \
  || { tail -30 "$log/kokkoskernels-$backend.log" >&2; say "Kokkos Kernels build failed ($backend)"; exit 1; }
rm -rf "$bdir"
touch "$prefix/.complete"
say "installed Kokkos + Kokkos Kernels $KOKKOS_VERSION ($backend) at $prefix"
echo "$prefix"
