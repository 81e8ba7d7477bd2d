// tilekit blocked matmul: public API.
//
//   C = alpha * op(A) * op(B) + beta * C, then the fused epilogue (bias, activation; tilekit/kernels/matmul/epilogue.hpp)
//
// Types (input -> accumulation -> output): f64->f64->f64, f32->f32->f32, f16->f32->{f16,f32},
// bf16->f32->{bf16,f32}, i8->i32->i32. Any layout or stride: every operand is read through a
// (row stride, column stride) pair, so LayoutLeft, LayoutRight, LayoutStride and transposes share
// one kernel. Everything runs on Kokkos::DefaultExecutionSpace (one backend per build), on the
// instance given (default: the space's default instance).
//
// The library API with automatic configs (tilekit::gemm) is tilekit/tilekit.hpp.
//
// Public entry points check shapes, strides, types and the config and throw InvalidArgument with a
// message naming the bad value and what is allowed; the kernels assume valid input.
#pragma once

#include "tilekit/kernels/core/device.hpp"
#include "tilekit/kernels/core/error.hpp"
#include "tilekit/kernels/matmul/epilogue.hpp"
#include "tilekit/kernels/matmul/config.hpp"
#include "tilekit/kernels/core/strided.hpp"
#include "tilekit/kernels/core/types.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tilekit {

enum class Op { N, T };  ///< operand as stored, or transposed

/// Everything a matmul launch needs, in device-accessible pointers.
template <class TIn, class TOut>
struct MatmulProblem {
  using compute = typename TypeTraits<TIn>::compute;
  int64_t M = 0, N = 0, K = 0;
  StridedMatrix<const TIn> a;  ///< op(A), M x K
  StridedMatrix<const TIn> b;  ///< op(B), K x N
  StridedMatrix<TOut> c;       ///< C, M x N
  compute alpha = compute(1);
  compute beta = compute(0);
  const compute* bias = nullptr;  ///< N values (one per column of C) or null
  Activation act = Activation::none;
  /// f32 inputs only: Math::tf32 lets TF32 tensor-core tiles run the product (tilekit/kernels/core/types.hpp, Math);
  /// every other tile computes in IEEE f32 either way.
  Math math = Math::ieee;
};

/// The (input, output) type pairs tilekit instantiates, e.g. "f32->f32, f16->f16, f16->f32, ...".
const char* supported_type_pairs();

template <class T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<TIn>{}, TypeTag<TOut>{}) for a supported (input, output) pair; throws
/// InvalidArgument naming the allowed pairs otherwise.
template <class F>
decltype(auto) with_type_pair(DType in, DType out, F&& f) {
  auto is = [&](DType a, DType b) { return in == a && out == b; };
  if (is(DType::f64, DType::f64)) return f(TypeTag<double>{}, TypeTag<double>{});
  if (is(DType::f32, DType::f32)) return f(TypeTag<float>{}, TypeTag<float>{});
  if (is(DType::f16, DType::f16)) return f(TypeTag<f16>{}, TypeTag<f16>{});
  if (is(DType::f16, DType::f32)) return f(TypeTag<f16>{}, TypeTag<float>{});
  if (is(DType::bf16, DType::bf16)) return f(TypeTag<bf16>{}, TypeTag<bf16>{});
  if (is(DType::bf16, DType::f32)) return f(TypeTag<bf16>{}, TypeTag<float>{});
  if (is(DType::i8, DType::i32)) return f(TypeTag<int8_t>{}, TypeTag<int32_t>{});
  throw InvalidArgument(std::string("unsupported type pair ") + dtype_name(in) + " -> " + dtype_name(out) +
                        " (allowed: " + supported_type_pairs() + ")");
}

/// The output type used when none is given: the input type, i32 for i8.
inline DType default_out_dtype(DType in) { return in == DType::i8 ? DType::i32 : in; }

/// Returns "" if the problem and config are valid for this build's backend, else what is wrong.
template <class TIn, class TOut>
std::string check_matmul(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg);

