// Fused epilogue of the matmul: applied to each output value in the compute (accumulation) type,
// before the downcast to the output type:
//     v = alpha * (op(A) op(B))(i,j) + beta * C(i,j)     (C is not read when beta == 0)
//     v = v + bias(j)                                     (when a bias is given: one value per column)
//     C(i,j) = activation(v)
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace tilekit {

enum class Activation { none, relu, leaky_relu, silu, gelu };

/// The slope of leaky_relu for negative inputs.
constexpr double kLeakyReluSlope = 0.01;

/// What the epilogue does besides alpha/beta: an optional per-column bias, then an activation.
struct Epilogue {
  bool bias = false;
  Activation act = Activation::none;

  /// "none", "bias", "relu", "bias+gelu", ...
  std::string name() const;
  /// Parses a name of the form [bias][+act] (or "none"); on failure returns false and says why.
  static bool parse(const std::string& s, Epilogue& out, std::string& why);
  /// The names parse() accepts, for help texts and error messages.
  static const char* allowed();
  bool operator==(const Epilogue& o) const { return bias == o.bias && act == o.act; }
};

const char* activation_name(Activation a);

/// A kernel's activation template argument (an int of Activation) where the kernel reads the
/// problem's activation at run time instead (a switch over one epilogue per activation).
constexpr int kActivationAtRunTime = -1;

namespace detail {
#if defined(__CUDA_ARCH__) && !defined(TILEKIT_F64_GELU_TANH)
/// gelu in double on CUDA devices: the tanh form as x / (1 + 2^w), w = x (K0 + K1 x^2) (the f32
/// device path's identity, activate_fixed below); no branch, no division (::tanh(double) branches
/// by magnitude, divergent across a warp, and divides). 2^w = 2^n 2^f: n = w rounded by adding and
/// subtracting 1.5 x 2^52 (two additions; n's bits are then s's low word, so neither rint nor a
/// double-to-int conversion runs: both take the 16-a-clock conversion pipe on sm_90, a quarter of
/// the double FMA rate), 2^f (|f| <= 1/2) a degree-11 near-minimax polynomial (Chebyshev fit,
/// 3e-18), 1 / (1 + 2^w) from rcp.approx.ftz.f64 and one third-order Newton step r (1 + e + e^2),
/// e = 1 - d r (the error goes as e^3; the CUDA tests check every activation against the host
/// reference at the f64 tolerance). About 25 double operations a value.
/// It replaced ::tanh, 5-6% faster in the f64 bias+gelu kernel (docs/perf-notes.md sections 28, 30).
/// Where 2^w would overflow (w > 1022: x below about -21) the result is x * 0 (-0: the limit;
/// the true value is below 1e-300).
__device__ inline double gelu_f64_device(double x) {
  constexpr double K0 = -2.3022081981443248;   // -2 log2(e) sqrt(2 / pi)
  constexpr double K1 = -0.1029432395800235;   // K0 x 0.044715
  const double w = x * (K1 * (x * x) + K0);
  const double wc = fmin(fmax(w, -1022.0), 1022.0);
  constexpr double kShift = 6755399441055744.0;  // 1.5 x 2^52: wc + kShift has a unit ulp
  const double s = wc + kShift;
  const double nf = s - kShift;                  // wc rounded to nearest (even), exact
  const double f = wc - nf;                      // exact, in [-1/2, 1/2]
  const int n = __double2loint(s);               // nf as an int: |n| <= 1022 < 2^31
  double p = 4.4558179083360645e-10;             // 2^f on [-1/2, 1/2], degree 11
  p = fma(p, f, 7.074194297288521e-09);
  p = fma(p, f, 1.0178057087733941e-07);
  p = fma(p, f, 1.3215432535912375e-06);
  p = fma(p, f, 1.5252733841556773e-05);
  p = fma(p, f, 1.5403530463724353e-04);
  p = fma(p, f, 1.333355814640647e-03);
  p = fma(p, f, 9.618129107587256e-03);
  p = fma(p, f, 5.5504108664821625e-02);
  p = fma(p, f, 2.4022650695910158e-01);
  p = fma(p, f, 6.931471805599453e-01);
  p = fma(p, f, 1.0);
  const double d = fma(p, __hiloint2double((n + 1023) << 20, 0), 1.0);
  double r;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(d));
  const double e = fma(-d, r, 1.0);
  r = fma(r, fma(e, e, e), r);
  return w > 1022.0 ? x * 0.0 : x * r;
}
#endif
KOKKOS_INLINE_FUNCTION float exp_(float x) { return ::expf(x); }
KOKKOS_INLINE_FUNCTION double exp_(double x) { return ::exp(x); }
KOKKOS_INLINE_FUNCTION float tanh_(float x) { return ::tanhf(x); }
KOKKOS_INLINE_FUNCTION double tanh_(double x) { return ::tanh(x); }
}  // namespace detail

