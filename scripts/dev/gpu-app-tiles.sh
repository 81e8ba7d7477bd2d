#!/usr/bin/env bash
# Runs ON THE GPU MACHINE after scripts/dev/gpu-build.sh: times tiles with the app, one line per
# (type, tile, size), column-major operands as in the benchmarks, for the perf notes.
#
#   scripts/dev/gpu-app-tiles.sh "<dtype>[:tf32] <config> ..." "<sizes>"   [--check]
#   e.g. scripts/dev/gpu-app-tiles.sh "f64 bm64_bn64_bk16_tm32_tn32_tc_g8_t4_v32 f32:tf32 auto" "4096 8192"
#
# Prints: dtype math config size TFLOP/s (median of --reps, default 10) [check rel error / pass].
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/tmp/tilekit-sysdeps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
app=${TILEKIT_APP:-build/cuda/tilekit}
reps=${TILEKIT_REPS:-10}
read -r -a pairs <<<"$1"
read -r -a sizes <<<"$2"
check=${3:-}
for ((i = 0; i < ${#pairs[@]}; i += 2)); do
  dt=${pairs[i]%%:*} math=ieee cfg=${pairs[i + 1]}
  [[ ${pairs[i]} == *:tf32 ]] && math=tf32
  for n in "${sizes[@]}"; do
    out=$("$app" matmul "$n" "$n" "$n" --dtype "$dt" --math "$math" --layout-a col --layout-b col --layout-c col \
      --config "$cfg" --reps "$reps" --warmup 2 --json $check 2>/tmp/gpu-app-tiles.err)
    if tf=$(python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); c=j.get("check"); print("%.2f %s %s" % (j["tflops"], j["config"], "" if not c else "err=%.2e %s" % (c["rel_error"], "PASS" if c["pass"] else "FAIL")))' <<<"$out" 2>/dev/null); then
      echo "$dt $math $n $tf"
    else
      echo "$dt $math $n $cfg ERROR: $(tail -2 /tmp/gpu-app-tiles.err | tr '\n' ' ')"
    fi
  done
done
