// tilekit._tilekit: the C++ side of the Python module. It reads DLPack capsules (or NumPy's array
// interface, for read-only arrays), checks them, and runs tilekit's gemm and elementwise ops on the
// caller's memory through StridedMatrix descriptors: no copies, no managed allocations. The Python
// side (python/tilekit/__init__.py) gets the capsules, chooses the stream and allocates outputs.
//
// Kokkos is initialized on the first call (on the device of the first array) and finalized by
// finalize(), which the Python side registers with atexit.
#include "tilekit/tilekit.hpp"
#include "tilekit/kernels/core/cpu.hpp"
#include "tilekit/kernels/core/device.hpp"
#include "tilekit/kernels/core/runtime.hpp"
#include "tilekit/tuning/elementwise_defaults.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"

#include <Kokkos_Core.hpp>
#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace py = pybind11;
namespace tk = tilekit;

namespace {

// ---------------------------------------------------------------------------------------------
// Kokkos lifetime and execution-space instances
// ---------------------------------------------------------------------------------------------

bool g_initialized_here = false;  // Kokkos::initialize was called by this module
bool g_finalized = false;         // finalize() ran: no Kokkos until the interpreter ends
int g_device = 0;                 // the GPU Kokkos runs on (GPU builds)
double g_cpp_seconds_per_call = 0;  // gemm(..., repeat > 1): seconds per call of the C++ side

#if defined(KOKKOS_ENABLE_CUDA)
constexpr bool kGpu = true;
constexpr DLDeviceType kArrayDevice = kDLCUDA;
constexpr const char* kArrayDeviceName = "cuda";
// Kokkos 3.4 gives each instance made from a stream its own scratch buffers (cudaMalloc, which
// synchronises the device): one instance per stream is made once and kept until finalize().
std::map<std::uintptr_t, Kokkos::Cuda>& stream_instances() {
  static auto* m = new std::map<std::uintptr_t, Kokkos::Cuda>();
  return *m;
}
#else
constexpr bool kGpu = false;
constexpr DLDeviceType kArrayDevice = kDLCPU;
constexpr const char* kArrayDeviceName = "cpu";
#endif

const char* device_type_name(int t) {
  switch (t) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "cuda_managed";
    default: return "unknown";
  }
}

void ensure_initialized(int device) {
  if (Kokkos::is_initialized()) return;
  if (g_finalized)
    throw std::runtime_error("tilekit was finalized (at interpreter exit); Kokkos cannot be initialized again");
#if defined(KOKKOS_ENABLE_CUDA)
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    throw std::runtime_error(std::string("this tilekit build runs on CUDA GPUs, and none can be used here (") +
                             (err != cudaSuccess ? cudaGetErrorString(err) : "no CUDA device") + ")");
  if (device < 0 || device >= count)
    throw py::value_error("CUDA device " + std::to_string(device) + " does not exist (this machine has " +
                          std::to_string(count) + ")");
#endif
  g_device = device;
#if KOKKOS_VERSION >= 30700
  Kokkos::InitializationSettings settings;
  settings.set_disable_warnings(true);
  if (kGpu) settings.set_device_id(device);
  Kokkos::initialize(settings);
#else
  Kokkos::InitArguments args;
  args.disable_warnings = true;
  if (kGpu) args.device_id = device;
  Kokkos::initialize(args);
#endif
  g_initialized_here = true;
}

void finalize() {
#if defined(KOKKOS_ENABLE_CUDA)
  stream_instances().clear();
#endif
  if (g_initialized_here && Kokkos::is_initialized()) Kokkos::finalize();
  g_initialized_here = false;
  g_finalized = true;
}

/// The instance that launches on `stream` (a cudaStream_t as an integer; 0: the default instance).
Kokkos::DefaultExecutionSpace space_for(std::uintptr_t stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (stream == 0) return Kokkos::DefaultExecutionSpace();
  auto& m = stream_instances();
  auto it = m.find(stream);
  if (it == m.end()) it = m.emplace(stream, Kokkos::Cuda(reinterpret_cast<cudaStream_t>(stream))).first;
  return it->second;
#else
  if (stream != 0)
    throw py::value_error("stream=" + std::to_string(stream) + ": streams apply to GPU builds; this build's backend is " +
                          tk::backend_name() + " (pass stream=None)");
  return Kokkos::DefaultExecutionSpace();
#endif
}

