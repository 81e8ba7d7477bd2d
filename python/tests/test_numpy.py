"""tilekit on NumPy arrays (host builds): every dtype, layouts and strides, epilogues, no copies,
elementwise ops with broadcasting, and bad input as Python exceptions with tilekit's messages."""
import json
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import tilekit
from conftest import activate, bf16_bits, bf16_values, matmul_tolerance, relative_error

pytestmark = pytest.mark.skipif(tilekit._core.gpu, reason="NumPy arrays are host memory; this is a GPU build")

NP = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "i8": np.int8, "i32": np.int32}
M, N, K = 67, 45, 83  # primes: no tile divides them


def operands(rng, tin, shape_a, shape_b):
    """a, b in dtype tin (NumPy arrays, or Views of uint16 bits for bf16) and their values in f64."""
    if tin == "i8":
        a = rng.integers(-128, 128, shape_a).astype(np.int8)
        b = rng.integers(-128, 128, shape_b).astype(np.int8)
        return a, b, a.astype(np.float64), b.astype(np.float64)
    x, y = rng.uniform(-1, 1, shape_a), rng.uniform(-1, 1, shape_b)
    if tin == "bf16":
        (abits, av), (bbits, bv) = bf16_bits(x), bf16_bits(y)
        return tilekit.reinterpret(abits, "bf16"), tilekit.reinterpret(bbits, "bf16"), av, bv
    a, b = x.astype(NP[tin]), y.astype(NP[tin])
    return a, b, a.astype(np.float64), b.astype(np.float64)


def values(c, dtype):
    if isinstance(c, tilekit.View):
        assert c.dtype == "bf16"
        return bf16_values(c.base)
    return np.asarray(c, dtype=np.float64)


PAIRS = [("f64", "f64"), ("f32", "f32"), ("f16", "f16"), ("f16", "f32"), ("bf16", "bf16"), ("bf16", "f32"),
         ("i8", "i32")]


@pytest.mark.parametrize("tin,tout", PAIRS)
def test_gemm_matches_f64_reference_for_every_type_pair(rng, tin, tout):
    a, b, av, bv = operands(rng, tin, (M, K), (K, N))

    c = tilekit.gemm(a, b, out_dtype=tout)

    assert tuple(c.shape) == (M, N)
    if tout == "bf16":
        assert isinstance(c, tilekit.View) and isinstance(c.base, np.ndarray)
    else:
        assert isinstance(c, np.ndarray) and c.dtype == NP[tout]
    if tin == "i8":
        np.testing.assert_array_equal(c, (av @ bv).astype(np.int32))
    else:
        assert relative_error(values(c, tout), av @ bv) <= matmul_tolerance(tin, tout, K)


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_gemm_any_layout_and_transpose_flags(rng, trans_a, trans_b, order):
    x = rng.uniform(-1, 1, (K, M) if trans_a else (M, K)).astype(np.float32)
    y = rng.uniform(-1, 1, (N, K) if trans_b else (K, N)).astype(np.float32)
    a, b = np.asarray(x, order=order), np.asarray(y, order=order)
    ref = (x.T if trans_a else x).astype(np.float64) @ (y.T if trans_b else y).astype(np.float64)
    c = np.zeros((M, N), np.float32, order=order)

    out = tilekit.gemm(a, b, c, trans_a=trans_a, trans_b=trans_b)

    assert out is c
    assert relative_error(c, ref) <= matmul_tolerance("f32", "f32", K)


def test_gemm_strided_slices_and_transposed_views(rng):
    big_a = rng.uniform(-1, 1, (3 * M, 2 * K + 5))
    big_b = rng.uniform(-1, 1, (2 * N + 1, 3 * K))
    a = big_a[1::3, 3::2][:, :K]    # row stride 3*(2K+5), column stride 2
    b = big_b[::2, 1::3][:N, :K].T  # a transposed strided view: K x N
    assert a.shape == (M, K) and b.shape == (K, N)

    c = tilekit.gemm(a, b)

    assert relative_error(c, a @ b) <= matmul_tolerance("f64", "f64", K)


@pytest.mark.parametrize("activation", [None, "relu", "leaky_relu", "silu", "gelu"])
@pytest.mark.parametrize("tin", ["f64", "f32"])
def test_gemm_fused_bias_and_activation(rng, tin, activation):
    a, b, av, bv = operands(rng, tin, (M, K), (K, N))
    bias = rng.uniform(-1, 1, N).astype(NP[tin])
    c0 = rng.uniform(-1, 1, (M, N)).astype(NP[tin])
    c = c0.copy()

    tilekit.gemm(a, b, c, alpha=0.5, beta=-2.0, bias=bias, activation=activation)

    ref = activate(0.5 * (av @ bv) - 2.0 * c0.astype(np.float64) + bias, activation)
    assert relative_error(c, ref) <= matmul_tolerance(tin, tin, K) + 1e-6


