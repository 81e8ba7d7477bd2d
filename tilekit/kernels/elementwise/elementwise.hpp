// tilekit elementwise ops: public API.
//
//   out(i, j) = op(in_0(i, j), ..., in_{k-1}(i, j))      1 <= k <= 4 inputs, an M x N output
//
// Variants (ElementwiseConfig::variant), the progression of CuTe's elementwise-add notebook:
//   naive       one element per work item (a flat RangePolicy over M x N)
//   vectorized  one 16-byte vector per work item: 2 f64, 4 f32 or i32, 8 f16 or bf16
//   tiled       a team owns a tile of rows x columns: consecutive threads take consecutive 16-byte
//               vectors along the contiguous dimension and each thread covers several rows (the
//               notebook's thread-value layout); teams may walk the tiles in row order ("remap"),
//               so that consecutive teams touch contiguous memory
//   automatic   the backend's best known variant and config (tilekit/tuning/elementwise_defaults.cpp)
//
// Types: f64, f32, f16, bf16, i32; all operands of one call have the same type. Each op computes in
// TypeTraits<T>::compute (float for f16 and bf16) and rounds once to T. Integer arithmetic wraps
// (two's complement), and integer division by 0 gives 0.
//
// Layouts: every operand is read through its own (row stride, column stride) pair: row- or
// column-major, padded, strided, misaligned. The 16-byte vector path is taken only where every
// operand is contiguous and 16-byte aligned along the output's contiguous dimension (or broadcast
// along it); anything else takes a scalar path, with the same results. Tails (sizes that are not
// multiples of the vector width or the tile) are masked by predicates.
//
// Broadcasting: an input of 1 x N (or row stride 0) repeats one row down the M rows (a bias add);
// M x 1 (or column stride 0) repeats one column; 1 x 1 is a scalar.
//
// Aliasing: an input may be the output itself (c = a + c): every element is read and then written by
// the same thread. Any other overlap of an input with the output is rejected.
//
// Public entry points check shapes, broadcast compatibility, arity, strides, aliasing and the config,
// and throw InvalidArgument with a message naming the bad value and what is allowed; the kernels
// (tilekit/kernels/elementwise/launch.hpp) assume valid input. Zero-sized outputs are a valid no-op.
#pragma once

