// The matmul tuner: a search space over the compile-time tile menu and the run-time team shape and
// group size, candidates pruned before launch, each survivor timed (warm-up, >= 7 fenced
// repetitions over rotating inputs, median/p20/p80) and verified against Kokkos Kernels gemm
// before its time counts; the best per shape goes to the tuning cache. And the run-time lookup
// behind `--config auto`.
#pragma once

#include "tilekit/kernels/matmul/epilogue.hpp"
#include "tilekit/kernels/matmul/config.hpp"
#include "tilekit/kernels/core/types.hpp"
#include "tilekit/tuning/cache.hpp"
#include "tilekit/tuning/search.hpp"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilekit {
namespace tuning {

/// Every config the tuner may try for `in` inputs on this build's backend: each menu tile that runs
/// the type (tensor-core tiles: f16, bf16) x group_m in {1, 4, 8, 16} x the team shapes the backend
/// allows (GPU: team_size x vector_length = threads per tile, vector_length in 1..32, tensor-core
/// tiles one warp per team member; host: vector_length 1, team_size 1, 2, 4, ... up to concurrency).
std::vector<MatmulConfig> matmul_search_space(DType in, Math math = Math::ieee);
/// The thin configs the tuner tries for thin products (M or N up to kThinMaxRows): GPU teams of 128,
/// 256 or 512 threads split into columns x K groups (1..32); host column blocks of 16..1024.
std::vector<MatmulConfig> thin_search_space();

/// Storage order of op(A), op(B) and C: true = column-major (contiguous along rows).
struct MatmulLayouts {
  bool a_col = false, b_col = false, c_col = false;
  std::string str() const;  // "a=row,b=col,c=row"
};

/// The cache key of a matmul; TF32 math (f32 inputs) is its own type family, "tf32->f32".
TuneKey matmul_key(DType in, DType out, const MatmulLayouts& layouts, const Epilogue& ep, int64_t M, int64_t N,
                   int64_t K, Math math = Math::ieee);

struct MatmulTuneRequest {
  std::vector<std::array<int64_t, 3>> shapes;  ///< M, N, K
  DType in = DType::f32, out = DType::f32;
  Math math = Math::ieee;  ///< Math::tf32: f32 inputs, TF32 tensor-core tiles among the candidates
  MatmulLayouts layouts;
  Epilogue epilogue;
  Strategy strategy = Strategy::exhaustive;
  Budget budget;
  uint64_t seed = 1;
  int warmup = 2;
  int reps = 7;            ///< timed repetitions per candidate (at least 7)
  /// Candidates whose median time is within this fraction of the fastest one's are tied; the tie
  /// goes to the default config, then to the config name first in byte order (winner_index).
  double tie_tolerance = 0.02;
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
  int rank = 0;        ///< the process (MPI rank within its device group) that measured it
  std::string run;     ///< the run that measured it (a time stamp shared by the ranks of one run)
};

/// Kokkos Kernels gemm and vendor BLAS rates of one shape, measured beside its candidates.
struct ShapeBaselines {
  double kk_tflops = 0.0;
  double vendor_tflops = 0.0;
  std::string note;
};

struct ShapeSummary {
  std::array<int64_t, 3> shape{};
  std::optional<CandidateResult> best;  ///< fastest verified candidate
  std::optional<CandidateResult> default_result;
  double kk_tflops = 0.0;      ///< Kokkos Kernels gemm (0: not measured)
  double vendor_tflops = 0.0;  ///< vendor BLAS (0: not available)
  std::string baseline_note;   ///< what the baselines computed (e.g. f32 on upcast f16 data)
  int tried = 0, pruned = 0, failed = 0, rejected = 0;
  int missing = 0;  ///< candidates of the plan with no result (a rank stopped before them)
};

/// Called after every candidate: (done, total, best so far for this shape, or "").
using TuneProgress = std::function<void(int done, int total, const std::string& best)>;

struct MatmulTuneResult {
  std::vector<CandidateResult> candidates;  ///< every measured pair, in plan order
  std::vector<ShapeSummary> shapes;
  std::vector<std::size_t> missing;         ///< plan pairs without a result
  std::vector<std::string> store_errors;    ///< why a finished shape could not be stored in the cache
};

/// A sweep as a list of (shape, candidate) pairs, the unit of work divided among MPI ranks: the
/// pairs of shape s are first[s] .. first[s+1]-1, one per candidate of picks[s]. The same request
/// gives the same plan on every rank and whatever the number of ranks.
struct MatmulPlan {
  std::vector<std::array<int64_t, 3>> shapes;
  /// Each shape's candidates, in order: its (shape-aware) default config, the strategy's picks from
  /// its class's space (thin products: thin configs; others: the tile menu), then the extra
  /// candidates not already among them.
  std::vector<std::vector<MatmulConfig>> picks;
  std::vector<std::size_t> first;  ///< first pair of each shape, and the number of pairs last