/// The launch-thread rule (docs/library.md, "Threads") as a RuntimeError before anything else.
void require_launch_thread() {
  const std::string why = tk::launch_thread_problem();
  if (!why.empty()) throw std::runtime_error(why);
}

// ---------------------------------------------------------------------------------------------
// Operands: DLPack capsules and array-interface descriptors
// ---------------------------------------------------------------------------------------------

/// An operand as the kernels see it, plus where it lives. Owns the DLPack tensor it came from.
struct Operand {
  std::string name;  // "a", "b", "c", "bias", "inputs[1]", ...
  void* data = nullptr;
  int ndim = 0;
  int64_t rows = 1, cols = 1;  // 1-D: 1 x n; 0-D: 1 x 1
  int64_t rs = 0, cs = 0;      // strides in elements
  DLDataType dtype{};
  DLDevice device{};
  std::shared_ptr<DLManagedTensor> owner;  // calls the producer's deleter when the last copy goes
};

bool dtype_of(const DLDataType& t, tk::DType& out) {
  if (t.lanes != 1) return false;
  if (t.code == kDLFloat && t.bits == 64) out = tk::DType::f64;
  else if (t.code == kDLFloat && t.bits == 32) out = tk::DType::f32;
  else if (t.code == kDLFloat && t.bits == 16) out = tk::DType::f16;
  else if (t.code == kDLBfloat && t.bits == 16) out = tk::DType::bf16;
  else if (t.code == kDLInt && t.bits == 8) out = tk::DType::i8;
  else if (t.code == kDLInt && t.bits == 32) out = tk::DType::i32;
  else return false;
  return true;
}

std::string dlpack_dtype_name(const DLDataType& t) {
  tk::DType d;
  if (dtype_of(t, d)) return tk::dtype_name(d);
  const char* code = t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint" : t.code == kDLFloat ? "float"
                   : t.code == kDLBfloat ? "bfloat" : t.code == kDLComplex ? "complex" : "code" ;
  std::string s = std::string(code) + std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

tk::DType operand_dtype(const Operand& o, const char* allowed) {
  tk::DType d;
  if (!dtype_of(o.dtype, d))
    throw py::type_error(o.name + " has dtype " + dlpack_dtype_name(o.dtype) + ", which tilekit does not support (allowed: " +
                         allowed + ")");
  return d;
}

void set_shape(Operand& o, int ndim, const int64_t* shape, const int64_t* strides, int max_ndim) {
  if (ndim > max_ndim || ndim < 0)
    throw py::value_error(o.name + " has " + std::to_string(ndim) + " dimensions; allowed: " +
                          (max_ndim == 2 ? "2 (a matrix)" : "up to " + std::to_string(max_ndim)));
  o.ndim = ndim;
  if (ndim == 2) {
    o.rows = shape[0];
    o.cols = shape[1];
    o.rs = strides ? strides[0] : shape[1];
    o.cs = strides ? strides[1] : 1;
  } else if (ndim == 1) {  // a row: 1 x n
    o.rows = 1;
    o.cols = shape[0];
    o.rs = 0;
    o.cs = strides ? strides[0] : 1;
  } else {
    o.rows = o.cols = 1;
  }
}

void check_device(const Operand& o) {
  const int t = o.device.device_type;
  const bool ok = kGpu ? (t == kDLCUDA || t == kDLCUDAManaged) : (t == kDLCPU || t == kDLCUDAHost);
  if (!ok)
    throw py::value_error(o.name + " is in " + device_type_name(t) + " memory; this tilekit build (" +
                          tk::backend_name() + ") takes arrays in " + kArrayDeviceName + " memory" +
                          (kGpu ? " (e.g. tensor.cuda(), cupy.asarray)" : " (e.g. tensor.cpu(), numpy arrays)"));
  if (kGpu && o.device.device_id != g_device)
    throw py::value_error(o.name + " is on " + kArrayDeviceName + ":" + std::to_string(o.device.device_id) +
                          "; tilekit runs on " + kArrayDeviceName + ":" + std::to_string(g_device) +
                          " in this process (the device of the first array it was given)");
}

/// Takes a "dltensor" capsule (renaming it "used_dltensor", as the protocol asks of a consumer).
Operand from_capsule(const py::handle& cap, const std::string& name, int max_ndim) {
  PyObject* o = cap.ptr();
  if (!PyCapsule_IsValid(o, "dltensor"))
    throw py::type_error(name + ": expected a DLPack capsule (from __dlpack__()); got " +
                         std::string(py::str(py::type::handle_of(cap))) +
                         (PyCapsule_IsValid(o, "used_dltensor") ? " that was already used" : ""));
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(o, "dltensor"));
  PyCapsule_SetName(o, "used_dltensor");
  Operand op;
  op.name = name;
  op.owner.reset(t, [](DLManagedTensor* m) {
    if (m->deleter) m->deleter(m);
  });
  const DLTensor& d = t->dl_tensor;
  op.dtype = d.dtype;
  op.device = d.device;
  op.data = static_cast<char*>(d.data) + d.byte_offset;
  set_shape(op, d.ndim, d.shape, d.strides, max_ndim);
  return op;
}