def test_gemm_i8_bias_relu_is_exact(rng):
    a, b, av, bv = operands(rng, "i8", (M, K), (K, N))
    bias = rng.integers(-1000, 1000, N).astype(np.int32)

    c = tilekit.gemm(a, b, alpha=2, bias=bias, activation="relu")

    np.testing.assert_array_equal(c, np.maximum(2 * (av @ bv) + bias, 0).astype(np.int32))


def test_gemm_writes_through_to_the_callers_array_without_copies(rng):
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    big = np.full((M + 10, 2 * N + 7), 7.0, np.float32)
    c = big[4:4 + M, 3:3 + 2 * N:2]  # a strided window of `big`
    before = big.copy()

    out = tilekit.gemm(a, b, c)

    assert out is c and np.shares_memory(out, big)
    assert out.__array_interface__["data"][0] == big[4:, 3:].__array_interface__["data"][0]
    assert relative_error(big[4:4 + M, 3:3 + 2 * N:2], a.astype(np.float64) @ b) <= matmul_tolerance("f32", "f32", K)
    touched = np.zeros(big.shape, bool)
    touched[4:4 + M, 3:3 + 2 * N:2] = True
    np.testing.assert_array_equal(big[~touched], before[~touched])


def test_gemm_reads_read_only_and_broadcast_inputs(rng):
    row = rng.uniform(-1, 1, K)
    a = np.broadcast_to(row, (M, K))  # read-only, row stride 0
    b = rng.uniform(-1, 1, (K, N))
    assert not a.flags.writeable

    c = tilekit.gemm(a, b)

    assert relative_error(c, np.asarray(a) @ b) <= matmul_tolerance("f64", "f64", K)


def test_gemm_explicit_config_reproduces_auto(rng):
    a, b, _, _ = operands(rng, "f32", (M, K), (K, N))
    auto = tilekit.gemm(a, b)
    chosen = tilekit.last_config()

    again = tilekit.gemm(a, b, config=chosen)

    assert chosen and tilekit.last_config() == chosen
    np.testing.assert_array_equal(auto, again)


def test_gemm_empty_shapes(rng):
    a = np.zeros((0, 5), np.float32)
    b = np.zeros((5, 3), np.float32)
    assert tilekit.gemm(a, b).shape == (0, 3)
    c = np.full((4, 3), 2.0, np.float32)
    tilekit.gemm(np.zeros((4, 0), np.float32), np.zeros((0, 3), np.float32), c, beta=0.5)
    np.testing.assert_array_equal(c, 1.0)


# --- bad input: Python exceptions carrying tilekit's messages --------------------------------------

def test_gemm_mismatched_shapes_say_which_and_what_is_expected():
    a, b = np.zeros((7, 5), np.float32), np.zeros((6, 4), np.float32)
    with pytest.raises(ValueError, match=r"op\(B\) is 6x4, expected KxN = 5x4"):
        tilekit.gemm(a, b)
    with pytest.raises(ValueError, match=r"C is 3x3, expected"):
        tilekit.gemm(a, np.zeros((5, 4), np.float32), np.zeros((3, 3), np.float32))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int64, np.complex64, np.bool_])
def test_gemm_unsupported_dtypes_are_type_errors(dtype):
    a = np.zeros((4, 4), dtype)
    with pytest.raises(TypeError, match="tilekit does not support|not supported|allowed"):
        tilekit.gemm(a, a)


def test_gemm_type_mismatches_are_type_errors():
    with pytest.raises(TypeError, match="a is f32 and b is f64"):
        tilekit.gemm(np.zeros((2, 2), np.float32), np.zeros((2, 2)))
    with pytest.raises(TypeError, match="unsupported type pair f32 -> f16"):
        tilekit.gemm(np.zeros((2, 2), np.float32), np.zeros((2, 2), np.float32), out_dtype="f16")
    with pytest.raises(TypeError, match="bias is f16; for f16 inputs it must be f32"):
        tilekit.gemm(np.zeros((2, 2), np.float16), np.zeros((2, 2), np.float16), bias=np.zeros(2, np.float16))
    with pytest.raises(TypeError, match="not an array"):
        tilekit.gemm([[1.0]], [[1.0]])


