// tilekit: the library API, for Kokkos applications (find_package(tilekit), tilekit::tilekit).
//
//   tilekit::gemm("N", "N", alpha, A, B, beta, C);            // like KokkosBlas::gemm, tuned config
//   tilekit::gemm(space, "N", "T", alpha, A, B, beta, C, opt); // on an execution-space instance,
//                                                              // with a fused bias + activation
//   tilekit::apply(tilekit::ops::Add{}, tilekit::make_inputs(A, B), C);  // C = A + B
//
// Views: rank 2, any layout (LayoutLeft, LayoutRight, LayoutStride subviews), in memory the default
// execution space can access. Launches are asynchronous, like every Kokkos kernel: fence (or use
// the instance's fence) before reading results on the host.
//
// Automatic config (no config given): the user's tuning cache ($TILEKIT_TUNING_DIR, else
// ~/.cache/tilekit/tuning), then the results shipped with tilekit (<prefix>/share/tilekit/tuning),
// for the exact shape, else the nearest tuned shape of the same types, layouts and epilogue; else
// the backend's default: what `tilekit matmul --config auto` runs. The first call for a new shape
// reads the tuning files; the answer is remembered for the process (thread-safe).
//
// Errors: tilekit::InvalidArgument, with the message the `tilekit` app prints for the same input.
#pragma once

#include "tilekit/kernels/elementwise/elementwise.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

// Where the installed package keeps its shipped tuning results (set by tilekit::tilekit).
#ifndef TILEKIT_SHIPPED_TUNING_DIR
#define TILEKIT_SHIPPED_TUNING_DIR ""
#endif

namespace tilekit {

/// What gemm() does beyond C = alpha op(A) op(B) + beta C. `Scalar` is the accumulation type:
/// double for f64 inputs, float for f32, f16 and bf16, int32_t for i8.
template <class Scalar>
struct GemmOptions {
  Kokkos::View<const Scalar*> bias;          ///< one value per column of C, added first; empty: none
  Activation activation = Activation::none;  ///< then relu, leaky_relu, silu or gelu (tilekit/kernels/matmul/epilogue.hpp)
  /// f32 inputs: Math::tf32 opts in to TF32 tensor-core math (CUDA sm_80+; tilekit/kernels/core/types.hpp, Math);
  /// other input types must leave it at Math::ieee
  Math math = Math::ieee;
  std::optional<MatmulConfig> config;        ///< a config to run instead of the automatic one
};

namespace detail {
/// The automatic config (see above) for a problem; `valid` says why a config cannot run it, or "".
/// Compiled in the library (tilekit/tuning/auto_config.cpp); remembered per problem key.
MatmulConfig auto_matmul_config(DType in, DType out, bool a_col, bool b_col, bool c_col, const Epilogue& ep,
                                int64_t M, int64_t N, int64_t K, Math math,
                                const std::function<std::string(const MatmulConfig&)>& valid,
                                const char* shipped_dir);
/// The automatic elementwise config for a shipped op of this name (the backend default otherwise);
/// a tuned config that `valid` refuses for the problem is skipped for the next nearest one.
ElementwiseConfig auto_elementwise_config(const char* op, DType t, int64_t M, int64_t N, const char* shipped_dir,
                                          const std::function<std::string(const ElementwiseConfig&)>& valid);
/// "N" -> Op::N, "T" or "C" -> Op::T (either case); throws InvalidArgument naming `which`.
Op parse_trans(const char* trans, const char* which);
/// Storage order of a strided matrix for the tuning key: true when consecutive rows are adjacent.
template <class T>
bool column_major(const StridedMatrix<T>& m) {
  return m.cs > m.rs;
}
}  // namespace detail

/// C = alpha op(A) op(B) + beta C, then opt's bias and activation, on the `space` instance; trans
/// "N" or "T" ("C" = "T" for these real types). Throws InvalidArgument on invalid input.
template <class AV, class BV, class CV>
void gemm(const Kokkos::DefaultExecutionSpace& space, const char* transA, const char* transB,
          typename TypeTraits<typename AV::non_const_value_type>::compute alpha, const AV& A, const BV& B,
          typename TypeTraits<typename AV::non_const_value_type>::compute beta, const CV& C,
          const GemmOptions<typename TypeTraits<typename AV::non_const_value_type>::compute>& opt = {}) {
  using ES = Kokkos::DefaultExecutionSpace;
  static_assert(Kokkos::SpaceAccessibility<ES, typename AV::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ES, typename BV::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ES, typename CV::memory_space>::accessible,
                "tilekit::gemm: A, B and C must be in memory the default execution space can access");
  using TIn = typename AV::non_const_value_type;
  using TOut = typename CV::non_const_value_type;
  require_launch_thread();  // before the automatic config, which may read the tuning files
  auto p = matmul_problem(detail::parse_trans(transA, "transA"), detail::parse_trans(transB, "transB"), alpha, A,
                          B, beta, C, opt.activation, opt.bias);
  p.math = opt.math;
  const MatmulConfig cfg =
      opt.config ? *opt.config
                 : detail::auto_matmul_config(TypeTraits<TIn>::dtype, TypeTraits<TOut>::dtype,
                                              detail::column_major(p.a), detail::column_major(p.b),
                                              detail::column_major(p.c), Epilogue{p.bias != nullptr, p.act},
                                              p.M, p.N, p.K, p.math,
                                              [&](const MatmulConfig& c) { return check_matmul(p, c); },
                                              TILEKIT_SHIPPED_TUNING_DIR);
  run_matmul(p, cfg, space);
}

/// gemm() on the default execution space instance.
template <class AV, class BV, class CV>
void gemm(const char* transA, const char* transB, typename TypeTraits<typename AV::non_const_value_type>::compute alpha,
          const AV& A, const BV& B, typename TypeTraits<typename AV::non_const_value_type>::compute beta,
          const CV& C, const GemmOptions<typename TypeTraits<typename AV::non_const_value_type>::compute>& opt = {}) {
  gemm(Kokkos::DefaultExecutionSpace(), transA, transB, alpha, A, B, beta, C, opt);
}

/// out = op(inputs...) on the `space` instance with the automatic config (tuned for shipped ops);
/// inputs from make_inputs(), out a rank-2 view or a StridedMatrix. Throws InvalidArgument.
template <class Op, class T, std::size_t NIn, class Out>
void apply(const Kokkos::DefaultExecutionSpace& space, const Op& op,
           const std::array<StridedMatrix<const T>, NIn>& inputs, const Out& out) {
  const StridedMatrix<T> o = as_output(out);
  ElementwiseProblem<T, int(NIn)> p;
  for (std::size_t k = 0; k < NIn; ++k) p.in[k] = inputs[k];
  p.out = o;
  apply(space, op, inputs, o,
        detail::auto_elementwise_config(Op::name, TypeTraits<T>::dtype, o.rows, o.cols, TILEKIT_SHIPPED_TUNING_DIR,
                                        [&](const ElementwiseConfig& c) { return check_elementwise(op, p, c); }));
}

/// apply() with the automatic config on the default execution space instance.
template <class Op, class T, std::size_t NIn, class Out>
void apply(const Op& op, const std::array<StridedMatrix<const T>, NIn>& inputs, const Out& out) {
  apply(Kokkos::DefaultExecutionSpace(), op, inputs, out);
}

}  // namespace tilekit
