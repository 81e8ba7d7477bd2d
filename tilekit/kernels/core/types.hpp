// Scalar types of tilekit: 16-bit floating-point storage types of our own, the dtype enum, and the
// per-input-type traits (compute type, tolerance epsilon, names).
//
// Why our own f16/bf16: Kokkos 3.4's host half_t is a plain float (4 bytes) and Kokkos 3.4 has no
// bf16 at all, so a matrix "of halves" would have a different size and bit layout per backend. These
// two are 2-byte trivially-copyable structs on every backend; conversions round to nearest even.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

// Hardware f16 <-> f32 conversions where the target has them (each one instruction, same
// round-to-nearest-even results as the portable code below): PTX cvt on CUDA devices, F16C on x86
// hosts built with -march=native. Elsewhere (HIP for now) the portable bit manipulation is used.
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && defined(__F16C__) && !defined(__NVCC__) && \
    !defined(__HIPCC__)
#include <immintrin.h>
#define TILEKIT_F16C 1
#endif

namespace tilekit {

namespace detail {
KOKKOS_INLINE_FUNCTION uint32_t float_bits(float f) {
  union { float f; uint32_t u; } v{f};
  return v.u;
}
KOKKOS_INLINE_FUNCTION float bits_float(uint32_t u) {
  union { uint32_t u; float f; } v{u};
  return v.f;
}
}  // namespace detail

/// IEEE 754 binary16 storage (1 sign, 5 exponent, 10 mantissa bits).
struct alignas(2) f16 {
  uint16_t bits;

  f16() = default;
  KOKKOS_INLINE_FUNCTION explicit f16(float f) : bits(from_float(f)) {}
  KOKKOS_INLINE_FUNCTION explicit f16(double d) : bits(from_float(static_cast<float>(d))) {}
  KOKKOS_INLINE_FUNCTION operator float() const { return to_float(bits); }

  KOKKOS_INLINE_FUNCTION static f16 from_bits(uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }

  /// float -> binary16, round to nearest even; overflow gives +-inf, NaN stays NaN.
  KOKKOS_INLINE_FUNCTION static uint16_t from_float(float f) {
#if defined(__CUDA_ARCH__)
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#elif defined(TILEKIT_F16C)
    return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#else
    return from_float_portable(f);
#endif
  }
  KOKKOS_INLINE_FUNCTION static float to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<unsigned short>(h)));
    return f;
#elif defined(TILEKIT_F16C)
    return _cvtsh_ss(h);
#else
    return to_float_portable(h);
#endif
  }

  /// The portable conversions (also the reference the hardware paths are tested against).
  KOKKOS_INLINE_FUNCTION static uint16_t from_float_portable(float f) {
    const uint32_t x = detail::float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) {  // inf or NaN
      return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    }
    if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520
    if (absx < 0x38800000u) {  // result is subnormal or zero: |f| < 2^-14
      if (absx < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25 rounds to 0
      const uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
      const int shift = 126 - static_cast<int>(absx >> 23);  // 14..24 for this range
      const uint32_t q = mant >> shift;
      const uint32_t rem = mant & ((1u << shift) - 1u);
      const uint32_t half = 1u << (shift - 1);
      const uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
      return static_cast<uint16_t>(sign | r);
    }
    // normal: rebias exponent 127 -> 15, round the 13 dropped mantissa bits
    uint32_t v = ((absx - 0x38000000u) >> 13);
    const uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;  // carry may roll into the exponent
    return static_cast<uint16_t>(sign | v);
  }

  KOKKOS_INLINE_FUNCTION static float to_float_portable(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return detail::bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp != 0) return detail::bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
    if (mant == 0) return detail::bits_float(sign);
    // subnormal: value = mant * 2^-24
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
};

/// bfloat16 storage: the upper 16 bits of a binary32.
struct alignas(2) bf16 {
  uint16_t bits;

  bf16() = default;
  KOKKOS_INLINE_FUNCTION explicit bf16(float f) : bits(from_float(f)) {}
  KOKKOS_INLINE_FUNCTION explicit bf16(double d) : bits(from_float(static_cast<float>(d))) {}
  KOKKOS_INLINE_FUNCTION operator float() const { return detail::bits_float(static_cast<uint32_t>(bits) << 16); }

