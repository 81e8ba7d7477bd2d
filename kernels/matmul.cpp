#include "kernels/matmul.hpp"
#include "tuning/matmul_tiles.hpp"

namespace tilekit {

const char* supported_type_pairs() {
  return "f64->f64, f32->f32, f16->f16, f16->f32, bf16->bf16, bf16->f32, i8->i32";
}

std::size_t scratch_limit_bytes() {
  using ES = Kokkos::DefaultExecutionSpace;
  constexpr int level = tuning::is_gpu_space<ES>() ? 0 : 1;
  return static_cast<std::size_t>(Kokkos::TeamPolicy<ES>::scratch_size_max(level));
}

}  // namespace tilekit