  std::size_t pairs() const { return first.empty() ? 0 : first.back(); }
  std::size_t pair_of(std::size_t shape, std::size_t k) const { return first[shape] + k; }
  std::size_t shape_of(std::size_t pair) const;
  const MatmulConfig& config_of(std::size_t pair) const { return picks[shape_of(pair)][pair - first[shape_of(pair)]]; }
  const MatmulConfig& default_of(std::size_t shape) const { return picks[shape].front(); }
  /// Fills `first` from `picks`.
  void index();
};

MatmulPlan plan_matmul(const MatmulTuneRequest& req);

/// The plan and every setting that changes what a measurement means (types, layouts, epilogue,
/// reps, warm-ups, seed, tie tolerance, device), as JSON; `sweep_id` is a hash of it, so a re-run of
/// the same command finds the results an earlier, unfinished run left.
nlohmann::json matmul_plan_json(const MatmulTuneRequest& req, const MatmulPlan& plan, const DeviceIdentity& device);
std::string sweep_id(const nlohmann::json& plan_json);
/// The request and plan back from matmul_plan_json (`tilekit tune merge`). Throws on bad input.
std::pair<MatmulTuneRequest, MatmulPlan> matmul_plan_from_json(const nlohmann::json& j);

/// What one process measures: plan pairs, and the shapes whose baselines it times.
struct MatmulWork {
  std::vector<std::size_t> pairs;
  std::vector<std::size_t> baseline_shapes;
};

/// Receives each result as soon as it is known (a journal line, a message to rank 0, ...).
struct MatmulSinks {
  std::function<void(std::size_t pair, const CandidateResult&)> candidate;
  std::function<void(std::size_t shape, const ShapeBaselines&)> baselines;
};

/// Measures `work`. A candidate that fails to launch is recorded (launch_failed) when the device
/// still runs a trivial kernel afterwards; when it does not (a GPU error that poisons the context),
/// measuring stops, nothing more is recorded, and the reason is returned ("" when all went well),
/// so that the rest is reported missing and measured by a re-run instead of recorded as failed.
std::string measure_matmul(const MatmulTuneRequest& req, const MatmulPlan& plan, const MatmulWork& work,
                           const MatmulSinks& sinks, const TuneProgress& progress);

/// Index in `candidates` (the verified ones, status "ok", count) of the winner: the fastest median,
/// except that every candidate within `tie_tolerance` of the fastest median is tied with it, and a
/// tie goes to the default config, then to the config name that sorts first (byte order). So the
/// winner does not depend on the order results arrive in, nor on which rank measured what.
std::optional<std::size_t> winner_index(const std::vector<CandidateResult>& candidates, double tie_tolerance);

/// The sweep's result from per-pair results (`by_pair[p]` empty = missing) and per-shape baselines.
MatmulTuneResult summarize_matmul(const MatmulTuneRequest& req, const MatmulPlan& plan,
                                  const std::vector<std::optional<CandidateResult>>& by_pair,
                                  const std::vector<std::optional<ShapeBaselines>>& baselines);

/// The cache entry of a shape's winner.
TuneEntry matmul_entry(const MatmulTuneRequest& req, const CandidateResult& best);

/// A candidate result as one JSON record (the journal's and the report's form) and back.
nlohmann::json candidate_json(const CandidateResult& c);
CandidateResult candidate_from_json(const nlohmann::json& j);

/// Runs the whole sweep in this process. After each shape its winner (winner_index) is stored in
/// `cache` (if given), so an interrupted sweep keeps every finished shape. A cache that cannot be
/// written does not stop the sweep: the reasons are in store_errors.
MatmulTuneResult tune_matmul(const MatmulTuneRequest& req, TuningCache* cache, const TuneProgress& progress);

/// The result of `--config auto`: which config, from where, and why.
struct ResolvedConfig {
  MatmulConfig config;
  std::string source;  ///< "exact", "nearest", "model" (CUDA tile products) or "default"
  std::vector<std::string> warnings;  ///< about the cache files (set aside, entries kept unused): always shown
  std::string why;
};

/// `--config auto`: the tuned config of the exact shape; on CUDA, for products that are not thin,
/// else the model's pick (matmul_model.hpp); elsewhere the nearest tuned shape of the same
/// types/layouts/epilogue; for an epilogue with no usable entry, the same from the entries of those
/// types/layouts without an epilogue; else the backend default. Tuned entries come from the user's cache
/// (TuningCache::default_dir() or `cache_dir`) and then the results shipped with tilekit
/// (shipped_results(shipped_dir)); an entry whose config `valid` rejects (returns a reason) is
/// skipped and the reason kept in `why`.
ResolvedConfig resolve_matmul_config(const TuneKey& key, DType in,
                                     const std::function<std::string(const MatmulConfig&)>& valid,
                                     const std::string& cache_dir = "", const std::string& shipped_dir = "",
                                     Math math = Math::ieee);

/// The user's cache for this device merged with the shipped results (user entries win). Parsed once
/// per process: later calls return the same object until the user's file changes on disk (another
/// inode, size or modification time, as a sweep's atomic rewrite gives), so that `--config auto`
/// costs an index lookup, not a parse of the file.
std::shared_ptr<const TuningCache> load_tuned(const std::string& cache_dir,
                                              std::vector<std::string>* warnings = nullptr,
                                              const std::string& shipped_dir = "");

}  // namespace tuning
}  // namespace tilekit
