#include "tilekit/tuning/matmul_tuner.hpp"
#include "tilekit/tuning/matmul_model.hpp"

#include "tilekit/kernels/core/fill.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/validation.hpp"
#include "tilekit/kernels/core/runtime.hpp"
#include "tilekit/kernels/core/timing.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"
#include "tilekit/tuning/vendor_blas.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <unordered_map>
#include <ctime>

namespace tilekit {
namespace tuning {

namespace {

template <class... Tiles>
void expand_space(TileList<Tiles...>, DType in, Math math, std::vector<MatmulConfig>& out) {
  using ES = Kokkos::DefaultExecutionSpace;
  const int concurrency = ES().concurrency();
  auto add_tile = [&](MatmulConfig c, int micro_tiles, bool splits_k) {
    if (!tile_supports(c, in, math)) return;
    if (splits_k && is_cuda_space<ES>()) {
      // Split K: 2, 4, 8 teams per tile, in the grouped order and team shape the SIMT tiles win with
      // (a K split multiplies the teams of shapes whose tiles are too few; group_m matters less
      // there); tensor-core tiles as one warp per team member, as below.
      MatmulConfig s = c;
      s.group_m = 8;
      s.vector_length = c.mma ? 32 : 1;
      s.team_size = micro_tiles / s.vector_length;
      for (int k : {2, 4, 8}) {
        s.k_splits = k;
        out.push_back(s);
      }
    }
    for (int g : {1, 4, 8, 16}) {
      c.group_m = g;
      if (c.mma) {
        // One warp per warp tile: the warp is one team member's 32 vector lanes (splitting it
        // otherwise launches the same threads).
        c.vector_length = 32;
        c.team_size = micro_tiles / 32;
        out.push_back(c);
      } else if (is_gpu_space<ES>()) {
        // Threads per team are fixed by the tile (one micro-tile each); split them into
        // team_size x vector_length.
        for (int v = 1; v <= 32 && v <= micro_tiles; v *= 2) {
          c.vector_length = v;
          c.team_size = micro_tiles / v;
          out.push_back(c);
        }
      } else {
        for (int t = 1; t <= concurrency && t <= micro_tiles; t *= 2) {
          c.vector_length = 1;
          c.team_size = t;
          out.push_back(c);
        }
      }
    }
  };
  (add_tile(Tiles::config(), Tiles::micro_tiles, TileSplitsK<Tiles>::value), ...);
}

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

double tflops_of(const std::array<int64_t, 3>& s, double seconds) {
  return seconds > 0 ? 2.0 * double(s[0]) * double(s[1]) * double(s[2]) / seconds * 1e-12 : 0.0;
}

// Baselines on the problem's data: Kokkos Kernels gemm (and the vendor BLAS on host backends) in
// f64 for f64 inputs, else in f32 on the (exactly) upcast inputs.
template <class T, class TIn>
void time_baselines(const MatmulProblem<TIn, float>& shape_only, const StridedMatrix<const TIn>& a,
                    const StridedMatrix<const TIn>& b, const MatmulTuneRequest& req, ShapeSummary& sum) {
  const int64_t M = shape_only.M, N = shape_only.N, K = shape_only.K;
  Kokkos::View<T**, Kokkos::LayoutLeft> A("kk_A", M, K), B("kk_B", K, N), C("kk_C", M, N);
  Kokkos::parallel_for(
      "tilekit::tune_upcast_a", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {M, K}),
      KOKKOS_LAMBDA(int64_t i, int64_t k) { A(i, k) = convert<T>(a(i, k)); });
  Kokkos::parallel_for(
      "tilekit::tune_upcast_b", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {K, N}),
      KOKKOS_LAMBDA(int64_t k, int64_t j) { B(k, j) = convert<T>(b(k, j)); });
  const Timing kk = time_runs(req.warmup, req.reps, [&](int) { kokkos_kernels_gemm(A, B, C); });
  sum.kk_tflops = tflops_of(sum.shape, kk.median_s);
  if constexpr (!is_gpu_space<Kokkos::DefaultExecutionSpace>()) {
    if (vendor_blas_available() && M > 0 && N > 0 && K > 0) {
      const Timing v = time_runs(req.warmup, req.reps, [&](int) {
        vendor_gemm(int(M), int(N), int(K), A.data(), B.data(), C.data());
      });
      sum.vendor_tflops = tflops_of(sum.shape, v.median_s);
    }
  }
}

// Whether the device still runs a trivial kernel: after a launch error, tells a candidate that
// failed on its own (recorded as launch_failed) from a device that no longer works (the rank stops).
bool device_usable() {
  try {
    Kokkos::View<int*> probe("tilekit::tune_probe", 1);
    Kokkos::parallel_for("tilekit::tune_device_probe", Kokkos::RangePolicy<>(0, 1), KOKKOS_LAMBDA(int i) { probe(i) = 1; });
    Kokkos::fence();
    return true;
  } catch (...) {
    return false;
  }
}

// Measures the given candidates (indices into plan.picks) and, if asked, the baselines of one shape.
// Returns "" or why the device stopped working.
template <class TIn, class TOut>
std::string measure_shape(const MatmulTuneRequest& req, const MatmulPlan& plan, std::size_t shape_index,
                          const std::vector<std::size_t>& picks, bool baselines, const MatmulSinks& sinks,
                          const TuneProgress& progress, int& done, int total) {
  using compute = typename TypeTraits<TIn>::compute;
  const std::array<int64_t, 3>& shape = plan.shapes[shape_index];
  const int64_t M = shape[0], N = shape[1], K = shape[2];

  // Rotating input sets: enough (A, B) pairs that one pass over them exceeds twice the last-level
  // cache, so timed runs do not find their inputs already cached (at most 64 sets).
  const std::size_t set_bytes = std::size_t(M * K + K * N) * sizeof(TIn);
  const std::size_t llc = runtime_info().last_level_cache;
  const int64_t nsets =
      set_bytes == 0 ? 1 : std::clamp<int64_t>(int64_t((2 * llc + set_bytes - 1) / set_bytes), 1, 64);
  Kokkos::View<TIn*> A_all(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tune_A"), nsets * M * K);
  Kokkos::View<TIn*> B_all(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tune_B"), nsets * K * N);
  Kokkos::View<TOut*> C(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tune_C"), M * N);
  fill_random(A_all.data(), nsets * M * K, req.seed * 7 + 1);
  fill_random(B_all.data(), nsets * K * N, req.seed * 7 + 2);
  fill_random(C.data(), M * N, req.seed * 7 + 3);
  Kokkos::View<compute*> bias("tune_bias", req.epilogue.bias ? N : 0);
  fill_random(bias.data(), req.epilogue.bias ? N : 0, req.seed * 7 + 4);

  const MatmulLayouts& L = req.layouts;
  auto problem = [&](int64_t set) {
    MatmulProblem<TIn, TOut> p;
    p.M = M;
    p.N = N;
    p.K = K;
    const TIn* a = A_all.data() + set * M * K;
    const TIn* b = B_all.data() + set * K * N;
    p.a = {a, M, K, L.a_col ? 1 : K, L.a_col ? M : 1};
    p.b = {b, K, N, L.b_col ? 1 : N, L.b_col ? K : 1};
    p.c = {C.data(), M, N, L.c_col ? 1 : N, L.c_col ? M : 1};
    p.alpha = compute(1);
    p.beta = compute(0);
    p.bias = req.epilogue.bias ? bias.data() : nullptr;
    p.act = req.epilogue.act;
    p.math = req.math;
    return p;
  };
  const MatmulProblem<TIn, TOut> p0 = problem(0);
  const StridedMatrix<const TOut> c_view{C.data(), M, N, p0.c.rs, p0.c.cs};
  const RefMatrix ref = reference_kokkos_kernels(p0, c_view);  // beta = 0: C is not read
  const double tol = matmul_tolerance(TypeTraits<TIn>::dtype, TypeTraits<TOut>::dtype, K, req.math);

  if (baselines) {
    MatmulProblem<TIn, float> shape_only;
    shape_only.M = M;
    shape_only.N = N;
    shape_only.K = K;
    ShapeSummary sum;
    sum.shape = shape;
    if constexpr (std::is_same<TIn, double>::value) {
      time_baselines<double>(shape_only, p0.a, p0.b, req, sum);
      sum.baseline_note = "f64";
    } else {
      time_baselines<float>(shape_only, p0.a, p0.b, req, sum);
      sum.baseline_note = std::is_same<TIn, float>::value ? "f32" : "f32 on the upcast inputs";
    }
    if (sinks.baselines) sinks.baselines(shape_index, {sum.kk_tflops, sum.vendor_tflops, sum.baseline_note});
  }

  const auto start = std::chrono::steady_clock::now();
  std::string best_note;
  double best_s = 0;
  for (std::size_t k = 0; k < picks.size(); ++k) {
    const std::size_t pick = picks[k];
    const MatmulConfig& cfg = plan.picks[shape_index][pick];
    CandidateResult r;
    r.shape = shape;
    r.config = cfg;
    r.is_default = cfg == plan.default_of(shape_index);
    const bool planted = req.plant_wrong_result && req.plant_wrong_result(cfg);
    const std::string why = check_matmul(p0, cfg);
    if (!why.empty()) {
      r.status = "pruned";
      r.reason = why;
    } else {
      try {
        const Timing t = time_runs(req.warmup, std::max(req.reps, 7), [&](int i) {
          auto p = problem(i % nsets);
          if (planted) p.alpha = compute(2);
          launch_matmul(p, cfg);
        });
        // Verify on input set 0 before the time counts.
        auto p = p0;
        if (planted) p.alpha = compute(2);
        launch_matmul(p, cfg);
        r.rel_error = relative_error(c_view, ref);
        r.median_s = t.median_s;
        r.p20_s = t.p20_s;
        r.p80_s = t.p80_s;
        r.tflops = tflops_of(shape, t.median_s);
        if (r.rel_error <= tol) {
          r.status = "ok";
        } else {
          r.status = "wrong_result";
          r.reason = fmt::format("relative error {:.3e} over tolerance {:.3e}", r.rel_error, tol);
        }
      } catch (const std::exception& e) {
        if (!device_usable())
          return fmt::format("the device stopped working at {} {} ({})", fmt::format("{}x{}x{}", M, N, K),
                             cfg.name(), e.what());
        r.status = "launch_failed";
        r.reason = e.what();
      }
    }
    if (r.status == "ok" && (best_note.empty() || r.median_s < best_s)) {
      best_s = r.median_s;
      best_note = fmt::format("{} {:.3f} TFLOP/s", r.config.name(), r.tflops);
    }
    if (sinks.candidate) sinks.candidate(plan.pair_of(shape_index, pick), r);
    ++done;
    if (progress) progress(done, total, best_note);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (req.budget.seconds > 0 && elapsed > req.budget.seconds) {
      // Over the time budget: the rest of this shape is recorded as skipped (not missing).
      for (std::size_t q = k + 1; q < picks.size(); ++q) {
        CandidateResult skip;
        skip.shape = shape;
        skip.config = plan.picks[shape_index][picks[q]];
        skip.is_default = skip.config == plan.default_of(shape_index);
        skip.status = "skipped";
        skip.reason = fmt::format("over the --seconds budget ({:g} s) of the shape", req.budget.seconds);
        if (sinks.candidate) sinks.candidate(plan.pair_of(shape_index, picks[q]), skip);
        ++done;
      }
      if (progress) progress(done, total, best_note);
      break;
    }
  }
  return {};
}

// FNV-1a, 64 bits: a stable hash (std::hash is not stable across standard libraries).
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

}  // namespace

std::vector<MatmulConfig> matmul_search_space(DType in, Math math) {
  std::vector<MatmulConfig> out;
  expand_space(MatmulTiles<Kokkos::DefaultExecutionSpace>{}, in, math, out);
  // Tiles of other input types may share a name with one of this type's: keep each config once.
  std::vector<MatmulConfig> unique;
  for (const auto& c : out)
    if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(c);
  return unique;
}

std::vector<MatmulConfig> thin_search_space() {
  // GPU: teams of 128..512 threads split into columns x K groups; host: column blocks of one thread.
  std::vector<MatmulConfig> out;
  auto add = [&](int cols, int kgroups) {
    MatmulConfig c;
    std::string why;
    MatmulConfig::parse(fmt::format("thin_l{}_k{}", cols, kgroups), c, why);
    out.push_back(c);
  };
  if (is_gpu_space<Kokkos::DefaultExecutionSpace>()) {
    for (int threads : {128, 256, 512})
      for (int g = 1; g <= 32; g *= 2) add(threads / g, g);
  } else {
    // up to 4096 columns: one f32 row's sums at kThinHostSumsBytes (and the most check_thin allows)
    for (int cols = 16; cols <= 4096; cols *= 2) add(cols, 1);
  }
  return out;
}

std::string MatmulLayouts::str() const {
  return fmt::format("a={},b={},c={}", a_col ? "col" : "row", b_col ? "col" : "row", c_col ? "col" : "row");
}

TuneKey matmul_key(DType in, DType out, const MatmulLayouts& layouts, const Epilogue& ep, int64_t M, int64_t N,
                   int64_t K, Math math) {
  const char* in_name = in == DType::f32 && math == Math::tf32 ? "tf32" : dtype_name(in);
  return TuneKey{"matmul", fmt::format("{}->{}", in_name, dtype_name(out)), layouts.str(), ep.name(), {M, N, K}};
}

std::size_t MatmulPlan::shape_of(std::size_t pair) const {
  return std::size_t(std::upper_bound(first.begin(), first.end(), pair) - first.begin()) - 1;
}

void MatmulPlan::index() {
  first = {0};
  for (const auto& p : picks) first.push_back(first.back() + p.size());
}

MatmulPlan plan_matmul(const MatmulTuneRequest& req) {
  MatmulPlan plan;
  plan.shapes = req.shapes;
  // Two spaces by shape class: thin products (M or N up to kThinMaxRows) try thin configs, the
  // others the tile menu; each shape's default is the shape-aware one.
  const std::vector<MatmulConfig> tile_space = matmul_search_space(req.in, req.math);
  const std::vector<MatmulConfig> thin_space = thin_search_space();
  const std::vector<int> tile_order = candidate_order(int(tile_space.size()), req.strategy, req.budget, req.seed);
  const std::vector<int> thin_order = candidate_order(int(thin_space.size()), req.strategy, req.budget, req.seed);
  for (const auto& shape : req.shapes) {
    const bool thin = is_thin_shape(shape[0], shape[1]);
    const auto& space = thin ? thin_space : tile_space;
    const auto& order = thin ? thin_order : tile_order;
    // The default config is always measured (speedup over default), then the strategy's picks.
    std::vector<MatmulConfig> picks{
        default_matmul_config(backend_name(), req.in, shape[0], shape[1], shape[2], req.math)};
    for (int i : order)
      if (!(space[i] == picks.front())) picks.push_back(space[i]);
    if (picks.size() > order.size() + 1) picks.resize(order.size() + 1);
    if (req.strategy == Strategy::model && !thin) {  // the model's top candidates for this shape
      const std::size_t want = std::size_t(req.budget.count > 0 ? req.budget.count : kModelCandidates);
      std::size_t taken = 0;
      const OperandOrders orders{!req.layouts.a_col, req.layouts.b_col};
      for (const RankedConfig& r :
           model_ranked_configs(req.in, req.out, shape[0], shape[1], shape[2], req.math, nullptr, orders)) {
        if (taken == want) break;
        ++taken;
        if (std::find(picks.begin(), picks.end(), r.config) == picks.end()) picks.push_back(r.config);
      }
    }
    for (const MatmulConfig& c : req.extra_candidates)
      if (std::find(picks.begin(), picks.end(), c) == picks.end()) picks.push_back(c);
    plan.picks.push_back(std::move(picks));
  }
  plan.index();
  return plan;
}

nlohmann::json matmul_plan_json(const MatmulTuneRequest& req, const MatmulPlan& plan, const DeviceIdentity& device) {
  // Shapes of one class share their candidate list: each distinct list once, and its index per shape.
  std::vector<std::vector<std::string>> sets;
  std::vector<std::size_t> set_of_shape;
  for (const auto& picks : plan.picks) {
    std::vector<std::string> names;
    for (const auto& c : picks) names.push_back(c.name());
    const auto at = std::find(sets.begin(), sets.end(), names);
    set_of_shape.push_back(std::size_t(at - sets.begin()));
    if (at == sets.end()) sets.push_back(std::move(names));
  }
  nlohmann::json j = {{"kernel", "matmul"},
          {"dtype", dtype_name(req.in)},
          {"out_dtype", dtype_name(req.out)},
          {"layouts", {req.layouts.a_col ? "col" : "row", req.layouts.b_col ? "col" : "row", req.layouts.c_col ? "col" : "row"}},
          {"epilogue", req.epilogue.name()},
          {"reps", req.reps},
          {"warmup", req.warmup},
          {"seed", req.seed},
          {"seconds", req.budget.seconds},
          {"baselines", req.baselines},
          {"tie_tolerance", req.tie_tolerance},
          {"device", {{"backend", device.backend}, {"device", device.device}, {"architecture", device.architecture},
                      {"compute_units", device.compute_units}, {"tilekit_version", device.tilekit_version}}},
          {"shapes", plan.shapes},
          {"candidate_sets", sets},  // the first of each list is the shapes' default config
          {"set_of_shape", set_of_shape}};
  if (req.math == Math::tf32) j["math"] = "tf32";  // absent: IEEE (plans of earlier versions too)
  return j;
}

std::string sweep_id(const nlohmann::json& plan_json) { return fmt::format("{:016x}", fnv1a(plan_json.dump())); }

std::pair<MatmulTuneRequest, MatmulPlan> matmul_plan_from_json(const nlohmann::json& j) {
  MatmulTuneRequest req;
  MatmulPlan plan;
  std::string why;
  if (!parse_dtype(j.at("dtype").get<std::string>(), req.in) || !parse_dtype(j.at("out_dtype").get<std::string>(), req.out))
    throw std::runtime_error("plan: unknown types");
  const auto layouts = j.at("layouts").get<std::vector<std::string>>();
  req.layouts = {layouts.at(0) == "col", layouts.at(1) == "col", layouts.at(2) == "col"};
  if (!Epilogue::parse(j.at("epilogue").get<std::string>(), req.epilogue, why)) throw std::runtime_error("plan: " + why);
  req.reps = j.at("reps").get<int>();
  req.warmup = j.at("warmup").get<int>();
  req.seed = j.at("seed").get<uint64_t>();
  req.budget.seconds = j.value("seconds", 0.0);
  req.baselines = j.at("baselines").get<bool>();
  req.tie_tolerance = j.at("tie_tolerance").get<double>();
  const std::string math = j.value("math", std::string("ieee"));
  if (math != "ieee" && math != "tf32") throw std::runtime_error("plan: unknown math '" + math + "'");
  req.math = math == "tf32" ? Math::tf32 : Math::ieee;
  plan.shapes = j.at("shapes").get<std::vector<std::array<int64_t, 3>>>();
  req.shapes = plan.shapes;
  auto parse_config = [&](const std::string& name) {
    MatmulConfig c = default_matmul_config(backend_name(), req.in, req.math);
    if (!MatmulConfig::parse(name, c, why)) throw std::runtime_error("plan: " + why);
    return c;
  };
  const auto sets = j.at("candidate_sets").get<std::vector<std::vector<std::string>>>();
  for (std::size_t set : j.at("set_of_shape").get<std::vector<std::size_t>>()) {
    std::vector<MatmulConfig> picks;
    for (const auto& name : sets.at(set)) picks.push_back(parse_config(name));
    plan.picks.push_back(std::move(picks));
  }
  if (plan.picks.size() != plan.shapes.size()) throw std::runtime_error("plan: one candidate list per shape expected");
  plan.index();
  return {req, plan};
}

std::string measure_matmul(const MatmulTuneRequest& req, const MatmulPlan& plan, const MatmulWork& work,
                           const MatmulSinks& sinks, const TuneProgress& progress) {
  // Per shape: the candidates of `work` (in plan order) and whether its baselines are ours.
  std::vector<std::vector<std::size_t>> picks(plan.shapes.size());
  std::vector<bool> baselines(plan.shapes.size(), false);
  for (std::size_t p : work.pairs) picks[plan.shape_of(p)].push_back(p - plan.first[plan.shape_of(p)]);
  for (std::size_t s : work.baseline_shapes) baselines[s] = req.baselines;
  const int total = int(work.pairs.size());
  int done = 0;
  for (std::size_t s = 0; s < plan.shapes.size(); ++s) {
    if (picks[s].empty() && !baselines[s]) continue;
    std::sort(picks[s].begin(), picks[s].end());
    std::string stopped;
    with_type_pair(req.in, req.out, [&](auto tin, auto tout) {
      stopped = measure_shape<typename decltype(tin)::type, typename decltype(tout)::type>(
          req, plan, s, picks[s], baselines[s], sinks, progress, done, total);
      return 0;
    });
    if (!stopped.empty()) return stopped;
  }
  return {};
}

std::optional<std::size_t> winner_index(const std::vector<CandidateResult>& candidates, double tie_tolerance) {
  std::optional<std::size_t> fastest;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].status == "ok" && (!fastest || candidates[i].median_s < candidates[*fastest].median_s)) fastest = i;
  if (!fastest) return std::nullopt;
  const double limit = candidates[*fastest].median_s * (1.0 + std::max(0.0, tie_tolerance));
  std::optional<std::size_t> win;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const CandidateResult& c = candidates[i];
    if (c.status != "ok" || c.median_s > limit) continue;
    if (!win) {
      win = i;
      continue;
    }
    const CandidateResult& w = candidates[*win];
    // The default first, then the config name in byte order.
    if (c.is_default != w.is_default ? c.is_default : c.config.name() < w.config.name()) win = i;
  }
  return win;
}

