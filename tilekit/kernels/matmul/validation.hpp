// Oracles for the matmul: a small obviously-right reference and Kokkos Kernels gemm, both in double
// on the default execution space, and the relative-error check with its type-aware tolerance.
#pragma once

#include "tilekit/kernels/matmul/matmul.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <limits>

namespace tilekit {

/// A reference result: M x N doubles on the default execution space.
using RefMatrix = Kokkos::View<double**, Kokkos::LayoutLeft>;

/// C = A B with KokkosBlas::gemm on the default execution space (native Kokkos Kernels, no TPL).
void kokkos_kernels_gemm(const Kokkos::View<const double**, Kokkos::LayoutLeft>& A,
                         const Kokkos::View<const double**, Kokkos::LayoutLeft>& B,
                         const RefMatrix& C);
/// Float versions, for benchmarks of Kokkos Kernels at the problem's own precision.
void kokkos_kernels_gemm(const Kokkos::View<const float**, Kokkos::LayoutLeft>& A,
                         const Kokkos::View<const float**, Kokkos::LayoutLeft>& B,
                         const Kokkos::View<float**, Kokkos::LayoutLeft>& C);

/// Kokkos Kernels version string, e.g. "3.4.1".
std::string kokkos_kernels_version();

/// Tolerance for ||C - C_ref||_F / ||C_ref||_F: the output rounding plus a K-scaled accumulation
/// bound, 8 u_out + 2 K u_acc (u = unit roundoff). Integer results must be exact (0).
double matmul_tolerance(DType in, DType out, int64_t K, Math math = Math::ieee);

/// An owned contiguous device copy of a strided matrix (e.g. C before a run, for beta != 0).
template <class T>
Kokkos::View<T**, Kokkos::LayoutRight> copy_matrix(const StridedMatrix<const T>& m) {
  Kokkos::View<T**, Kokkos::LayoutRight> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tilekit::copy"),
                                             m.rows, m.cols);
  if (m.rows == 0 || m.cols == 0) return out;
  Kokkos::parallel_for(
      "tilekit::copy_matrix",
      Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m.rows, m.cols}),
      KOKKOS_LAMBDA(int64_t i, int64_t j) { out(i, j) = m(i, j); });
  return out;
}

namespace detail {
// alpha * ab + beta * c_before + bias, then the activation, all in double.
template <class TIn, class TOut>
void apply_reference_epilogue(const MatmulProblem<TIn, TOut>& p, const StridedMatrix<const TOut>& c0,
                              const RefMatrix& ref) {
  const double alpha = static_cast<double>(p.alpha), beta = static_cast<double>(p.beta);
  const auto* bias = p.bias;
  const Activation act = p.act;
  Kokkos::parallel_for(
      "tilekit::reference_epilogue", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {p.M, p.N}),
      KOKKOS_LAMBDA(int64_t i, int64_t j) {
        double v = alpha * ref(i, j);
        if (beta != 0.0) v += beta * convert<double>(c0(i, j));
        if (bias) v += static_cast<double>(bias[j]);
        ref(i, j) = activate(act, v);
      });
}
}  // namespace detail

/// The obviously-right reference: every C(i,j) is a plain loop over k in double, then the epilogue.
/// c_before is C as it was before the run (read only when beta != 0).
template <class TIn, class TOut>
RefMatrix reference_naive(const MatmulProblem<TIn, TOut>& p, const StridedMatrix<const TOut>& c_before) {
  RefMatrix ref("tilekit::reference", p.M, p.N);
  if (p.M == 0 || p.N == 0) return ref;
  const auto a = p.a;
  const auto b = p.b;
  const int64_t K = p.K;
  Kokkos::parallel_for(
      "tilekit::reference_naive", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {p.M, p.N}),
      KOKKOS_LAMBDA(int64_t i, int64_t j) {
        double s = 0.0;
        for (int64_t k = 0; k < K; ++k) s += convert<double>(a(i, k)) * convert<double>(b(k, j));
        ref(i, j) = s;
      });
  detail::apply_reference_epilogue(p, c_before, ref);
  return ref;
}

