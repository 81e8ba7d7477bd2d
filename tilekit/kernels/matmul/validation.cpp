// The only translation unit that instantiates Kokkos Kernels gemm (its ETI is off; see scripts/deps.sh).
#include "tilekit/kernels/matmul/validation.hpp"

#include <KokkosBlas3_gemm.hpp>

#include <algorithm>

namespace tilekit {

void kokkos_kernels_gemm(const Kokkos::View<const double**, Kokkos::LayoutLeft>& A,
                         const Kokkos::View<const double**, Kokkos::LayoutLeft>& B, const RefMatrix& C) {
  KokkosBlas::gemm("N", "N", 1.0, A, B, 0.0, C);
}

void kokkos_kernels_gemm(const Kokkos::View<const float**, Kokkos::LayoutLeft>& A,
                         const Kokkos::View<const float**, Kokkos::LayoutLeft>& B,
                         const Kokkos::View<float**, Kokkos::LayoutLeft>& C) {
  KokkosBlas::gemm("N", "N", 1.0f, A, B, 0.0f, C);
}

std::string kokkos_kernels_version() {
#if defined(TILEKIT_KOKKOSKERNELS_VERSION)  // from find_package(KokkosKernels); 3.4 has no macro
  return TILEKIT_KOKKOSKERNELS_VERSION;
#else
  return "unknown";
#endif
}

double matmul_tolerance(DType in, DType out, int64_t K, Math math) {
  auto u = [](DType t) {
    switch (t) {
      case DType::f64: return TypeTraits<double>::unit_roundoff;
      case DType::f32: return TypeTraits<float>::unit_roundoff;
      case DType::f16: return TypeTraits<f16>::unit_roundoff;
      case DType::bf16: return TypeTraits<bf16>::unit_roundoff;
      default: return 0.0;
    }
  };
  if (in == DType::i8) return 0.0;
  const double u_acc = in == DType::f64 ? u(DType::f64) : u(DType::f32);  // f32 accumulation
  // TF32 math rounds each input to an 11-bit significand (unit roundoff 2^-11, as f16's) before
  // multiplying: a relative error of about 2 u_tf32 per product, which does not grow with K.
  const double u_inputs = in == DType::f32 && math == Math::tf32 ? 8.0 * TypeTraits<f16>::unit_roundoff : 0.0;
  return 8.0 * u(out) + u_inputs + 2.0 * static_cast<double>(std::max<int64_t>(K, 1)) * u_acc;
}

}  // namespace tilekit
