#include "tuning/matmul_tuner.hpp"

#include "kernels/fill.hpp"
#include "kernels/matmul.hpp"
#include "kernels/matmul_check.hpp"
#include "kernels/runtime.hpp"
#include "kernels/timing.hpp"
#include "tuning/matmul_tiles.hpp"
#include "tuning/vendor_blas.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace tilekit {
namespace tuning {

namespace {

template <class... Tiles>
void expand_space(TileList<Tiles...>, DType in, std::vector<MatmulConfig>& out) {
  using ES = Kokkos::DefaultExecutionSpace;
  const int concurrency = ES().concurrency();
  auto add_tile = [&](MatmulConfig c, int micro_tiles) {
    if (!tile_supports(c, in)) return;
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
  (add_tile(Tiles::config(), Tiles::micro_tiles), ...);
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

template <class TIn, class TOut>
void sweep_shape(const MatmulTuneRequest& req, const std::array<int64_t, 3>& shape,
                 const std::vector<MatmulConfig>& space, const std::vector<int>& order, const MatmulConfig& def,
                 MatmulTuneResult& res, ShapeSummary& sum, TuningCache* cache, const TuneProgress& progress,
                 int& done, int total) {
  using compute = typename TypeTraits<TIn>::compute;
  const int64_t M = shape[0], N = shape[1], K = shape[2];
  sum.shape = shape;

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
    return p;
  };
  const MatmulProblem<TIn, TOut> p0 = problem(0);
  const StridedMatrix<const TOut> c_view{C.data(), M, N, p0.c.rs, p0.c.cs};
  const RefMatrix ref = reference_kokkos_kernels(p0, c_view);  // beta = 0: C is not read
  const double tol = matmul_tolerance(TypeTraits<TIn>::dtype, TypeTraits<TOut>::dtype, K);

  if (req.baselines) {
    MatmulProblem<TIn, float> shape_only;
    shape_only.M = M;
    shape_only.N = N;
    shape_only.K = K;
    if constexpr (std::is_same<TIn, double>::value) {
      time_baselines<double>(shape_only, p0.a, p0.b, req, sum);
      sum.baseline_note = "f64";
    } else {
      time_baselines<float>(shape_only, p0.a, p0.b, req, sum);
      sum.baseline_note = std::is_same<TIn, float>::value ? "f32" : "f32 on the upcast inputs";
    }
  }

  // The default config is always measured (speedup over default), then the strategy's picks.
  std::vector<MatmulConfig> picks{def};
  for (int i : order)
    if (!(space[i] == def)) picks.push_back(space[i]);
  if (int(picks.size()) > int(order.size()) + 1) picks.resize(order.size() + 1);
  picks.insert(picks.end(), req.extra_candidates.begin(), req.extra_candidates.end());

  const auto start = std::chrono::steady_clock::now();
  for (const MatmulConfig& cfg : picks) {
    CandidateResult r;
    r.shape = shape;
    r.config = cfg;
    r.is_default = cfg == def;
    const bool planted = req.plant_wrong_result && req.plant_wrong_result(cfg);
    const std::string why = check_matmul(p0, cfg);
    if (!why.empty()) {
      r.status = "pruned";
      r.reason = why;
      ++sum.pruned;
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
          ++sum.rejected;
        }
      } catch (const std::exception& e) {
        r.status = "launch_failed";
        r.reason = e.what();
        ++sum.failed;
      }
    }
    ++sum.tried;
    if (r.status == "ok" && (!sum.best || r.median_s < sum.best->median_s)) sum.best = r;
    if (r.is_default) sum.default_result = r;
    res.candidates.push_back(r);
    ++done;
    if (progress)
      progress(done, total,
               sum.best ? fmt::format("{} {:.3f} TFLOP/s", sum.best->config.name(), sum.best->tflops) : "");
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (req.budget.seconds > 0 && elapsed > req.budget.seconds) {
      done += int(picks.size()) - int(&cfg - picks.data()) - 1;  // skipped ones count as done
      break;
    }
  }

  if (cache && sum.best) {
    TuneEntry e;
    e.key = matmul_key(req.in, req.out, req.layouts, req.epilogue, M, N, K);
    e.config = sum.best->config.name();
    e.median_s = sum.best->median_s;
    e.p20_s = sum.best->p20_s;
    e.p80_s = sum.best->p80_s;
    e.rate = sum.best->tflops;
    e.date = now_iso8601();
    cache->store(e);
  }
}

}  // namespace

std::vector<MatmulConfig> matmul_search_space(DType in) {
  std::vector<MatmulConfig> out;
  expand_space(MatmulTiles<Kokkos::DefaultExecutionSpace>{}, in, out);
  return out;
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
    for (int cols = 16; cols <= 1024; cols *= 2) add(cols, 1);
  }
  return out;
}

std::string MatmulLayouts::str() const {
  return fmt::format("a={},b={},c={}", a_col ? "col" : "row", b_col ? "col" : "row", c_col ? "col" : "row");
}

TuneKey matmul_key(DType in, DType out, const MatmulLayouts& layouts, const Epilogue& ep, int64_t M, int64_t N,
                   int64_t K) {
  return TuneKey{"matmul", fmt::format("{}->{}", dtype_name(in), dtype_name(out)), layouts.str(), ep.name(),
                 {M, N, K}};
}