MatmulTuneResult summarize_matmul(const MatmulTuneRequest& req, const MatmulPlan& plan,
                                  const std::vector<std::optional<CandidateResult>>& by_pair,
                                  const std::vector<std::optional<ShapeBaselines>>& baselines) {
  MatmulTuneResult res;
  for (std::size_t s = 0; s < plan.shapes.size(); ++s) {
    ShapeSummary sum;
    sum.shape = plan.shapes[s];
    std::vector<CandidateResult> measured;
    for (std::size_t k = 0; k < plan.picks[s].size(); ++k) {
      const std::size_t p = plan.pair_of(s, k);
      if (p >= by_pair.size() || !by_pair[p]) {
        res.missing.push_back(p);
        ++sum.missing;
        continue;
      }
      const CandidateResult& r = *by_pair[p];
      if (r.status != "skipped") ++sum.tried;
      if (r.status == "pruned") ++sum.pruned;
      if (r.status == "launch_failed") ++sum.failed;
      if (r.status == "wrong_result") ++sum.rejected;
      if (r.is_default) sum.default_result = r;
      measured.push_back(r);
      res.candidates.push_back(r);
    }
    if (const auto w = winner_index(measured, req.tie_tolerance)) sum.best = measured[*w];
    if (s < baselines.size() && baselines[s]) {
      sum.kk_tflops = baselines[s]->kk_tflops;
      sum.vendor_tflops = baselines[s]->vendor_tflops;
      sum.baseline_note = baselines[s]->note;
    }
    res.shapes.push_back(sum);
  }
  return res;
}

