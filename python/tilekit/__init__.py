"""tilekit from Python: tilekit's matmul and elementwise kernels on NumPy, PyTorch, CuPy and JAX arrays.

Arrays are taken through DLPack (``__dlpack__``) with no copy: the kernels read and write the
caller's memory, whatever its strides (row-major, column-major, slices, transposes). One build serves
one backend: host builds (openmp, serial) take CPU arrays, CUDA builds take CUDA arrays.

    import numpy as np, tilekit
    a = np.random.rand(512, 256).astype(np.float32)
    b = np.random.rand(256, 128).astype(np.float32)
    c = tilekit.gemm(a, b)                       # a new np.ndarray: c = a @ b
    tilekit.gemm(a, b, c, beta=1.0)              # c += a @ b, in place
    y = tilekit.gemm(a, b, bias=np.ones(128, np.float32), activation="gelu")
    z = tilekit.add(a, a)                        # elementwise, with broadcasting of 1xN / Mx1 / 1x1

On CUDA the work runs on the caller's stream: ``stream=`` (a torch or CuPy stream, or a raw
cudaStream_t as an int), else the current stream of the inputs' library (PyTorch, CuPy), else the
legacy default stream; the DLPack stream handshake orders it after the producer's work. Calls return
without waiting for the GPU, as torch and CuPy calls do.

Errors: TypeError for unsupported dtypes and objects that are not arrays; ValueError for shapes,
strides, devices and values tilekit refuses (the message is the C++ library's); RuntimeError for a
thread that cannot launch (OpenMP builds with Kokkos 3.x launch only from the thread of the first
call) and for a machine without the build's GPU.

Kokkos is initialized on the first call (on the GPU of the first array) and finalized at interpreter
exit. Tuning: run the app (``tilekit tune matmul --sizes ... --dtype ...``); its results are stored
in ``~/.cache/tilekit/tuning`` (``$TILEKIT_TUNING_DIR``), where ``config="auto"`` finds them.
"""

import atexit
import sys

from . import _tilekit as _core

__all__ = [
    "gemm", "apply", "add", "sub", "mul", "div", "maximum", "minimum", "mul_relu", "fma", "axpby", "relu",
    "silu", "info", "reinterpret", "last_config", "backend",
]

backend = _core.backend
"""The backend of this build: "openmp", "serial", "cuda" or "hip"."""

_gpu = _core.gpu
atexit.register(_core.finalize)

# dtype names: tilekit's, and the long names of NumPy, PyTorch, CuPy and JAX
_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16", "int8": "i8", "int32": "i32",
          "double": "f64", "float": "f32", "half": "f16"}
_LONG = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16", "i8": "int8", "i32": "int32"}
_DEFAULT_OUT = {"i8": "i32"}

_last_config = [""]


def _dtype_name(dtype):
    """'f32' for "f32", "float32", numpy.float32, np.dtype('float32'), torch.float32, ..."""
    if isinstance(dtype, str):
        name = dtype
    else:
        name = getattr(dtype, "name", None)  # np.dtype, ml_dtypes
        if not isinstance(name, str):
            try:
                import numpy as np
                name = np.dtype(dtype).name
            except Exception:
                name = str(dtype).rsplit(".", 1)[-1]  # torch.float32 -> float32
    if name in _LONG:
        return name
    if name in _SHORT:
        return _SHORT[name]
    raise TypeError(f"dtype {dtype!r} is not supported (allowed: f64, f32, f16, bf16, i8, i32, or the libraries' "
                    f"float64, float32, float16, bfloat16, int8, int32)")


def _array_dtype(x):
    if isinstance(x, View):
        return x.dtype
    return _dtype_name(x.dtype)


def _library(x):
    return type(x).__module__.partition(".")[0]


def _shape2(x, name):
    try:
        shape = tuple(x.shape)
    except AttributeError:
        raise TypeError(f"{name} is a {type(x).__name__}, not an array (tilekit takes arrays that implement "
                        f"__dlpack__: NumPy, PyTorch, CuPy, JAX, ...)") from None
    if len(shape) == 2:
        return shape
    if len(shape) == 1:
        return (1, shape[0])
    if len(shape) == 0:
        return (1, 1)
    raise ValueError(f"{name} has {len(shape)} dimensions (shape {shape}); allowed: 2 (1-D and 0-D arrays broadcast "
                     f"as one row, a scalar as 1x1, in elementwise ops)")


# ------------------------------------------------------------------------------------------------
# Streams (CUDA builds)
# ------------------------------------------------------------------------------------------------

