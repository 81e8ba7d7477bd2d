"""Shared helpers of the Python tests: references in f64 and the tolerance of `tilekit matmul --check`."""
import numpy as np
import pytest

import tilekit

# Unit roundoff per dtype (tilekit/kernels/core/types.hpp, TypeTraits<T>::unit_roundoff).
UNIT_ROUNDOFF = {"f64": 2.0**-53, "f32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8, "i32": 0.0}


def matmul_tolerance(tin, tout, k, math="ieee"):
    """tilekit::matmul_tolerance: 8 u(out) + 2 K u(accumulation) (+ 8 u_f16 with TF32 math); i8 exact."""
    if tin == "i8":
        return 0.0
    u_acc = UNIT_ROUNDOFF["f64"] if tin == "f64" else UNIT_ROUNDOFF["f32"]
    u_inputs = 8.0 * UNIT_ROUNDOFF["f16"] if math == "tf32" else 0.0
    return 8.0 * UNIT_ROUNDOFF[tout] + u_inputs + 2.0 * max(k, 1) * u_acc


def relative_error(c, ref):
    """||C - ref||_F / ||ref||_F in f64, as tilekit::relative_error."""
    c = np.asarray(c, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if not np.all(np.isfinite(c)):
        return np.inf
    r = np.linalg.norm(ref)
    d = np.linalg.norm(c - ref)
    return 0.0 if r == 0 and d == 0 else (np.inf if r == 0 else d / r)


def activate(x, activation):
    if activation in (None, "none"):
        return x
    if activation == "relu":
        return np.maximum(x, 0)
    if activation == "leaky_relu":
        return np.where(x > 0, x, 0.01 * x)
    if activation == "silu":
        return x / (1 + np.exp(-x))
    if activation == "gelu":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    raise ValueError(activation)


def bf16_bits(x):
    """float values -> the uint16 bits of bf16 (truncated: exactly representable), and their f64 values."""
    bits = (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return bits, bf16_values(bits)


def bf16_values(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


@pytest.fixture
def rng():
    return np.random.default_rng(55)


def pytest_report_header(config):
    return f"tilekit: backend {tilekit.backend}, module {tilekit._core.__file__}"
