#!/usr/bin/env python3
"""Writes BENCHMARKS.md, its plots (docs/bench/*.png) and README.md's headline table from the
benchmark JSON committed under bench/results/.

    python3 scripts/bench-report.py [--out BENCHMARKS.md] [--plots docs/bench] [--readme README.md]

Every number it writes comes from the JSON files (Google Benchmark JSON written by the tilekit_bench_*
programs and by bench/cublas_baseline.cu); nothing is measured here. The suites it reports, one
results folder (or part of one) each, are listed in SUITES below; a folder's README.md may carry
`Command: ...` lines (or `Command (FILE GLOBS): ...` for some of its files), the command(s) that
produced its JSON, which are quoted in the sections made from those files.

README.md: whatever stands between the lines `<!-- headline-results:begin -->` and
`<!-- headline-results:end -->` is replaced by a small table (tilekit / vendor per machine and type);
without those markers README.md is left alone.

Plots need matplotlib (Debian: python3-matplotlib); without it the tables are still written and the
plots are skipped with a note on stderr. Uses the standard library otherwise, and the JSON reading
of scripts/report.py.
"""
import argparse
import fnmatch
import glob
import math
import os
import re
import subprocess
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import report  # noqa: E402  (scripts/report.py: JSON loading, series names, rate formatting)

# What BENCHMARKS.md reports, in order. id: the section's anchor and plot name; folder: the results
# folder; files: globs inside it (the default: every *.json of the folder); headline: its ratios go
# into README.md's headline table.
SUITES = [
    {"id": "cpu-openmp", "machine": "cpu", "title": "matmul, squares, rectangles and odd sizes (2-core AMD EPYC Zen 5, avx512 path)",
     "folder": "bench/results/cpu-openmp", "files": ["matmul_kokkos.json", "matmul_openblas.json"],
     "headline": True},
    {"id": "cpu-openmp-row", "machine": "cpu", "title": "matmul, squares, rectangles and odd sizes, row-major operands (2-core AMD EPYC Zen 5, avx512 path)",
     "folder": "bench/results/cpu-openmp-row", "files": ["matmul_kokkos.json", "matmul_openblas.json"]},
    {"id": "cpu-openmp-bf16", "machine": "cpu", "title": "matmul bf16 against OpenBLAS's sbgemm",
     "folder": "bench/results/cpu-openmp-bf16", "headline": True},
    {"id": "cpu-openmp-shapes", "machine": "cpu", "title": "matmul shape set (thin and shallow shapes)",
     "folder": "bench/results/cpu-openmp-shapes"},
    {"id": "cpu-openmp-avx2", "machine": "cpu",
     "title": "matmul on the avx2 path, forced (TILEKIT_HOST_ISA=avx2) on the 2-core AMD EPYC Zen 5 with AVX-512, against OpenBLAS's Haswell kernels",
     "folder": "bench/results/cpu-openmp-avx2", "headline": True},
    {"id": "cpu-openmp-avx2-row", "machine": "cpu",
     "title": "matmul on the avx2 path, forced on the 2-core AMD EPYC Zen 5 with AVX-512, against OpenBLAS's Haswell kernels, row-major operands",
     "folder": "bench/results/cpu-openmp-avx2-row"},
    {"id": "cpu-openmp-emr", "machine": "cpu",
     "title": "matmul on a 2-core Intel Xeon Emerald Rapids (AVX-512; family 6 model 207, untuned), avx512 path, against OpenBLAS's SkylakeX kernels",
     "folder": "bench/results/cpu-openmp-emr", "files": ["matmul_kokkos.json", "matmul_openblas.json"]},
    {"id": "cpu-openmp-emr-row", "machine": "cpu",
     "title": "matmul on a 2-core Intel Xeon Emerald Rapids (AVX-512; family 6 model 207, untuned), avx512 path, against OpenBLAS's SkylakeX kernels, row-major operands",
     "folder": "bench/results/cpu-openmp-emr-row", "files": ["matmul_kokkos.json", "matmul_openblas.json"]},
    {"id": "cpu-openmp-elementwise", "machine": "cpu", "title": "elementwise add",
     "folder": "bench/results/cpu-openmp-elementwise"},
    {"id": "gpu-h100", "machine": "gpu", "title": "matmul, headline suite",
     "folder": "bench/results/gpu-h100",
     "files": ["matmul_cuda_cublas.json", "matmul_cuda_tilekit.json", "matmul_cuda_simt_*.json",
               "matmul_cuda_f64_*.json", "matmul_cuda_tc_*.json"],
     "headline": True},
    {"id": "gpu-h100-shapes", "machine": "gpu", "title": "matmul shape set (f32, thin and shallow shapes)",
     "folder": "bench/results/gpu-h100-shapes"},
    {"id": "gpu-zoo-row", "machine": "gpu",
     "title": "matmul GPU shape zoo, row-major operands (as PyTorch stores them); no zoo shape is tuned",
     "folder": "bench/results/gpu-h200-zoo-row", "files": ["matmul_cuda_*.json"]},
    {"id": "gpu-zoo-col", "machine": "gpu",
     "title": "matmul GPU shape zoo, column-major operands (the BLAS convention); no zoo shape is tuned",
     "folder": "bench/results/gpu-h200-zoo-col", "files": ["matmul_cuda_*.json"]},
    {"id": "gpu-zoo-kmajor", "machine": "gpu",
     "title": "matmul GPU shape zoo, i8 with K-major operands (torch._int_mm's layout, cuBLAS int8's fast one)",
     "folder": "bench/results/gpu-h200-zoo-kmajor", "files": ["matmul_cuda_*.json"]},
    {"id": "gpu-h100-elementwise", "machine": "gpu", "title": "elementwise add",
     "folder": "bench/results/gpu-h100", "files": ["elementwise_*.json"]},
]

