#include "app/tune_sweep.hpp"

#include "tilekit/tuning/sweep_journal.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <Kokkos_Core.hpp>

#include <unistd.h>
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <csignal>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

namespace tilekit::app {

namespace {

using nlohmann::json;
using namespace tuning;

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// Which GPU this process runs on (-1 on host backends): shows the rank -> device mapping.
int gpu_id() {
  int dev = -1;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDevice(&dev) != cudaSuccess) dev = -1;
#endif
  return dev;
}

// Results of a sweep by pair, from journal records and gathered messages.
struct Merged {
  std::vector<std::optional<CandidateResult>> by_pair;
  std::vector<std::optional<ShapeBaselines>> baselines;
  std::size_t duplicates = 0;

  explicit Merged(const MatmulPlan& plan) : by_pair(plan.pairs()), baselines(plan.shapes.size()) {}

  // Takes one record; returns true when it is a new candidate result. The same measurement seen
  // twice (its rank's own journal and the leader's copy) is one result; a pair measured twice (by
  // two runs or ranks) counts as a duplicate and the first result stays.
  bool add(const json& rec, const MatmulPlan& plan) {
    const std::string kind = rec.value("kind", "");
    if (kind == "baseline") {
      const std::size_t s = rec.at("shape_index").get<std::size_t>();
      if (s < baselines.size() && !baselines[s])
        baselines[s] = ShapeBaselines{rec.value("kk_tflops", 0.0), rec.value("vendor_tflops", 0.0), rec.value("note", "")};
      return false;
    }
    if (kind != "candidate") return false;
    const std::size_t p = rec.at("pair").get<std::size_t>();
    if (p >= plan.pairs()) return false;
    CandidateResult r = candidate_from_json(rec);
    if (r.config.name() != plan.config_of(p).name()) return false;  // not this plan's pair
    r.config = plan.config_of(p);
    if (by_pair[p]) {
      if (by_pair[p]->run != r.run || by_pair[p]->rank != r.rank) ++duplicates;
      return false;
    }
    by_pair[p] = r;
    return true;
  }
};

// Pairs are dealt round-robin in plan order: every rank gets a share of every shape, so one large
// shape spreads too, and the set measured does not depend on the number of ranks. -1: not dealt.
std::vector<int> deal(std::size_t pairs, const std::vector<std::size_t>& remaining, int ranks) {
  std::vector<int> rank_of(pairs, -1);
  for (std::size_t i = 0; i < remaining.size(); ++i)
    if (remaining[i] < pairs) rank_of[remaining[i]] = int(i % std::size_t(std::max(ranks, 1)));
  return rank_of;
}

// The winner of shape `s` when every pair of it has a result, else nothing.
std::optional<CandidateResult> complete_shape_winner(const MatmulTuneRequest& req, const MatmulPlan& plan,
                                                     const Merged& merged, std::size_t s) {
  std::vector<CandidateResult> results;
  for (std::size_t k = 0; k < plan.picks[s].size(); ++k) {
    const auto& r = merged.by_pair[plan.pair_of(s, k)];
    if (!r) return std::nullopt;
    results.push_back(*r);
  }
  const auto w = winner_index(results, req.tie_tolerance);
  return w ? std::optional<CandidateResult>(results[*w]) : std::nullopt;
}

json candidate_record(std::size_t pair, const CandidateResult& r) {
  json j = candidate_json(r);
  j["kind"] = "candidate";
  j["pair"] = pair;
  return j;
}

// The test hooks of tests/mpi_sweep.sh. TILEKIT_TEST_KILL_RANK=k, TILEKIT_TEST_KILL_AFTER=n: rank k
// dies (SIGKILL, as a crashed process would) after journaling n candidates.
// TILEKIT_TEST_FAIL_RANK=k, TILEKIT_TEST_FAIL_AFTER=n: rank k stops after n candidates as if its GPU
// had stopped working (the path measure_matmul takes when a probe kernel fails after an error).
struct TestHooks {
  int kill_rank = -1, kill_after = 0, fail_rank = -1, fail_after = 0, count = 0;
  TestHooks() {
    auto read = [](const char* rank, const char* after, int& r, int& a) {
      const char* rv = std::getenv(rank);
      const char* av = std::getenv(after);
      if (rv && av) r = std::atoi(rv), a = std::atoi(av);
    };
    read("TILEKIT_TEST_KILL_RANK", "TILEKIT_TEST_KILL_AFTER", kill_rank, kill_after);
    read("TILEKIT_TEST_FAIL_RANK", "TILEKIT_TEST_FAIL_AFTER", fail_rank, fail_after);
  }
  void candidate_done(int my_rank) {
    ++count;
    if (my_rank == kill_rank && count >= kill_after) std::raise(SIGKILL);
    if (my_rank == fail_rank && count >= fail_after)
      throw std::runtime_error("the device stopped working (simulated by TILEKIT_TEST_FAIL_RANK)");
  }
};

// Stores the winners of the complete shapes; the outcome's missing list and journal state.
void finish(const MatmulTuneRequest& req, const MatmulPlan& plan, const Merged& merged, TuningCache* cache,
            SweepJournal* journal, const std::vector<int>& assigned_rank, SweepOutcome& out) {
  out.result = summarize_matmul(req, plan, merged.by_pair, merged.baselines);
  out.duplicates = merged.duplicates;
  for (std::size_t p : out.result.missing)
    out.missing.push_back({plan.shapes[plan.shape_of(p)], plan.config_of(p).name(),
                           p < assigned_rank.size() ? assigned_rank[p] : -1});
  if (cache) {
    std::vector<TuneEntry> winners;
    for (const auto& s : out.result.shapes)
      if (s.missing == 0 && s.best) winners.push_back(matmul_entry(req, *s.best));
    try {
      if (!winners.empty()) cache->store_all(winners);
    } catch (const std::runtime_error& e) {  // the report still has them
      out.store_errors.push_back(e.what());
    }
  }
  if (journal) {
    if (out.missing.empty()) {
      journal->remove();
    } else {
      out.journal = journal->dir();
    }
  }
}

}  // namespace

