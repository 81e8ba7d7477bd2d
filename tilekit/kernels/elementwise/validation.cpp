#include "tilekit/kernels/elementwise/validation.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace tilekit {

namespace {

template <class C, class U>
C wrap(U v) {
  return static_cast<C>(v);
}

// Written apart from the device functors (ops in tilekit/kernels/elementwise/elementwise.hpp), on purpose; only the rounding to
// T (convert) is shared, and it has tests of its own (test_types.cpp).
template <class C>
C ref_apply(OpKind op, const OpScalars& s, const C* x) {
  constexpr bool integer = std::is_integral<C>::value;
  using U = std::make_unsigned_t<std::conditional_t<integer, C, int>>;  // integers wrap: compute in U
  switch (op) {
    case OpKind::add:
      if constexpr (integer) return wrap<C>(U(x[0]) + U(x[1])); else return x[0] + x[1];
    case OpKind::sub:
      if constexpr (integer) return wrap<C>(U(x[0]) - U(x[1])); else return x[0] - x[1];
    case OpKind::mul:
      if constexpr (integer) return wrap<C>(U(x[0]) * U(x[1])); else return x[0] * x[1];
    case OpKind::div:
      if constexpr (integer) {
        if (x[1] == 0) return 0;
        if (x[1] == -1) return wrap<C>(U(0) - U(x[0]));
        return x[0] / x[1];
      } else {
        return x[0] / x[1];
      }
    case OpKind::max: return x[0] > x[1] ? x[0] : x[1];
    case OpKind::min: return x[0] < x[1] ? x[0] : x[1];
    case OpKind::mul_relu: {
      C p;
      if constexpr (integer) p = wrap<C>(U(x[0]) * U(x[1])); else p = x[0] * x[1];
      return p > C(0) ? p : C(0);
    }
    case OpKind::fma:
      if constexpr (integer) return wrap<C>(U(x[0]) * U(x[1]) + U(x[2])); else return std::fma(x[0], x[1], x[2]);
    case OpKind::axpby: {
      const C alpha = static_cast<C>(s.alpha), beta = static_cast<C>(s.beta);
      if constexpr (integer) return wrap<C>(U(alpha) * U(x[0]) + U(beta) * U(x[1]));
      else return std::fma(alpha, x[0], beta * x[1]);
    }
    case OpKind::relu: return x[0] > C(0) ? x[0] : C(0);
    case OpKind::silu:
      if constexpr (!integer) {
        const double v = static_cast<double>(x[0]);
        return static_cast<C>(v / (1.0 + std::exp(-v)));
      }
      return C(0);
  }
  return C(0);
}

template <class T>
double smallest_subnormal() {
  if constexpr (std::is_same<T, f16>::value) return 5.9604644775390625e-08;  // 2^-24
  else if constexpr (std::is_same<T, bf16>::value) return std::numeric_limits<float>::denorm_min();
  else if constexpr (std::is_floating_point<T>::value) return std::numeric_limits<T>::denorm_min();
  else return 0.0;
}

}  // namespace

template <class T>
T reference_op(OpKind op, const OpScalars& s, const T* x) {
  using C = typename TypeTraits<T>::compute;
  C c[4] = {};
  for (int k = 0; k < op_info(op).arity; ++k) c[k] = convert<C>(x[k]);
  return convert<T>(ref_apply<C>(op, s, c));
}

template <class T>
std::vector<T> reference_elementwise(OpKind op, const OpScalars& s, const std::vector<StridedMatrix<const T>>& inputs,
                                     int64_t M, int64_t N) {
  std::vector<T> out(static_cast<std::size_t>(M * N));
  T x[4];
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        const auto& a = inputs[k];
        x[k] = a(a.rows == 1 ? 0 : i, a.cols == 1 ? 0 : j);
      }
      out[static_cast<std::size_t>(i * N + j)] = reference_op(op, s, x);
    }
  return out;
}

double elementwise_tolerance(OpKind op, DType t) {
  if (op_info(op).exact) return 0.0;
  const double u_compute = t == DType::f64 ? 1.1102230246251565e-16 : 5.9604644775390625e-08;
  double u_t = 0.0;
  switch (t) {
    case DType::f64: u_t = 1.1102230246251565e-16; break;
    case DType::f32: u_t = 5.9604644775390625e-08; break;
    case DType::f16: u_t = 4.8828125e-04; break;
    case DType::bf16: u_t = 3.90625e-03; break;
    default: u_t = 0.0; break;
  }
  return 2.0 * u_t + 16.0 * u_compute;
}

template <class T>
ElementwiseComparison compare_elementwise(OpKind op, const StridedMatrix<const T>& got, const std::vector<T>& ref) {
  ElementwiseComparison c;
  c.exact = op_info(op).exact;
  c.tolerance = elementwise_tolerance(op, TypeTraits<T>::dtype);
  const double floor = smallest_subnormal<T>();
  const int64_t M = got.rows, N = got.cols;
  c.elements = M * N;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const T g = got(i, j), r = ref[static_cast<std::size_t>(i * N + j)];
      const double gd = static_cast<double>(convert<typename TypeTraits<T>::compute>(g));
      const double rd = static_cast<double>(convert<typename TypeTraits<T>::compute>(r));
      const bool both_nan = std::isnan(gd) && std::isnan(rd);
      const double err = std::fabs(gd - rd);
      if (rd != 0.0 && std::isfinite(err)) c.max_rel_error = std::max(c.max_rel_error, err / std::fabs(rd));
      bool ok;
      if (both_nan) ok = true;
      else if (c.exact) ok = std::memcmp(&g, &r, sizeof(T)) == 0;
      else ok = gd == rd || err <= c.tolerance * std::fabs(rd) + floor;
      if (!ok) {
        if (c.mismatches == 0) {
          c.first_i = i;
          c.first_j = j;
          c.first_got = gd;
          c.first_ref = rd;
        }
        ++c.mismatches;
      }
    }
  return c;
}

#define TILEKIT_INSTANTIATE_ELEMENTWISE_CHECK(T)                                                            \
  template T reference_op<T>(OpKind, const OpScalars&, const T*);                                         \
  template std::vector<T> reference_elementwise<T>(OpKind, const OpScalars&,                             \
                                                   const std::vector<StridedMatrix<const T>>&, int64_t, int64_t); \
  template ElementwiseComparison compare_elementwise<T>(OpKind, const StridedMatrix<const T>&, const std::vector<T>&);

TILEKIT_INSTANTIATE_ELEMENTWISE_CHECK(double)
TILEKIT_INSTANTIATE_ELEMENTWISE_CHECK(float)
TILEKIT_INSTANTIATE_ELEMENTWISE_CHECK(f16)
TILEKIT_INSTANTIATE_ELEMENTWISE_CHECK(bf16)
TILEKIT_INSTANTIATE_ELEMENTWISE_CHECK(int32_t)

}  // namespace tilekit