/// Team scratch bytes the config needs for this type, at the level the kernel stages in on this
/// backend (level 0 on GPUs, level 1 on host backends: tilekit/kernels/matmul/dispatch.hpp); team_scratch_limit()
/// (tilekit/kernels/core/device.hpp) is that level's limit.
template <class TIn, class TOut>
std::size_t matmul_scratch_bytes(const MatmulConfig& cfg);

/// Overrides of the Hopper warp-specialised kernel's launch rules (tiles.hpp: kWsDriftBound,
/// kWsMulticast; gpu/wgmma_ws_sm90.hpp), for tests and for comparing variants in one build. The
/// defaults keep the rules; other kernels ignore them.
struct MatmulLaunchOptions {
  int ws_team_cap = 0;                ///< at most this many persistent teams (0: as many as fit)
  bool ws_one_team_per_tile = false;  ///< one team per tile instead of a persistent grid
  bool ws_cp_async_loads = false;     ///< f16/bf16: the cp.async producer even where TMA applies
  /// The drift bound with these chunk and slack sizes and this wait limit at any K, in place of
  /// kWsDriftBound (where the loads go through TMA).
  bool ws_drift_forced = false;
  int ws_drift_chunk_steps = 0;
  int ws_drift_slack_steps = 0;
  long long ws_drift_wait_limit_ns = 0;
  bool ws_drift_off = false;          ///< no drift bound at any K
  int ws_multicast_min_k_steps = -1;  ///< two-team clusters from this many K steps a tile (-1: the rule's;
                                      ///< rows of B not sector-aligned take them at any depth)
  bool ws_multicast_off = false;      ///< never two-team clusters
  bool ws_register_stores = false;    ///< C stored from registers even where TMA stores apply
  /// TF32: copy every operand that is not K-major K-major first, instead of loading an A stored
  /// along M as it is (A from registers) and running a B stored along N as the transposed product
  bool ws_pack_mn_major = false;
};

/// What a launch ran: the kernel path, and for the warp-specialised kernel how it loaded its
/// operands ("tma", "tma (packed)", "cp.async: <why not TMA>"; TF32 adds ", A along M in registers"
/// and ", transposed product" where they apply), its drift bound ("" where off) and
/// its clusters ("clusters of 2 teams, B multicast" or "off: <why>"; "" for tiles without them) and
/// how it stored C ("tma", or "registers: <why not TMA>").
struct MatmulLaunchReport {
  std::string kernel;
  /// Operands packed for vector loads before the kernel (gpu/pack.hpp), e.g. "a K-major"; "" none.
  std::string packed;
  std::string ws_loads;
  std::string ws_drift_bound;
  std::string ws_multicast;
  std::string ws_stores;
};

/// Launches on `space` without checking (call check_matmul first, or use matmul()). Asynchronous.
template <class TIn, class TOut>
MatmulLaunchReport launch_matmul(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg,
                                 const Kokkos::DefaultExecutionSpace& space = Kokkos::DefaultExecutionSpace(),
                                 const MatmulLaunchOptions& options = MatmulLaunchOptions());

/// Checks, then launches on `space`; throws InvalidArgument on invalid input.
template <class TIn, class TOut>
MatmulLaunchReport run_matmul(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg,
                              const Kokkos::DefaultExecutionSpace& space = Kokkos::DefaultExecutionSpace(),
                              const MatmulLaunchOptions& options = MatmulLaunchOptions()) {
  require_launch_thread();
  const std::string why = check_matmul(p, cfg);
  if (!why.empty()) throw InvalidArgument(why);
  return launch_matmul(p, cfg, space, options);
}

