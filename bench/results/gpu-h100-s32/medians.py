#!/usr/bin/env python3
"""Medians over the rounds of one call's series at 9728x8192x65536 (one series per process; file
names <variant>-<dtype>-<round>.json, cuBLAS's file holding cublas and cublas+leaky_relu), and per
round the ratio of each variant to cuBLAS of the same round: tuned / cublas, and fused leaky_relu /
(cublas + a separate pass). Usage: medians.py <call>/series ..."""
import collections
import glob
import json
import os
import statistics as st
import sys

for d in sys.argv[1:]:
    rows = collections.defaultdict(dict)
    for f in glob.glob(os.path.join(d, "*.json")):
        tag, dt, rnd = os.path.basename(f)[:-5].rsplit("-", 2)
        for b in json.load(open(f)).get("benchmarks", []):
            name = b["name"].split("/iterations")[0]
            if "9728x8192x65536" not in name or "error_message" in b:
                continue
            series = name.split("/")[2]
            key = tag if tag != "cublas" else ("cublas+pass" if "+" in series else "cublas")
            rows[(dt, key)][int(rnd)] = b.get("TFLOPS_events", b.get("TFLOPS"))
    print(f"== {d}")
    for dt in ("bf16", "f16"):
        cb, cp = rows[(dt, "cublas")], rows[(dt, "cublas+pass")]
        if not cb:
            continue
        print(f"{dt}: {len(cb)} rounds; cuBLAS median {st.median(cb.values()):.1f}, cuBLAS + pass {st.median(cp.values()):.1f} TFLOP/s")
        for (d2, k), v in sorted(rows.items()):
            if d2 != dt or k.startswith("cublas"):
                continue
            base = cp if "leaky" in k else cb
            r = [v[i] / base[i] for i in v if i in base]
            print(f"  {k:10s} median {st.median(v.values()):6.1f}  / {'cuBLAS + pass' if 'leaky' in k else 'cuBLAS':13s}"
                  f" median {st.median(r):.3f} (min {min(r):.3f}, max {max(r):.3f}, above 1 in {sum(x > 1 for x in r)} of {len(r)})")