/// NumPy's array interface as a tuple (data pointer, shape, strides in bytes or None, DLPack dtype
/// code, bits), for arrays whose __dlpack__ refuses (read-only arrays in NumPy < 2).
Operand from_interface(const py::tuple& t, const std::string& name, int max_ndim) {
  Operand op;
  op.name = name;
  op.data = reinterpret_cast<void*>(t[0].cast<std::uintptr_t>());
  const auto shape = t[1].cast<std::vector<int64_t>>();
  op.dtype = DLDataType{t[3].cast<uint8_t>(), t[4].cast<uint8_t>(), 1};
  op.device = DLDevice{kDLCPU, 0};
  std::vector<int64_t> strides;
  if (!t[2].is_none()) {
    const int64_t bytes = op.dtype.bits / 8;
    for (int64_t s : t[2].cast<std::vector<int64_t>>()) {
      if (s % bytes != 0)
        throw py::value_error(name + " has a stride of " + std::to_string(s) + " bytes, not a multiple of its " +
                              std::to_string(bytes) + "-byte elements");
      strides.push_back(s / bytes);
    }
  }
  set_shape(op, int(shape.size()), shape.data(), strides.empty() ? nullptr : strides.data(), max_ndim);
  return op;
}

Operand operand(const py::handle& h, const std::string& name, int max_ndim) {
  Operand o = py::isinstance<py::tuple>(h) ? from_interface(py::reinterpret_borrow<py::tuple>(h), name, max_ndim)
                                           : from_capsule(h, name, max_ndim);
  ensure_initialized(o.device.device_type == kDLCUDA ? int(o.device.device_id) : 0);
  check_device(o);
  return o;
}

template <class T>
tk::StridedMatrix<T> matrix(const Operand& o) {
  return {static_cast<T*>(o.data), o.rows, o.cols, o.rs, o.cs};
}

Kokkos::DefaultExecutionSpace launch_space(std::uintptr_t stream) {
  require_launch_thread();
  return space_for(stream);
}

/// Host launches return when done on Kokkos 3.4; fencing the instance makes it so on every version.
void finish(const Kokkos::DefaultExecutionSpace& space) {
  if (!kGpu) space.fence();
}

// ---------------------------------------------------------------------------------------------
// gemm
// ---------------------------------------------------------------------------------------------

tk::Activation parse_activation(const std::string& s) {
  if (s.empty() || s == "none") return tk::Activation::none;
  for (tk::Activation a : {tk::Activation::relu, tk::Activation::leaky_relu, tk::Activation::silu,
                           tk::Activation::gelu})
    if (s == tk::activation_name(a)) return a;
  throw py::value_error("activation '" + s + "' is not known; allowed: None, relu, leaky_relu, silu, gelu");
}

tk::Math parse_math(const std::string& s) {
  if (s == "ieee") return tk::Math::ieee;
  if (s == "tf32") return tk::Math::tf32;
  throw py::value_error("math '" + s + "' is not known; allowed: ieee, tf32");
}

/// The name of the accumulation type of an input type (the dtype a bias must have).
const char* accumulation_name(tk::DType in) {
  return in == tk::DType::f64 ? "f64" : in == tk::DType::i8 ? "i32" : "f32";
}

