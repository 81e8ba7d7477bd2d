// Elementwise tuning: the compile-time constants of the kernels and the per-backend default configs
// (the table itself is in elementwise_defaults.cpp; tuning sweeps rewrite its rows).
#pragma once

#include "tilekit/kernels/elementwise/elementwise.hpp"
#include "tilekit/kernels/core/types.hpp"

#include <string>

namespace tilekit {
namespace tuning {

/// The default config of `variant` for a backend ("serial", "openmp", "cuda", "hip") and type;
/// for automatic, the backend's best known variant and config. Throws std::invalid_argument for an
/// unknown backend.
ElementwiseConfig default_elementwise_config(const std::string& backend, DType t,
                                             ElementwiseVariant variant = ElementwiseVariant::automatic);

}  // namespace tuning
}  // namespace tilekit
