#!/usr/bin/env python3
"""Re-timing of benchmarks disturbed by other processes on shared cores (used by bench-cpu.sh).

    bench-rerun.py filter FILE.json [PCT]   prints a --benchmark_filter regex matching the benchmarks
                                            of FILE timed while other processes used > PCT % (default
                                            10) of the CPUs; prints nothing when there are none
    bench-rerun.py best FILE.json NEW.json  keeps, for each benchmark of FILE also in NEW, the entry
                                            with the higher rate (interference on shared cores only
                                            slows a run down; GPU files: the CUDA-event rate, which
                                            the reports read), and records it in FILE's context
                                            ("reruns"); FILE is replaced atomically
"""
import json
import os
import re
import sys
import tempfile


def base(name):
    return "/".join(name.split("/")[:4])


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    data = json.load(open(path))
    if cmd == "filter":
        pct = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
        names = [base(b["name"]) for b in data["benchmarks"]
                 if not b.get("error_occurred") and b.get("other_cpu_pct", 0) > pct]
        if names:
            print("^(" + "|".join(re.escape(n) for n in names) + ")/")
    elif cmd == "best":
        new = json.load(open(sys.argv[3]))
        fresh = {base(b["name"]): b for b in new["benchmarks"]}

        def rate(b):
            if b.get("error_occurred"):
                return -1.0
            return b.get("TFLOPS_events", b.get("TFLOPS", b.get("GBps", -1.0)))

        kept = 0
        out = []
        for b in data["benchmarks"]:
            n = fresh.get(base(b["name"]))
            if n is not None and rate(n) > rate(b):
                out.append(n)
                kept += 1
            else:
                out.append(b)
        data["benchmarks"] = out
        ctx = data["context"]
        note = (f"{len(fresh)} re-timed at {new['context'].get('date', '?')}, {kept} of them faster and kept "
                f"(load_avg {new['context'].get('load_avg')})")
        ctx["reruns"] = (ctx["reruns"] + "; " if "reruns" in ctx else "") + note
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        print(f"bench-rerun: {note}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
