#!/usr/bin/env bash
# Runs ON THE GPU MACHINE: the same revision's matmul benchmark built with two toolchains, side by
# side in one call, alternating (A B A B) so that clock or thermal drift hits both alike.
#
#   scripts/dev/bench-toolchains.sh DIR_A LABEL_A DIR_B LABEL_B
#       DIR_*: folders holding tilekit_bench_matmul (and any libraries it needs beside it)
#
# Environment: TILEKIT_BENCH_SHAPES (default 4096), TILEKIT_BENCH_DTYPES (default f32,f16),
# ROUNDS (default 2). Writes $OUT/toolchains_<label>_<round>.json and prints, per benchmark, the
# best round of each toolchain and their ratio (B / A).
set -uo pipefail
[ $# -eq 4 ] || { sed -n '2,10p' "$0"; exit 2; }
a=$1 la=$2 b=$3 lb=$4
out=${OUT:-/tmp/tilekit-toolchains}
mkdir -p "$out"
shapes=${TILEKIT_BENCH_SHAPES:-4096} dtypes=${TILEKIT_BENCH_DTYPES:-f32,f16} rounds=${ROUNDS:-2}
unset TILEKIT_BENCH_SHAPES TILEKIT_BENCH_DTYPES
for r in $(seq 1 "$rounds"); do
  for pair in "$a:$la" "$b:$lb"; do
    dir=${pair%%:*} label=${pair##*:}
    LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$dir/tilekit_bench_matmul" \
      --tk_shapes="$shapes" --tk_dtypes="$dtypes" --tk_warmup=3 --tk_min_reps=20 --tk_max_reps=50 \
      --tk_note="toolchain $label, round $r" --benchmark_filter='/(tilekit:default|tilekit:auto|kokkos_kernels)/' \
      --benchmark_out="$out/toolchains_${label}_$r.json" --benchmark_out_format=json > "$out/toolchains_${label}_$r.log" 2>&1 \
      || echo "bench-toolchains: $label round $r exited $?"
  done
done
python3 - "$out" "$la" "$lb" <<'PY'
import glob, json, sys
out, la, lb = sys.argv[1:]
def best(label):
    r = {}
    for f in glob.glob(f"{out}/toolchains_{label}_*.json"):
        for b in json.load(open(f)).get("benchmarks", []):
            if b.get("error_occurred"): continue
            v = b.get("TFLOPS_events") or b.get("TFLOPS")
            if v: r[b["name"]] = max(r.get(b["name"], 0), v)
    return r
A, B = best(la), best(lb)
print(f"| benchmark | {la} TFLOP/s | {lb} TFLOP/s | {lb} / {la} |")
print("| --- | --- | --- | --- |")
for n in sorted(set(A) & set(B)):
    print(f"| `{n}` | {A[n]:.2f} | {B[n]:.2f} | {B[n] / A[n]:.2f} |")
PY