#include "tilekit/kernels/core/device.hpp"
#include "tilekit/kernels/core/error.hpp"
#include "tilekit/kernels/elementwise/config.hpp"
#include "tilekit/kernels/matmul/epilogue.hpp"
#include "tilekit/kernels/core/strided.hpp"
#include "tilekit/kernels/core/types.hpp"

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace tilekit {

// ---------------------------------------------------------------------------------------------
// Ops: device functors with a static arity and name, called with values in the compute type.
// ---------------------------------------------------------------------------------------------

namespace arith {
/// Integer results wrap (computed in the unsigned type); floating-point ones round once.
template <class C>
KOKKOS_INLINE_FUNCTION C add(C a, C b) {
  if constexpr (std::is_integral<C>::value) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class C>
KOKKOS_INLINE_FUNCTION C sub(C a, C b) {
  if constexpr (std::is_integral<C>::value) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <class C>
KOKKOS_INLINE_FUNCTION C mul(C a, C b) {
  if constexpr (std::is_integral<C>::value) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
/// Integer division truncates; by 0 it gives 0, and INT_MIN / -1 wraps to INT_MIN.
template <class C>
KOKKOS_INLINE_FUNCTION C div(C a, C b) {
  if constexpr (std::is_integral<C>::value) {
    if (b == C(0)) return C(0);
    if (b == C(-1)) return sub(C(0), a);
    return a / b;
  } else {
    return a / b;
  }
}
/// a * b + c with one rounding (an explicit fused multiply-add, so no compiler decides it).
template <class C>
KOKKOS_INLINE_FUNCTION C fma(C a, C b, C c) {
  if constexpr (std::is_same<C, float>::value) {
    return ::fmaf(a, b, c);
  } else if constexpr (std::is_same<C, double>::value) {
    return ::fma(a, b, c);
  } else {
    return add(mul(a, b), c);
  }
}
}  // namespace arith

namespace ops {

struct Add {
  static constexpr int arity = 2;
  static constexpr const char* name = "add";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b) const { return arith::add(a, b); }
};
struct Sub {
  static constexpr int arity = 2;
  static constexpr const char* name = "sub";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b) const { return arith::sub(a, b); }
};
struct Mul {
  static constexpr int arity = 2;
  static constexpr const char* name = "mul";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b) const { return arith::mul(a, b); }
};
struct Div {
  static constexpr int arity = 2;
  static constexpr const char* name = "div";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b) const { return arith::div(a, b); }
};
struct Max {
  static constexpr int arity = 2;
  static constexpr const char* name = "max";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b) const { return a > b ? a : b; }
};
struct Min {
  static constexpr int arity = 2;
  static constexpr const char* name = "min";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b) const { return a < b ? a : b; }
};
/// relu(a * b): the notebook's custom-op example.
struct MulRelu {
  static constexpr int arity = 2;
  static constexpr const char* name = "mul_relu";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b) const {
    const C p = arith::mul(a, b);
    return p > C(0) ? p : C(0);
  }
};
/// a * b + c, fused (one rounding).
struct Fma {
  static constexpr int arity = 3;
  static constexpr const char* name = "fma";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b, C c) const { return arith::fma(a, b, c); }
};
/// alpha * a + beta * b, as fma(alpha, a, beta * b). The scalars are rounded to the compute type
/// (for i32 they must be whole numbers: checked at the entry).
struct Axpby {
  static constexpr int arity = 2;
  static constexpr const char* name = "axpby";
  double alpha = 1.0;
  double beta = 1.0;
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b) const {
    return arith::fma(static_cast<C>(alpha), a, arith::mul(static_cast<C>(beta), b));
  }
  /// "" when the scalars suit the type, else why not.
  std::string check(DType t) const;
};
struct Relu {
  static constexpr int arity = 1;
  static constexpr const char* name = "relu";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a) const { return a > C(0) ? a : C(0); }
};
/// x * sigmoid(x), overflow-free (tilekit/kernels/matmul/epilogue.hpp). Floating-point types only.
struct Silu {
  static constexpr int arity = 1;
  static constexpr const char* name = "silu";
  static constexpr bool floating_only = true;
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a) const {
    static_assert(std::is_floating_point<C>::value, "silu needs a floating-point compute type");
    return activate(Activation::silu, a);
  }
};

}  // namespace ops

/// True for ops that declare `static constexpr bool floating_only = true` (silu).
template <class Op, class = void>
struct op_floating_only : std::false_type {};
template <class Op>
struct op_floating_only<Op, std::enable_if_t<Op::floating_only>> : std::true_type {};

// ---------------------------------------------------------------------------------------------
// The shipped ops by name (the app, the tests): arity, exactness, and a dispatch over types.
// ---------------------------------------------------------------------------------------------

enum class OpKind { add, sub, mul, div, max, min, mul_relu, fma, axpby, relu, silu };

struct OpInfo {
  OpKind kind;
  const char* name;     ///< as --op takes it
  int arity;            ///< number of inputs
  bool exact;           ///< one correctly rounded result in the compute type: bit-exact everywhere
  bool floating_only;   ///< not defined for integer types
  const char* formula;  ///< for help texts
};

/// Every shipped op, in a fixed order.
const std::vector<OpInfo>& op_table();
const OpInfo& op_info(OpKind op);
/// Parses an op name ("mul+relu" is accepted for mul_relu); returns false for an unknown name.
bool parse_op(const std::string& s, OpKind& out);
/// "add, sub, mul, ..." for help texts and messages.
std::string op_names();

/// Scalars of the ops that take them (axpby).
struct OpScalars {
  double alpha = 1.0;
  double beta = 1.0;
};

// ---------------------------------------------------------------------------------------------
// Problems and entry points
// ---------------------------------------------------------------------------------------------