# The series that stands for tilekit: the first one present (tuned = what `--config auto` picks).
TILEKIT = ["tilekit:auto", "tilekit:tuned", "tilekit:default"]
VENDOR_PREFIXES = ("cublas", "rocblas", "openblas")
KK = "kokkos_kernels"
ACT = "leaky_relu"
DTYPE_ORDER = ["f32", "f64", "f16", "bf16", "tf32", "i8"]
BACKENDS = {"openmp": "OpenMP", "cuda": "CUDA", "hip": "HIP", "serial": "Serial"}
HEADLINE_BEGIN, HEADLINE_END = "<!-- headline-results:begin -->", "<!-- headline-results:end -->"


def note(msg):
    print(f"bench-report.py: {msg}", file=sys.stderr)


def is_vendor(series):
    return "+" not in series and series.startswith(VENDOR_PREFIXES)


def vendor_name(series):
    base = series.partition("+")[0]
    for p, name in report.VENDORS.items():
        if base == p:
            return name
        if base.startswith(p + "_"):
            return f"{name} {base[len(p) + 1:].upper()}"
    return base


def slug(heading):
    """GitHub's anchor for a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def shape_key(shape):
    dims = [int(x) for x in shape.split("x")]
    return (len(set(dims)) != 1, dims)


def pretty_shape(shape):
    return shape.replace("x", "×")


def fmt_bytes(n):
    n = int(n)
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


# ---- loading ----------------------------------------------------------------------------------

class Suite:
    def __init__(self, spec):
        self.spec = spec
        self.id = spec["id"]
        self.folder = spec["folder"]
        paths = []
        for pat in spec.get("files", ["*.json"]):
            paths += sorted(glob.glob(os.path.join(self.folder, pat)))
        self.paths = list(OrderedDict.fromkeys(paths))
        self.files = []  # (path, context, [Row])
        for p in self.paths:
            data = report.load_json(p)
            ctx = data.get("context", {})
            rows = []
            for b in data.get("benchmarks", []):
                if b.get("run_type", "iteration") != "iteration":
                    continue
                if b["name"].count("/") < 3 or b["name"].split("/")[0] not in report.FAMILIES:
                    continue
                rows.append(report.Row(b, ctx, p))
            if rows:
                self.files.append((p, ctx, rows))
        self.rows = [r for _, _, rows in self.files for r in rows]
        self.family = self.rows[0].family if self.rows else None

    def metric(self):
        spec = report.FAMILIES[self.family]
        events = all(r.error or r.bench.get(spec["metric"] + "_events") is not None for r in self.rows)
        return spec["metric"] + ("_events" if events else ""), events

    def rates(self):
        """{dtype: {shape: {series: rate}}}; the fastest value where a benchmark is repeated."""
        metric, _ = self.metric()
        out = {}
        for r in self.rows:
            v = r.rate(metric)
            if v is None:
                continue
            cell = out.setdefault(r.dtype, {}).setdefault(r.shape, {})
            cell[r.series] = max(v, cell.get(r.series, 0.0))
        return out

    def commands(self):
        readme = os.path.join(self.folder, "README.md")
        if not os.path.exists(readme):
            return []
        names = [os.path.basename(p) for p, _, _ in self.files]
        out = []
        for m in re.finditer(r"^Command(?: \(([^)]*)\))?:\s*(.+)$", open(readme).read(), re.M):
            globs = (m.group(1) or "").replace(",", " ").split()
            if not globs or any(fnmatch.fnmatch(n, g) for n in names for g in globs):
                out.append((m.group(1), m.group(2).strip()))
        return out


# ---- the machine and the runs -----------------------------------------------------------------

def machine_heading(suite):
    ctx = suite.files[0][1]
    backend = ctx.get("tilekit_backend", "?")
    dev = ctx.get("device", "?")
    if suite.spec["machine"] == "gpu":
        return f"GPU: {dev}, {BACKENDS.get(backend, backend)} backend"
    return f"CPU: {dev}, {ctx.get('num_cpus', '?')} cores, {BACKENDS.get(backend, backend)} backend"


def short_machine(suite):
    """A few words for the machine: 'H100' for 'NVIDIA H100 80GB HBM3', '2 CPU cores' for a CPU."""
    ctx = suite.files[0][1]
    if suite.spec["machine"] == "gpu":
        words = ctx.get("device", "GPU").split()
        return words[1] if len(words) > 1 and words[0] in ("NVIDIA", "AMD") else " ".join(words[:2])
    return f"{ctx.get('num_cpus', '?')} CPU cores"


def machine_lines(suite):
    """The machine, its libraries and the runs, from the JSON context blocks."""
    ctxs = [c for _, c, _ in suite.files]
    main = next((c for c in ctxs if c.get("tilekit_backend") and not c.get("baseline")), ctxs[0])
    lines = []
    m = [f"host `{main.get('host_name', '?')}`"]
    if suite.spec["machine"] == "gpu":
        m.append(f"{main.get('device', '?')} ({main.get('compute_units', '?')} SMs, {main.get('architecture', '?')})")
        m.append(f"host CPU: {main.get('num_cpus', '?')} cores")
    else:
        m.append(f"{main.get('device', '?')}, {main.get('num_cpus', '?')} cores at {main.get('mhz_per_cpu', '?')} MHz"
                 f" ({main.get('architecture', '?')})")
    caches = main.get("caches") or []
    if caches:
        m.append("caches " + ", ".join(
            f"L{c['level']}{'d' if c['type'] == 'Data' else 'i' if c['type'] == 'Instruction' else ''} "
            f"{fmt_bytes(c['size'])}" + (f" (shared by {c['num_sharing']})" if c.get("num_sharing", 1) > 1 else "")
            for c in caches))
    if suite.spec["machine"] == "gpu" and main.get("last_level_cache_bytes"):
        m.append(f"GPU L2 {fmt_bytes(main['last_level_cache_bytes'])}")
    lines.append("- **Machine**: " + "; ".join(m))
    libs = OrderedDict()
    for c in ctxs:
        if c.get("tilekit_version"):
            libs["tilekit"] = f"tilekit {c['tilekit_version']}"
        if c.get("kokkos_version"):
            libs["kokkos"] = f"Kokkos {c['kokkos_version']} ({c.get('tilekit_backend', '?')})"
        if c.get("kokkos_kernels_version") and any(r.series == KK for r in suite.rows):
            libs["kk"] = f"Kokkos Kernels {c['kokkos_kernels_version']}"
        series = {r.series for _, cc, rows in suite.files if cc is c for r in rows}
        if c.get("openblas_config") and any(s.startswith("openblas") for s in series):
            libs["openblas"] = c["openblas_config"] + f" ({c.get('openblas_num_threads', '?')} threads)"
        if c.get("cublas_version"):
            libs["cublas"] = f"cuBLAS {c['cublas_version']}"
        if c.get("cuda_runtime"):
            libs.setdefault("cuda", set()).add(f"CUDA runtime {c['cuda_runtime']}, driver {c.get('cuda_driver', '?')}")
        if c.get("compiler"):
            libs.setdefault("compiler", set()).add(re.sub(r",\s*", " ", c["compiler"]).replace("GNU1", "GNU 1"))
    flat = [", ".join(sorted(v)) if isinstance(v, set) else v for v in libs.values()]
    lines.append("- **Libraries**: " + "; ".join(flat))
    cmds = suite.commands()
    for files, c in cmds:
        lines.append(f"- **Command**{' (' + files + ')' if files and len(cmds) > 1 else ''}: {c}")
    if not cmds:
        lines.append("- **Command**: not recorded (see the JSON's `command_line`)")
    readme = os.path.join(suite.folder, "README.md")
    lines.append(f"- **Results**: [`{suite.folder}`]({readme if os.path.exists(readme) else suite.folder})")
    lines.append("- **Runs** (file: what it timed, tilekit revision, date):")
    for path, c, rows in suite.files:
        who = c.get("baseline") or "tilekit" + (" + Kokkos Kernels" if any(r.series == KK for r in rows) else "")
        if not c.get("baseline") and any(r.series.startswith("openblas") for r in rows):
            who = "OpenBLAS"
        dtypes = sorted({r.dtype for r in rows}, key=lambda d: DTYPE_ORDER.index(d) if d in DTYPE_ORDER else 9)
        date = c.get("date", "?").replace("T", " ")[:16]
        extra = "; cut off, complete entries only" if c.get("_truncated") else ""
        lines.append(f"  - [`{os.path.basename(path)}`]({path}): {who}, {', '.join(dtypes)}; "
                     f"`{c.get('git_revision', '?')}`, {date} UTC{extra}")
    metric, events = suite.metric()
    timing = re.sub(r"; deadline [^;]*", "", main.get("timing_policy", ""))
    if timing:
        lines.append(f"- **Timing**: {timing}; rates from "
                     + ("CUDA events around each iteration's work." if events else
                        "the host clock, each iteration closed by a fence."))
    return lines


# ---- tables -----------------------------------------------------------------------------------

def ratio_summary(values, shapes):
    """(geomean, min, shape of the min) of the ratios present."""
    pairs = [(v, s) for v, s in zip(values, shapes) if v is not None]
    if not pairs:
        return None
    worst = min(pairs)
    return geomean([v for v, _ in pairs]), worst[0], worst[1]


def matmul_table(dtype, table, scale):
    """Markdown lines and {ratio name: (geomean, min, shape)} for one type of a matmul suite."""
    series = {s for cells in table.values() for s in cells}
    tk = next((s for s in TILEKIT if s in series), None)
    others = [s for s in ("tilekit:default",) if s in series and s != tk]
    tk_act = f"{tk}+{ACT}" if tk and f"{tk}+{ACT}" in series else None
    vendors = sorted(s for s in series if is_vendor(s))
    vendor_acts = sorted(s for s in series if s.partition("+")[0] in vendors and s.endswith("+" + ACT))
    kk = KK if KK in series else None
    cols = [(report.pretty(tk) if tk else "tilekit", tk)] + [(report.pretty(s), s) for s in others]
    if tk_act:
        cols.append((f"{report.pretty(tk)} + {ACT} (fused)", tk_act))
    cols += [(vendor_name(v), v) for v in vendors]
    if vendor_acts:
        cols.append((f"{vendor_name(vendors[0])} + {ACT} (separate pass)", "vendor+act"))
    if kk:
        cols.append(("Kokkos Kernels", kk))
    ratios = []  # (header, key, function(cells) -> ratio)
    label = tk.partition(":")[2] if tk else "tilekit"
    best_vendor = lambda cells: max((cells[v] for v in vendors if v in cells), default=None)  # noqa: E731
    best_vendor_act = lambda cells: max((cells[v] for v in vendor_acts if v in cells), default=None)  # noqa: E731
    vname = "/".join(vendor_name(v) for v in vendors) if len(vendors) < 2 else vendor_name(vendors[0]) + " (fastest)"
    if tk and vendors:
        ratios.append((f"{label} / {vname}", "vendor",
                       lambda c: c[tk] / best_vendor(c) if tk in c and best_vendor(c) else None))
    if tk and kk:
        ratios.append((f"{label} / Kokkos Kernels", "kk", lambda c: c[tk] / c[kk] if tk in c and kk in c else None))
    if tk_act and vendor_acts:
        ratios.append((f"{label} + {ACT} / ({vendor_name(vendors[0])} + pass)", "act",
                       lambda c: c[tk_act] / best_vendor_act(c) if tk_act in c and best_vendor_act(c) else None))
    head = ["shape"] + [h for h, _ in cols] + [h for h, _, _ in ratios]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    shapes = sorted(table, key=shape_key)
    ratio_vals = {k: [] for _, k, _ in ratios}
    for shape in shapes:
        cells = table[shape]
        line = [pretty_shape(shape)]
        for _, s in cols:
            v = best_vendor_act(cells) if s == "vendor+act" else cells.get(s)
            line.append(report.fmt_rate(v, scale))
        for _, k, f in ratios:
            r = f(cells)
            ratio_vals[k].append(r)
            line.append("–" if r is None else f"{r:.2f}")
        out.append("| " + " | ".join(line) + " |")
    summary = {}
    if ratios:
        g_line, m_line = ["**geometric mean**"] + [""] * len(cols), ["**minimum**"] + [""] * len(cols)
        for h, k, _ in ratios:
            s = ratio_summary(ratio_vals[k], shapes)
            summary[k] = (h, s)
            g_line.append("–" if not s else f"**{s[0]:.2f}**")
            m_line.append("–" if not s else f"{s[1]:.2f} ({pretty_shape(s[2])})")
        out.append("| " + " | ".join(g_line) + " |")
        out.append("| " + " | ".join(m_line) + " |")
    plot_series = {shape: (ratio_vals["vendor"][i] if "vendor" in ratio_vals else None)
                   for i, shape in enumerate(shapes)}
    return out, summary, plot_series, (f"{label} / {vname}" if vendors else None)


def elementwise_table(suite, rates, scale):
    """One table for every type: tilekit's auto choice, its variants, the Kokkos loop and the copy."""
    series = {s for by_shape in rates.values() for cells in by_shape.values() for s in cells}
    tk = next((s for s in ["tilekit:auto"] + sorted(x for x in series if x.startswith("tilekit:")) if s in series))
    variants = sorted(s for s in series if s.startswith("tilekit:") and s != tk)
    refs = [s for s in ("kokkos_parallel_for", "copy") if s in series]
    head = ["type", "shape", report.pretty(tk)] + [report.pretty(s) for s in variants] + \
           [report.pretty(s) for s in refs] + [f"{tk[8:]} / {report.pretty(s)}" for s in refs]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---", "---"] + ["---:"] * (len(head) - 2)) + "|"]
    vals = {s: [] for s in refs}
    keys = []
    for dtype in sorted(rates, key=lambda d: DTYPE_ORDER.index(d) if d in DTYPE_ORDER else 9):
        for shape in sorted(rates[dtype], key=shape_key):
            c = rates[dtype][shape]
            keys.append(f"{dtype} {pretty_shape(shape)}")
            line = [dtype, pretty_shape(shape)] + [report.fmt_rate(c.get(s), scale) for s in [tk] + variants + refs]
            for s in refs:
                r = c[tk] / c[s] if tk in c and c.get(s) else None
                vals[s].append(r)
                line.append("–" if r is None else f"{r:.2f}")
            out.append("| " + " | ".join(line) + " |")
    summary = {}
    g_line = ["**geometric mean**", ""] + [""] * (1 + len(variants) + len(refs))
    m_line = ["**minimum**", ""] + [""] * (1 + len(variants) + len(refs))
    for s in refs:
        st = ratio_summary(vals[s], keys)
        summary[s] = (f"{tk[8:]} / {report.pretty(s)}", st)
        g_line.append("–" if not st else f"**{st[0]:.2f}**")
        m_line.append("–" if not st else f"{st[1]:.2f} ({st[2]})")
    out += ["| " + " | ".join(g_line) + " |", "| " + " | ".join(m_line) + " |"]
    plot = {k: v for k, v in zip(keys, vals.get("copy", []))}
    return out, summary, plot


