#!/usr/bin/env bash
# Installs what tilekit needs on a Debian 12 machine and builds Kokkos + Kokkos Kernels 3.4.01
# for one backend when no installed Kokkos is found.
#
#   scripts/deps.sh <serial|openmp|cuda|cuda11|hip>[-pic]  -> prints the Kokkos install prefix on its last line
#   scripts/deps.sh openmp-aarch64                    -> the same, cross-compiled for aarch64
#   scripts/deps.sh fuzz                              -> installs what fuzz/run.sh needs (clang with
#                                                        libFuzzer and the sanitizer runtimes); no Kokkos
#
# A "-pic" suffix (openmp-pic, cuda-pic, ...) builds the same Kokkos as position-independent code,
# for linking into a shared object (the Python module, -DTILEKIT_BUILD_PYTHON=ON); it has its own
# cache key and link, so the plain builds are untouched.
#
# Backends: cuda uses a CUDA >= 12 found on the machine ($CUDA_ROOT, else nvcc on PATH, else
# /usr/local/cuda) and compiles for sm_80 + sm_90a; cuda11 installs Debian's CUDA 11.8 (a 2.3 GB
# download) for machines without CUDA 12 and compiles for sm_80 + sm_90. openmp-aarch64
# cross-compiles for aarch64 (generic ARMv8-A) with Debian's g++-aarch64-linux-gnu
# (cmake/toolchains/aarch64-linux-gnu.cmake) and installs qemu-user to run the result; it also
# cross-builds GoogleTest from Debian's source (/usr/src/googletest) into the same prefix, since
# Debian's libgtest-dev holds only the build machine's library.
#
# Kokkos 3.4.01 is patched by scripts/patches/kokkos-3.4.01.patch (CUDA 13 API changes; level-0
# team scratch up to the GPU's opt-in maximum per block). The patch is applied to a fresh copy of
# the pristine source for every build, so re-running is idempotent.
#
# Heavy builds are cached outside the source tree, keyed by Kokkos version, backend, CUDA version
# (cuda) and the patch's hash:
#   ${TILEKIT_CACHE:-$HOME/.cache/tilekit}/deps/kokkos-3.4.01-<backend>[-nvcc<X.Y>][-pic]-p<hash>
# with a link deps/kokkos-3.4.01-<backend>[-pic] to the current one (what CMake and the presets find).
# A second run finds the cache and returns at once; a changed patch or CUDA rebuilds.
#
# Environment: TILEKIT_CACHE (cache folder), Kokkos_ROOT (use that Kokkos, build nothing),
# CUDA_ROOT (the CUDA for the cuda backend), TILEKIT_NO_APT=1 (install nothing; for machines
# without apt, such as the GPU machine), TILEKIT_KOKKOS_SRC (a folder holding kokkos/ and
# kokkos-kernels/ extracted from Debian's trilinos source, instead of downloading it),
# TILEKIT_JOBS (parallel build jobs; default nproc), TILEKIT_MPI=1 (also install OpenMPI:
# libopenmpi-dev, openmpi-bin, for builds with -DTILEKIT_ENABLE_MPI=ON), TILEKIT_PYTHON=1 (also install
# what the Python module needs: python3-dev, python3-numpy, python3-pytest, pybind11-dev, libdlpack-dev).
set -euo pipefail

backend=${1:-openmp}
pic=""
case "$backend" in *-pic) pic=-pic; backend=${backend%-pic} ;; esac
case "$backend$pic" in serial|openmp|openmp-aarch64|cuda|cuda11|hip|fuzz) ;; serial-pic|openmp-pic|cuda-pic|cuda11-pic|hip-pic) ;; *)
  echo "deps.sh: unknown backend '$1' (allowed: serial, openmp, cuda, cuda11, hip, each also with -pic; openmp-aarch64; fuzz)" >&2; exit 2;;
esac

KOKKOS_VERSION=3.4.01
cache=${TILEKIT_CACHE:-$HOME/.cache/tilekit}
here=$(cd "$(dirname "$0")" && pwd)
patch_file="$here/patches/kokkos-$KOKKOS_VERSION.patch"
src="${TILEKIT_KOKKOS_SRC:-$cache/src/kokkos-$KOKKOS_VERSION}"
aarch64_toolchain="$(cd "$here/.." && pwd)/cmake/toolchains/aarch64-linux-gnu.cmake"
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