SweepOutcome run_matmul_sweep(const MatmulTuneRequest& req, TuningCache* cache, const DeviceIdentity& device,
                              const RankGroup& group, const TuneProgress& progress) {
  SweepOutcome out;
  const MatmulPlan plan = plan_matmul(req);
  const json plan_json = matmul_plan_json(req, plan, device);
  out.id = sweep_id(plan_json);
  out.ranks = group.size();
  out.pairs = plan.pairs();
  std::unique_ptr<SweepJournal> journal = cache ? std::make_unique<SweepJournal>(cache->path(), out.id) : nullptr;
  Merged merged(plan);

  // The leader reads what earlier, unfinished runs of this sweep left, and says what is left to do.
  json announce;
  if (group.leader()) {
    std::vector<std::size_t> remaining, remaining_baselines;
    if (journal) {
      for (const json& rec : journal->read_all(out.warnings))
        if (merged.add(rec, plan)) ++out.from_earlier_runs;
      journal->write_plan(plan_json);
    }
    for (std::size_t p = 0; p < plan.pairs(); ++p)
      if (!merged.by_pair[p]) remaining.push_back(p);
    for (std::size_t s = 0; s < plan.shapes.size(); ++s)
      if (req.baselines && !merged.baselines[s]) remaining_baselines.push_back(s);
    announce = {{"run", run_stamp()}, {"ranks", group.size()}, {"remaining", remaining}, {"baselines", remaining_baselines}};
    if (journal) journal->write_run(announce.at("run").get<std::string>(), announce);
  }
  announce = json::parse(group.broadcast(group.leader() ? announce.dump() : std::string()));
  const std::string run = announce.at("run").get<std::string>();
  const auto remaining = announce.at("remaining").get<std::vector<std::size_t>>();
  const auto remaining_baselines = announce.at("baselines").get<std::vector<std::size_t>>();

  const std::vector<int> assigned_rank = deal(plan.pairs(), remaining, group.size());
  MatmulWork work;
  for (std::size_t p : remaining)
    if (assigned_rank[p] == group.rank()) work.pairs.push_back(p);
  for (std::size_t i = 0; i < remaining_baselines.size(); ++i)
    if (int(i % std::size_t(group.size())) == group.rank()) work.baseline_shapes.push_back(remaining_baselines[i]);

  // Measure, journaling every result as it comes.
  json mine = json::array();
  TestHooks hooks;
  std::string stopped;
  const auto started = std::chrono::steady_clock::now();
  try {
    if (journal) journal->open(group.rank(), run);
    const MatmulSinks sinks{
        [&](std::size_t p, const CandidateResult& measured) {
          CandidateResult r = measured;
          r.rank = group.rank();
          r.run = run;
          const json rec = candidate_record(p, r);
          if (journal) journal->append(rec);
          mine.push_back(rec);
          hooks.candidate_done(group.rank());
          // The leader stores a shape's winner as soon as it holds every result of the shape (with one
          // rank: each shape when it is done, so an interrupted sweep keeps its finished shapes).
          if (group.leader() && cache) {
            merged.add(rec, plan);
            if (const auto best = complete_shape_winner(req, plan, merged, plan.shape_of(p))) {
              try {
                cache->store(matmul_entry(req, *best));
              } catch (const std::runtime_error& e) {  // measuring goes on; the report has it
                out.store_errors.push_back(e.what());
              }
            }
          }
        },
        [&](std::size_t s, const ShapeBaselines& b) {
          const json rec = {{"kind", "baseline"}, {"shape_index", s}, {"kk_tflops", b.kk_tflops},
                            {"vendor_tflops", b.vendor_tflops}, {"note", b.note}, {"rank", group.rank()}, {"run", run}};
          if (journal) journal->append(rec);
          mine.push_back(rec);
        }};
    stopped = measure_matmul(req, plan, work, sinks, group.leader() ? progress : TuneProgress());
  } catch (const std::exception& e) {
    stopped = e.what();
  }
  const double busy_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  // Gather to the leader and merge once.
  const json payload = {{"rank", group.rank()}, {"host", host_name()}, {"gpu", gpu_id()},
                        {"threads", Kokkos::DefaultExecutionSpace().concurrency()}, {"measured", work.pairs.size()},
                        {"busy_s", busy_s}, {"stopped", stopped}, {"records", mine}};
  const std::vector<std::string> gathered = group.gather(payload.dump());
  if (!group.leader()) {
    if (!stopped.empty()) out.stopped.push_back(stopped);
    return out;
  }
  json copies = json::array();  // other ranks' records, kept beside the leader's journal if unfinished
  for (const std::string& text : gathered) {
    const json p = json::parse(text);
    out.rank_info.push_back({{"rank", p.at("rank")}, {"host", p.at("host")}, {"gpu", p.at("gpu")},
                             {"threads", p.at("threads")}, {"measured", p.at("measured")},
                             {"busy_s", p.at("busy_s")}});
    if (!p.at("stopped").get<std::string>().empty())
      out.stopped.push_back(fmt::format("rank {} ({}): {}", p.at("rank").get<int>(), p.at("host").get<std::string>(),
                                        p.at("stopped").get<std::string>()));
    for (const json& rec : p.at("records")) {
      if (rec.value("kind", "") == "candidate") ++out.measured_now;
      merged.add(rec, plan);
      if (p.at("rank").get<int>() != 0) copies.push_back(rec);
    }
  }
  finish(req, plan, merged, cache, journal.get(), assigned_rank, out);
  if (!out.journal.empty() && !copies.empty()) {
    // The journals of other nodes may not be on this node's filesystem: keep their results here too.
    SweepJournal copy(cache->path(), out.id);
    copy.open(0, run + "-gathered");
    for (const json& rec : copies) copy.append(rec);
  }
  return out;
}

std::vector<SweepOutcome> merge_unfinished(TuningCache& cache) {
  std::vector<SweepOutcome> outcomes;
  for (const std::string& id : SweepJournal::unfinished(cache.path())) {
    SweepOutcome out;
    out.id = id;
    SweepJournal journal(cache.path(), id);
    const json plan_json = journal.read_plan();
    if (plan_json.is_null()) {
      out.warnings.push_back(fmt::format("{}: no readable plan.json; left as it is", journal.dir()));
      outcomes.push_back(out);
      continue;
    }
    auto [req, plan] = matmul_plan_from_json(plan_json);
    out.pairs = plan.pairs();
    Merged merged(plan);
    for (const json& rec : journal.read_all(out.warnings))
      if (merged.add(rec, plan)) ++out.from_earlier_runs;
    std::vector<int> assigned_rank;
    if (const json last = journal.latest_run(); !last.is_null()) {
      out.ranks = last.value("ranks", 1);
      assigned_rank = deal(plan.pairs(), last.value("remaining", std::vector<std::size_t>{}), out.ranks);
    }
    finish(req, plan, merged, &cache, &journal, assigned_rank, out);
    outcomes.push_back(std::move(out));
  }
  return outcomes;
}

}  // namespace tilekit::app
