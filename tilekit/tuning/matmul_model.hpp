// The GPU matmul model: `auto`'s choice among the menu's tiles for a problem nobody tuned. Each
// candidate's time is predicted from how its tiles fall on the SMs (waves and the last wave's fill),
// the padding of edge tiles, the K steps per tile against the fixed cost of a tile (pipeline fill and
// the store of C), and the steady-state efficiency the tile reaches where it is at its best. The
// candidates are ranked by that time; the first is `auto`'s pick where no tuned entry is exact, and
// the top few are what `tilekit tune --strategy model` measures (docs/tuning.md; perf notes 44).
#pragma once

#include "tilekit/kernels/matmul/config.hpp"
#include "tilekit/kernels/core/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tilekit {
namespace tuning {

/// One candidate tile of the model with what the model knows of it.
struct GpuTileModel {
  const char* config;     ///< the menu config (tilekit/kernels/matmul/tiles.hpp)
  int teams_per_sm;       ///< teams one SM holds at once (registers, scratch, launch bounds)
  double efficiency;      ///< steady-state fraction of the type's peak with every SM full
  int k_splits = 1;       ///< split K: teams (work items) per tile of C, each a 1/k_splits share of K
};

/// The GPU the model predicts for.
struct GpuModelDevice {
  int sms = 132;                     ///< streaming multiprocessors
  double peak_flops = 0.0;           ///< the type's peak (FLOP/s; core/peak.hpp); 0: relative times
  double store_bytes_per_s = 3.35e12;  ///< DRAM bandwidth the stores of C share
  /// Bytes read plus bytes written per second by the copy that makes an operand K-major for the
  /// tiles that load only K-major operands (gpu/pack.hpp): i8 as measured on an H200 (perf notes
  /// 51); f32 at 3.2e12 rather than the 2.6e12 measured there, the rate at which the TF32 picks
  /// between the 64x128 tile (A through registers) and the 128x256 one (A copied) match the faster
  /// of the two on an H200: 1024x1024x32768 and 1024x16384x1024 take the copy (+2-5%), 512x768x65536
  /// keeps the registers (3.8e12 would take a copy 8% slower there; perf notes 71).
  double pack_bytes_per_s = 3.2e12;
  double pack_i8_bytes_per_s = 1.6e12;
};

/// Which operands run along K in memory (op(A) row-major, op(B) column-major): the TF32 and i8
/// warp-specialised tiles copy any other operand K-major before the product, at a cost the model
/// counts.
struct OperandOrders {
  bool a_k_major = true;
  bool b_k_major = true;
};

/// A candidate and its predicted time.
struct RankedConfig {
  MatmulConfig config;
  double seconds = 0.0;  ///< predicted (relative units where the device's peak is unknown)
  double waves = 0.0;    ///< tiles over the teams the device holds at once
  std::string note;      ///< e.g. "108 tiles, 0.41 waves, 192 K steps"
};

/// The model's candidates for an input type and math on CUDA: the tensor-core tiles where the type
/// has them (`wgmma`: the Hopper warpgroup tiles run in this build and on this GPU), else SIMT.
std::vector<GpuTileModel> gpu_model_candidates(DType in, Math math, bool wgmma, int compute_capability);

/// Every candidate ranked by predicted time, fastest first (ties: the order of `candidates`); split-K
/// candidates only where the unsplit tiles fill fewer than a few waves (kSplitMaxWaves).
std::vector<RankedConfig> rank_gpu_matmul(const std::vector<GpuTileModel>& candidates, DType in, DType out,
                                          int64_t M, int64_t N, int64_t K, const GpuModelDevice& dev,
                                          OperandOrders orders = {});

/// The candidates this build's GPU runs, ranked for the problem (rank_gpu_matmul over
/// gpu_model_candidates), with the shape rules of the defaults that are not tile choices (the
/// grouped order of long-K ws tiles); `sms` (if given) receives the SM count used.
std::vector<RankedConfig> model_ranked_configs(DType in, DType out, int64_t M, int64_t N, int64_t K, Math math,
                                               int* sms = nullptr, OperandOrders orders = {});

/// Whether `auto` asks the model rather than taking the thin kernel for a product with a thin side
/// (M or N up to kThinMaxRows), on Hopper: f16/bf16 with enough rows for the warp-specialised tiles;
/// f64, and TF32 whose long operand runs along K, in the thin kernel's 16-row class.
bool model_ranks_thin_shape(DType in, Math math, int64_t M, int64_t N, OperandOrders orders = {});

/// The model's pick for this build's GPU: the first of model_ranked_configs (the shape default where
/// the type has no candidate). `why` (if given) says what was ranked and the runners-up.
MatmulConfig model_matmul_config(DType in, DType out, int64_t M, int64_t N, int64_t K, Math math,
                                 std::string* why = nullptr, OperandOrders orders = {});

}  // namespace tuning
}  // namespace tilekit