# --- the CUDA for the cuda backend: >= 12, found on the machine --------------------------------
cuda_root=""
if [ "$backend" = cuda ]; then
  nvcc_bin=""
  for c in ${CUDA_ROOT:+"$CUDA_ROOT/bin/nvcc"} "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc; do
    [ -n "$c" ] && [ -x "$c" ] || continue
    v=$("$c" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1.\2/p')
    if [ "${v%%.*}" -ge 12 ] 2>/dev/null; then nvcc_bin=$c; cuda_version=$v; break; fi
    say "skipping $c (CUDA $v; the cuda preset needs CUDA >= 12)"
  done
  if [ -z "$nvcc_bin" ]; then
    echo "deps.sh: no CUDA >= 12 found (looked at \$CUDA_ROOT, nvcc on PATH, /usr/local/cuda)." >&2
    echo "deps.sh: set CUDA_ROOT to a CUDA 12+ install, or use the cuda11 preset (Debian's CUDA 11.8)." >&2
    exit 2
  fi
  cuda_root=$(cd "$(dirname "$nvcc_bin")/.." && pwd)
  say "CUDA $cuda_version at $cuda_root"
fi

# Cache key: version, backend, CUDA version, patch hash.
patch_hash=$(sha256sum "$patch_file" | cut -c1-10)
key="kokkos-$KOKKOS_VERSION-$backend${cuda_root:+-nvcc$cuda_version}$pic-p$patch_hash"
prefix="$cache/deps/$key"
link="$cache/deps/kokkos-$KOKKOS_VERSION-$backend$pic"
# Points the stable name at the current build (atomically: a new link renamed over the old one).
set_link() {
  # A real folder there is a cache of the layout before keys (unpatched): replaced by the link.
  [ -L "$link" ] || [ ! -e "$link" ] || rm -rf "$link"
  ln -sfn "$key" "$link.tmp.$$" && mv -Tf "$link.tmp.$$" "$link"
  [ -z "$cuda_root" ] || echo "$cuda_root" > "$prefix/tilekit-cuda-root"
}

if [ "${TILEKIT_NO_APT:-0}" = 1 ] || ! command -v apt-get >/dev/null 2>&1; then
  say "TILEKIT_NO_APT=1 or no apt-get: installing no packages (what the build needs must be there)"
  apt_install() { :; }
  ensure_apt_sources() { :; }
fi
if [ "$backend" = fuzz ]; then  # fuzz/: parsers only, built with clang; Kokkos not needed
  apt_install clang libclang-rt-14-dev cmake ninja-build libfmt-dev nlohmann-json3-dev
  exit 0
fi
ensure_apt_sources
apt_install build-essential cmake ninja-build ccache dpkg-dev git patch \
  libbenchmark-dev libgtest-dev libgmock-dev libopenblas-dev libcli11-dev nlohmann-json3-dev libfmt-dev \
  python3-matplotlib
# The MPI build (TILEKIT_MPI=1: ./tk --mpi, the *-mpi presets): Debian's OpenMPI.
[ "${TILEKIT_MPI:-0}" = 1 ] && apt_install libopenmpi-dev openmpi-bin
# The Python module (TILEKIT_PYTHON=1: ./tk --python): pybind11, the DLPack header, NumPy, pytest.
[ "${TILEKIT_PYTHON:-0}" = 1 ] && apt_install python3-dev python3-numpy python3-pytest pybind11-dev libdlpack-dev
case "$backend" in
  cuda11) apt_install nvidia-cuda-toolkit g++-11 ;;
  hip)  apt_install hipcc libamdhip64-dev rocm-device-libs ;;
  openmp-aarch64) apt_install g++-aarch64-linux-gnu qemu-user ;;
esac

if [ -n "${Kokkos_ROOT:-}" ]; then
  say "Kokkos_ROOT is set: using the Kokkos at $Kokkos_ROOT (nothing built)"
  echo "$Kokkos_ROOT"; exit 0
fi
if [ -f "$prefix/.complete" ]; then
  say "using cached Kokkos $KOKKOS_VERSION ($backend$pic) at $prefix"
  set_link
  echo "$prefix"; exit 0
fi

# --- Kokkos sources from Debian's trilinos source package --------------------------------------
if [ -n "${TILEKIT_KOKKOS_SRC:-}" ]; then
  [ -d "$src/kokkos" ] && [ -d "$src/kokkos-kernels" ] ||
    { echo "deps.sh: TILEKIT_KOKKOS_SRC=$src has no kokkos/ and kokkos-kernels/ folders" >&2; exit 2; }
