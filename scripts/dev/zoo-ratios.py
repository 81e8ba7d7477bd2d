#!/usr/bin/env python3
"""Ratios of tilekit's series to cuBLAS per type and storage order, from bench-gpu.sh's JSON files.

usage: zoo-ratios.py FOLDER [SERIES ...]   (default series: tilekit:auto tilekit:default)
       zoo-ratios.py --menu FOLDER          (auto against the best tilekit series, shape by shape)
Prints, per layout and type, the geometric mean and minimum of series / cublas (CUDA-event rates,
medians) over the shapes both ran, and the worst shapes; with --menu, how many shapes `auto` is
within 5% of the fastest of the tilekit series (the menu's tiles run one by one)."""
import glob, json, math, os, re, sys

menu = sys.argv[1] == "--menu"
args = sys.argv[2:] if menu else sys.argv[1:]
folder = args[0]
wanted = args[1:] or ["tilekit:auto", "tilekit:default"]


def rates(path):
    out = {}
    for b in json.load(open(path)).get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        m = re.match(r"matmul/([^/]+)/([^/]+)/([0-9x]+)/", b["name"])
        if m:
            out[(m.group(1), m.group(2), m.group(3))] = b.get("TFLOPS_events") or b.get("TFLOPS")
    return out


if menu:
    for tk in sorted(glob.glob(os.path.join(folder, "matmul_cuda_tilekit*.json"))):
        t = rates(tk)
        by = {}
        for (dt, s, shape), v in t.items():
            if s.startswith("tilekit:") and "+" not in s and v:
                by.setdefault((dt, shape), {})[s] = v
        for dt in sorted({k[0] for k in by}):
            rows = [(shape, d) for (d0, shape), d in by.items() if d0 == dt and "tilekit:auto" in d]
            within, worst = 0, []
            for shape, d in rows:
                best = max(d.values())
                r = d["tilekit:auto"] / best
                within += r >= 0.95
                worst.append((r, shape, max(d, key=d.get)))
            worst.sort()
            w = ", ".join(f"{s} {r:.2f} (best {b})" for r, s, b in worst[:4])
            print(f"menu {dt:5} auto within 5% of the best tile at {within} of {len(rows)} shapes; worst: {w}")
    sys.exit(0)

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