TuneEntry matmul_entry(const MatmulTuneRequest& req, const CandidateResult& best) {
  TuneEntry e;
  e.key = matmul_key(req.in, req.out, req.layouts, req.epilogue, best.shape[0], best.shape[1], best.shape[2],
                     req.math);
  e.config = best.config.name();
  e.median_s = best.median_s;
  e.p20_s = best.p20_s;
  e.p80_s = best.p80_s;
  e.rate = best.tflops;
  e.date = now_iso8601();
  return e;
}

nlohmann::json candidate_json(const CandidateResult& c) {
  return {{"shape", c.shape},     {"config", c.config.name()}, {"status", c.status},   {"reason", c.reason},
          {"median_s", c.median_s}, {"p20_s", c.p20_s},         {"p80_s", c.p80_s},     {"tflops", c.tflops},
          {"rel_error", c.rel_error}, {"is_default", c.is_default}, {"rank", c.rank},   {"run", c.run}};
}

CandidateResult candidate_from_json(const nlohmann::json& j) {
  CandidateResult c;
  c.shape = j.at("shape").get<std::array<int64_t, 3>>();
  std::string why;
  if (!MatmulConfig::parse(j.at("config").get<std::string>(), c.config, why)) throw std::runtime_error(why);
  c.status = j.at("status").get<std::string>();
  c.reason = j.value("reason", std::string());
  c.median_s = j.value("median_s", 0.0);
  c.p20_s = j.value("p20_s", 0.0);
  c.p80_s = j.value("p80_s", 0.0);
  c.tflops = j.value("tflops", 0.0);
  c.rel_error = j.value("rel_error", 0.0);
  c.is_default = j.value("is_default", false);
  c.rank = j.value("rank", 0);
  c.run = j.value("run", std::string());
  return c;
}

