#!/usr/bin/env python3
"""tilekit.gemm from Python against the array library's own matmul, in the manner of the Triton
tutorials' perf_report: a table per dtype (and a PNG plot where matplotlib is installed), then the
host overhead per call of the Python path against the C++ call.

    PYTHONPATH=build/openmp-python/python python3 bench/python_gemm.py            # CPU: vs numpy.matmul
    PYTHONPATH=build/cuda-python/python python3 bench/python_gemm.py --out DIR    # GPU: vs torch.matmul

GPU builds run on torch tensors (CUDA events on the current stream; cuBLAS through torch.matmul is the
baseline); host builds on NumPy arrays (wall clock; numpy.matmul, i.e. its BLAS, is the baseline).
Each figure is the median of --reps timed calls after --warmup untimed ones. Results: the table on
stdout, DIR/python_gemm.json and DIR/python_gemm_<dtype>.png.

Python against C++ at every shape: calls of tilekit.gemm back to back, and as many calls of the C++
side alone (the module's entry without Python in between), each timed by the wall clock between two
synchronisations (at least --reps calls and about 5 ms of work, so that the synchronisations
themselves weigh little), best of 3 each; "py/C++" is the ratio of the two times per call.

Overhead: a small f32 problem (--overhead-shape, default 16x16x16: the thin kernel) and on GPU
builds also an f16 one (--overhead-tile-shape, default 256^3: a tile kernel, warp-specialised on a
Hopper, whose launch does more on the host) called --overhead-calls times from
Python (tilekit.gemm into a given c) and from C++ (the same operands, the C++ side of the call repeated
in a loop: config lookup, entry checks, launch); host seconds per call of each and their difference,
and the Python path's steps timed apart (the shapes, the stream lookup, the DLPack exports, the
module's entry with fresh exports, the rest).
"""
import argparse
import json
import os
import statistics
import sys
import time

import tilekit

# The benchmark shape set of scripts/dev/gpu-shapes.sh (squares, thin products, shallow and deep K).
GPU_SQUARES = [512, 1024, 2048, 4096, 8192]
GPU_SHAPES = [(1, 4096, 4096), (4096, 1, 4096), (16, 8192, 8192), (8192, 16, 8192), (8192, 8192, 16),
              (4096, 4096, 64), (9728, 8192, 65536)]
CPU_SQUARES = [128, 256, 512, 1024, 2048]
CPU_SHAPES = [(1, 4096, 4096), (16, 2048, 2048), (2048, 2048, 16), (1024, 1024, 64)]
LONG = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16", "i8": "int8"}


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        dims = [int(x) for x in item.lower().split("x")]
        shapes.append(tuple(dims * 3) if len(dims) == 1 else tuple(dims))
    return shapes


class Torch:
    name = "torch.matmul"

    def __init__(self):
        import torch
        self.torch = torch
        torch.backends.cuda.matmul.allow_tf32 = False  # IEEE f32, as tilekit's default

    def operands(self, m, n, k, dtype):
        t = self.torch
        if dtype == "i8":
            a = t.randint(-128, 128, (m, k), dtype=t.int8, device="cuda")
            b = t.randint(-128, 128, (k, n), dtype=t.int8, device="cuda")
            return a, b, t.empty((m, n), dtype=t.int32, device="cuda")
        d = getattr(t, LONG[dtype])
        a = t.rand((m, k), dtype=d, device="cuda") - 0.5
        b = t.rand((k, n), dtype=d, device="cuda") - 0.5
        return a, b, t.empty((m, n), dtype=d, device="cuda")

    def baseline(self, a, b, c):
        if a.dtype == self.torch.int8:
            return self.torch._int_mm(a, b, out=c) if a.shape[0] > 16 else None  # _int_mm needs M > 16
        return self.torch.matmul(a, b, out=c)

    def time(self, fn, warmup, reps):
        """Median milliseconds of fn() by CUDA events on the current stream."""
        t = self.torch
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(reps):
            start, stop = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return statistics.median(times)

    def sync(self):
        self.torch.cuda.synchronize()


