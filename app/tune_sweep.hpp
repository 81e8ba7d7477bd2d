// `tilekit tune matmul` as a sweep of (shape, candidate) pairs divided among the ranks of a device
// group (MPI), journaled as it is measured, gathered to the group's leader and merged into the
// device's cache once. Without MPI the group is this process alone and the same code runs.
#pragma once

#include "app/ranks.hpp"
#include "tilekit/tuning/matmul_tuner.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tilekit::app {

/// One plan pair that has no result: its shape and config, and which rank was to measure it.
struct MissingPair {
  std::array<int64_t, 3> shape{};
  std::string config;
  int rank = 0;
};

struct SweepOutcome {
  std::string id;                     ///< sweep id (hash of the plan)
  int ranks = 1;                      ///< ranks that measured in this run
  std::size_t pairs = 0;              ///< pairs of the plan
  std::size_t measured_now = 0;       ///< results received from this run's ranks
  std::size_t from_earlier_runs = 0;  ///< results found in the journal of earlier, unfinished runs
  std::size_t duplicates = 0;         ///< pairs measured more than once (dropped; should stay 0)
  std::vector<MissingPair> missing;
  std::vector<std::string> stopped;   ///< "rank k (host): why" for ranks that stopped early
  std::vector<std::string> warnings;
  std::vector<std::string> store_errors;  ///< why a winner could not be stored in the cache (measured all the same)
  std::string journal;                ///< the journal folder, when kept (the sweep is unfinished)
  nlohmann::json rank_info = nlohmann::json::array();  ///< per rank of this run: host, GPU, threads, pairs dealt, seconds measuring
  tuning::MatmulTuneResult result;    ///< on the leader
};

/// Runs `req` over `group` (every rank calls it). `cache` may be null (--no-cache: no journal, no
/// store). The outcome is complete on the group's leader only.
SweepOutcome run_matmul_sweep(const tuning::MatmulTuneRequest& req, tuning::TuningCache* cache,
                              const tuning::DeviceIdentity& device, const RankGroup& group,
                              const tuning::TuneProgress& progress);

/// `tilekit tune merge`: every unfinished sweep of `cache`'s device: stores the winners of its
/// complete shapes, reports what is missing, and removes the journal of a sweep that is complete.
std::vector<SweepOutcome> merge_unfinished(tuning::TuningCache& cache);

}  // namespace tilekit::app
