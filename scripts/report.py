#!/usr/bin/env python3
"""Prints the tables of a set of benchmark JSON files (quick looks, the GPU run's summary, the smoke
test); BENCHMARKS.md itself is written by scripts/bench-report.py, which uses this file's JSON reading.

    scripts/report.py --stdout --section x --title x --command x [--only-shapes REGEX] FILE.json...

Reads Google Benchmark JSON (tilekit_bench_* with --benchmark_out_format=json) and the cuBLAS
baseline's JSON of the same shape. Names follow bench/harness.hpp:
"<family>/<dtype>/<series>/<shape>[/...]". Uses only the standard library.
"""
import argparse
import json
import os
import re
import sys
from collections import OrderedDict, defaultdict

# What each family measures and what its tilekit series are compared with.
FAMILIES = {
    "matmul": {
        "metric": "TFLOPS",
        "unit": "TFLOP/s",
        "small_unit": ("GFLOP/s", 1e3),  # used when every rate of a section is below 1 TFLOP/s
        "what": "2 M N K / median time per run",
    },
    "elementwise": {
        "metric": "GBps",
        "unit": "GB/s",
        "small_unit": None,
        "what": "bytes read + written / median time per run",
    },
}

# A timing during which other processes took more than this share of the CPUs is marked.
OTHER_LOAD_PCT = 10

# Display names of known series; unknown ones keep their own name.
VENDORS = {"openblas": "OpenBLAS", "cublas": "cuBLAS", "rocblas": "rocBLAS"}
PRETTY = {"kokkos_kernels": "Kokkos Kernels", "copy": "copy", "kokkos_parallel_for": "Kokkos parallel_for"}


def pretty(series):
    base, plus, act = series.partition("+")
    if base.startswith("tilekit:"):
        name = "tilekit " + base[len("tilekit:"):]
        return name + (f" + {act} (fused)" if plus else "")
    name = VENDORS.get(base, PRETTY.get(base, base))
    return name + (f" + {act} (separate pass)" if plus else "")


def load_json(path):
    """Loads benchmark JSON; a file cut off mid-run (killed process) keeps its complete entries."""
    text = open(path).read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        cut = text.rfind("\n    }")
        if cut < 0:
            raise
        repaired = text[: cut + len("\n    }")] + "\n  ]\n}\n"
        data = json.loads(repaired)
        data.setdefault("context", {})["_truncated"] = "yes"
        print(f"report.py: {path} was cut off; using its {len(data.get('benchmarks', []))} complete entries",
              file=sys.stderr)
        return data


class Row:
    def __init__(self, bench, ctx, path):
        parts = bench["name"].split("/")
        self.family, self.dtype, self.series, self.shape = parts[0], parts[1], parts[2], parts[3]
        self.bench = bench
        self.ctx = ctx
        self.path = path
        self.error = bench.get("error_message") if bench.get("error_occurred") else None
        dims = [int(x) for x in self.shape.split("x")]
        self.dims = dims
        self.square = len(set(dims)) == 1

    def rate(self, metric):
        v = self.bench.get(metric)
        return None if self.error or v is None else float(v)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="benchmark JSON files of one machine")
    ap.add_argument("--section", required=True, help="section id, e.g. cpu or gpu-h100")
    ap.add_argument("--title", required=True, help="section heading")
    ap.add_argument("--command", required=True, help="the command that produced the JSON files")
    ap.add_argument("--metric", choices=["auto", "host", "events"], default="auto",
                    help="host: rates from the host clock with a fence/synchronize in the timed region; "
                         "events: from CUDA events; auto: events when every row has them")
    ap.add_argument("--notes", default="", help="Markdown appended under the section's header")
    ap.add_argument("--stdout", action="store_true", help="print the tables to stdout (required)")
    ap.add_argument("--only-shapes", default="",
                    help="with --stdout: a regex; only shapes matching it (e.g. '^(1024|4096|8192)x')")
    return ap.parse_args()


def fmt_rate(v, scale):
    if v is None:
        return "–"
    v *= scale
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}"


def short_date(ctx):
    return ctx.get("date", "unknown date")[:10]


def machine_of(ctx):
    dev = ctx.get("device", "?")
    if ctx.get("tilekit_backend") in ("cuda", "hip") or ctx.get("baseline") == "cublas":
        extra = []
        if ctx.get("compute_units"):
            extra.append(f"{ctx['compute_units']} SMs")
        if ctx.get("cuda_driver"):
            extra.append(f"CUDA driver {ctx['cuda_driver']}")
        return f"{dev} ({', '.join(extra)}), host {ctx.get('host_name', '?')}"
    return f"{dev}, {ctx.get('num_cpus', '?')} CPUs, host {ctx.get('host_name', '?')}"


