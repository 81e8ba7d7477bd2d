#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/CMakeLists.txt) with clang and runs each for a bounded time.
#
#   fuzz/run.sh [SECONDS]     default 60 s per target
#
# First every file of the seed corpus (fuzz/corpus/<target>/) and of the regressions
# (fuzz/regressions/<target>/: inputs that once crashed, kept so they never do again) is run once;
# then the target fuzzes for SECONDS, starting from a copy of the corpus in build/fuzz/work (the
# repository's corpus is not changed). A crash leaves its input in build/fuzz/crashes/ and fails the
# script: fix the code, then copy the input into fuzz/regressions/<target>/.
# Per target it prints the executions and the time (libFuzzer's final stats).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
case $seconds in ''|*[!0-9]*) echo "fuzz/run.sh: SECONDS must be a whole number (got '$seconds')" >&2; exit 2 ;; esac
scripts/deps.sh fuzz >/dev/null
out=build/fuzz
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S fuzz -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" >/dev/null
cmake --build "$out" ${TILEKIT_JOBS:+-j "$TILEKIT_JOBS"}
targets=(fuzz_sizes fuzz_matmul_config fuzz_elementwise_config fuzz_cache_reader fuzz_kokkos_args fuzz_cache_index)
mkdir -p "$out/crashes"
status=0
for t in "${targets[@]}"; do
  inputs=(fuzz/corpus/$t/*)
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then inputs+=(fuzz/regressions/$t/*); fi
  if ! "$out/$t" "${inputs[@]}" >"$out/$t.replay.log" 2>&1; then
    echo "=== $t: a corpus or regression input fails:"; tail -30 "$out/$t.replay.log"; status=1; continue
  fi
  rm -rf "$out/work/$t" && mkdir -p "$out/work/$t" && cp fuzz/corpus/$t/* "$out/work/$t/"
  if "$out/$t" -max_total_time="$seconds" -print_final_stats=1 -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$out/crashes/$t-" "$out/work/$t" >"$out/$t.log" 2>&1; then
    result=ok
  else
    result=CRASH; status=1
    tail -40 "$out/$t.log"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$out/$t.log" | tail -1)
  echo "=== $t: $result, ${execs:-?} executions in ${secs:-$seconds} s (${#inputs[@]} seed/regression inputs replayed)"
done
exit $status