class NumPy:
    name = "numpy.matmul"

    def __init__(self):
        import numpy as np
        self.np = np

    def operands(self, m, n, k, dtype):
        np = self.np
        rng = np.random.default_rng(55)
        if dtype == "i8":
            a = rng.integers(-128, 128, (m, k)).astype(np.int8)
            b = rng.integers(-128, 128, (k, n)).astype(np.int8)
            return a, b, np.empty((m, n), np.int32)
        d = getattr(np, LONG[dtype])
        return rng.uniform(-0.5, 0.5, (m, k)).astype(d), rng.uniform(-0.5, 0.5, (k, n)).astype(d), np.empty((m, n), d)

    def baseline(self, a, b, c):
        if a.dtype != b.dtype or a.dtype.kind != "f" or a.dtype.itemsize < 4:
            return None  # numpy has no BLAS for f16 or integers: not a baseline
        return self.np.matmul(a, b, out=c)

    def time(self, fn, warmup, reps):
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    def sync(self):
        pass


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12 if ms and ms > 0 else float("nan")


def python_and_cpp_ms(lib, a, b, c, reps, rounds=3):
    """Milliseconds per call of `reps` back-to-back tilekit.gemm calls and of as many calls of the C++
    side alone (tilekit._core.gemm with repeat), each between two synchronisations; best of `rounds`."""
    handle = tilekit._stream_handle(None, a)
    best_py = best_cpp = float("inf")
    for _ in range(rounds):
        lib.sync()
        t0 = time.perf_counter()
        for _ in range(reps):
            tilekit.gemm(a, b, c)
        lib.sync()
        best_py = min(best_py, (time.perf_counter() - t0) / reps)
        tilekit._core.gemm(tilekit._capsule(a, "a", handle, True), tilekit._capsule(b, "b", handle, True),
                           tilekit._capsule(c, "c", handle, True), 1.0, 0.0, False, False, None, "none", "auto",
                           "ieee", handle, max(reps, 2))
        best_cpp = min(best_cpp, tilekit._core.cpp_seconds_per_call())
    return best_py * 1e3, best_cpp * 1e3


def run_dtype(lib, dtype, shapes, args):
    """Every shape with tilekit, then every shape with the baseline: on CPUs the two thread pools
    (Kokkos' OpenMP threads, the BLAS's) spin for a while after each call, and alternating them on
    the same cores would time each one against the other's spinning threads."""
    rows = []
    for (m, n, k) in shapes:
        a, b, c = lib.operands(m, n, k, dtype)
        try:
            ms_tk = lib.time(lambda: tilekit.gemm(a, b, c), args.warmup, args.reps)
        except (ValueError, TypeError, RuntimeError, MemoryError) as e:
            print(f"  {m}x{n}x{k} {dtype}: tilekit refused: {e}", file=sys.stderr)
            continue
        calls = min(1000, max(args.reps, int(5.0 / max(ms_tk, 1e-3))))
        py_ms, cpp_ms = python_and_cpp_ms(lib, a, b, c, calls)
        rows.append({"M": m, "N": n, "K": k, "dtype": dtype, "tilekit_ms": ms_tk, "baseline_ms": None,
                     "tilekit_tflops": tflops(m, n, k, ms_tk), "baseline_tflops": None, "ratio": None,
                     "python_wall_ms": py_ms, "cpp_wall_ms": cpp_ms, "python_over_cpp": py_ms / cpp_ms,
                     "config": tilekit.last_config()})
        del a, b, c
    for r in rows:
        m, n, k = r["M"], r["N"], r["K"]
        a, b, c = lib.operands(m, n, k, dtype)
        try:
            has_baseline = lib.baseline(a, b, c) is not None
        except (RuntimeError, TypeError, ValueError) as e:  # e.g. torch._int_mm's shape rules
            print(f"  {m}x{n}x{k} {dtype}: no baseline: {e}", file=sys.stderr)
            has_baseline = False
        if has_baseline:
            ms = lib.time(lambda: lib.baseline(a, b, c), args.warmup, args.reps)
            r.update(baseline_ms=ms, baseline_tflops=tflops(m, n, k, ms), ratio=ms / r["tilekit_ms"])
        del a, b, c
    return rows