/// The (input, output) element types tilekit instantiates (supported_type_pairs() names them).
template <class TIn, class TOut>
struct is_supported_type_pair : std::false_type {};
template <> struct is_supported_type_pair<double, double> : std::true_type {};
template <> struct is_supported_type_pair<float, float> : std::true_type {};
template <> struct is_supported_type_pair<f16, f16> : std::true_type {};
template <> struct is_supported_type_pair<f16, float> : std::true_type {};
template <> struct is_supported_type_pair<bf16, bf16> : std::true_type {};
template <> struct is_supported_type_pair<bf16, float> : std::true_type {};
template <> struct is_supported_type_pair<int8_t, int32_t> : std::true_type {};

/// A rank-2 Kokkos view as a strided matrix, transposed when op == T.
template <class View>
auto as_strided(const View& v, Op op = Op::N) {
  const auto m = as_matrix(v);
  return op == Op::T ? m.transposed() : m;
}

/// The problem C = alpha op(A) op(B) + beta C, then bias (an empty view: none) and activation, over
/// rank-2 views of any layout; throws InvalidArgument when a non-empty bias is not one value per
/// column of C.
template <class AV, class BV, class CV, class BiasView>
auto matmul_problem(Op opa, Op opb, typename TypeTraits<typename AV::non_const_value_type>::compute alpha,
                    const AV& A, const BV& B,
                    typename TypeTraits<typename AV::non_const_value_type>::compute beta, const CV& C,
                    Activation act, const BiasView& bias) {
  using TIn = typename AV::non_const_value_type;
  using TOut = typename CV::non_const_value_type;
  static_assert(std::is_same<TIn, typename BV::non_const_value_type>::value,
                "tilekit::matmul: A and B must have the same element type");
  // Caught here rather than as an undefined reference to check_matmul<TIn, TOut> at link time.
  static_assert(is_supported_type_pair<TIn, TOut>::value,
                "tilekit::matmul: unsupported element types of (A and B, C); allowed: (double, double), "
                "(float, float), (f16, f16), (f16, float), (bf16, bf16), (bf16, float), (int8_t, int32_t)");
  MatmulProblem<TIn, TOut> p;
  const auto a = as_strided(A, opa);
  const auto b = as_strided(B, opb);
  p.a = {a.data, a.rows, a.cols, a.rs, a.cs};
  p.b = {b.data, b.rows, b.cols, b.rs, b.cs};
  p.c = as_strided(C);
  p.M = p.c.rows;
  p.N = p.c.cols;
  p.K = p.a.cols;
  p.alpha = alpha;
  p.beta = beta;
  p.act = act;
  if (bias.size() > 0) {  // an empty view (allocated with 0 values or default-constructed) means none
    if (static_cast<int64_t>(bias.extent(0)) != p.N)
      throw InvalidArgument("bias has " + std::to_string(bias.extent(0)) +
                            " values; it needs one per column of C (" + std::to_string(p.N) + ")");
    p.bias = bias.data();
  }
  return p;
}

/// View-based entry point with an explicit config: C = alpha op(A) op(B) + beta C, then bias (may
/// be an empty view) and activation. Views of any layout in the default execution space's memory.
template <class AV, class BV, class CV, class BiasView>
void matmul(Op opa, Op opb, typename TypeTraits<typename AV::non_const_value_type>::compute alpha,
            const AV& A, const BV& B,
            typename TypeTraits<typename AV::non_const_value_type>::compute beta, const CV& C,
            const MatmulConfig& cfg, Activation act, const BiasView& bias) {
  run_matmul(matmul_problem(opa, opb, alpha, A, B, beta, C, act, bias), cfg);
}

template <class AV, class BV, class CV>
void matmul(Op opa, Op opb, typename TypeTraits<typename AV::non_const_value_type>::compute alpha,
            const AV& A, const BV& B,
            typename TypeTraits<typename AV::non_const_value_type>::compute beta, const CV& C,
            const MatmulConfig& cfg, Activation act = Activation::none) {
  using compute = typename TypeTraits<typename AV::non_const_value_type>::compute;
  matmul(opa, opb, alpha, A, B, beta, C, cfg, act, Kokkos::View<const compute*>());
}

}  // namespace tilekit
