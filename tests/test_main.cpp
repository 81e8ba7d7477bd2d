// Every test runs on the build's backend (Kokkos::DefaultExecutionSpace): the same sources are
// built once per preset (serial, openmp, cuda, hip), so each test is written once and run on all.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

int main(int argc, char* argv[]) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::printf("tilekit tests on %s\n", Kokkos::DefaultExecutionSpace::name());
  return RUN_ALL_TESTS();
}