def test_gemm_bad_values_are_value_errors():
    a = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="3 dimensions"):
        tilekit.gemm(np.zeros((2, 2, 2), np.float32), a)
    with pytest.raises(ValueError, match="A and B strides must be >= 0"):
        tilekit.gemm(a[::-1], a)
    with pytest.raises(ValueError, match="bias has 3 values; it needs one per column of C \\(4\\)"):
        tilekit.gemm(a, a, bias=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="activation 'tanh' is not known"):
        tilekit.gemm(a, a, activation="tanh")
    with pytest.raises(ValueError, match="math tf32 applies to f32 inputs only"):
        tilekit.gemm(a.astype(np.float64), a.astype(np.float64), math="tf32")
    with pytest.raises(ValueError, match="activation 'gelu' needs a floating-point accumulator"):
        tilekit.gemm(a.astype(np.int8), a.astype(np.int8), activation="gelu")
    with pytest.raises(ValueError, match="config 'bm7"):
        tilekit.gemm(a, a, config="bm7_bn9_bk3_tm2_tn2")
    with pytest.raises(ValueError, match="streams apply to GPU builds"):
        tilekit.gemm(a, a, stream=12345)
    with pytest.raises(ValueError, match="whole number"):
        tilekit.gemm(a.astype(np.int8), a.astype(np.int8), alpha=0.5)


def test_gemm_refuses_outputs_that_overlap_themselves_or_the_inputs():
    a = np.ones((4, 4), np.float32)
    base = np.zeros(16, np.float32)
    c = np.lib.stride_tricks.as_strided(base, (4, 4), (4, 4))  # rows overlap: row stride 1 element
    with pytest.raises(ValueError, match="overlap"):
        tilekit.gemm(a, a, c)
    with pytest.raises(ValueError, match="C overlaps A"):
        tilekit.gemm(a, np.ones((4, 4), np.float32), a)


def test_calls_from_another_thread_raise_runtime_error_saying_why():
    a = np.ones((4, 4), np.float32)
    tilekit.gemm(a, a)  # initialized in this thread
    caught = []

    def work():
        try:
            tilekit.gemm(a, a)
            caught.append(None)
        except Exception as e:  # noqa: BLE001 - the test inspects it
            caught.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()

    if tilekit.info()["launch_thread_problem"] == "" and tilekit.backend != "openmp":
        assert caught == [None]
    else:
        assert isinstance(caught[0], RuntimeError) and "thread" in str(caught[0])


# --- elementwise ---------------------------------------------------------------------------------

EW_TYPES = ["f64", "f32", "f16", "bf16", "i32"]


def ew_operand(rng, dtype, shape):
    if dtype == "i32":
        x = rng.integers(-1000, 1000, shape).astype(np.int32)
        return x, x.astype(np.float64)
    if dtype == "bf16":
        bits, v = bf16_bits(rng.uniform(-2, 2, shape))
        return tilekit.reinterpret(bits, "bf16"), v
    x = rng.uniform(-2, 2, shape).astype(NP[dtype])
    return x, x.astype(np.float64)


REFERENCE = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "max": np.maximum, "min": np.minimum, "mul_relu": lambda a, b: np.maximum(a * b, 0),
    "fma": lambda a, b, c: a * b + c, "relu": lambda a: np.maximum(a, 0), "silu": lambda a: a / (1 + np.exp(-a)),
}
ARITY = {"add": 2, "sub": 2, "mul": 2, "max": 2, "min": 2, "mul_relu": 2, "fma": 3, "relu": 1, "silu": 1}


@pytest.mark.parametrize("dtype", EW_TYPES)
@pytest.mark.parametrize("op", sorted(REFERENCE))
def test_apply_every_op_and_dtype(rng, op, dtype):
    if op == "silu" and dtype == "i32":
        pytest.skip("silu is floating-point only (tested below)")
    ins = [ew_operand(rng, dtype, (37, 29)) for _ in range(ARITY[op])]

    out = tilekit.apply(op, *[x for x, _ in ins])

    ref = REFERENCE[op](*[v for _, v in ins])
    got = values(out, dtype)
    if dtype == "i32":
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=4 * UNIT[dtype], atol=4 * UNIT[dtype])


UNIT = {"f64": 2.0**-52, "f32": 2.0**-23, "f16": 2.0**-10, "bf16": 2.0**-7}


@pytest.mark.parametrize("shape_b", [(1, 29), (29,), (37, 1), (1, 1), ()])
def test_apply_broadcasts_rows_columns_and_scalars(rng, shape_b):
    a = rng.uniform(-1, 1, (37, 29)).astype(np.float32)
    b = np.asarray(rng.uniform(-1, 1, shape_b), np.float32)

    out = tilekit.add(a, b)

    np.testing.assert_allclose(out, a + b, rtol=1e-6)