# ---- plots ------------------------------------------------------------------------------------

_MPL = None


def matplotlib_pyplot():
    global _MPL
    if _MPL is None:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            _MPL = plt
        except ImportError:
            note("matplotlib is missing (Debian: apt-get install python3-matplotlib); tables only, no plots")
            _MPL = False
    return _MPL


def plot_ratios(path, title, ylabel, lines):
    """lines: {label: {x label: ratio or None}}; one line per label over the x labels in order."""
    plt = matplotlib_pyplot()
    if not plt:
        return False
    xs = []
    for pts in lines.values():
        for x in pts:
            if x not in xs:
                xs.append(x)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(xs) + 2.5), 4.2))
    markers = "osD^vPX*"
    for i, (label, pts) in enumerate(lines.items()):
        ys = [pts.get(x) for x in xs]
        ax.plot(range(len(xs)), [float("nan") if y is None else y for y in ys], marker=markers[i % len(markers)],
                linewidth=1.3, markersize=4, label=label)
    ax.axhline(1.0, color="0.4", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels(xs, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# ---- the document -----------------------------------------------------------------------------

INTRO = """# tilekit benchmarks

tilekit's kernels against the vendor libraries (cuBLAS on NVIDIA GPUs, OpenBLAS on CPUs) and Kokkos
Kernels, timed side by side on the same data. This file holds the current results only; it is written
by `python3 scripts/bench-report.py` from the JSON files under `bench/results/` (one folder per machine
and suite), with the plots in `docs/bench/`; no figure here is written by hand. Earlier results stay in
the git history.

- **Rates**: matmul in TFLOP/s (GFLOP/s where a whole suite stays below 1 TFLOP/s), counting 2 M N K
  per run (integer operations for i8), from the median time of the timed iterations; elementwise add in
  GB/s (2 reads + 1 write). A dash: not measured (that library has no such routine).
- **Ratios**: rate / rate, above 1 when tilekit is faster. *tilekit* is the `{tk}` series where present,
  else `tilekit:tuned` (its name in results before 2026-11-27): the config `--config auto` picks;
  `tilekit:default` (the built-in config without tuning) is shown beside it. *tilekit / vendor* divides
  by the fastest vendor series of that shape (e.g. cuBLAS and its TN variant for i8). The fused-epilogue
  ratio compares tilekit with leaky_relu fused into the matmul against the vendor matmul followed by a
  separate pass over C. Elementwise rates are compared with a plain Kokkos loop and with a copy of the
  same bytes (the memory-bound floor). Each table ends with the geometric mean and the minimum (with its
  shape) of each ratio.
- **Running the benchmarks**: `scripts/bench-cpu.sh` (CPU, OpenMP backend; `--quick` for a short
  check) and `scripts/bench-gpu.sh` (on a machine with an NVIDIA GPU; `scripts/bench-gpu-report.sh`
  copies its JSON into `bench/results/`). Commit the JSON, then run `python3 scripts/bench-report.py`.
"""


def build(args):
    suites = []
    for spec in SUITES:
        s = Suite(spec)
        if not s.rows:
            note(f"{spec['id']}: no benchmark JSON in {spec['folder']}; section skipped")
            continue
        suites.append(s)
    os.makedirs(args.plots, exist_ok=True)
    doc = [INTRO.format(tk=TILEKIT[0])]
    toc = []
    body = []
    headline = []  # (machine, dtype, ratio header, summary, anchor)
    printed = []
    current_machine = None
    for s in suites:
        mh = machine_heading(s)
        if mh != current_machine:
            body.append(f"## {mh}\n")
            current_machine = mh
            toc.append(f"- [{mh}](#{slug(mh)})")
        heading = f"{short_machine(s)}: {s.spec['title']}"
        anchor = slug(heading)
        toc.append(f"  - [{s.spec['title']}](#{anchor})")
        body.append(f"### {heading}\n")
        body += machine_lines(s)
        body.append("")
        rates = s.rates()
        metric, _ = s.metric()
        spec = report.FAMILIES[s.family]
        all_rates = [v for by_shape in rates.values() for cells in by_shape.values()
                     for k, v in cells.items() if not (s.family == "matmul" and k == "copy")]
        unit, scale = spec["unit"], 1.0
        if spec["small_unit"] and all_rates and max(all_rates) < 1.0:
            unit, scale = spec["small_unit"]
        plot_lines = OrderedDict()
        plot_ylabel = None
        if s.family == "matmul":
            for dtype in sorted(rates, key=lambda d: DTYPE_ORDER.index(d) if d in DTYPE_ORDER else 9):
                lines, summary, pts, ylabel = matmul_table(dtype, rates[dtype], scale)
                body.append(f"**{dtype}**, {unit}:\n")
                body += lines
                body.append("")
                for key, (h, st) in summary.items():
                    if st:
                        printed.append(f"{s.id:<24} {dtype:<5} {h:<44} geomean {st[0]:.2f}  "
                                       f"min {st[1]:.2f} ({st[2]})")
                if "vendor" in summary and summary["vendor"][1] and s.spec.get("headline"):
                    headline.append((mh, dtype, summary["vendor"][0], summary["vendor"][1], anchor))
                if ylabel and any(v is not None for v in pts.values()):
                    plot_lines[dtype] = {pretty_shape(k): v for k, v in pts.items()}
                    plot_ylabel = "tilekit / vendor (fastest)"
        else:
            lines, summary, pts = elementwise_table(s, rates, scale)
            body.append(f"{unit}:\n")
            body += lines
            body.append("")
            for key, (h, st) in summary.items():
                if st:
                    printed.append(f"{s.id:<24} {'all':<5} {h:<44} geomean {st[0]:.2f}  min {st[1]:.2f} ({st[2]})")
            if any(v is not None for v in pts.values()):
                plot_lines["auto / copy"] = pts
                plot_ylabel = "tilekit auto / copy"
        if plot_lines:
            png = os.path.join(args.plots, f"{s.id}.png")
            device = s.files[0][1].get("device", "?")
            if plot_ratios(png, f"{heading} ({device})", plot_ylabel, plot_lines):
                rel = os.path.relpath(png, os.path.dirname(os.path.abspath(args.out)) or ".")
                body.append(f"![{heading}: {plot_ylabel} by shape]({rel})\n")
    doc.append("**Contents**\n")
    doc += toc
    doc.append("")
    doc += body
    text = "\n".join(doc).rstrip() + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(f"bench-report.py: wrote {args.out} ({text.count(chr(10))} lines, {len(suites)} suites)")
    for line in printed:
        print("  " + line)
    write_headline(args, headline)


def write_headline(args, headline):
    if not args.readme or not os.path.exists(args.readme):
        return
    text = open(args.readme).read()
    if HEADLINE_BEGIN not in text or HEADLINE_END not in text:
        return
    rel = os.path.relpath(os.path.abspath(args.out), os.path.dirname(os.path.abspath(args.readme)))
    rows = ["| machine | type | tilekit / vendor | geometric mean | minimum (shape) |",
            "|---|---|---|---:|---:|"]
    for mh, dtype, h, st, anchor in headline:
        rows.append(f"| [{mh.rsplit(',', 1)[0]}]({rel}#{anchor}) | {dtype} | {h} | {st[0]:.2f} | {st[1]:.2f} ({pretty_shape(st[2])}) |")
    block = (HEADLINE_BEGIN + "\n" + "\n".join(rows) + "\n\n"
             + f"Written by `python3 scripts/bench-report.py` from `bench/results/`; the tables are in [{rel}]({rel}).\n"
             + HEADLINE_END)
    pattern = re.compile(re.escape(HEADLINE_BEGIN) + r".*?" + re.escape(HEADLINE_END), re.S)
    new = pattern.sub(lambda _: block, text, count=1)
    if new != text:
        with open(args.readme, "w") as f:
            f.write(new)
    print(f"bench-report.py: headline table in {args.readme} ({len(headline)} rows)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="BENCHMARKS.md")
    ap.add_argument("--plots", default="docs/bench", help="folder for the PNG plots")
    ap.add_argument("--readme", default="README.md",
                    help="file whose headline-results markers get the headline table ('' for none)")
    args = ap.parse_args()
    args.out, args.plots = os.path.abspath(args.out), os.path.abspath(args.plots)
    args.readme = os.path.abspath(args.readme) if args.readme else ""
    os.chdir(os.path.dirname(HERE))  # paths in the document are relative to the repository root
    build(args)


def reexec_with_matplotlib():
    """The first python3 on PATH may lack matplotlib while the system's has it (Debian's package)."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get("TILEKIT_BENCH_REPORT_REEXEC"):
        return
    for py in ("/usr/bin/python3",):
        if os.path.realpath(py) == os.path.realpath(sys.executable) or not os.path.exists(py):
            continue
        if subprocess.run([py, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            os.environ["TILEKIT_BENCH_REPORT_REEXEC"] = "1"
            os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


if __name__ == "__main__":
    reexec_with_matplotlib()
    main()