def _stream_handle(stream, first):
    """The cudaStream_t (as an int, 0 for the legacy default stream) the call runs on."""
    if not _gpu:
        if stream not in (None, 0):
            raise ValueError(f"stream={stream!r}: streams apply to GPU builds; this build's backend is {backend}")
        return 0
    if stream is None:
        lib = _library(first)
        if lib == "torch" and first.device.type != "cuda":
            return 0  # a host tensor: the call refuses it below, naming its device
        if lib == "torch":
            torch = sys.modules["torch"]
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            index = first.device.index
            return raw(index) if raw is not None else torch.cuda.current_stream(index).cuda_stream
        if lib == "cupy":
            return sys.modules["cupy"].cuda.get_current_stream().ptr
        return 0
    if isinstance(stream, int):
        if stream < 0:
            raise ValueError(f"stream={stream}: a cudaStream_t handle is >= 0 (0: the legacy default stream)")
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):  # torch.cuda.Stream, cupy.cuda.Stream, ...
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return value
    raise TypeError(f"stream={stream!r}: expected a torch.cuda.Stream, a cupy.cuda.Stream or a cudaStream_t as an int")


def _capsule(x, name, handle, same_stream):
    """x as a DLPack capsule (or an array-interface tuple), after the stream handshake."""
    if isinstance(x, View):
        return _core.reinterpret(_capsule(x.base, name, handle, same_stream), x.dtype)
    if same_stream and _gpu and _library(x) == "torch":
        # Already ordered: the call runs on torch's current stream. to_dlpack (a C function) skips
        # __dlpack__'s Python-level stream handling (microseconds a call).
        return _torch_to_dlpack()(x)
    try:
        method = x.__dlpack__
    except AttributeError:
        raise TypeError(f"{name} is a {type(x).__name__}, which does not implement __dlpack__ (tilekit takes "
                        f"NumPy, PyTorch, CuPy, JAX arrays, ...)") from None
    try:
        if not _gpu:
            return method()
        # DLPack's stream numbering: 1 is the legacy default stream (0 is not allowed).
        return method(stream=handle if handle != 0 else 1)
    except (BufferError, RuntimeError, TypeError) as e:
        interface = getattr(x, "__array_interface__", None)  # read-only NumPy arrays (NumPy < 2)
        if interface is None or _gpu:
            raise ValueError(f"{name}: {type(x).__name__}.__dlpack__ refused: {e}") from None
        return _interface_tuple(interface, name)


_torch_export = []


def _torch_to_dlpack():
    if not _torch_export:
        torch = sys.modules["torch"]
        _torch_export.append(getattr(torch._C, "_to_dlpack", None) or torch.utils.dlpack.to_dlpack)
    return _torch_export[0]


_TYPECODES = {"i": 0, "u": 1, "f": 2}


def _interface_tuple(interface, name):
    typestr = interface["typestr"]
    if typestr[0] == ">" or typestr[1] not in _TYPECODES:
        raise TypeError(f"{name} has dtype {typestr!r}, which tilekit does not support")
    return (interface["data"][0], tuple(interface["shape"]), interface.get("strides"), _TYPECODES[typestr[1]],
            int(typestr[2:]) * 8)


# ------------------------------------------------------------------------------------------------
# Outputs
# ------------------------------------------------------------------------------------------------

class View:
    """The memory of `base` (any __dlpack__ array) seen as elements of another dtype of the same size,
    e.g. NumPy uint16 bits as bf16, which NumPy cannot express. tilekit functions take it as an
    array of `dtype`, and return outputs of a View's inputs as Views over the same library's arrays."""

    __slots__ = ("base", "dtype")

    def __init__(self, base, dtype):
        self.base = base
        self.dtype = _dtype_name(dtype)

    @property
    def shape(self):
        return tuple(self.base.shape)

    def __dlpack__(self, stream=None):
        return _core.reinterpret(self.base.__dlpack__() if stream is None else self.base.__dlpack__(stream=stream),
                                 self.dtype)

    def __dlpack_device__(self):
        return self.base.__dlpack_device__()

    def __repr__(self):
        return f"tilekit.View({self.dtype}, shape={self.shape}, base={type(self.base).__module__}.{type(self.base).__name__})"


def reinterpret(array, dtype):
    """A View of `array`'s memory as `dtype` (same element size): e.g. reinterpret(np_uint16, "bf16")."""
    return View(array, dtype)