def series_order(names):
    def key(s):
        base, _, act = s.partition("+")
        if base.startswith("tilekit:"):
            group = 0
        elif base in ("kokkos_kernels", "kokkos_parallel_for"):
            group = 1
        elif base == "copy":
            group = 3
        else:
            group = 2
        return (group, base != "tilekit:default", base, act != "")
    return sorted(names, key=key)



def main():
    args = parse_args()
    rows, contexts = [], []
    for path in args.json:
        data = load_json(path)
        ctx = data.get("context", {})
        contexts.append((path, ctx))
        for b in data.get("benchmarks", []):
            if b.get("run_type", "iteration") != "iteration":
                continue  # aggregates (mean/median/stddev of repetitions)
            if b["name"].count("/") < 3 or b["name"].split("/")[0] not in FAMILIES:
                continue
            rows.append(Row(b, ctx, path))
    if not rows:
        sys.exit("report.py: no benchmarks of a known family in " + " ".join(args.json))

    events_everywhere = all(r.error or r.bench.get(FAMILIES[r.family]["metric"] + "_events") is not None
                            for r in rows)
    use_events = args.metric == "events" or (args.metric == "auto" and events_everywhere)
    first = contexts[0][1]
    date = short_date(first)
    machine = machine_of(next((c for _, c in contexts if c.get("tilekit_backend") and not c.get("baseline")),
                              first))
    if not args.stdout:
        sys.exit("report.py prints tables only (--stdout); BENCHMARKS.md is written by scripts/bench-report.py")

    out = []
    out.append(f"## {args.title}\n")
    out.append(f"- **Command**: `{args.command}` (from the repository root)")
    out.append(f"- **Machine**: {machine}")
    out.append(f"- **Date**: {date}")
    revs = sorted({c.get("git_revision", "unknown") for _, c in contexts})
    out.append(f"- **Revision**: {', '.join(revs)}")
    out.append("- **Processes** (each JSON file is one process; the environment is what it ran under):")
    for path, c in contexts:
        env = ", ".join(f"{k[4:]}={v}" for k, v in sorted(c.items())
                        if k.startswith("env_") and (v != "(unset)" or k in ("env_OMP_PROC_BIND",)))
        series = sorted({r.series for r in rows if r.path == path})
        vendors = {s.partition("+")[0] for s in series}
        who = c.get("baseline") or f"Kokkos {c.get('kokkos_version', '?')} ({c.get('tilekit_backend', '?')})"
        line = f"  - `{path}`: {who}; series {', '.join(series)}"
        if env:
            line += f"; environment {env}"
        if c.get("_truncated"):
            line += "; **the file was cut off (the process was killed); complete entries only**"
        out.append(line)
        out.append(f"    - command line: `{c.get('command_line', c.get('executable', '?'))}`")
        for k in ("openblas_config", "openblas_num_threads", "cublas_version", "cuda_runtime", "cuda_driver",
                  "compiler", "kokkos_kernels_version", "load_avg", "library_build_type", "reruns"):
            if k.startswith("openblas") and "openblas" not in vendors:
                continue  # the library is linked but this process did not time it
            if k == "kokkos_kernels_version" and "kokkos_kernels" not in vendors:
                continue
            if k in c:
                v = c[k]
                if k == "load_avg":
                    v = " / ".join(f"{x:.2f}" for x in v) + " (1/5/15 min, at start)"
                if k == "library_build_type":
                    v = f"{v} (Google Benchmark's own build; timing is manual, around the work only)"
                out.append(f"    - {k}: {v}")
    timing = first.get("timing_policy")
    if timing:
        out.append(f"- **Timing**: {timing}. Rates are "
                   + ("from CUDA events recorded around each iteration's work (host-clock rates, with the "
                      "synchronizing fence inside the timed region, are in the JSON as `TFLOPS`)"
                      if use_events else
                      "from the host clock, each iteration closed by a fence before the clock stops")
                   + ".")
    for key in ("matmul_operands", "matmul_activation", "matmul_kokkos_kernels"):
        if key in first:
            out.append(f"- **{key.split('_', 1)[1].replace('_', ' ').capitalize()}**: {first[key]}")
    if args.notes:
        out.append("")
        out.append(args.notes)
    out.append("")

    by_fam = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by_fam[r.family][r.dtype].append(r)

    for fam, by_dtype in by_fam.items():
        spec = FAMILIES[fam]
        metric = spec["metric"] + ("_events" if use_events else "")
        all_rates = [r.rate(metric) for d in by_dtype.values() for r in d if r.rate(metric) is not None]
        unit, scale = spec["unit"], 1.0
        if spec["small_unit"] and all_rates and max(all_rates) < 1.0:
            unit, scale = spec["small_unit"]
        for dtype in sorted(by_dtype, key=lambda d: ["f32", "f64", "f16", "bf16"].index(d)
                            if d in ("f32", "f64", "f16", "bf16") else 9):
            drows = by_dtype[dtype]
            series = series_order({r.series for r in drows})
            table = OrderedDict()  # shape -> {series: row}
            for r in sorted(drows, key=lambda r: (not r.square, r.dims)):
                if args.stdout and args.only_shapes and not re.search(args.only_shapes, r.shape):
                    continue
                table.setdefault(r.shape, {})[r.series] = r
            out.append(f"### {fam} {dtype}: {unit} ({spec['what']})\n")

            vendor = next((s for s in series if s in VENDORS), None)
            vendor_act = next((s for s in series if s.partition("+")[0] in VENDORS and "+" in s), None)
            kk = "kokkos_kernels" if "kokkos_kernels" in series else None
            tk_bases = [s for s in series if s.startswith("tilekit:") and "+" not in s]
            ratio_cols = []  # (header, numerator series, denominator series)
            if fam == "matmul":
                for t in tk_bases:
                    label = t[len("tilekit:"):]
                    if vendor:
                        ratio_cols.append((f"{label} / {VENDORS[vendor]}", t, vendor))
                    if kk:
                        ratio_cols.append((f"{label} / KK", t, kk))
                    # the activation the vendor's separate pass also runs (leaky_relu), where present
                    fused = next((s for s in series if s == t + "+leaky_relu"),
                                 next((s for s in series if s.startswith(t + "+")), None))
                    if fused and vendor_act:
                        ratio_cols.append((f"{label}+act / {VENDORS[vendor]}+act", fused, vendor_act))
                    if t + "+bias+gelu" in series:  # the cost of the heavier fused epilogue
                        ratio_cols.append((f"{label}+bias+gelu / {label}", t + "+bias+gelu", t))
            else:  # bandwidth families: every tilekit series against the copy and the plain Kokkos loop
                for t in [s for s in series if s.startswith("tilekit:")]:
                    if "copy" in series:
                        ratio_cols.append((f"{t[8:]} / copy", t, "copy"))
                    if "kokkos_parallel_for" in series:
                        ratio_cols.append((f"{t[8:]} / Kokkos", t, "kokkos_parallel_for"))

            head = ["shape"] + [pretty(s) for s in series] + [h for h, _, _ in ratio_cols]
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
            skipped, disturbed = [], []
            for shape, cells in table.items():
                vals = {s: (cells[s].rate(metric) if s in cells else None) for s in series}
                line = [shape.replace("x", "×")]
                for s in series:
                    if s in cells and cells[s].error:
                        line.append("skipped" if cells[s].error.startswith("skipped") else "**failed**")
                        skipped.append(f"{shape} {s}: {cells[s].error}")
                    else:
                        cell = fmt_rate(vals[s], scale)
                        other = cells[s].bench.get("other_cpu_pct") if s in cells else None
                        if other is not None and other > OTHER_LOAD_PCT and vals[s] is not None:
                            cell += "*"
                            disturbed.append(other)
                        line.append(cell)
                line += [fmt_ratio(vals[a], vals[b]) for _, a, b in ratio_cols]
                out.append("| " + " | ".join(line) + " |")
            out.append("")
            if disturbed:
                out.append(f"\\* Other processes used more than {OTHER_LOAD_PCT}% of the CPUs' time while this "
                           f"was timed ({len(disturbed)} cells, up to {max(disturbed):.0f}%; `other_cpu_pct` in "
                           "the JSON): on shared cores such a figure is likely too low.\n")
            if skipped:
                out.append("Not measured:")
                for s in skipped:
                    out.append(f"- {s}")
                out.append("")
            labels = sorted({cells[s].bench.get("label") for cells in table.values() for s in cells
                             if s.startswith("tilekit:") and cells[s].bench.get("label")})
            if labels:
                out.append(f"tilekit config: {', '.join('`' + l + '`' for l in labels)}. "
                           f"Command: `{args.command}`; machine: {machine}; date: {date}.\n")
            else:
                out.append(f"Command: `{args.command}`; machine: {machine}; date: {date}.\n")

    print("\n".join(out))


if __name__ == "__main__":
    main()