elif [ ! -f "$src/.complete" ]; then
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
jobs=${TILEKIT_JOBS:-$(nproc)}
bdir="$cache/build/$key"
rm -rf "$bdir" "$prefix"
mkdir -p "$bdir"
# The patched copy: the pristine source stays as extracted, so the patch always applies cleanly.
cp -a "$src/kokkos" "$bdir/kokkos-src"
patch -s -p1 -d "$bdir/kokkos-src" < "$patch_file" ||
  { echo "deps.sh: $patch_file does not apply to $src/kokkos" >&2; exit 1; }

common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$prefix")
command -v ccache >/dev/null 2>&1 && common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
[ -z "$pic" ] || common+=(-DCMAKE_POSITION_INDEPENDENT_CODE=ON)
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
  cuda|cuda11)
    # Kokkos 3.4 knows no Hopper arch: sm_80 through Kokkos' own flag, and Hopper machine code
    # appended through NVCC_APPEND_FLAGS (nvcc_wrapper refuses two arch flags). CUDA 12+ builds
    # sm_90a (wgmma, setmaxnreg); Debian's CUDA 11.8 knows only sm_90 and needs g++-11.
    if [ "$backend" = cuda ]; then
      export CUDA_ROOT="$cuda_root" NVCC_APPEND_FLAGS="-gencode arch=compute_90a,code=sm_90a"
    else
      export PATH=/usr/bin:$PATH NVCC_WRAPPER_DEFAULT_COMPILER=g++-11
      export NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=sm_90"
    fi
    compiler=(-DCMAKE_CXX_COMPILER="$bdir/kokkos-src/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_80)
    kokkos_opts+=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON)
    kk_opts+=(-DKokkosKernels_ENABLE_TPL_CUBLAS=OFF -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF) ;;
  hip)
    compiler=(-DCMAKE_CXX_COMPILER=hipcc)
    kokkos_opts+=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_VEGA908=ON) ;;
  openmp-aarch64)
    # Generic ARMv8-A (-march=armv8-a): runs on every aarch64 CPU, and under qemu-aarch64.
    compiler=(-DCMAKE_TOOLCHAIN_FILE="$aarch64_toolchain")
    kokkos_opts+=(-DKokkos_ENABLE_OPENMP=ON -DKokkos_ARCH_ARMV80=ON) ;;
esac

t0=$SECONDS
say "building Kokkos $KOKKOS_VERSION ($backend$pic, $jobs jobs); log: $log/kokkos-$backend$pic.log"
{ cmake -S "$bdir/kokkos-src" -B "$bdir/kokkos" "${common[@]}" "${compiler[@]}" "${kokkos_opts[@]}" &&
  cmake --build "$bdir/kokkos" -j "$jobs" && cmake --install "$bdir/kokkos"; } >"$log/kokkos-$backend$pic.log" 2>&1 \
  || { tail -30 "$log/kokkos-$backend$pic.log" >&2; say "Kokkos build failed ($backend)"; exit 1; }
# Kokkos Kernels without pre-instantiation: gemm is instantiated in tilekit's own sources.
kk_compiler=("${compiler[@]}")
case "$backend" in cuda|cuda11) kk_compiler=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_80) ;; esac
say "building Kokkos Kernels $KOKKOS_VERSION ($backend$pic); log: $log/kokkoskernels-$backend$pic.log"
{ cmake -S "$src/kokkos-kernels" -B "$bdir/kk" "${common[@]}" "${kk_compiler[@]}" "${kk_opts[@]}" \
    -DKokkos_ROOT="$prefix" &&
  cmake --build "$bdir/kk" -j "$jobs" && cmake --install "$bdir/kk"; } >"$log/kokkoskernels-$backend$pic.log" 2>&1 \
  || { tail -30 "$log/kokkoskernels-$backend$pic.log" >&2; say "Kokkos Kernels build failed ($backend)"; exit 1; }
if [ "$backend" = openmp-aarch64 ]; then
  # GoogleTest for the target, from the source Debian's libgtest-dev ships.
  say "building GoogleTest for aarch64 from /usr/src/googletest; log: $log/googletest-$backend.log"
  { cmake -S /usr/src/googletest -B "$bdir/gtest" "${common[@]}" "${compiler[@]}" -DBUILD_GMOCK=OFF &&
    cmake --build "$bdir/gtest" -j "$jobs" && cmake --install "$bdir/gtest"; } >"$log/googletest-$backend.log" 2>&1 \
    || { tail -30 "$log/googletest-$backend.log" >&2; say "GoogleTest build failed ($backend)"; exit 1; }
fi
rm -rf "$bdir"
touch "$prefix/.complete"
set_link
say "installed Kokkos + Kokkos Kernels $KOKKOS_VERSION ($backend$pic) at $prefix in $((SECONDS - t0)) s"
echo "$prefix"