def print_table(lib, dtype, rows):
    print(f"\nmatmul {dtype}: tilekit.gemm vs {lib.name} (median ms; ratio = baseline time / tilekit time)")
    print(f"{'M':>6} {'N':>6} {'K':>6} {'tilekit ms':>11} {'TFLOP/s':>8} {'baseline ms':>12} {'TFLOP/s':>8} "
          f"{'ratio':>6} {'py/C++':>7}  config")
    for r in rows:
        base = f"{r['baseline_ms']:12.4f} {r['baseline_tflops']:8.3f} {r['ratio']:6.2f}" if r["baseline_ms"] else \
            f"{'-':>12} {'-':>8} {'-':>6}"
        print(f"{r['M']:>6} {r['N']:>6} {r['K']:>6} {r['tilekit_ms']:11.4f} {r['tilekit_tflops']:8.3f} {base} "
              f"{r['python_over_cpp']:7.3f}  {r['config']}")


def plot(lib, dtype, rows, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)", file=sys.stderr)
        return None
    squares = [r for r in rows if r["M"] == r["N"] == r["K"]]
    if not squares:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = [r["M"] for r in squares]
    ax.plot(xs, [r["tilekit_tflops"] for r in squares], "o-", label="tilekit.gemm")
    if any(r["baseline_ms"] for r in squares):
        ax.plot([r["M"] for r in squares if r["baseline_ms"]],
                [r["baseline_tflops"] for r in squares if r["baseline_ms"]], "s--", label=lib.name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s")
    info = tilekit.info()
    ax.set_title(f"matmul {dtype}, {info['backend']} on {info['device']}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    path = os.path.join(out_dir, f"python_gemm_{dtype}.png")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def per_call_us(lib, fn, calls, rounds=5):
    """Host microseconds per call of fn, `calls` back to back, best of `rounds` (synchronised before
    each round, not inside it)."""
    best = float("inf")
    for _ in range(rounds):
        lib.sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    lib.sync()
    return best * 1e6


def overhead_steps(lib, a, b, c, calls):
    """Where the Python path's host time goes, step by step (microseconds per call): the operands'
    shapes, the stream lookup, the three DLPack exports, and the module's entry called with fresh
    exports (the C++ side: its argument parsing, checks, config lookup and launch)."""
    handle = tilekit._stream_handle(None, a)

    def capsules():
        return (tilekit._capsule(a, "a", handle, True), tilekit._capsule(b, "b", handle, True),
                tilekit._capsule(c, "c", handle, True))

    def entry():
        ca, cb, cc = capsules()
        tilekit._core.gemm(ca, cb, cc, 1.0, 0.0, False, False, None, "none", "auto", "ieee", handle)

    steps = {"shapes": per_call_us(lib, lambda: (tilekit._shape2(a, "a"), tilekit._shape2(b, "b")), calls),
             "stream": per_call_us(lib, lambda: tilekit._stream_handle(None, a), calls),
             "exports": per_call_us(lib, capsules, calls)}
    steps["entry"] = per_call_us(lib, entry, calls) - steps["exports"]
    return steps


def overhead(lib, shape, dtype, calls):
    """Host microseconds per call of `dtype` at `shape`: the Python path, the C++ side alone, and
    their difference, with the Python path's steps (overhead_steps)."""
    m, n, k = shape
    a, b, c = lib.operands(m, n, k, dtype)
    tilekit.gemm(a, b, c)  # resolves the config once, as both loops below then reuse it
    py_ms, cpp_ms = python_and_cpp_ms(lib, a, b, c, calls, rounds=5)
    steps = overhead_steps(lib, a, b, c, calls)
    # gemm()'s own Python (arguments, branches): the call less the steps, so within the noise of
    # timing the steps apart (it can come out below zero).
    steps["rest"] = py_ms * 1e3 - sum(steps.values())
    return {"shape": f"{m}x{n}x{k}", "dtype": dtype, "config": tilekit.last_config(), "calls": calls,
            "python_us": py_ms * 1e3, "cpp_us": cpp_ms * 1e3, "overhead_us": (py_ms - cpp_ms) * 1e3,
            "steps_us": steps}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtypes", help="comma-separated: f64,f32,f16,bf16,i8 (default: GPU f32,f16,bf16,f64; CPU f32,f64)")
    p.add_argument("--shapes", help="comma-separated MxNxK or N (a square); default: the squares and the shape set")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--overhead-shape", type=lambda s: parse_shapes(s)[0], default=(16, 16, 16))
    p.add_argument("--overhead-tile-shape", type=lambda s: parse_shapes(s)[0], default=(256, 256, 256),
                   help="GPU builds: the host overhead also of f16 at this shape, which runs a tile kernel "
                        "(the thin kernel runs the f32 --overhead-shape)")
    p.add_argument("--overhead-calls", type=int, default=2000)
    p.add_argument("--out", default=".", help="folder for the JSON and the PNG plots")
    p.add_argument("--quick", action="store_true", help="a few small shapes, for a smoke run")
    args = p.parse_args()

    lib = Torch() if tilekit._core.gpu else NumPy()
    gpu = tilekit._core.gpu
    dtypes = (args.dtypes or ("f32,f16,bf16,f64" if gpu else "f32,f64")).split(",")
    if args.shapes:
        shapes = parse_shapes(args.shapes)
    elif args.quick:
        shapes = [(s, s, s) for s in (128, 256, 512)]
    else:
        shapes = [(s, s, s) for s in (GPU_SQUARES if gpu else CPU_SQUARES)] + (GPU_SHAPES if gpu else CPU_SHAPES)
    os.makedirs(args.out, exist_ok=True)
    info = tilekit.info()
    print(f"tilekit {info['tilekit_version']} ({info['backend']}, {info['device']}), baseline {lib.name}")
    results = {"context": info, "baseline": lib.name, "rows": [], "overhead": None}
    for dtype in dtypes:
        big_ok = dtype in ("f16", "bf16", "i8")  # the deep-K shape only in 16-bit and 8-bit types
        rows = run_dtype(lib, dtype, [s for s in shapes if s[2] < 65536 or big_ok], args)
        print_table(lib, dtype, rows)
        png = plot(lib, dtype, rows, args.out)
        if png:
            print(f"plot: {png}")
        results["rows"] += rows
    big = [r for r in results["rows"] if r["M"] * r["N"] * r["K"] >= 1024 ** 3]
    if big:
        worst = max(big, key=lambda r: r["python_over_cpp"])
        print(f"\nPython / C++ time per call at the {len(big)} problems of 1024^3 FLOP and up: at most "
              f"{worst['python_over_cpp']:.3f} ({worst['dtype']} {worst['M']}x{worst['N']}x{worst['K']})")
    results["overhead"] = overhead(lib, args.overhead_shape, "f32", args.overhead_calls)
    runs = [results["overhead"]]
    if gpu:  # also a tile kernel's launch (the f32 one above runs the thin kernel)
        results["overhead_tile"] = overhead(lib, args.overhead_tile_shape, "f16", args.overhead_calls)
        runs.append(results["overhead_tile"])
    for ov in runs:
        print(f"\nhost overhead per call, {ov['dtype']} {ov['shape']} ({ov['config']}), best of 5 x {ov['calls']} "
              f"calls: Python tilekit.gemm {ov['python_us']:.2f} us, C++ side alone {ov['cpp_us']:.2f} us, "
              f"Python path adds {ov['overhead_us']:.2f} us")
        print("  its steps, us a call: " + ", ".join(f"{k} {v:.2f}" for k, v in ov["steps_us"].items()) +
              " (entry: the module's C++ entry with fresh exports; rest: gemm()'s own Python)")
    with open(os.path.join(args.out, "python_gemm.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