/// Kokkos Kernels oracle: op(A) and op(B) upcast to double (exact for every input type), then
/// KokkosBlas::gemm on the same execution space, then the epilogue in double.
template <class TIn, class TOut>
RefMatrix reference_kokkos_kernels(const MatmulProblem<TIn, TOut>& p,
                                   const StridedMatrix<const TOut>& c_before) {
  RefMatrix ref("tilekit::reference_kk", p.M, p.N);
  if (p.M == 0 || p.N == 0) return ref;
  Kokkos::View<double**, Kokkos::LayoutLeft> A("tilekit::A_f64", p.M, p.K), B("tilekit::B_f64", p.K, p.N);
  const auto a = p.a;
  const auto b = p.b;
  if (p.K > 0) {
    Kokkos::parallel_for(
        "tilekit::upcast_a", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {p.M, p.K}),
        KOKKOS_LAMBDA(int64_t i, int64_t k) { A(i, k) = convert<double>(a(i, k)); });
    Kokkos::parallel_for(
        "tilekit::upcast_b", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {p.K, p.N}),
        KOKKOS_LAMBDA(int64_t k, int64_t j) { B(k, j) = convert<double>(b(k, j)); });
    kokkos_kernels_gemm(A, B, ref);
  }
  detail::apply_reference_epilogue(p, c_before, ref);
  return ref;
}

/// The largest finite value of T (integers: no limit here, their accumulators saturate or wrap).
template <class T>
double largest_finite() {
  if constexpr (std::is_same<T, f16>::value) return 65504.0;
  else if constexpr (std::is_same<T, bf16>::value) return 3.3895313892515355e38;
  else if constexpr (std::is_floating_point<T>::value) return double(std::numeric_limits<T>::max());
  else return std::numeric_limits<double>::infinity();
}

/// |x| on host and device alike: Kokkos 3.4 has fabs in Kokkos::Experimental only, Kokkos 4.x in
/// Kokkos only.
KOKKOS_INLINE_FUNCTION double abs_value(double x) { return x < 0 ? -x : x; }

/// Elements whose exact result (`ref`) lies beyond the largest finite value of TOut: the output
/// type cannot hold them, whatever the kernel does. `first` receives the first one (row-major
/// index i * cols + j), or -1.
template <class TOut>
int64_t overflowed_elements(const RefMatrix& ref, int64_t& first) {
  first = -1;
  const int64_t rows = int64_t(ref.extent(0)), cols = int64_t(ref.extent(1));
  const double limit = largest_finite<TOut>();
  if (rows == 0 || cols == 0 || !(limit < std::numeric_limits<double>::infinity())) return 0;
  int64_t count = 0, at = std::numeric_limits<int64_t>::max();
  Kokkos::parallel_reduce(
      "tilekit::overflowed_elements", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {rows, cols}),
      KOKKOS_LAMBDA(int64_t i, int64_t j, int64_t& n) { n += abs_value(ref(i, j)) > limit ? 1 : 0; },
      count);
  if (count == 0) return 0;
  Kokkos::parallel_reduce(
      "tilekit::first_overflowed", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {rows, cols}),
      KOKKOS_LAMBDA(int64_t i, int64_t j, int64_t& m) {
        if (abs_value(ref(i, j)) > limit && i * cols + j < m) m = i * cols + j;
      },
      Kokkos::Min<int64_t>(at));
  first = at;
  return count;
}

/// ||C - ref||_F / ||ref||_F. NaN or inf anywhere in C gives +inf. When ref is all zero the result
/// is 0 if C is too, else +inf. Elements whose |ref| exceeds `skip_above` are left out (those that
/// overflowed the output type, counted apart by overflowed_elements).
template <class TOut>
double relative_error(const StridedMatrix<const TOut>& c, const RefMatrix& ref,
                      double skip_above = std::numeric_limits<double>::infinity()) {
  if (c.rows == 0 || c.cols == 0) return 0.0;
  double diff2 = 0.0, ref2 = 0.0;
  int bad = 0;
  Kokkos::parallel_reduce(
      "tilekit::relative_error", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {c.rows, c.cols}),
      KOKKOS_LAMBDA(int64_t i, int64_t j, double& d2, double& r2, int& nbad) {
        const double v = convert<double>(c(i, j));
        const double r = ref(i, j);
        if (abs_value(r) > skip_above) return;
        if (!(v - v == 0.0)) ++nbad;  // NaN or inf
        d2 += (v - r) * (v - r);
        r2 += r * r;
      },
      diff2, ref2, bad);
  if (bad > 0) return std::numeric_limits<double>::infinity();
  if (ref2 == 0.0) return diff2 == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(diff2 / ref2);
}

}  // namespace tilekit