MatmulTuneResult tune_matmul(const MatmulTuneRequest& req, TuningCache* cache, const TuneProgress& progress) {
  const MatmulPlan plan = plan_matmul(req);
  std::vector<std::optional<CandidateResult>> by_pair(plan.pairs());
  std::vector<std::optional<ShapeBaselines>> baselines(plan.shapes.size());
  const MatmulSinks sinks{[&](std::size_t p, const CandidateResult& r) { by_pair[p] = r; },
                          [&](std::size_t s, const ShapeBaselines& b) { baselines[s] = b; }};
  int done = 0;
  const int total = int(plan.pairs());
  std::vector<std::string> store_errors;
  // Shape by shape, so each finished shape's winner is stored before the next one starts.
  for (std::size_t s = 0; s < plan.shapes.size(); ++s) {
    MatmulWork work;
    for (std::size_t k = 0; k < plan.picks[s].size(); ++k) work.pairs.push_back(plan.pair_of(s, k));
    work.baseline_shapes = {s};
    const int before = done;
    const std::string stopped = measure_matmul(req, plan, work, sinks, [&](int d, int, const std::string& best) {
      done = before + d;
      if (progress) progress(done, total, best);
    });
    if (!stopped.empty()) throw std::runtime_error(stopped);
    if (!cache) continue;
    const MatmulTuneResult shape_res = summarize_matmul(req, plan, by_pair, baselines);
    if (!shape_res.shapes[s].best) continue;
    const TuneEntry e = matmul_entry(req, *shape_res.shapes[s].best);
    try {
      cache->store(e);
    } catch (const std::runtime_error& err) {  // measured all the same: the report has it
      cache->add_in_memory(e);
      store_errors.push_back(err.what());
    }
  }
  MatmulTuneResult res = summarize_matmul(req, plan, by_pair, baselines);
  res.store_errors = std::move(store_errors);
  return res;
}