/// Applies an activation in type T. For integer T only none and relu exist (checked at the entry).
template <class T>
KOKKOS_INLINE_FUNCTION T activate(Activation act, T x) {
  switch (act) {
    case Activation::none: return x;
    case Activation::relu: return x > T(0) ? x : T(0);
    default: break;
  }
  if constexpr (std::is_floating_point<T>::value) {
    switch (act) {
      case Activation::leaky_relu: return x > T(0) ? x : T(kLeakyReluSlope) * x;
      case Activation::silu: {
        // x * sigmoid(x), written so that exp never overflows: exp of a non-positive number only.
        const T e = detail::exp_(x >= T(0) ? -x : x);
        const T sig = x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
        return x * sig;
      }
      case Activation::gelu: {
#if defined(__CUDA_ARCH__) && !defined(TILEKIT_F64_GELU_TANH)
        if constexpr (std::is_same<T, double>::value) return detail::gelu_f64_device(x);
#endif
        // tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); tanh saturates, no overflow.
        const T c = T(0.7978845608028654);
        return T(0.5) * x * (T(1) + detail::tanh_(c * (x + T(0.044715) * x * x * x)));
      }
      default: break;
    }
  }
  return x;
}

/// `pick ? a : b` through a bit mask, without a branch (host scalar code: a data-dependent branch
/// on the sign of random values is mispredicted half the time).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T select_bits(bool pick, T a, T b) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  static_assert(sizeof(T) == sizeof(U), "4- or 8-byte values");
  U ua, ub;
  std::memcpy(&ua, &a, sizeof(T));
  std::memcpy(&ub, &b, sizeof(T));
  U mask = U(0) - U(pick);
#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  asm("" : "+r"(mask));  // opaque to the optimizer, which would otherwise turn the mask back into a branch
#endif
  const U r = (ua & mask) | (ub & ~mask);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

/// activate() with the activation fixed at compile time: no switch left in the caller's loop, so
/// host loops over a micro-tile vectorize (relu, leaky_relu: a compare and a select).
template <Activation ACT, class T>
KOKKOS_FORCEINLINE_FUNCTION T activate_fixed(T x) {
  if constexpr (ACT == Activation::none) {
    return x;
  } else if constexpr (ACT == Activation::relu) {
    return x > T(0) ? x : T(0);
  } else if constexpr (ACT == Activation::leaky_relu && std::is_floating_point<T>::value) {
    return x > T(0) ? x : T(kLeakyReluSlope) * x;
#if defined(__CUDA_ARCH__)
  } else if constexpr (ACT == Activation::gelu && std::is_same<T, float>::value) {
    // The same tanh form, as 0.5 x (1 + tanh u) = x / (1 + 2^w) with w = -2u log2(e) = x (K0 + K1 x^2),
    // on the hardware exp2 and reciprocal (MUFU): 7 instructions against tanhf's ~25 with a branch
    // (12 with __expf and __fdividef), within a few f32 ulps; where 2^w overflows, x / inf = -0 (the
    // limit; the true value is below 1e-37). With tanhf the fused bias+gelu cost 7-18% over no
    // epilogue in the wgmma kernels (docs/perf-notes.md section 15).
    constexpr float K0 = -2.302208198144325f;   // -2 log2(e) sqrt(2 / pi)
    constexpr float K1 = -0.1029432395800235f;  // K0 x 0.044715
    const float w = x * (K1 * (x * x) + K0);
    float e, r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(w));
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.0f + e));
    return x * r;
#else
  } else if constexpr ((ACT == Activation::gelu || ACT == Activation::silu) && std::is_same<T, float>::value) {
    // Host (and HIP): gelu as the same x / (1 + 2^w), w = x (K0 + K1 x^2), and silu, x sigmoid(x), as
    // x / (1 + 2^w) with w = -x log2(e); 2^w from its exponent bits and a degree-6 Taylor
    // polynomial of 2^f, |f| <= 1/2 (truncation 1.2e-7, ~2 ulps): multiply-adds and one division
    // instead of a call of tanhf or expf (tanhf: ~8 ns an element on the 2-core EPYC, 4x a 256^3
    // product), in a form GCC vectorizes (perf notes 18).
    // w is clamped to +-126 (2^w normal): below -126 the result is x; above 126, 0 (below 1e-36).
    constexpr float K0 = -2.302208198144325f, K1 = -0.1029432395800235f;
    const float w = ACT == Activation::gelu ? x * (K1 * (x * x) + K0) : x * -1.4426950408889634f;
    float wc = w < 126.0f ? w : 126.0f;  // (two selects: GCC vectorizes these, not a nested ?:)
    wc = wc > -126.0f ? wc : -126.0f;    // NaN -> 126 (x stays NaN)
    // round(wc) by the 1.5 * 2^23 trick (to nearest even; exact for |wc| < 2^22): GCC 12 vectorizes
    // it, not std::floor (whose call kept the whole host epilogue loop scalar).
    const float nf = (wc + 12582912.0f) - 12582912.0f;  // in -126 .. 126
    const int n = int(nf);
    const float f = wc - nf;
    float p2 = 1.5403530393381606e-4f;  // ln(2)^k / k!, k = 6 .. 0
    p2 = p2 * f + 1.3333558146428443e-3f;
    p2 = p2 * f + 9.618129107628477e-3f;
    p2 = p2 * f + 5.550410866482158e-2f;
    p2 = p2 * f + 0.2402265069591007f;
    p2 = p2 * f + 0.6931471805599453f;
    p2 = p2 * f + 1.0f;
    const uint32_t bits = uint32_t(n + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    // Past the clamp (w > 126: gelu's x below about -10, silu's below -87), the result is below
    // 1e-36 in magnitude: x * 0 there (x / (1 + 2^126 p) would leave |x| / 2^126, not small for |x|
    // near the f32 maximum).
    return w > 126.0f ? x * 0.0f : x / (1.0f + p2 * scale);
#endif
  } else {
    return activate(ACT, x);
  }
}

}  // namespace tilekit