  KOKKOS_INLINE_FUNCTION static bf16 from_bits(uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }
  /// float -> bfloat16, round to nearest even; NaN stays a (quiet) NaN.
  KOKKOS_INLINE_FUNCTION static uint16_t from_float(float f) {
    const uint32_t x = detail::float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
  }
};

static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2, "16-bit storage types must be 2 bytes");
static_assert(std::is_trivially_copyable<f16>::value && std::is_trivially_copyable<bf16>::value,
              "16-bit storage types must be trivially copyable");

/// Element types tilekit knows by name.
enum class DType { f64, f32, f16, bf16, i8, i32 };

/// Arithmetic of f32 matmuls: IEEE f32 (the default, as cuBLAS's), or TF32 tensor-core math (an
/// opt-in: inputs rounded to 10-bit mantissas, f32 accumulation; CUDA sm_80+, else IEEE tiles run).
/// Only f32 inputs take tf32.
enum class Math { ieee, tf32 };
inline const char* math_name(Math m) { return m == Math::tf32 ? "tf32" : "ieee"; }

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::f64: return "f64";
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i8: return "i8";
    case DType::i32: return "i32";
  }
  return "?";
}

/// Parses a dtype name; returns false for an unknown name.
inline bool parse_dtype(const std::string& s, DType& out) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i8, DType::i32})
    if (s == dtype_name(t)) {
      out = t;
      return true;
    }
  return false;
}

inline std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f64: return 8;
    case DType::f32: case DType::i32: return 4;
    case DType::f16: case DType::bf16: return 2;
    case DType::i8: return 1;
  }
  return 0;
}

/// Per element type: its DType, the type arithmetic is done in (the accumulator of a matmul),
/// and the unit roundoff used in error bounds (0 for exact integer arithmetic).
template <class T> struct TypeTraits;
template <> struct TypeTraits<double> {
  using compute = double;
  static constexpr DType dtype = DType::f64;
  static constexpr double unit_roundoff = 1.1102230246251565e-16;  // 2^-53
};
template <> struct TypeTraits<float> {
  using compute = float;
  static constexpr DType dtype = DType::f32;
  static constexpr double unit_roundoff = 5.9604644775390625e-08;  // 2^-24
};
template <> struct TypeTraits<f16> {
  using compute = float;
  static constexpr DType dtype = DType::f16;
  static constexpr double unit_roundoff = 4.8828125e-04;  // 2^-11
};
template <> struct TypeTraits<bf16> {
  using compute = float;
  static constexpr DType dtype = DType::bf16;
  static constexpr double unit_roundoff = 3.90625e-03;  // 2^-8
};
template <> struct TypeTraits<int8_t> {
  using compute = int32_t;
  static constexpr DType dtype = DType::i8;
  static constexpr double unit_roundoff = 0.0;
};
template <> struct TypeTraits<int32_t> {
  using compute = int32_t;
  static constexpr DType dtype = DType::i32;
  static constexpr double unit_roundoff = 0.0;
};

/// Converts between element types through the compute type (rounding to nearest even for 16-bit
/// floats; for integers, float -> int rounds to nearest and saturates).
template <class To, class From>
KOKKOS_INLINE_FUNCTION To convert(From v) {
  if constexpr (std::is_same<To, From>::value) {
    return v;
  } else if constexpr (std::is_same<To, f16>::value || std::is_same<To, bf16>::value) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral<To>::value && !std::is_integral<From>::value) {
    const double d = static_cast<double>(static_cast<float>(v) == static_cast<float>(v) ? v : From(0));
    static_assert(std::is_signed<To>::value, "integer outputs are signed");
    // (numeric_limits is host-only under nvcc without --expt-relaxed-constexpr)
    const double hi = static_cast<double>((uint64_t(1) << (8 * sizeof(To) - 1)) - 1);
    const double lo = -hi - 1.0;
    const double r = d < 0 ? d - 0.5 : d + 0.5;
    return static_cast<To>(r < lo ? lo : (r > hi ? hi : r));
  } else if constexpr (std::is_same<From, f16>::value || std::is_same<From, bf16>::value) {
    return static_cast<To>(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace tilekit