class _Buffer:
    """A new array of tilekit's own memory, handed to a library's from_dlpack."""

    __slots__ = ("memory", "device", "shape", "stream")

    def __init__(self, rows, cols, dtype, device):
        self.memory = _core.empty(rows, cols, dtype, device)
        self.device = device
        self.shape = (rows, cols)
        self.stream = 0  # the stream that writes it

    @property
    def capsule(self):
        return self.memory.capsule()

    def __dlpack__(self, stream=None, **_):
        if _gpu and stream is not None and stream != -1:
            _core.stream_wait(stream if stream != 1 else 0, self.stream)
        return self.memory.capsule()

    def __dlpack_device__(self):
        return (_core.array_device, self.device)


def _empty(like, rows, cols, dtype):
    """A new rows x cols array of dtype from `like`'s library; a View over 16-bit integers where the
    library has no bfloat16 (NumPy, CuPy); None where tilekit allocates it (see _handover)."""
    if isinstance(like, View):
        like = like.base
    lib = _library(like)
    if lib == "numpy":
        import numpy as np
        if dtype == "bf16":
            return View(np.empty((rows, cols), np.uint16), "bf16")
        return np.empty((rows, cols), _LONG[dtype])
    if lib == "torch":
        torch = sys.modules["torch"]
        return torch.empty((rows, cols), dtype=getattr(torch, _LONG[dtype]), device=like.device)
    if lib == "cupy":
        cupy = sys.modules["cupy"]
        with like.device:
            if dtype == "bf16":
                return View(cupy.empty((rows, cols), cupy.uint16), "bf16")
            return cupy.empty((rows, cols), _LONG[dtype])
    return None


def _handover(like, buffer):
    """A _Buffer as an array of `like`'s library (from_dlpack), else the _Buffer itself."""
    namespace = getattr(like, "__array_namespace__", None)
    module = namespace() if namespace is not None else sys.modules.get(_library(like))
    from_dlpack = getattr(module, "from_dlpack", None)
    if from_dlpack is None:
        return buffer
    return from_dlpack(buffer)


def _device_index(x):
    if not _gpu:
        return 0
    try:
        return int(x.__dlpack_device__()[1])
    except Exception:
        return 0


# ------------------------------------------------------------------------------------------------
# gemm
# ------------------------------------------------------------------------------------------------

def gemm(a, b, c=None, *, alpha=1, beta=0, trans_a=False, trans_b=False, bias=None, activation=None,
         out_dtype=None, config="auto", math="ieee", stream=None):
    """C = alpha op(A) op(B) + beta C, then + bias (one value per column), then the activation.

    a, b: 2-D arrays of one dtype (f64, f32, f16, bf16, i8), any strides; op(X) is X.T when trans_x.
    c: the output (M x N, any strides that do not overlap itself), written in place and returned;
      None: a new row-major array from a's library (numpy.empty, torch.empty, cupy.empty, else the
      library's from_dlpack over memory tilekit allocates), with beta ignored (nothing to read).
    out_dtype: the output dtype when c is None: the input's (i32 for i8), or f32 for f16/bf16 inputs.
    bias: 1-D, contiguous, N values in the accumulation type (f64 for f64, i32 for i8, else f32).
    activation: None, "relu", "leaky_relu", "silu" or "gelu" (i8: relu only).
    config: "auto" (the tuned config for this shape, else the backend's default, as the C++ library
      and `tilekit matmul --config auto` choose), or a config name (`tilekit info` lists the tiles).
    math: "ieee", or "tf32" to let f32 products run on TF32 tensor cores (CUDA sm_80+).
    stream: CUDA builds: the stream to run on (see the module's help); host builds: None.
    """
    if isinstance(c, (int, float)) and not isinstance(c, bool):
        raise TypeError("c must be an array or None; pass alpha and beta by keyword")
    m_k = _shape2(a, "a")
    k_n = _shape2(b, "b")
    handle = _stream_handle(stream, a)
    same_stream = stream is None
    if c is None:
        tin = _array_dtype(a)
        tout = _dtype_name(out_dtype) if out_dtype is not None else _DEFAULT_OUT.get(tin, tin)
        rows = m_k[1] if trans_a else m_k[0]
        cols = k_n[0] if trans_b else k_n[1]
        beta = 0
        out = _empty(a, rows, cols, tout)
        buffer = _Buffer(rows, cols, tout, _device_index(a)) if out is None else None
    else:
        if out_dtype is not None and _dtype_name(out_dtype) != _array_dtype(c):
            raise TypeError(f"out_dtype={out_dtype!r} but c is {_array_dtype(c)}; pass one or make them agree")
        out, buffer = c, None
    cap_a = _capsule(a, "a", handle, same_stream)
    cap_b = _capsule(b, "b", handle, same_stream)
    cap_c = buffer.capsule if buffer is not None else _capsule(out, "c", handle, same_stream)
    cap_bias = None if bias is None else _capsule(bias, "bias", handle, same_stream)
    _last_config[0] = _core.gemm(cap_a, cap_b, cap_c, float(alpha), float(beta), bool(trans_a), bool(trans_b),
                                 cap_bias, activation or "none", config, math, handle)
    if buffer is not None:
        buffer.stream = handle
        return _handover(a, buffer)
    return out


