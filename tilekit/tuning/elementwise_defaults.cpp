// Per-backend default elementwise configs: one table. Later tuning sweeps rewrite its rows.
#include "tilekit/tuning/elementwise_defaults.hpp"

#include <array>
#include <stdexcept>

namespace tilekit {
namespace tuning {

namespace {
struct DefaultRow {
  const char* backend;
  const char* variant;  // the variant this row is the default of; "auto" = what automatic runs
  const char* dtype;    // "*" for every type; the first matching row wins
  const char* config;   // full config name
};
// Host (serial, openmp): a team is one thread (team_size 1, threads_n 1) that walks 64 consecutive
// 16-byte vectors (1 KiB) of one row, as one plain loop the compiler vectorizes (f16/bf16: whole
// AVX-512 conversions, tilekit/kernels/elementwise/launch.hpp). One row per team: with 4 (r4, the earlier
// default) the 2-core EPYC reached 0.51-0.81x the copy bandwidth for bf16/f16/f32 at 4096x4096,
// with 1 row 1.01-1.04x (2026-11-23, docs/perf-notes.md section 9).
// "auto" on openmp is tiled, from two runs of `tilekit elementwise 4096 4096 --op add` on 2 EPYC
// cores (README): for f64, f32 and i32 tiled and vectorized are within run-to-run noise of each
// other (0.64-0.98 of the copy bandwidth); for bf16 tiled is 5x faster (19-24 GB/s against 3-5:
// GCC vectorizes the bf16 conversions of the row loop only); f16 was then bound by its software
// conversion in every variant (about 1 GB/s; 10 GB/s since F16C conversions, tilekit/kernels/core/types.hpp).
// Serial follows openmp (not measured apart).
// CUDA "auto" is vectorized: on the H100 at 16384x8192 (BENCHMARKS.md, gpu-h100-elementwise,
// 2026-11-22) it ran at 1.00-1.05x the copy bandwidth for f64, f32, f16 and bf16, the tiled layout
// at 0.81-0.97x. The tiled row is the notebook's layout: 256 threads as 4 x 64 (64 threads side by
// side along a row, one 16-byte vector each), 16 rows per thread, so a tile is 64 rows x 1 KiB;
// teams remapped to walk along rows of tiles. HIP keeps the tiled layout (not measured).
// The dtype column lets a sweep give a type its own row (first match wins); none does yet.
constexpr std::array<DefaultRow, 12> kDefaults{{
    {"serial", "auto", "*", "tiled_vb16_r1_c64_t1_n1_remap"},
    {"serial", "vectorized", "*", "vectorized_vb16"},
    {"serial", "tiled", "*", "tiled_vb16_r1_c64_t1_n1_remap"},
    {"openmp", "auto", "*", "tiled_vb16_r1_c64_t1_n1_remap"},
    {"openmp", "vectorized", "*", "vectorized_vb16"},
    {"openmp", "tiled", "*", "tiled_vb16_r1_c64_t1_n1_remap"},
    {"cuda", "auto", "*", "vectorized_vb16"},
    {"cuda", "vectorized", "*", "vectorized_vb16"},
    {"cuda", "tiled", "*", "tiled_vb16_r16_c1_t256_n64_remap"},
    {"hip", "auto", "*", "tiled_vb16_r16_c1_t256_n64_remap"},
    {"hip", "vectorized", "*", "vectorized_vb16"},
    {"hip", "tiled", "*", "tiled_vb16_r16_c1_t256_n64_remap"},
}};
}  // namespace

ElementwiseConfig default_elementwise_config(const std::string& backend, DType t, ElementwiseVariant variant) {
  if (backend != "serial" && backend != "openmp" && backend != "cuda" && backend != "hip")
    throw std::invalid_argument("no default elementwise config for backend '" + backend +
                                "' (known: serial, openmp, cuda, hip)");
  ElementwiseConfig c;
  if (variant == ElementwiseVariant::naive) {
    c.variant = ElementwiseVariant::naive;
    return c;
  }
  const std::string want = variant_name(variant), type = dtype_name(t);
  for (const auto& row : kDefaults) {
    if (backend == row.backend && want == row.variant && (type == row.dtype || std::string("*") == row.dtype)) {
      std::string why;
      if (!ElementwiseConfig::parse(row.config, c, why)) throw std::logic_error(why);
      return c;
    }
  }
  throw std::logic_error("elementwise defaults table lacks backend '" + backend + "', variant '" + want + "'");
}

}  // namespace tuning

ElementwiseConfig resolve_elementwise_config(const ElementwiseConfig& cfg, DType t) {
  if (cfg.variant != ElementwiseVariant::automatic) return cfg;
  return tuning::default_elementwise_config(backend_name(), t, ElementwiseVariant::automatic);
}

}  // namespace tilekit
