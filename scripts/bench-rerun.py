#!/usr/bin/env python3
"""Re-timing of benchmarks disturbed by other processes on shared cores (used by bench-cpu.sh).

    bench-rerun.py filter FILE.json [PCT]   prints a --benchmark_filter regex matching the benchmarks
                                            of FILE timed while other processes used > PCT % (default
                                            10) of the CPUs; prints nothing when there are none
    bench-rerun.py merge FILE.json NEW.json replaces FILE's entries by NEW's of the same name and
                                            records the re-timing in FILE's context ("reruns")
"""
import json
import re
import sys


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
    elif cmd == "merge":
        new = json.load(open(sys.argv[3]))
        fresh = {base(b["name"]): b for b in new["benchmarks"]}
        data["benchmarks"] = [fresh.get(base(b["name"]), b) for b in data["benchmarks"]]
        ctx = data["context"]
        note = f"{len(fresh)} re-timed at {new['context'].get('date', '?')} (load_avg {new['context'].get('load_avg')})"
        ctx["reruns"] = (ctx["reruns"] + "; " if "reruns" in ctx else "") + note
        json.dump(data, open(path, "w"), indent=2)
        print(f"bench-rerun: {note}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