def test_apply_in_place_strided_output_and_named_functions(rng):
    big = rng.uniform(-1, 1, (40, 60))
    a = big[::2, 1::3]  # 20 x 20, strided
    b = rng.uniform(-1, 1, (20, 20)).T  # column-major
    expect = a + b

    out = tilekit.add(a, b, out=a)

    assert out is a and np.shares_memory(out, big)
    np.testing.assert_allclose(big[::2, 1::3], expect, rtol=1e-15)
    np.testing.assert_allclose(tilekit.axpby(a, b, alpha=2.0, beta=-1.0), 2 * a - b, rtol=1e-15)
    np.testing.assert_allclose(tilekit.fma(a, b, a), a * b + a, rtol=1e-15, atol=1e-15)  # one rounding vs two
    np.testing.assert_allclose(tilekit.maximum(a, b), np.maximum(a, b))
    np.testing.assert_allclose(tilekit.minimum(a, b), np.minimum(a, b))
    np.testing.assert_allclose(tilekit.relu(b), np.maximum(b, 0))
    np.testing.assert_allclose(tilekit.div(a, b), a / b, rtol=1e-15)
    np.testing.assert_allclose(tilekit.sub(a, b), a - b, rtol=1e-15)
    np.testing.assert_allclose(tilekit.mul(a, b), a * b, rtol=1e-15)
    np.testing.assert_allclose(tilekit.mul_relu(a, b), np.maximum(a * b, 0), rtol=1e-15)
    np.testing.assert_allclose(tilekit.silu(a), a / (1 + np.exp(-a)), rtol=1e-14)


def test_apply_integer_division_by_zero_gives_zero():
    a = np.array([[7, -7, 5]], np.int32)
    b = np.array([[2, 2, 0]], np.int32)
    np.testing.assert_array_equal(tilekit.div(a, b), [[3, -3, 0]])


def test_apply_bad_input():
    a = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="op 'pow' is not known; allowed: add"):
        tilekit.apply("pow", a, a)
    with pytest.raises(ValueError, match="takes 3 inputs, got 2"):
        tilekit.apply("fma", a, a)
    with pytest.raises(TypeError, match="silu needs a floating-point dtype"):
        tilekit.silu(a.astype(np.int32))
    with pytest.raises(TypeError, match="same dtype"):
        tilekit.add(a, a.astype(np.float64))
    with pytest.raises(TypeError, match="i8"):
        tilekit.add(a.astype(np.int8), a.astype(np.int8))
    with pytest.raises(ValueError):
        tilekit.add(a, np.ones((3, 4), np.float32))  # neither M x N nor a broadcast
    with pytest.raises(ValueError, match="overlap"):
        tilekit.add(a[:, :3], a[:, :3], out=a[:, 1:])  # out overlaps an input without being it


def test_info_names_the_build():
    d = tilekit.info()
    assert d["backend"] == tilekit.backend
    assert "f32->f32" in d["type_pairs"] and "add" in d["elementwise_ops"]
    assert d["concurrency"] >= 1


def test_benchmark_script_reports_every_shape_and_the_python_paths_steps(tmp_path):
    """bench/python_gemm.py on a small run: a row per shape with tilekit's and numpy.matmul's times, and
    the host overhead per call with its steps (shapes, stream, DLPack exports, the C++ entry, the rest
    of gemm()'s Python), each measured, adding up to the Python call."""
    script = pathlib.Path(__file__).resolve().parents[2] / "bench" / "python_gemm.py"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, str(script), "--shapes", "32,48x40x24", "--dtypes", "f32", "--warmup", "1",
                    "--reps", "3", "--overhead-calls", "50", "--out", str(tmp_path)],
                   check=True, env=env, capture_output=True, timeout=600)
    with open(tmp_path / "python_gemm.json") as f:
        r = json.load(f)
    assert [(x["M"], x["N"], x["K"]) for x in r["rows"]] == [(32, 32, 32), (48, 40, 24)]
    assert all(x["tilekit_ms"] > 0 and x["baseline_ms"] > 0 and x["python_over_cpp"] > 0 for x in r["rows"])
    ov = r["overhead"]
    steps = ov["steps_us"]
    assert set(steps) == {"shapes", "stream", "exports", "entry", "rest"}
    assert all(steps[k] > 0 for k in ("shapes", "stream", "exports", "entry"))
    assert sum(steps.values()) == pytest.approx(ov["python_us"])