template <class C>
C scalar_as(double v, const char* what, tk::DType in) {
  if (std::is_integral<C>::value && (v != std::floor(v) || std::fabs(v) > 2147483647.0))
    throw py::value_error(std::string(what) + "=" + py::str(py::float_(v)).cast<std::string>() + ": for " +
                          tk::dtype_name(in) + " inputs it must be a whole number in the int32 range");
  return static_cast<C>(v);
}

/// Runs C = alpha op(A) op(B) + beta C (+ bias, activation) on the given stream; returns the config's name.
std::string gemm(const py::handle& a_h, const py::handle& b_h, const py::handle& c_h, double alpha, double beta,
                 bool trans_a, bool trans_b, const py::handle& bias_h, const std::string& activation,
                 const std::string& config, const std::string& math, std::uintptr_t stream, int repeat) {
  const Operand a = operand(a_h, "a", 2), b = operand(b_h, "b", 2), c = operand(c_h, "c", 2);
  for (const Operand* o : {&a, &b, &c})
    if (o->ndim != 2)
      throw py::value_error(o->name + " has " + std::to_string(o->ndim) + " dimensions; gemm takes 2-D arrays");
  const char* in_types = "f64, f32, f16, bf16, i8";
  const tk::DType tin = operand_dtype(a, in_types);
  const tk::DType tb = operand_dtype(b, in_types);
  const tk::DType tout = operand_dtype(c, "f64, f32, f16, bf16, i32");
  if (tb != tin)
    throw py::type_error(std::string("a is ") + tk::dtype_name(tin) + " and b is " + tk::dtype_name(tb) +
                         "; both must have the same dtype");
  if (tin == tk::DType::i32)
    throw py::type_error(std::string("gemm inputs of dtype i32 are not supported (allowed input -> output: ") +
                         tk::supported_type_pairs() + ")");
  bool pair_ok = false;
  for (auto p : {std::pair{tk::DType::f64, tk::DType::f64}, {tk::DType::f32, tk::DType::f32},
                 {tk::DType::f16, tk::DType::f16}, {tk::DType::f16, tk::DType::f32}, {tk::DType::bf16, tk::DType::bf16},
                 {tk::DType::bf16, tk::DType::f32}, {tk::DType::i8, tk::DType::i32}})
    pair_ok |= p.first == tin && p.second == tout;
  if (!pair_ok)
    throw py::type_error(std::string("unsupported type pair ") + tk::dtype_name(tin) + " -> " + tk::dtype_name(tout) +
                         " (allowed: " + tk::supported_type_pairs() + ")");
  std::unique_ptr<Operand> bias;
  if (!bias_h.is_none()) {
    bias = std::make_unique<Operand>(operand(bias_h, "bias", 1));
    tk::DType tbias = operand_dtype(*bias, "f64, f32, i32");
    if (std::string(tk::dtype_name(tbias)) != accumulation_name(tin))
      throw py::type_error(std::string("bias is ") + tk::dtype_name(tbias) + "; for " + tk::dtype_name(tin) +
                           " inputs it must be " + accumulation_name(tin) + " (the accumulation type)");
    if (bias->ndim != 1)
      throw py::value_error("bias has " + std::to_string(bias->ndim) + " dimensions; it must be 1-D (one value per column of C)");
    if (bias->cols > 1 && bias->cs != 1)
      throw py::value_error("bias has a stride of " + std::to_string(bias->cs) + " elements; it must be contiguous (stride 1)");
  }
  const tk::Activation act = parse_activation(activation);
  const tk::Math m = parse_math(math);
  const auto space = launch_space(stream);
  std::string ran;
  tk::with_type_pair(tin, tout, [&](auto tag_in, auto tag_out) {
    using TIn = typename decltype(tag_in)::type;
    using TOut = typename decltype(tag_out)::type;
    using C = typename tk::TypeTraits<TIn>::compute;
    tk::MatmulProblem<TIn, TOut> p;
    const auto ma = matrix<const TIn>(a), mb = matrix<const TIn>(b);
    p.a = trans_a ? ma.transposed() : ma;
    p.b = trans_b ? mb.transposed() : mb;
    p.c = matrix<TOut>(c);
    p.M = p.c.rows;
    p.N = p.c.cols;
    p.K = p.a.cols;
    p.alpha = scalar_as<C>(alpha, "alpha", tin);
    p.beta = scalar_as<C>(beta, "beta", tin);
    p.act = act;
    p.math = m;
    if (bias) {
      if (bias->cols != p.N)
        throw tk::InvalidArgument("bias has " + std::to_string(bias->cols) + " values; it needs one per column of C (" +
                                  std::to_string(p.N) + ")");
      p.bias = static_cast<const C*>(bias->data);
    }
    // What a C++ caller of tilekit::gemm pays per call: the config (auto: a memo lookup after the
    // first call), the entry checks, the launch. repeat > 1 times it (bench/python_gemm.py).
    auto call = [&]() {
      tk::MatmulConfig cfg;
      if (config == "auto") {
        cfg = tk::detail::auto_matmul_config(tin, tout, tk::detail::column_major(p.a), tk::detail::column_major(p.b),
                                             tk::detail::column_major(p.c), tk::Epilogue{p.bias != nullptr, p.act},
                                             p.M, p.N, p.K, p.math,
                                             [&](const tk::MatmulConfig& k) { return tk::check_matmul(p, k); },
                                             TILEKIT_SHIPPED_TUNING_DIR);
      } else {
        cfg = tk::tuning::default_matmul_config(tk::backend_name(), tin, p.math);
        std::string why;
        if (!tk::MatmulConfig::parse(config, cfg, why)) throw tk::InvalidArgument("config '" + config + "': " + why);
      }
      const std::string why = tk::check_matmul(p, cfg);
      if (!why.empty()) throw tk::InvalidArgument(why);
      tk::launch_matmul(p, cfg, space);
      finish(space);
      return cfg;
    };
    py::gil_scoped_release unlocked;  // reacquired before an exception reaches Python
    const tk::MatmulConfig cfg = call();
    if (repeat > 1) {
      space.fence();
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < repeat; ++r) call();
      space.fence();
      g_cpp_seconds_per_call = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / repeat;
    }
    ran = cfg.name();
  });
  return ran;
}

