#!/usr/bin/env bash
# Runs ON THE GPU MACHINE (nvcc 13, 16 cores, no apt, nothing to fetch), from the repository root,
# with .carry/gpu-build made here by scripts/dev/gpu-pack.sh: builds Kokkos + Kokkos Kernels 3.4.01
# (patched, CUDA 13, sm_80 + sm_90a) and the cuda preset, then runs the tests when asked.
#
#   scripts/dev/gpu-build.sh [build|test|sanitize] [--mpi|--python|--python-full]   (default build; test = ./tk test --preset cuda;
#                                                       sanitize = test, then scripts/dev/gpu-sanitize.sh
#                                                       in the same call, logs in $OUT/sanitize)
#
# --python: the Python module (cuda-python preset, build/cuda-python; Kokkos built position-independent,
# scripts/deps.sh cuda-pic) for $PYTHON (default python3, which needs its headers: Python.h), with
# pybind11 from that Python's pip package when it has one, else Debian's carried in .carry/gpu-build/debs;
# test runs the pytest suite (python/tests) through ctest. scripts/dev/python-gpu-test.sh wraps it.
# --python-full: the same build with the app, tests and benchmarks in it (build/cuda-python), one build
# for all of them; test runs its whole ctest suite (tilekit_tests, cli_bad_input, pytest).
#
# --mpi: the cuda-mpi preset (build/cuda-mpi), against the OpenMPI carried in .carry/gpu-build/mpi-debs,
# unpacked into /tmp/tilekit-mpi and used relocated (OPAL_PREFIX). To run mpirun afterwards in the
# same shell, `source scripts/dev/gpu-mpi-env.sh` (gpu-mpi-sweep.sh does).
# Prints how long each part took. Everything lands under /tmp (TILEKIT_CACHE) and build/cuda[-mpi].
set -euo pipefail
cd "$(dirname "$0")/../.."
what=build
mpi=()
pic=""
full=0
for a in "$@"; do
  case $a in
    --mpi) mpi=(--mpi) ;;
    --python) mpi=(--python); pic=-pic ;;
    --python-full) mpi=(--python); pic=-pic; full=1 ;;
    build|test|sanitize) what=$a ;;
    *) echo "gpu-build: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
carry=.carry/gpu-build
[ -f "$carry/kokkos-src.tar.xz" ] || { echo "gpu-build: no $carry (run scripts/dev/gpu-pack.sh on the build machine and carry it)" >&2; exit 1; }
t0=$SECONDS
# CMake 4 there refuses packages that still declare policies older than 3.5.
export CMAKE_POLICY_VERSION_MINIMUM=3.5
export TILEKIT_CACHE=${TILEKIT_CACHE:-/tmp/tilekit-cache} TILEKIT_NO_APT=1 TILEKIT_JOBS=${TILEKIT_JOBS:-$(nproc)}
sys=/tmp/tilekit-sysdeps
mkdir -p "$TILEKIT_CACHE/src-carried" "$sys"
tar xJf "$carry/kokkos-src.tar.xz" -C "$TILEKIT_CACHE/src-carried"
for d in "$carry"/debs/*.deb; do dpkg -x "$d" "$sys"; done
export TILEKIT_KOKKOS_SRC="$TILEKIT_CACHE/src-carried"
export CMAKE_PREFIX_PATH="$sys/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export LD_LIBRARY_PATH="$sys/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -n "$pic" ]; then
  py=${PYTHON:-python3}
  "$py" -c "import sysconfig, os, sys; h = os.path.join(sysconfig.get_paths()['include'], 'Python.h'); \
print('== python', sys.version.split()[0], sys.executable, '(Python.h: %s)' % ('found' if os.path.exists(h) else 'MISSING at ' + h))"
  # pybind11 of this Python (newer Pythons need newer pybind11), else Debian's 2.10 carried in debs/.
  if pyb=$("$py" -c "import pybind11, os; print(os.path.dirname(pybind11.__file__))" 2>/dev/null); then
    export pybind11_ROOT=$pyb
    echo "== pybind11 from $pyb"
  else
    echo "== pybind11 from the carried Debian package (no pybind11 in $py)"
  fi
  export PYTHON=$(command -v "$py")
fi
if [ "${mpi[*]:-}" = --mpi ]; then
  [ -d "$carry/mpi-debs" ] || { echo "gpu-build: no $carry/mpi-debs (re-run scripts/dev/gpu-pack.sh)" >&2; exit 1; }
  source scripts/dev/gpu-mpi-env.sh
fi
echo "== unpacked in $((SECONDS - t0)) s"
scripts/deps.sh cuda$pic
echo "== Kokkos + Kokkos Kernels built in $((SECONDS - t0)) s"
t1=$SECONDS
./tk build --preset cuda "${mpi[@]}" 2>&1 | { grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)' || true; }
if [ "$full" = 1 ]; then
  # The app, tests and benchmarks in the same position-independent build as the module, so that one
  # build (about 6 minutes there) serves the whole test suite, the benchmarks and pytest.
  export PATH=/usr/local/cuda/bin:$PATH NVCC_APPEND_FLAGS="-gencode arch=compute_90a,code=sm_90a"
  cmake build/cuda-python -DTILEKIT_BUILD_TESTS=ON -DTILEKIT_BUILD_BENCH=ON >/dev/null
  cmake --build build/cuda-python -j "$TILEKIT_JOBS" 2>&1 | { grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)' || true; }
fi
echo "== cuda${mpi[*]/#--/-} preset built in $((SECONDS - t1)) s with $TILEKIT_JOBS jobs (total $((SECONDS - t0)) s)"
if [ "$what" = test ] && [ "$full" = 1 ]; then
  t2=$SECONDS
  ctest --test-dir build/cuda-python --output-on-failure
  echo "== tests ran in $((SECONDS - t2)) s"
elif [ "$what" = test ] || [ "$what" = sanitize ]; then
  t2=$SECONDS
  ./tk test --preset cuda "${mpi[@]}"
  echo "== tests ran in $((SECONDS - t2)) s"
fi
if [ "$what" = sanitize ]; then
  t3=$SECONDS
  TILEKIT_BIN=build/cuda scripts/dev/gpu-sanitize.sh "${OUT:-build}/sanitize"
  echo "== compute-sanitizer ran in $((SECONDS - t3)) s"
fi
