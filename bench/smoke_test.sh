#!/usr/bin/env bash
# CTest smoke test of a benchmark binary and the report generator, on a host backend:
#   bench/smoke_test.sh <tilekit_bench_matmul> <source dir>
# Tiny shapes (one square, one odd non-square), one warm-up, 1-2 timed runs: every series must run,
# pass its result check (exit status 0, no error in the JSON) and come out in report.py's tables.
set -euo pipefail
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
OMP_PROC_BIND=false "$bin" --tk_shapes=64,65x67x71 --tk_dtypes=f32,f64,f16 --tk_warmup=1 --tk_min_reps=1 \
  --tk_max_reps=2 --tk_rep_work=0 --benchmark_out="$tmp/m.json" --benchmark_out_format=json >"$tmp/log" 2>&1 \
  || { cat "$tmp/log"; echo "smoke: the benchmark binary failed"; exit 1; }
python3 - "$tmp/m.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [b["name"] + ": " + b.get("error_message", "") for b in d["benchmarks"] if b.get("error_occurred")]
assert not bad, "benchmarks with errors: " + "; ".join(bad)
names = {b["name"].split("/")[2] for b in d["benchmarks"]}
for s in ("tilekit:default", "tilekit:default+leaky_relu", "kokkos_kernels"):
    assert s in names, f"series {s} missing (have {sorted(names)})"
for key in ("git_revision", "device", "tilekit_backend", "matmul_config_default_f32", "command_line"):
    assert key in d["context"], f"context key {key} missing"
assert all(b["TFLOPS"] > 0 for b in d["benchmarks"])
print(f"smoke: {len(d['benchmarks'])} benchmarks, series {sorted(names)}")
PY
python3 "$src/scripts/report.py" --stdout --section smoke --title smoke --command smoke "$tmp/m.json" >"$tmp/report"
grep -q "^| 65×67×71 |" "$tmp/report" || { cat "$tmp/report"; echo "smoke: report lacks the 65x67x71 row"; exit 1; }
grep -q "default / KK" "$tmp/report" || { cat "$tmp/report"; echo "smoke: report lacks the ratio column"; exit 1; }
echo "smoke: report OK"