std::shared_ptr<const TuningCache> load_tuned(const std::string& cache_dir, std::vector<std::string>* warnings,
                                              const std::string& shipped_dir) {
  const DeviceIdentity id = DeviceIdentity::current();
  const std::string path =
      (std::filesystem::path(cache_dir.empty() ? TuningCache::default_dir() : cache_dir) / id.file_name()).string();
  // What the user's file is now: a rewrite (temporary file + rename) changes the inode.
  struct stat st {};
  const std::string version = ::stat(path.c_str(), &st) == 0
                                  ? fmt::format("{}:{}:{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                                                st.st_mtim.tv_nsec)
                                  : "absent";
  struct Loaded {
    std::string version;
    std::shared_ptr<const TuningCache> cache;
    std::vector<std::string> warnings;
  };
  static std::mutex mutex;
  static std::unordered_map<std::string, Loaded> loaded;  // by path, shipped dir and identity
  const std::string key = fmt::format("{}\n{}\n{}\n{}", path, shipped_dir, id.compute_units, id.tilekit_version);
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = loaded.find(key);
    if (it != loaded.end() && it->second.version == version) {
      if (warnings) *warnings = it->second.warnings;
      return it->second.cache;
    }
  }
  TuningCache user(path, id);
  user.load();
  // Shipped results first, then the user's entries, which replace shipped ones with the same key.
  auto out = std::make_shared<TuningCache>(user.path(), user.identity());
  for (const auto& [name, text] : shipped_results(shipped_dir)) {
    TuningCache shipped(name, user.identity());
    if (shipped.load_text(text, name))
      for (const auto& e : shipped.entries()) out->add_in_memory(e);
  }
  for (const auto& e : user.entries()) out->add_in_memory(e);
  if (warnings) *warnings = user.warnings();
  // Loading may have set a corrupt file aside: remember the state the next call will see.
  const std::string after = ::stat(path.c_str(), &st) == 0
                                ? fmt::format("{}:{}:{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                                              st.st_mtim.tv_nsec)
                                : "absent";
  std::lock_guard<std::mutex> lock(mutex);
  loaded[key] = Loaded{after, out, after == version ? user.warnings() : std::vector<std::string>()};
  return out;
}

ResolvedConfig resolve_matmul_config(const TuneKey& key, DType in,
                                     const std::function<std::string(const MatmulConfig&)>& valid,
                                     const std::string& cache_dir, const std::string& shipped_dir, Math math) {
  ResolvedConfig r;
  const std::shared_ptr<const TuningCache> cached = load_tuned(cache_dir, &r.warnings, shipped_dir);
  const TuningCache& tuned = *cached;
  std::string skipped;
  int unusable = 0;
  // The exact shape, then the other tuned shapes of the family and of the same class (shape_class:
  // thin, shallow K, the rest) nearest first: an entry whose config does not parse or does not fit
  // this problem is skipped (with its reason), not the end.
  const ShapeClass cls = shape_class(key.shape[0], key.shape[1], key.shape[2]);
  const auto same_class = [&](const TuneEntry& e) {
    return e.key.shape.size() == 3 && shape_class(e.key.shape[0], e.key.shape[1], e.key.shape[2]) == cls;
  };
  // The family of the key first; for an epilogue with no usable entry, then the same types and
  // layouts without one (the sweeps time plain products; an epilogue changes the time of the store
  // of C, not which tile shape fits the problem), before the backend default.
  // On CUDA a tile product (and a product with a thin side the tensor-core tiles run faster:
  // model_ranks_thin_shape) takes only an exact entry; elsewhere the model
  // ranks the menu (matmul_model.hpp), which carries to shapes nobody tuned where a neighbour's tile
  // does not.
  // The key's layouts ("a=row,b=col,c=row") are those of op(A) and op(B): row-major op(A) and
  // column-major op(B) run along K.
  OperandOrders orders;
  orders.a_k_major = key.layout.find("a=col") == std::string::npos;
  orders.b_k_major = key.layout.find("b=col") != std::string::npos;
  const bool modelled = backend_name() == std::string("cuda") &&
                        (!is_thin_shape(key.shape[0], key.shape[1]) ||
                         model_ranks_thin_shape(in, math, key.shape[0], key.shape[1], orders));
  auto from_family = [&](const TuneKey& k, const char* note) {
    for (const TuneEntry& e : tuned.by_distance(k, same_class)) {
      if (modelled && e.key.shape != key.shape) break;  // nearest first: no exact entry
      std::string why;
      MatmulConfig cfg = default_matmul_config(backend_name(), in, key.shape[0], key.shape[1], key.shape[2], math);
      if (!MatmulConfig::parse(e.config, cfg, why) || !(why = valid(cfg)).empty()) {
        // The first few reasons, then a count: a large cache can hold hundreds of unusable entries.
        if (++unusable <= 3) skipped += fmt::format("tuned config {} for {} not usable: {}; ", e.config, e.key.str(), why);
        continue;
      }
      if (unusable > 3) skipped += fmt::format("{} more tuned entries not usable; ", unusable - 3);
      r.config = cfg;
      if (e.key.shape == key.shape) {
        r.source = "exact";
        r.why = fmt::format("{}tuned for this exact shape{} ({:.3f} TFLOP/s measured {})", skipped, note, e.rate, e.date);
      } else {
        r.source = "nearest";
        r.why = fmt::format("{}no usable entry for {}; nearest tuned shape is {}{}", skipped, key.str(), e.key.str(), note);
      }
      return true;
    }
    return false;
  };
  if (from_family(key, "")) return r;
  if (key.epilogue != "none") {
    TuneKey plain = key;
    plain.epilogue = "none";
    if (from_family(plain, ", tuned without an epilogue")) return r;
  }
  if (unusable > 3) skipped += fmt::format("{} more tuned entries not usable; ", unusable - 3);
  if (modelled) {
    DType out = in;
    const auto arrow = key.types.find("->");
    if (arrow == std::string::npos || !parse_dtype(key.types.substr(arrow + 2), out)) out = default_out_dtype(in);
    std::string model_why;
    r.config = model_matmul_config(in, out, key.shape[0], key.shape[1], key.shape[2], math, &model_why, orders);
    if (valid(r.config).empty()) {
      r.source = "model";
      r.why = fmt::format("{}no tuned entry for {}; {}", skipped, key.str(), model_why);
      return r;
    }
  }
  r.config = default_matmul_config(backend_name(), in, key.shape[0], key.shape[1], key.shape[2], math);
  r.source = "default";
  r.why = fmt::format("{}no usable tuned entry for {} in {} or the shipped results; using the {} default", skipped,
                      key.family(), tuned.path(), backend_name());
  return r;
}

}  // namespace tuning
}  // namespace tilekit
