"""tilekit on CUDA arrays (CUDA builds): PyTorch tensors for every type pair, no copies, the caller's
stream (current, explicit, raw handle), wrong devices; CuPy and JAX arrays where installed."""
import numpy as np
import pytest

import tilekit
from conftest import matmul_tolerance

pytestmark = pytest.mark.skipif(not tilekit._core.gpu, reason="host build: CUDA arrays need the cuda-python build")
torch = pytest.importorskip("torch") if tilekit._core.gpu else None

M, N, K = 257, 193, 131  # past every tile, divisible by none
TORCH = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16", "i8": "int8", "i32": "int32"}


def rel_err(c, ref):
    c, ref = c.double(), ref.double()
    return float(torch.linalg.norm(c - ref) / torch.linalg.norm(ref))


def make(tin, m, n, k, device="cuda"):
    if tin == "i8":
        return (torch.randint(-128, 128, (m, k), dtype=torch.int8, device=device),
                torch.randint(-128, 128, (k, n), dtype=torch.int8, device=device))
    d = getattr(torch, TORCH[tin])
    return (torch.rand(m, k, device=device) * 2 - 1).to(d), (torch.rand(k, n, device=device) * 2 - 1).to(d)


@pytest.mark.parametrize("tin,tout", [("f64", "f64"), ("f32", "f32"), ("f16", "f16"), ("f16", "f32"),
                                      ("bf16", "bf16"), ("bf16", "f32"), ("i8", "i32")])
def test_torch_gemm_every_type_pair_returns_a_tensor_within_tolerance(tin, tout):
    a, b = make(tin, M, N, K)

    c = tilekit.gemm(a, b, out_dtype=tout)
    torch.cuda.synchronize()

    assert isinstance(c, torch.Tensor) and c.device == a.device and c.dtype == getattr(torch, TORCH[tout])
    ref = a.double() @ b.double()
    if tin == "i8":
        assert torch.equal(c.long(), ref.long())
    else:
        assert rel_err(c, ref) <= matmul_tolerance(tin, tout, K)


def test_torch_tf32_math_within_its_tolerance():
    a, b = make("f32", M, N, K)
    c = tilekit.gemm(a, b, math="tf32")
    torch.cuda.synchronize()
    assert rel_err(c, a.double() @ b.double()) <= matmul_tolerance("f32", "f32", K, "tf32")


@pytest.mark.parametrize("trans_a,trans_b", [(False, True), (True, False)])
def test_torch_transposed_and_sliced_views(trans_a, trans_b):
    big_a = torch.rand(2 * K + 3, 3 * M, device="cuda")
    a = big_a[1:1 + 2 * K:2, :M] if trans_a else big_a[1:1 + 2 * K:2, :M].t()  # strided, then maybe transposed
    b = torch.rand(N, K, device="cuda") if trans_b else torch.rand(N, K, device="cuda").t()
    ref = (a.t() if trans_a else a).double() @ (b.t() if trans_b else b).double()

    c = tilekit.gemm(a, b, trans_a=trans_a, trans_b=trans_b)
    torch.cuda.synchronize()

    assert rel_err(c, ref) <= matmul_tolerance("f32", "f32", K)


def test_torch_writes_through_to_the_callers_tensor():
    a, b = make("f16", M, N, K)
    big = torch.full((M + 8, N + 16), 3.0, dtype=torch.float16, device="cuda")
    c = big[5:5 + M, 7:7 + N]
    bias = torch.rand(N, device="cuda")

    out = tilekit.gemm(a, b, c, bias=bias, activation="relu")
    torch.cuda.synchronize()

    assert out is c and out.data_ptr() == big[5:, 7:].data_ptr()
    ref = torch.relu(a.double() @ b.double() + bias.double())
    assert rel_err(big[5:5 + M, 7:7 + N], ref) <= matmul_tolerance("f16", "f16", K) + 1e-3
    mask = torch.ones_like(big, dtype=torch.bool)
    mask[5:5 + M, 7:7 + N] = False
    assert torch.all(big[mask] == 3.0)


def test_torch_runs_on_the_current_stream_and_orders_with_it():
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a, b = make("f32", 2048, 2048, 2048)  # produced on s
        c = tilekit.gemm(a, b)                 # runs on s: no synchronisation needed in between
        d = c * 2                              # consumed on s
    s.synchronize()
    assert rel_err(d, 2 * (a.double() @ b.double())) <= matmul_tolerance("f32", "f32", 2048)


@pytest.mark.parametrize("kind", ["torch_stream", "raw_handle"])
def test_torch_explicit_stream(kind):
    a, b = make("f32", 1024, 1024, 1024)
    s = torch.cuda.Stream()
    c = torch.empty(1024, 1024, device="cuda")
    stream = s if kind == "torch_stream" else s.cuda_stream

    tilekit.gemm(a, b, c, stream=stream)  # the handshake orders s after the current stream
    s.synchronize()

    assert rel_err(c, a.double() @ b.double()) <= matmul_tolerance("f32", "f32", 1024)


def test_torch_elementwise_broadcast_and_in_place():
    a = torch.rand(300, 200, device="cuda")
    row = torch.rand(1, 200, device="cuda")
    out = tilekit.add(a, row)
    tilekit.fma(a, a, out, out=out)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, a * a + (a + row))


def test_torch_bad_input():
    a = torch.rand(8, 8, device="cuda")
    with pytest.raises(ValueError, match="is in cpu memory; this tilekit build \\(cuda\\) takes arrays in cuda memory"):
        tilekit.gemm(a.cpu(), a.cpu())
    with pytest.raises(TypeError, match="a is f32 and b is f16"):
        tilekit.gemm(a, a.half())
    with pytest.raises(ValueError, match="op\\(B\\) is 7x8, expected KxN = 8x8"):
        tilekit.gemm(a, a[:7])
    with pytest.raises(TypeError, match="dtype .*not supported|tilekit does not support"):
        tilekit.gemm(a.to(torch.int16), a.to(torch.int16))


def test_cupy_arrays_in_and_out():
    cupy = pytest.importorskip("cupy")
    a = cupy.random.rand(M, K, dtype=cupy.float32)
    b = cupy.random.rand(K, N, dtype=cupy.float32)
    c = tilekit.gemm(a, b)
    cupy.cuda.get_current_stream().synchronize()
    assert isinstance(c, cupy.ndarray)
    ref = a.astype(cupy.float64) @ b.astype(cupy.float64)
    assert float(cupy.linalg.norm(c - ref) / cupy.linalg.norm(ref)) <= matmul_tolerance("f32", "f32", K)


def test_jax_arrays_in_and_out():
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("jax has no GPU here")
    import jax.numpy as jnp
    a = jnp.asarray(np.random.rand(M, K).astype(np.float32))
    b = jnp.asarray(np.random.rand(K, N).astype(np.float32))
    c = tilekit.gemm(a, b)  # an output of tilekit's memory, handed to jax through from_dlpack
    ref = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
    got = np.asarray(c, np.float64)
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) <= matmul_tolerance("f32", "f32", K)
