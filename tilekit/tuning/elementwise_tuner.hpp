// The elementwise tuner: a search space over variant, rows per thread, vectors per thread, team
// size and threads along a row; candidates pruned by check_op before launch; each survivor timed
// (warm-up, >= 7 fenced repetitions over rotating inputs, median/p20/p80) and verified against the
// host reference before its time counts; the best per shape goes to the tuning cache. And the
// run-time lookup behind `--variant auto`.
#pragma once

#include "tilekit/kernels/elementwise/elementwise.hpp"
#include "tilekit/tuning/cache.hpp"
#include "tilekit/tuning/search.hpp"

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tilekit {
namespace tuning {

/// Every config the elementwise tuner may try on this build's backend. The vector width is
/// compiled in (16 bytes, kElementwiseVectorBytes); the rest is swept: naive, vectorized, and tiled
/// with rows_per_thread x vectors_per_thread x team_size x threads_n (GPU: team sizes 128..512 with
/// 32..128 threads along a row; host: one-thread teams walking long row segments).
std::vector<ElementwiseConfig> elementwise_search_space();

TuneKey elementwise_key(OpKind op, DType t, int64_t M, int64_t N);

struct ElementwiseTuneRequest {
  std::vector<std::array<int64_t, 2>> shapes;  ///< M, N (row-major, contiguous operands)
  OpKind op = OpKind::add;
  DType dtype = DType::f32;
  Strategy strategy = Strategy::exhaustive;
  Budget budget;
  uint64_t seed = 1;
  int warmup = 2;
  int reps = 7;
};

struct ElementwiseCandidate {
  std::array<int64_t, 2> shape{};
  ElementwiseConfig config;
  std::string status;  ///< "ok", "pruned", "launch_failed", "wrong_result"
  std::string reason;
  double median_s = 0.0, p20_s = 0.0, p80_s = 0.0;
  double gbps = 0.0;
  bool is_default = false;
};

struct ElementwiseShapeSummary {
  std::array<int64_t, 2> shape{};
  std::optional<ElementwiseCandidate> best, default_result;
  double copy_gbps = 0.0;  ///< Kokkos::deep_copy of the same bytes, same run
};

struct ElementwiseTuneResult {
  std::vector<ElementwiseCandidate> candidates;
  std::vector<ElementwiseShapeSummary> shapes;
  std::vector<std::string> store_errors;  ///< why a finished shape could not be stored in the cache
};

using ElementwiseProgress = std::function<void(int done, int total, const std::string& best)>;

ElementwiseTuneResult tune_elementwise(const ElementwiseTuneRequest& req, TuningCache* cache,
                                       const ElementwiseProgress& progress);

/// `--variant auto`: the tuned config for the exact shape, else the nearest tuned shape of the same
/// op and type, else the backend's default. `source` is "exact", "nearest" or "default". A tuned
/// config that does not parse, or that `valid` refuses for this problem (a non-empty reason), is
/// skipped with its reason in `why`, and the next candidate is tried. Warnings about the cache
/// files (set aside, newer entries skipped) go to `warnings` when given.
ElementwiseConfig resolve_tuned_elementwise(OpKind op, DType t, int64_t M, int64_t N, std::string& source,
                                            std::string& why, const std::string& cache_dir = "",
                                            const std::string& shipped_dir = "",
                                            const std::function<std::string(const ElementwiseConfig&)>& valid = {},
                                            std::vector<std::string>* warnings = nullptr);

}  // namespace tuning
}  // namespace tilekit