/// Everything a launch needs, in device-accessible pointers. Inputs are M x N, 1 x N, M x 1 or 1 x 1
/// (broadcast), or M x N with a stride of 0.
template <class T, int NIn>
struct ElementwiseProblem {
  static_assert(NIn >= 1 && NIn <= 4, "tilekit elementwise ops take 1 to 4 inputs");
  StridedMatrix<const T> in[NIn];
  StridedMatrix<T> out;
};

/// "" if the problem, op and config are valid for this build's backend, else what is wrong.
/// cfg may be automatic (resolved through tilekit/tuning/).
template <class Op, class T, int NIn>
std::string check_elementwise(const Op& op, const ElementwiseProblem<T, NIn>& p, const ElementwiseConfig& cfg);

/// Launches on `space` without checking (call check_elementwise first, or use apply()). Asynchronous,
/// like any Kokkos parallel_for: fence before reading the output on the host.
template <class Op, class T, int NIn>
void launch_elementwise(const Op& op, const ElementwiseProblem<T, NIn>& p, const ElementwiseConfig& cfg,
                        const Kokkos::DefaultExecutionSpace& space = Kokkos::DefaultExecutionSpace());

/// The variant and config a launch with cfg runs on this backend (resolves automatic).
ElementwiseConfig resolve_elementwise_config(const ElementwiseConfig& cfg, DType t);

/// Rank-2 views (any layout, the same element type) as the inputs of apply().
template <class V0, class... V>
auto make_inputs(const V0& v0, const V&... v) {
  using T = typename V0::non_const_value_type;
  static_assert((std::is_same<T, typename V::non_const_value_type>::value && ...),
                "tilekit::make_inputs: every input must have the same element type");
  auto as_const = [](const auto& view) {
    const auto m = as_matrix(view);
    return StridedMatrix<const T>{m.data, m.rows, m.cols, m.rs, m.cs};
  };
  return std::array<StridedMatrix<const T>, 1 + sizeof...(V)>{as_const(v0), as_const(v)...};
}

/// The output of apply(): a strided matrix as it is, a rank-2 view (any layout) over its memory.
template <class T>
StridedMatrix<T> as_output(const StridedMatrix<T>& out) {
  return out;
}
template <class OutView, std::enable_if_t<Kokkos::is_view<OutView>::value, int> = 0>
StridedMatrix<typename OutView::value_type> as_output(const OutView& out) {
  return as_matrix(out);
}

/// Generic N-ary apply, on the `space` instance: checks, then launches; throws InvalidArgument.
/// Inputs from make_inputs(); the output a rank-2 view (any layout) or a StridedMatrix. An automatic
/// cfg runs the backend's default (tilekit.hpp's apply without a config also looks up tuned
/// configs). Shipped ops are instantiated in the library; for your own functor (a static `arity`, a
/// static `name` and a KOKKOS_INLINE_FUNCTION call operator in the compute type) include
/// tilekit/kernels/elementwise/launch.hpp in one translation unit.
template <class Op, class T, std::size_t NIn, class Out>
void apply(const Kokkos::DefaultExecutionSpace& space, const Op& op,
           const std::array<StridedMatrix<const T>, NIn>& inputs, const Out& out, const ElementwiseConfig& cfg) {
  static_assert(int(NIn) == Op::arity, "tilekit::apply: the number of inputs must be the op's arity");
  static_assert(std::is_same<decltype(as_output(out)), StridedMatrix<T>>::value,
                "tilekit::apply: the output must be non-const and of the inputs' type");
  ElementwiseProblem<T, int(NIn)> p;
  for (std::size_t k = 0; k < NIn; ++k) p.in[k] = inputs[k];
  p.out = as_output(out);
  require_launch_thread();
  const std::string why = check_elementwise(op, p, cfg);
  if (!why.empty()) throw InvalidArgument(why);
  launch_elementwise(op, p, cfg, space);
}

/// apply() on the default execution space instance.
template <class Op, class T, std::size_t NIn, class Out>
void apply(const Op& op, const std::array<StridedMatrix<const T>, NIn>& inputs, const Out& out,
           const ElementwiseConfig& cfg) {
  apply(Kokkos::DefaultExecutionSpace(), op, inputs, out, cfg);
}

