// Elementwise tuning: the compile-time constants of the kernels and the per-backend default configs
// (the table itself is in elementwise_defaults.cpp; tuning sweeps rewrite its rows).
#pragma once

#include "kernels/elementwise.hpp"
#include "kernels/types.hpp"

#include <string>

namespace tilekit {
namespace tuning {

/// Bytes per vector access: 16 (128-bit) is the widest load/store CUDA and HIP have per thread,
/// and an SSE register on x86. Compiled in (it sizes the vector type); the only value configs may
/// name, so that each op and type is compiled once per variant.
constexpr int kElementwiseVectorBytes = 16;

/// tiled: rows whose vectors a thread loads before it stores any (bytes in flight per thread =
/// operands x this x 16). Compiled in: the loads go to registers, so the count must be a constant.
constexpr int kElementwiseRowsInFlight = 4;

/// The default config of `variant` for a backend ("serial", "openmp", "cuda", "hip") and type;
/// for automatic, the backend's best known variant and config. Throws std::invalid_argument for an
/// unknown backend.
ElementwiseConfig default_elementwise_config(const std::string& backend, DType t,
                                             ElementwiseVariant variant = ElementwiseVariant::automatic);

}  // namespace tuning
}  // namespace tilekit
