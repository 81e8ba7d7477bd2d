// The plain configuration of one blocked-matmul launch. The tile part (bm..tn) must be an entry of
// the backend's compile-time menu (tilekit/kernels/matmul/tiles.hpp); group_m, team_size and vector_length
// are run-time choices. Values come from tilekit/tuning/, never from literals in the kernel.
#pragma once

#include <string>

namespace tilekit {

/// The most teams per tile of C that split K (MatmulConfig::k_splits).
constexpr int kMaxKSplits = 16;

struct MatmulConfig {
  int bm = 0;             ///< rows of C per team tile
  int bn = 0;             ///< columns of C per team tile
  int bk = 0;             ///< depth of the A/B tiles staged in team scratch per K step
  int tm = 0;             ///< rows of the register micro-tile of one thread (one warp with mma)
  int tn = 0;             ///< columns of the register micro-tile of one thread (one warp with mma)
  bool mma = false;       ///< tensor-core tile: each warp owns a tm x tn tile of 16x16x16 MMAs
  bool wgmma = false;     ///< Hopper warpgroup-MMA tile (also mma): each warpgroup of 4 warps owns tm x tn
  /// warp-specialised warpgroup-MMA tile (also wgmma and mma): one more warpgroup only copies
  bool ws = false;
  /// Thin kernel (tilekit/kernels/matmul/thin.hpp) instead of a tile: for M or N up to
  /// kThinMaxRows, each team owns thin_cols columns of the long side of C over all of K
  /// (bm..tn, group_m, team_size and vector_length unused: the kernel derives its team shape)
  bool thin = false;
  int thin_cols = 0;      ///< thin: columns of the long side of C per team
  int thin_kgroups = 1;   ///< thin: threads that split K for each column (reduced in a fixed order)
  /// Split K: teams per tile of C, each over a contiguous run of K steps; their partial sums meet in
  /// a device workspace and are added in split order (deterministic) before the epilogue: by the
  /// last team of a tile (the SIMT tiles that run several teams per SM) or by a second kernel (the
  /// warp-specialised tiles of 128 or 256 columns). 1 = no split. Run-time, on CUDA: shapes whose
  /// tiles leave SMs idle (512^3, 1024^3, 512x768x65536 on the H100) while K is deep.
  int k_splits = 1;
  int group_m = 8;        ///< tile-rows per group in the L2-friendly launch order (1 = row-major order)
  int team_size = 1;      ///< Kokkos team size (threads per team divided by vector_length)
  int vector_length = 1;  ///< Kokkos vector length

  /// e.g. "bm128_bn128_bk8_tm8_tn8_g8_t256_v1", "bm128_bn128_bk16_tm64_tn32_tc_g8_t8_v32",
  /// "bm64_bn64_bk16_tm8_tn4_s4_g8_t128_v1" (K split in 4; no "_s" when k_splits is 1), "thin_l32_k8"
  std::string name() const;
  /// "bm128_bn128_bk8_tm8_tn8" (the compile-time part only; "_tc" marks a tensor-core tile, "_wg" a
  /// Hopper warpgroup-MMA tile, "_ws" a warp-specialised one), or "thin_l32_k8"
  std::string tile_name() const;
  /// Parses "bm.._bn.._bk.._tm.._tn..[_tc|_wg|_ws][_s..][_g..][_t..][_v..]" (fields left out keep the values
  /// in `out`) or "thin_l.._k.." (the thin kernel derives its team shape; team_size and
  /// vector_length are 0). On failure returns false and says why.
  static bool parse(const std::string& s, MatmulConfig& out, std::string& why);

  bool same_tile(const MatmulConfig& o) const {
    if (thin || o.thin) return thin == o.thin && thin_cols == o.thin_cols && thin_kgroups == o.thin_kgroups;
    return bm == o.bm && bn == o.bn && bk == o.bk && tm == o.tm && tn == o.tn && mma == o.mma && wgmma == o.wgmma &&
           ws == o.ws;
  }
  bool operator==(const MatmulConfig& o) const {
    return same_tile(o) &&
           (thin || (k_splits == o.k_splits && group_m == o.group_m && team_size == o.team_size && vector_length == o.vector_length));
  }
};

}  // namespace tilekit
