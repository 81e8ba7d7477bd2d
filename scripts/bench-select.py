#!/usr/bin/env python3
"""Copies the benchmarks of some shapes from one run's Google Benchmark JSON into another file, so a
results folder can hold rows of two runs without one run's rows replacing the other's (each ratio
still comes from one run). The copy records where it came from in its context.

usage: scripts/bench-select.py IN.json OUT.json REGEX   (rows whose shape, the 4th name part, match)
"""
import json
import re
import sys

if len(sys.argv) != 4:
    sys.exit(__doc__)
src, dst, pattern = sys.argv[1:]
run = json.load(open(src))
keep = re.compile(pattern)
run["benchmarks"] = [b for b in run["benchmarks"]
                     if len(b["name"].split("/")) > 3 and keep.fullmatch(b["name"].split("/")[3])]
run.setdefault("context", {})["selected_from"] = f"{src} (shapes matching {pattern})"
with open(dst + ".tmp", "w") as f:
    json.dump(run, f, indent=1)
import os
os.replace(dst + ".tmp", dst)
print(f"{dst}: {len(run['benchmarks'])} benchmarks")