def last_config():
    """The name of the matmul config the last gemm() call of this process ran (what "auto" chose)."""
    return _last_config[0]


# ------------------------------------------------------------------------------------------------
# elementwise
# ------------------------------------------------------------------------------------------------

def apply(op, *inputs, out=None, alpha=1.0, beta=1.0, config="auto", stream=None):
    """out = op(inputs...), elementwise, on 2-D arrays of one dtype (f64, f32, f16, bf16, i32).

    op: add, sub, mul, div, max, min, mul_relu, fma (3 inputs), axpby (alpha a + beta b), relu, silu.
    inputs: M x N arrays, or broadcast ones: 1 x N (or 1-D of N) repeats a row, M x 1 a column, 1 x 1
      (or 0-D) a scalar; any strides.
    out: the M x N output, written in place and returned (it may be one of the inputs); None: a new
      row-major array from the first input's library.
    config: "auto" (tuned, else the backend's default), or an elementwise config name.
    """
    if not inputs:
        raise ValueError(f"apply({op!r}) needs its inputs")
    shapes = [_shape2(x, f"inputs[{k}]") for k, x in enumerate(inputs)]
    handle = _stream_handle(stream, inputs[0])
    same_stream = stream is None
    buffer = None
    if out is None:
        rows = max(s[0] for s in shapes)
        cols = max(s[1] for s in shapes)
        dtype = _array_dtype(inputs[0])
        out = _empty(inputs[0], rows, cols, dtype)
        if out is None:
            buffer = _Buffer(rows, cols, dtype, _device_index(inputs[0]))
    caps = [_capsule(x, f"inputs[{k}]", handle, same_stream) for k, x in enumerate(inputs)]
    cap_out = buffer.capsule if buffer is not None else _capsule(out, "out", handle, same_stream)
    _core.apply(op, caps, cap_out, float(alpha), float(beta), config, handle)
    if buffer is not None:
        buffer.stream = handle
        return _handover(inputs[0], buffer)
    return out


def add(a, b, out=None, **kw):
    """a + b (see apply)."""
    return apply("add", a, b, out=out, **kw)


def sub(a, b, out=None, **kw):
    """a - b (see apply)."""
    return apply("sub", a, b, out=out, **kw)


def mul(a, b, out=None, **kw):
    """a * b (see apply)."""
    return apply("mul", a, b, out=out, **kw)


def div(a, b, out=None, **kw):
    """a / b; integer division truncates, and by 0 gives 0 (see apply)."""
    return apply("div", a, b, out=out, **kw)


def maximum(a, b, out=None, **kw):
    """max(a, b) elementwise (see apply)."""
    return apply("max", a, b, out=out, **kw)


def minimum(a, b, out=None, **kw):
    """min(a, b) elementwise (see apply)."""
    return apply("min", a, b, out=out, **kw)


def mul_relu(a, b, out=None, **kw):
    """relu(a * b) (see apply)."""
    return apply("mul_relu", a, b, out=out, **kw)


def fma(a, b, c, out=None, **kw):
    """a * b + c with one rounding (see apply)."""
    return apply("fma", a, b, c, out=out, **kw)


def axpby(a, b, alpha=1.0, beta=1.0, out=None, **kw):
    """alpha a + beta b (see apply)."""
    return apply("axpby", a, b, out=out, alpha=alpha, beta=beta, **kw)


def relu(a, out=None, **kw):
    """max(a, 0) (see apply)."""
    return apply("relu", a, out=out, **kw)


def silu(a, out=None, **kw):
    """a * sigmoid(a), floating-point dtypes (see apply)."""
    return apply("silu", a, out=out, **kw)


def info():
    """This build: backend, device, versions, limits, type pairs, ops (initializes Kokkos)."""
    d = _core.info()
    d["module"] = _core.__file__
    return d