// ---------------------------------------------------------------------------------------------
// elementwise
// ---------------------------------------------------------------------------------------------

template <class T, class Op, std::size_t... I>
void apply_typed(const Kokkos::DefaultExecutionSpace& space, const Op& op, const std::vector<tk::StridedMatrix<const T>>& in,
                 const tk::StridedMatrix<T>& out, const tk::ElementwiseConfig* cfg, std::index_sequence<I...>) {
  const std::array<tk::StridedMatrix<const T>, sizeof...(I)> inputs{in[I]...};
  py::gil_scoped_release unlocked;
  if (cfg)
    tk::apply(space, op, inputs, out, *cfg);
  else
    tk::apply(space, op, inputs, out);
  finish(space);
}

template <class T, class Op>
void apply_op(const Kokkos::DefaultExecutionSpace& space, const Op& op, const std::vector<tk::StridedMatrix<const T>>& in,
              const tk::StridedMatrix<T>& out, const tk::ElementwiseConfig* cfg) {
  apply_typed<T>(space, op, in, out, cfg, std::make_index_sequence<Op::arity>{});
}

template <class T>
void apply_kind(tk::OpKind kind, const tk::OpScalars& s, const Kokkos::DefaultExecutionSpace& space,
                const std::vector<tk::StridedMatrix<const T>>& in, const tk::StridedMatrix<T>& out,
                const tk::ElementwiseConfig* cfg) {
  namespace ops = tk::ops;
  switch (kind) {
    case tk::OpKind::add: return apply_op<T>(space, ops::Add{}, in, out, cfg);
    case tk::OpKind::sub: return apply_op<T>(space, ops::Sub{}, in, out, cfg);
    case tk::OpKind::mul: return apply_op<T>(space, ops::Mul{}, in, out, cfg);
    case tk::OpKind::div: return apply_op<T>(space, ops::Div{}, in, out, cfg);
    case tk::OpKind::max: return apply_op<T>(space, ops::Max{}, in, out, cfg);
    case tk::OpKind::min: return apply_op<T>(space, ops::Min{}, in, out, cfg);
    case tk::OpKind::mul_relu: return apply_op<T>(space, ops::MulRelu{}, in, out, cfg);
    case tk::OpKind::fma: return apply_op<T>(space, ops::Fma{}, in, out, cfg);
    case tk::OpKind::axpby: {
      ops::Axpby op;
      op.alpha = s.alpha;
      op.beta = s.beta;
      return apply_op<T>(space, op, in, out, cfg);
    }
    case tk::OpKind::relu: return apply_op<T>(space, ops::Relu{}, in, out, cfg);
    case tk::OpKind::silu:
      if constexpr (std::is_floating_point<typename tk::TypeTraits<T>::compute>::value)
        return apply_op<T>(space, ops::Silu{}, in, out, cfg);
      break;
  }
  throw tk::InvalidArgument(std::string("op ") + tk::op_info(kind).name + " is not defined for " +
                            tk::dtype_name(tk::TypeTraits<T>::dtype));
}

