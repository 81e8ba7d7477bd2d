// The per-backend default matmul configurations (matmul_defaults.cpp): what `auto` runs where no
// tuned result applies.
#pragma once

#include "tilekit/kernels/matmul/tiles.hpp"

#include <cstdint>
#include <string>

namespace tilekit {
namespace tuning {

/// The default configuration for a backend ("serial", "openmp", "cuda", "hip"), input type and math:
/// on CUDA sm_80+ the tensor-core tile of the type where it has one (f16, bf16, f64, i8; f32 only
/// with Math::tf32), else the backend's SIMT tile.
MatmulConfig default_matmul_config(const std::string& backend, DType input, Math math = Math::ieee);
/// The default for one problem shape: the thin kernel where M or N is at most kThinMaxRows, else the
/// backend's default tile, or a smaller menu tile where that leaves most of the device idle.
MatmulConfig default_matmul_config(const std::string& backend, DType input, int64_t M, int64_t N, int64_t K,
                                   Math math = Math::ieee);

}  // namespace tuning
}  // namespace tilekit
