// Must not compile: f32 inputs with an f64 output is not a type pair tilekit instantiates. The
// static_assert in matmul_problem names the allowed pairs (ctest static_assert_type_pair checks the
// message), instead of an undefined reference to check_matmul<float, double> at link time.
#include "tilekit/tilekit.hpp"

int main() {
  Kokkos::ScopeGuard kokkos;
  Kokkos::View<float**> A("A", 2, 2), B("B", 2, 2);
  Kokkos::View<double**> C("C", 2, 2);
  tilekit::gemm("N", "N", 1.0f, A, B, 0.0f, C);
}
