// Team-level helpers shared by the SIMT (matmul_impl.hpp) and tensor-core (matmul_mma_sm80.hpp)
// matmul kernels.
#pragma once

#include <Kokkos_Core.hpp>

namespace tilekit {
namespace detail {

/// The vector lane of the calling thread inside a team. Kokkos maps vector lanes to threadIdx.x on
/// CUDA and HIP; host backends run with vector length 1 (enforced by check_matmul).
KOKKOS_INLINE_FUNCTION int vector_lane() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return static_cast<int>(threadIdx.x);
#else
  return 0;
#endif
}

/// Grouped launch order (the Triton tutorial's GROUP_SIZE_M): consecutive teams walk down GROUP_M
/// tile-rows before moving right, so the B tiles they share stay in L2.
KOKKOS_INLINE_FUNCTION void grouped_tile(int pid, int group_m, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int per_group = group_m * tiles_n;
  const int first_m = (pid / per_group) * group_m;
  const int group_rows = (tiles_m - first_m) < group_m ? (tiles_m - first_m) : group_m;
  tile_m = first_m + (pid % per_group) % group_rows;
  tile_n = (pid % per_group) / group_rows;
}

}  // namespace detail
}  // namespace tilekit
