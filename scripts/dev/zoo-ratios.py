#!/usr/bin/env python3
"""Ratios of tilekit's series to cuBLAS per type and storage order, from bench-gpu.sh's JSON files.

usage: zoo-ratios.py FOLDER [SERIES ...]   (default series: tilekit:auto tilekit:default)
Prints, per layout and type, the geometric mean and minimum of series / cublas (CUDA-event rates,
medians) over the shapes both ran, and the worst shapes."""
import glob, json, math, os, re, sys

folder = sys.argv[1]
wanted = sys.argv[2:] or ["tilekit:auto", "tilekit:default"]


def rates(path):
    out = {}
    for b in json.load(open(path)).get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        m = re.match(r"matmul/([^/]+)/([^/]+)/([0-9x]+)/", b["name"])
        if m:
            out[(m.group(1), m.group(2), m.group(3))] = b.get("TFLOPS_events") or b.get("TFLOPS")
    return out


for tk in sorted(glob.glob(os.path.join(folder, "matmul_cuda_tilekit*.json"))):
    suffix = tk[len(os.path.join(folder, "matmul_cuda_tilekit")):-len(".json")]
    layout = suffix.lstrip("_") or "col"
    cb = os.path.join(folder, f"matmul_cuda_cublas{suffix}.json")
    if not os.path.exists(cb):
        continue
    t, c = rates(tk), rates(cb)
    for series in wanted:
        by_type = {}
        for (dt, s, shape), v in t.items():
            ref = c.get((dt, "cublas", shape))
            if s == series and ref and v:
                by_type.setdefault(dt, []).append((v / ref, shape, v, ref))
        for dt, rs in sorted(by_type.items()):
            g = math.exp(sum(math.log(r[0]) for r in rs) / len(rs))
            worst = sorted(rs)[:3]
            w = ", ".join(f"{s} {r:.2f} ({v:.0f}/{ref:.0f})" for r, s, v, ref in worst)
            print(f"{layout:6} {dt:5} {series:16} n={len(rs):2} geomean {g:.3f} min {worst[0][0]:.3f}  worst: {w}")
