// Per-backend default matmul configurations: one table. Later tuning sweeps rewrite its rows.
#include "kernels/common.hpp"
#include "tuning/matmul_tiles.hpp"

#include <array>
#include <stdexcept>

namespace tilekit {
namespace tuning {

namespace {
struct DefaultRow {
  const char* backend;
  const char* config;  // full config name
};
// Host: team_size 1 (each OpenMP thread is a team and owns whole C tiles; no intra-team barrier
// traffic between cores); the 128x128 tile won most shapes of every type in the 2-core EPYC sweep
// shipped in tuning/results (scripts/tune-cpu.sh), by 1.1-2x over 64x64. GPU: 256 threads per team as one Kokkos team of 256 x vector length 1.
// CUDA f16/bf16: a tensor-core tile, its warps as team members of 32 vector lanes each: the
// warpgroup-MMA tile where the GPU and the build allow it (Hopper, sm_90a), else the mma.sync tile
// that was fastest at 8192^3 on the H100 (docs/perf-notes.md).
constexpr const char* kCudaWgmmaDefault = "bm128_bn128_bk64_tm64_tn128_wg_g8_t8_v32";
constexpr const char* kCudaMmaDefault = "bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32";
constexpr std::array<DefaultRow, 4> kDefaults{{
    {"serial", "bm128_bn128_bk128_tm8_tn16_g8_t1_v1"},
    {"openmp", "bm128_bn128_bk128_tm8_tn16_g8_t1_v1"},
    {"cuda", "bm128_bn128_bk8_tm8_tn8_g8_t256_v1"},
    {"hip", "bm128_bn128_bk8_tm8_tn8_g8_t256_v1"},
}};

template <class... Tiles>
std::string names(TileList<Tiles...>, const DType* input = nullptr) {
  std::string s;
  auto add = [&](const MatmulConfig& c) {
    if (!input || tile_supports(c, *input)) s += (s.empty() ? "" : ", ") + c.tile_name();
  };
  (add(Tiles::config()), ...);
  return s;
}
}  // namespace

MatmulConfig default_matmul_config(const std::string& backend, DType input) {
  for (const auto& row : kDefaults) {
    if (backend == row.backend) {
      const bool mma = backend == "cuda" && (input == DType::f16 || input == DType::bf16);
      MatmulConfig c;
      std::string why;
      const char* name = !mma ? row.config : warpgroup_mma_available() ? kCudaWgmmaDefault : kCudaMmaDefault;
      if (!MatmulConfig::parse(name, c, why)) throw std::logic_error(why);
      return c;
    }
  }
  throw std::invalid_argument("no default matmul config for backend '" + backend +
                              "' (known: serial, openmp, cuda, hip)");
}

std::string menu_names() { return names(MatmulTiles<Kokkos::DefaultExecutionSpace>{}); }
std::string menu_names(DType input) { return names(MatmulTiles<Kokkos::DefaultExecutionSpace>{}, &input); }

}  // namespace tuning
}  // namespace tilekit