void apply(const std::string& op_name, const py::list& input_handles, const py::handle& out_h, double alpha,
           double beta, const std::string& config, std::uintptr_t stream) {
  tk::OpKind kind;
  if (!tk::parse_op(op_name, kind))
    throw py::value_error("op '" + op_name + "' is not known; allowed: " + tk::op_names());
  const tk::OpInfo& info = tk::op_info(kind);
  if (int(input_handles.size()) != info.arity)
    throw py::value_error(std::string("op ") + info.name + " (" + info.formula + ") takes " +
                          std::to_string(info.arity) + " input" + (info.arity > 1 ? "s" : "") + ", got " +
                          std::to_string(input_handles.size()));
  std::vector<Operand> inputs;
  for (std::size_t k = 0; k < input_handles.size(); ++k)
    inputs.push_back(operand(input_handles[k], "inputs[" + std::to_string(k) + "]", 2));
  const Operand out = operand(out_h, "out", 2);
  const char* types = "f64, f32, f16, bf16, i32";
  const tk::DType t = operand_dtype(out, types);
  for (const Operand& o : inputs)
    if (operand_dtype(o, types) != t)
      throw py::type_error(o.name + " is " + tk::dtype_name(operand_dtype(o, types)) + " and out is " +
                           tk::dtype_name(t) + "; every operand of an elementwise op has the same dtype");
  if (info.floating_only && t == tk::DType::i32)
    throw py::type_error(std::string("op ") + info.name + " needs a floating-point dtype (got i32)");
  const tk::OpScalars scalars{alpha, beta};
  const auto space = launch_space(stream);
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<tk::StridedMatrix<const T>> in;
    for (const Operand& o : inputs) in.push_back(matrix<const T>(o));
    const tk::StridedMatrix<T> o = matrix<T>(out);
    std::unique_ptr<tk::ElementwiseConfig> cfg;
    if (config != "auto") {
      tk::ElementwiseConfig named;
      std::string why;
      if (!tk::ElementwiseConfig::parse(config, named, why)) throw tk::InvalidArgument("config '" + config + "': " + why);
      cfg = std::make_unique<tk::ElementwiseConfig>(
          tk::tuning::default_elementwise_config(tk::backend_name(), t, named.variant));
      if (!tk::ElementwiseConfig::parse(config, *cfg, why)) throw tk::InvalidArgument("config '" + config + "': " + why);
    }
    const std::string why = tk::check_op<T>(kind, scalars, in, o, cfg ? *cfg : tk::ElementwiseConfig{});
    if (!why.empty()) throw tk::InvalidArgument(why);
    apply_kind<T>(kind, scalars, space, in, o, cfg.get());
  };
  switch (t) {
    case tk::DType::f64: return run(tk::TypeTag<double>{});
    case tk::DType::f32: return run(tk::TypeTag<float>{});
    case tk::DType::f16: return run(tk::TypeTag<tk::f16>{});
    case tk::DType::bf16: return run(tk::TypeTag<tk::bf16>{});
    case tk::DType::i32: return run(tk::TypeTag<int32_t>{});
    default: break;
  }
  throw py::type_error(std::string("elementwise ops do not take ") + tk::dtype_name(t) + " (allowed: " + types + ")");
}

// ---------------------------------------------------------------------------------------------
// Owned buffers (outputs for libraries without a NumPy-style `empty`) and dtype reinterpretation
// ---------------------------------------------------------------------------------------------

DLDataType dlpack_dtype(const std::string& name) {
  tk::DType d;
  if (!tk::parse_dtype(name, d))
    throw py::type_error("dtype '" + name + "' is not known; allowed: f64, f32, f16, bf16, i8, i32");
  switch (d) {
    case tk::DType::f64: return {kDLFloat, 64, 1};
    case tk::DType::f32: return {kDLFloat, 32, 1};
    case tk::DType::f16: return {kDLFloat, 16, 1};
    case tk::DType::bf16: return {kDLBfloat, 16, 1};
    case tk::DType::i8: return {kDLInt, 8, 1};
    case tk::DType::i32: return {kDLInt, 32, 1};
  }
  return {};
}

