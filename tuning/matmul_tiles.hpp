// The compile-time tile menu of the blocked matmul, per backend class, and the per-backend default
// configurations. This is the only place tile sizes are written down; kernels take them as
// template parameters. Every entry is one more instantiation per type (and nvcc builds each twice,
// sm_80 + sm_90), so the menu is kept short: add an entry only when a sweep shows it wins somewhere.
#pragma once

#include "kernels/matmul_config.hpp"
#include "kernels/types.hpp"

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace tilekit {
namespace tuning {

/// A team computes a BM x BN tile of C, stepping K by BK (A and B tiles of BM x BK and BK x BN are
/// staged in team scratch); the micro-kernel accumulates a TM x TN block of C in registers.
template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct TileShape {
  static constexpr int BM = BM_;  ///< rows of C per team
  static constexpr int BN = BN_;  ///< columns of C per team
  static constexpr int BK = BK_;  ///< K depth per scratch stage
  static constexpr int TM = TM_;  ///< micro-tile rows (registers)
  static constexpr int TN = TN_;  ///< micro-tile columns (registers)
  /// Number of TM x TN micro-tiles in a team tile; on GPUs, also the threads per team.
  static constexpr int micro_tiles = (BM / TM) * (BN / TN);
  static_assert(BM % TM == 0 && BN % TN == 0, "micro-tile must divide the team tile");

  static MatmulConfig config() {
    MatmulConfig c;
    c.bm = BM; c.bn = BN; c.bk = BK; c.tm = TM; c.tn = TN;
    return c;
  }
};

template <class... Tiles>
struct TileList {};

/// GPU menu (CUDA, HIP). Each thread owns exactly one micro-tile, kept in registers for the whole
/// K loop, so threads per team = micro_tiles (256 for every entry: 8 warps / 4 wavefronts).
using GpuMatmulTiles = TileList<TileShape<128, 128, 8, 8, 8>,   // large problems: 64 FMAs per 16 loads
                                TileShape<128, 64, 16, 8, 4>,   // tall tiles, deeper K stage
                                TileShape<64, 64, 16, 4, 4>,    // mid sizes: 4x more teams than 128x128
                                TileShape<32, 32, 32, 2, 2>>;   // small problems: fill the SMs

/// Host menu (Serial, OpenMP). A team is one or a few CPU threads that walk the micro-tiles of the
/// team tile; BK is deep so a staged A/B pair fits L2 and the TN-wide inner loop vectorises
/// (16 f32 = one AVX-512 register).
using HostMatmulTiles = TileList<TileShape<64, 64, 128, 8, 16>,    // default: As+Bs 64 KB (f32)
                                 TileShape<128, 128, 128, 8, 16>,  // fewer, larger teams
                                 TileShape<32, 32, 64, 4, 8>>;     // small problems

/// True for execution spaces whose memory the host cannot read (GPUs).
template <class ExecSpace>
constexpr bool is_gpu_space() {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
}

template <class ExecSpace>
using MatmulTiles = std::conditional_t<is_gpu_space<ExecSpace>(), GpuMatmulTiles, HostMatmulTiles>;

/// The default configuration for a backend ("serial", "openmp", "cuda", "hip") and input type.
MatmulConfig default_matmul_config(const std::string& backend, DType input);

/// The tile names of the menu compiled for the default execution space, comma-separated.
std::string menu_names();

}  // namespace tuning
}  // namespace tilekit
