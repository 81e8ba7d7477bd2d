// The matmul tuner: a search space over the compile-time tile menu and the run-time team shape and
// group size, candidates pruned before launch, each survivor timed (warm-up, >= 7 fenced
// repetitions over rotating inputs, median/p20/p80) and verified against Kokkos Kernels gemm
// before its time counts; the best per shape goes to the tuning cache. And the run-time lookup
// behind `--config auto`.
#pragma once

#include "kernels/epilogue.hpp"
#include "kernels/matmul_config.hpp"
#include "kernels/types.hpp"
#include "tuning/cache.hpp"
#include "tuning/search.hpp"

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tilekit {
namespace tuning {

/// Every config the tuner may try for `in` inputs on this build's backend: each menu tile that runs
/// the type (tensor-core tiles: f16, bf16) x group_m in {1, 4, 8, 16} x the team shapes the backend
/// allows (GPU: team_size x vector_length = threads per tile, vector_length in 1..32, tensor-core
/// tiles one warp per team member; host: vector_length 1, team_size 1, 2, 4, ... up to concurrency).
std::vector<MatmulConfig> matmul_search_space(DType in);
/// The thin configs the tuner tries for thin products (M or N up to kThinMaxRows): GPU teams of 128,
/// 256 or 512 threads split into columns x K groups (1..32); host column blocks of 16..1024.
std::vector<MatmulConfig> thin_search_space();

/// Storage order of op(A), op(B) and C: true = column-major (contiguous along rows).
struct MatmulLayouts {
  bool a_col = false, b_col = false, c_col = false;
  std::string str() const;  // "a=row,b=col,c=row"
};

TuneKey matmul_key(DType in, DType out, const MatmulLayouts& layouts, const Epilogue& ep, int64_t M, int64_t N,
                   int64_t K);

struct MatmulTuneRequest {
  std::vector<std::array<int64_t, 3>> shapes;  ///< M, N, K
  DType in = DType::f32, out = DType::f32;
  MatmulLayouts layouts;
  Epilogue epilogue;
  Strategy strategy = Strategy::exhaustive;
  Budget budget;
  uint64_t seed = 1;
  int warmup = 2;
  int reps = 7;            ///< timed repetitions per candidate (at least 7)
  bool baselines = true;   ///< also time Kokkos Kernels gemm and (host) the vendor BLAS
  /// Configs tried in addition to the strategy's picks (e.g. `tilekit tune matmul --also NAME`);
  /// like every candidate they are pruned if they do not fit.
  std::vector<MatmulConfig> extra_candidates;
  /// Test hook: a candidate for which this returns true is run with a doubled alpha, i.e. planted
  /// with a wrong result, which verification must reject.
  std::function<bool(const MatmulConfig&)> plant_wrong_result;
};

struct CandidateResult {
  std::array<int64_t, 3> shape{};
  MatmulConfig config;
  std::string status;  ///< "ok", "pruned", "launch_failed", "wrong_result"
  std::string reason;  ///< why it was pruned, failed or rejected
  double median_s = 0.0, p20_s = 0.0, p80_s = 0.0;
  double tflops = 0.0;
  double rel_error = 0.0;
  bool is_default = false;
};

struct ShapeSummary {
  std::array<int64_t, 3> shape{};
  std::optional<CandidateResult> best;  ///< fastest verified candidate
  std::optional<CandidateResult> default_result;
  double kk_tflops = 0.0;      ///< Kokkos Kernels gemm (0: not measured)
  double vendor_tflops = 0.0;  ///< vendor BLAS (0: not available)
  std::string baseline_note;   ///< what the baselines computed (e.g. f32 on upcast f16 data)
  int tried = 0, pruned = 0, failed = 0, rejected = 0;
};

/// Called after every candidate: (done, total, best so far for this shape, or "").
using TuneProgress = std::function<void(int done, int total, const std::string& best)>;

struct MatmulTuneResult {
  std::vector<CandidateResult> candidates;
  std::vector<ShapeSummary> shapes;
};

/// Runs the sweep. After each shape its best verified config is stored in `cache` (if given), so an
/// interrupted sweep keeps every finished shape.
MatmulTuneResult tune_matmul(const MatmulTuneRequest& req, TuningCache* cache, const TuneProgress& progress);

/// The result of `--config auto`: which config, from where, and why.
struct ResolvedConfig {
  MatmulConfig config;
  std::string source;  ///< "exact", "nearest" or "default"
  std::string why;
};

/// `--config auto`: the tuned config of the exact shape, else of the nearest tuned shape of the same
/// types/layouts/epilogue, else the backend default. Tuned entries come from the user's cache
/// (TuningCache::default_dir() or `cache_dir`) and then the results shipped with tilekit
/// (shipped_results(shipped_dir)); an entry whose config `valid` rejects (returns a reason) is
/// skipped and the reason kept in `why`.
ResolvedConfig resolve_matmul_config(const TuneKey& key, DType in,
                                     const std::function<std::string(const MatmulConfig&)>& valid,
                                     const std::string& cache_dir = "", const std::string& shipped_dir = "");

/// Loads the user's cache for this device merged with the shipped results (user entries win).
TuningCache load_tuned(const std::string& cache_dir, std::vector<std::string>* warnings = nullptr,
                       const std::string& shipped_dir = "");

}  // namespace tuning
}  // namespace tilekit
