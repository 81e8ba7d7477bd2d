#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root: NVIDIA compute-sanitizer's four tools over the
# CUDA test binary, one log per tool, and a summary. Exits non-zero if any tool reports an error
# (or the tests fail under it).
#
#   scripts/dev/gpu-sanitize.sh [LOGDIR] [TEST_BINARY]
#
# LOGDIR: where the logs go (default $OUT when set, else build/gpu-sanitize); TEST_BINARY: default
# $TILEKIT_BIN/tilekit_tests, TILEKIT_BIN defaulting to build/cuda (scripts/dev/gpu-build.sh) or else
# .carry/cuda, as the other GPU scripts. Environment:
#   TILEKIT_SANITIZE_FILTER  gtest filter (default: the matmul and elementwise kernel tests; '*' = all)
#   TILEKIT_SANITIZE_TOOLS   default "memcheck racecheck synccheck initcheck"
#   TILEKIT_SANITIZE_EXCLUDE kernels racecheck skips, by name substring (default ParallelReduce:
#                            Kokkos' own reductions, the tests' relative_error oracle, whose warp-
#                            level shared-memory reduction racecheck reports as tens of thousands of
#                            hazard warnings; '' checks every kernel)
#   COMPUTE_SANITIZER        the program (default: compute-sanitizer on PATH, else /usr/local/cuda/bin)
set -uo pipefail
cd "$(dirname "$0")/../.."
logdir=${1:-${OUT:-build/gpu-sanitize}}
bin=${TILEKIT_BIN:-$( [ -x build/cuda/tilekit ] && echo build/cuda || echo .carry/cuda )}
tests=${2:-$bin/tilekit_tests}
filter=${TILEKIT_SANITIZE_FILTER:-'MatmulTyped*:Matmul*:Gemm*:ElementwiseTyped*:Elementwise*:Apply*:TeamScratch*'}
tools=${TILEKIT_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
exclude=${TILEKIT_SANITIZE_EXCLUDE-ParallelReduce}
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[ -x "$cs" ] || { echo "gpu-sanitize: no compute-sanitizer (looked on PATH and /usr/local/cuda/bin; set COMPUTE_SANITIZER)" >&2; exit 2; }
[ -x "$tests" ] || { echo "gpu-sanitize: no test binary $tests (build the cuda preset: scripts/dev/gpu-build.sh)" >&2; exit 2; }
mkdir -p "$logdir"
# libcudart shipped beside a carried binary (scripts/dev/bench-gpu-prepare.sh)
export LD_LIBRARY_PATH="$(dirname "$tests")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
summary=()
for tool in $tools; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  [ "$tool" = racecheck ] && [ -n "$exclude" ] && extra+=(--kernel-name-exclude "kns=$exclude")
  t0=$SECONDS
  "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 100 \
    "$tests" --gtest_filter="$filter" --gtest_brief=1 2>&1 | tee "$logdir/$tool.log"
  rc=${PIPESTATUS[0]}
  errors=$(sed -n 's/^========= ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$logdir/$tool.log" | tail -1)
  hazards=$(sed -n 's/^========= RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' "$logdir/$tool.log" | tail -1)
  # racecheck prints "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)" instead
  [ -z "$errors" ] && errors=$(sed -n 's/^========= RACECHECK SUMMARY: .*(\([0-9]*\) error.*/\1/p' "$logdir/$tool.log" | tail -1)
  line="$tool: exit $rc, ${errors:-?} errors${hazards:+, $hazards hazards}, $((SECONDS - t0)) s, log $logdir/$tool.log"
  summary+=("$line")
  # racecheck warnings (hazards that are not errors) are listed in the log, not a failure
  if [ "$rc" -ne 0 ] || [ "${errors:-1}" != 0 ]; then status=1; fi
done
printf '%s\n' "== compute-sanitizer over $tests (filter $filter; racecheck skips kernels named *${exclude:-(none)}*)" \
  "${summary[@]}" | tee "$logdir/summary.txt"
exit $status