MatmulTuneResult tune_matmul(const MatmulTuneRequest& req, TuningCache* cache, const TuneProgress& progress) {
  MatmulTuneResult res;
  // Two spaces by shape class: thin products (M or N up to kThinMaxRows) try thin configs, the
  // others the tile menu; each shape's default is the shape-aware one.
  const std::vector<MatmulConfig> tile_space = matmul_search_space(req.in);
  const std::vector<MatmulConfig> thin_space = thin_search_space();
  const std::vector<int> tile_order = candidate_order(int(tile_space.size()), req.strategy, req.budget, req.seed);
  const std::vector<int> thin_order = candidate_order(int(thin_space.size()), req.strategy, req.budget, req.seed);
  auto picks_of = [&](const std::array<int64_t, 3>& shape) {
    const bool thin = is_thin_shape(shape[0], shape[1]);
    const MatmulConfig def = default_matmul_config(backend_name(), req.in, shape[0], shape[1], shape[2]);
    const auto& space = thin ? thin_space : tile_space;
    const auto& order = thin ? thin_order : tile_order;
    int n = 1;
    for (int i : order) n += space[i] == def ? 0 : 1;
    return std::min<int>(n, int(order.size()) + 1) + int(req.extra_candidates.size());
  };
  int total = 0;
  for (const auto& shape : req.shapes) total += picks_of(shape);
  int done = 0;
  for (const auto& shape : req.shapes) {
    ShapeSummary sum;
    const bool thin = is_thin_shape(shape[0], shape[1]);
    const MatmulConfig def = default_matmul_config(backend_name(), req.in, shape[0], shape[1], shape[2]);
    with_type_pair(req.in, req.out, [&](auto tin, auto tout) {
      sweep_shape<typename decltype(tin)::type, typename decltype(tout)::type>(
          req, shape, thin ? thin_space : tile_space, thin ? thin_order : tile_order, def, res, sum, cache, progress,
          done, total);
    });
    res.shapes.push_back(sum);
  }
  return res;
}

TuningCache load_tuned(const std::string& cache_dir, std::vector<std::string>* warnings,
                       const std::string& shipped_dir) {
  TuningCache user = TuningCache::for_current_device(cache_dir.empty() ? TuningCache::default_dir() : cache_dir);
  user.load();
  // Shipped results first, then the user's entries, which replace shipped ones with the same key.
  TuningCache out(user.path(), user.identity());
  for (const auto& [name, text] : shipped_results(shipped_dir)) {
    TuningCache shipped(name, user.identity());
    if (shipped.load_text(text, name))
      for (const auto& e : shipped.entries()) out.add_in_memory(e);
  }
  for (const auto& e : user.entries()) out.add_in_memory(e);
  if (warnings) *warnings = user.warnings();
  return out;
}

ResolvedConfig resolve_matmul_config(const TuneKey& key, DType in,
                                     const std::function<std::string(const MatmulConfig&)>& valid,
                                     const std::string& cache_dir, const std::string& shipped_dir) {
  ResolvedConfig r;
  std::vector<std::string> warnings;
  const TuningCache tuned = load_tuned(cache_dir, &warnings, shipped_dir);
  std::string skipped;
  for (const auto& w : warnings) skipped += w + "; ";
  auto usable = [&](const std::optional<TuneEntry>& e, MatmulConfig& cfg) {
    if (!e) return false;
    std::string why;
    cfg = default_matmul_config(backend_name(), in, key.shape[0], key.shape[1], key.shape[2]);
    if (!MatmulConfig::parse(e->config, cfg, why) || !(why = valid(cfg)).empty()) {
      skipped += fmt::format("tuned config {} for {} not usable: {}; ", e->config, e->key.str(), why);
      return false;
    }
    return true;
  };
  const auto exact = tuned.find_exact(key);
  if (usable(exact, r.config)) {
    r.source = "exact";
    r.why = fmt::format("{}tuned for this exact shape ({:.3f} TFLOP/s measured {})", skipped, exact->rate, exact->date);
    return r;
  }
  // The nearest tuned shape of the same class (shape_class: thin, shallow K, the rest).
  const ShapeClass cls = shape_class(key.shape[0], key.shape[1], key.shape[2]);
  const auto near = tuned.find_nearest(key, [&](const TuneEntry& e) {
    return e.key.shape.size() == 3 && shape_class(e.key.shape[0], e.key.shape[1], e.key.shape[2]) == cls;
  });
  if (usable(near, r.config)) {
    r.source = "nearest";
    r.why = fmt::format("{}no entry for {}; nearest tuned shape is {}", skipped, key.str(), near->key.str());
    return r;
  }
  r.config = default_matmul_config(backend_name(), in, key.shape[0], key.shape[1], key.shape[2]);
  r.source = "default";
  r.why = fmt::format("{}no tuned entry for {} in {} or the shipped results; using the {} default", skipped,
                      key.family(), tuned.path(), backend_name());
  return r;
}

}  // namespace tuning
}  // namespace tilekit