struct Exported {
  DLManagedTensor tensor{};
  std::vector<int64_t> shape, strides;
  std::shared_ptr<void> memory;             // owned memory (outlives Kokkos: not a Kokkos allocation)
  std::shared_ptr<DLManagedTensor> source;  // a reinterpreted tensor
};

/// `bytes` of memory the default execution space can access, freed with the last reference.
std::shared_ptr<void> allocate(std::size_t bytes) {
#if defined(KOKKOS_ENABLE_CUDA)
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess)
    throw std::bad_alloc();
  return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
#else
  constexpr std::size_t kAlign = 64;  // bytes: a cache line, so rows of any type start aligned
  void* p = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
#endif
}

py::capsule export_capsule(std::unique_ptr<Exported> e) {
  e->tensor.dl_tensor.shape = e->shape.data();
  e->tensor.dl_tensor.strides = e->strides.data();
  e->tensor.dl_tensor.ndim = int(e->shape.size());
  e->tensor.manager_ctx = e.get();
  e->tensor.deleter = [](DLManagedTensor* m) { delete static_cast<Exported*>(m->manager_ctx); };
  DLManagedTensor* t = &e.release()->tensor;
  return py::capsule(t, "dltensor", [](PyObject* cap) {
    // Deleted here only while unconsumed; a consumer renames it and calls the deleter itself.
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      m->deleter(m);
    } else {
      PyErr_Clear();
    }
  });
}

/// A row-major rows x cols array of tilekit's own memory, exported as DLPack capsules (each
/// capsule keeps the memory alive).
struct Buffer {
  std::shared_ptr<void> memory;
  int64_t rows = 0, cols = 0;
  DLDataType dtype{};
  int device = 0;

  py::capsule capsule() const {
    auto e = std::make_unique<Exported>();
    e->memory = memory;
    e->shape = {rows, cols};
    e->strides = {cols, 1};
    e->tensor.dl_tensor.data = memory.get();
    e->tensor.dl_tensor.device = DLDevice{kArrayDevice, device};
    e->tensor.dl_tensor.dtype = dtype;
    return export_capsule(std::move(e));
  }
};

Buffer empty(int64_t rows, int64_t cols, const std::string& dtype, int device) {
  if (rows < 0 || cols < 0)
    throw py::value_error("shape (" + std::to_string(rows) + ", " + std::to_string(cols) + ") has a negative size");
  ensure_initialized(device);
  Buffer b;
  b.dtype = dlpack_dtype(dtype);
  const std::size_t bytes = std::size_t(rows) * std::size_t(cols) * (b.dtype.bits / 8);
  b.memory = allocate(bytes > 0 ? bytes : 1);
  b.rows = rows;
  b.cols = cols;
  b.device = kGpu ? g_device : 0;
  return b;
}

/// Orders `consumer` after the work queued so far in `producer` (cudaStream_t handles), without
/// blocking the host; nothing on host builds.
void stream_wait([[maybe_unused]] std::uintptr_t consumer, [[maybe_unused]] std::uintptr_t producer) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (consumer == producer) return;
  cudaEvent_t event;
  if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess ||
      cudaEventRecord(event, reinterpret_cast<cudaStream_t>(producer)) != cudaSuccess ||
      cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(consumer), event, 0) != cudaSuccess)
    throw std::runtime_error(std::string("ordering stream ") + std::to_string(consumer) + " after stream " +
                             std::to_string(producer) + " failed: " + cudaGetErrorString(cudaGetLastError()));
  cudaEventDestroy(event);
#endif
}