/// A shipped op chosen at run time. Beyond check_elementwise: the number of inputs must be the op's
/// arity, silu needs a floating-point type, and for i32 the axpby scalars must be whole numbers.
/// Instantiated for double, float, f16, bf16 and int32_t.
template <class T>
std::string check_op(OpKind op, const OpScalars& s, const std::vector<StridedMatrix<const T>>& inputs,
                     const StridedMatrix<T>& out, const ElementwiseConfig& cfg);
template <class T>
void launch_op(OpKind op, const OpScalars& s, const std::vector<StridedMatrix<const T>>& inputs,
               const StridedMatrix<T>& out, const ElementwiseConfig& cfg);
template <class T>
void apply_op(OpKind op, const OpScalars& s, const std::vector<StridedMatrix<const T>>& inputs,
              const StridedMatrix<T>& out, const ElementwiseConfig& cfg) {
  require_launch_thread();
  const std::string why = check_op(op, s, inputs, out, cfg);
  if (!why.empty()) throw InvalidArgument(why);
  launch_op(op, s, inputs, out, cfg);
}

}  // namespace tilekit

// ---------------------------------------------------------------------------------------------
// The instantiations the library holds (tilekit/kernels/elementwise/instantiate.cpp.in, one unit per type); other
// translation units use them instead of instantiating their own.
// ---------------------------------------------------------------------------------------------

#define TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, OP, T, NIN)                                              \
  EXTERN template std::string tilekit::check_elementwise<OP, T, NIN>(                                \
      const OP&, const tilekit::ElementwiseProblem<T, NIN>&, const tilekit::ElementwiseConfig&);      \
  EXTERN template void tilekit::launch_elementwise<OP, T, NIN>(                                      \
      const OP&, const tilekit::ElementwiseProblem<T, NIN>&, const tilekit::ElementwiseConfig&,       \
      const Kokkos::DefaultExecutionSpace&);

/// Every shipped op for one type (silu for floating-point types only) and the run-time dispatch.
#define TILEKIT_ELEMENTWISE_ENTRIES(EXTERN, T, SILU)                                                  \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::Add, T, 2)                                       \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::Sub, T, 2)                                       \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::Mul, T, 2)                                       \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::Div, T, 2)                                       \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::Max, T, 2)                                       \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::Min, T, 2)                                       \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::MulRelu, T, 2)                                   \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::Fma, T, 3)                                       \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::Axpby, T, 2)                                     \
  TILEKIT_ELEMENTWISE_OP_ENTRY(EXTERN, tilekit::ops::Relu, T, 1)                                      \
  SILU(EXTERN, tilekit::ops::Silu, T, 1)                                                              \
  EXTERN template std::string tilekit::check_op<T>(                                                   \
      tilekit::OpKind, const tilekit::OpScalars&, const std::vector<tilekit::StridedMatrix<const T>>&, \
      const tilekit::StridedMatrix<T>&, const tilekit::ElementwiseConfig&);                           \
  EXTERN template void tilekit::launch_op<T>(                                                         \
      tilekit::OpKind, const tilekit::OpScalars&, const std::vector<tilekit::StridedMatrix<const T>>&, \
      const tilekit::StridedMatrix<T>&, const tilekit::ElementwiseConfig&);

#define TILEKIT_ELEMENTWISE_NO_ENTRY(EXTERN, OP, T, NIN)

TILEKIT_ELEMENTWISE_ENTRIES(extern, double, TILEKIT_ELEMENTWISE_OP_ENTRY)
TILEKIT_ELEMENTWISE_ENTRIES(extern, float, TILEKIT_ELEMENTWISE_OP_ENTRY)
TILEKIT_ELEMENTWISE_ENTRIES(extern, tilekit::f16, TILEKIT_ELEMENTWISE_OP_ENTRY)
TILEKIT_ELEMENTWISE_ENTRIES(extern, tilekit::bf16, TILEKIT_ELEMENTWISE_OP_ENTRY)
TILEKIT_ELEMENTWISE_ENTRIES(extern, int32_t, TILEKIT_ELEMENTWISE_NO_ENTRY)
