// tilekit::gemm next to KokkosBlas::gemm on the same views; prints PASS when they agree.
#include <tilekit/tilekit.hpp>
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Random.hpp>
#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const int M = 256, N = 192, K = 128;
  Kokkos::View<float**, Kokkos::LayoutLeft> A("A", M, K), B("B", K, N), C("C", M, N), ref("ref", M, N);
  Kokkos::Random_XorShift64_Pool<> pool(42);
  Kokkos::fill_random(A, pool, -1.0f, 1.0f);
  Kokkos::fill_random(B, pool, -1.0f, 1.0f);

  tilekit::gemm("N", "N", 1.0f, A, B, 0.0f, C);  // the tuned config, chosen automatically
  KokkosBlas::gemm("N", "N", 1.0f, A, B, 0.0f, ref);

  float diff = 0;
  Kokkos::parallel_reduce("max_diff", M * N, KOKKOS_LAMBDA(int i, float& d) {
    const float e = C(i % M, i / M) - ref(i % M, i / M);
    d = e > d ? e : -e > d ? -e : d;
  }, Kokkos::Max<float>(diff));
  std::printf("tilekit::gemm vs KokkosBlas::gemm: max |difference| %g: %s\n", diff, diff < 1e-3f ? "PASS" : "FAIL");
  return diff < 1e-3f ? 0 : 1;
}