/// The same memory as another dtype of the same element size (e.g. NumPy uint16 bits as bf16).
py::capsule reinterpret(const py::handle& cap, const std::string& dtype) {
  Operand src = from_capsule(cap, "array", 64);
  const DLTensor& d = src.owner->dl_tensor;
  const DLDataType t = dlpack_dtype(dtype);
  if (t.bits != d.dtype.bits || d.dtype.lanes != 1)
    throw py::type_error("cannot view " + dlpack_dtype_name(d.dtype) + " elements as " + dtype + " (" +
                         std::to_string(t.bits / 8) + " bytes): the element sizes differ");
  auto e = std::make_unique<Exported>();
  e->shape.assign(d.shape, d.shape + d.ndim);
  if (d.strides) {
    e->strides.assign(d.strides, d.strides + d.ndim);
  } else {  // compact row-major
    e->strides.assign(d.ndim, 1);
    for (int k = d.ndim - 2; k >= 0; --k) e->strides[k] = e->strides[k + 1] * d.shape[k + 1];
  }
  e->tensor.dl_tensor = d;
  e->tensor.dl_tensor.dtype = t;
  e->source = src.owner;
  return export_capsule(std::move(e));
}

py::dict info() {
  ensure_initialized(0);
  const tk::RuntimeInfo r = tk::runtime_info();
  py::dict d;
  d["backend"] = r.backend;
  d["device"] = r.device;
  d["architecture"] = r.architecture;
  d["compute_units"] = r.compute_units;
  d["concurrency"] = r.concurrency;
  d["scratch_level0_bytes"] = r.scratch_level0;
  d["scratch_level1_bytes"] = r.scratch_level1;
  d["last_level_cache_bytes"] = r.last_level_cache;
  d["tilekit_version"] = r.tilekit_version;
  d["kokkos_version"] = r.kokkos_version;
  d["kokkos_kernels_version"] = r.kokkos_kernels_version;
  d["build_type"] = r.build_type;
  d["optimized"] = r.optimized;
  d["type_pairs"] = std::string(tk::supported_type_pairs());
  d["elementwise_ops"] = tk::op_names();
  if (!kGpu) d["host_path"] = std::string(tk::host_isa_reason());
  if (kGpu) d["device_id"] = g_device;
  d["launch_thread_problem"] = tk::launch_thread_problem();
  return d;
}

}  // namespace

PYBIND11_MODULE(_tilekit, m) {
  m.doc() = "tilekit's C++ side; use the tilekit package (tilekit.gemm, tilekit.apply, ...)";
  m.attr("backend") = TILEKIT_PYTHON_BACKEND;
  m.attr("gpu") = kGpu;
  m.attr("array_device") = int(kArrayDevice);
  m.def("gemm", &gemm, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("alpha"), py::arg("beta"),
        py::arg("trans_a"), py::arg("trans_b"), py::arg("bias"), py::arg("activation"), py::arg("config"),
        py::arg("math"), py::arg("stream"), py::arg("repeat") = 1,
        "C = alpha op(A) op(B) + beta C (+ bias, activation) on DLPack capsules; returns the config that ran. "
        "repeat > 1 runs the C++ side that many more times and times it (cpp_seconds_per_call)");
  m.def("cpp_seconds_per_call", []() { return g_cpp_seconds_per_call; },
        "host seconds per call of the C++ side measured by the last gemm(..., repeat > 1)");
  m.def("apply", &apply, py::arg("op"), py::arg("inputs"), py::arg("out"), py::arg("alpha"), py::arg("beta"),
        py::arg("config"), py::arg("stream"), "out = op(inputs...) on DLPack capsules");
  py::class_<Buffer>(m, "Buffer", "memory tilekit allocated, exported through DLPack capsules")
      .def("capsule", &Buffer::capsule, "a new DLPack capsule over the memory");
  m.def("empty", &empty, py::arg("rows"), py::arg("cols"), py::arg("dtype"), py::arg("device"),
        "a new row-major array in this build's memory");
  m.def("stream_wait", &stream_wait, py::arg("consumer"), py::arg("producer"),
        "order stream `consumer` after the work queued in `producer` (CUDA builds)");
  m.def("reinterpret", &reinterpret, py::arg("capsule"), py::arg("dtype"),
        "the same memory as another dtype of the same element size, as a DLPack capsule");
  m.def("info", &info, "backend, device, versions and limits of this build");
  m.def("initialize", &ensure_initialized, py::arg("device") = 0, "initialize Kokkos (on `device` for GPU builds)");
  m.def("is_initialized", []() { return Kokkos::is_initialized(); });
  m.def("finalize", &finalize, "finalize Kokkos (registered with atexit)");
  m.def("launch_thread_problem", []() { return Kokkos::is_initialized() ? tk::launch_thread_problem() : std::string(); });
}
