#include "tilekit/tuning/elementwise_tuner.hpp"

#include "tilekit/kernels/elementwise/validation.hpp"
#include "tilekit/kernels/core/fill.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/core/runtime.hpp"
#include "tilekit/kernels/core/timing.hpp"
#include "tilekit/tuning/elementwise_defaults.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_tuner.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace tilekit {
namespace tuning {

std::vector<ElementwiseConfig> elementwise_search_space() {
  using ES = Kokkos::DefaultExecutionSpace;
  std::vector<ElementwiseConfig> out;
  ElementwiseConfig c;
  c.variant = ElementwiseVariant::naive;
  out.push_back(c);
  c.variant = ElementwiseVariant::vectorized;
  out.push_back(c);
  c.variant = ElementwiseVariant::tiled;
  if (is_gpu_space<ES>()) {
    for (int team : {128, 256, 512})
      for (int tn : {32, 64, 128})
        for (int rows : {1, 4, 16})
          for (int vecs : {1, 2}) {
            if (tn > team) continue;
            c.team_size = team, c.threads_n = tn, c.rows_per_thread = rows, c.vectors_per_thread = vecs;
            out.push_back(c);
          }
  } else {
    for (int rows : {1, 4, 16})
      for (int vecs : {16, 64, 256}) {
        c.team_size = 1, c.threads_n = 1, c.rows_per_thread = rows, c.vectors_per_thread = vecs;
        out.push_back(c);
      }
  }
  return out;
}

TuneKey elementwise_key(OpKind op, DType t, int64_t M, int64_t N) {
  return TuneKey{"elementwise", dtype_name(t), "row", op_info(op).name, {M, N}};
}

namespace {

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

template <class T>
void sweep_shape(const ElementwiseTuneRequest& req, const std::array<int64_t, 2>& shape,
                 const std::vector<ElementwiseConfig>& space, const std::vector<int>& order,
                 const ElementwiseConfig& def, ElementwiseTuneResult& res, ElementwiseShapeSummary& sum,
                 TuningCache* cache, const ElementwiseProgress& progress, int& done, int total) {
  const int64_t M = shape[0], N = shape[1], n = M * N;
  const int nin = op_info(req.op).arity;
  sum.shape = shape;
  // Rotating input sets larger than twice the last-level cache (at most 16 sets).
  const std::size_t set_bytes = std::size_t(n) * sizeof(T) * std::size_t(nin);
  const std::size_t llc = runtime_info().last_level_cache;
  const int64_t nsets = set_bytes == 0 ? 1 : std::clamp<int64_t>(int64_t((2 * llc + set_bytes - 1) / set_bytes), 1, 16);
  Kokkos::View<T*> in(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tune_ew_in"), nsets * nin * n);
  Kokkos::View<T*> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tune_ew_out"), n);
  fill_random(in.data(), nsets * nin * n, req.seed * 11 + 1);
  auto inputs = [&](int64_t set) {
    std::vector<StridedMatrix<const T>> v;
    for (int q = 0; q < nin; ++q) v.push_back({in.data() + (set * nin + q) * n, M, N, N, 1});
    return v;
  };
  const StridedMatrix<T> o{out.data(), M, N, N, 1};
  const OpScalars scalars{1.5, -0.5};
  // The host reference of input set 0.
  std::vector<std::vector<T>> host_in(nin);
  std::vector<StridedMatrix<const T>> host_mats;
  for (int q = 0; q < nin; ++q) {
    host_in[q].resize(std::size_t(n));
    Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(host_in[q].data(), n);
    Kokkos::deep_copy(h, Kokkos::subview(in, std::make_pair(q * n, (q + 1) * n)));
    host_mats.push_back({host_in[q].data(), M, N, N, 1});
  }
  const std::vector<T> ref = reference_elementwise<T>(req.op, scalars, host_mats, M, N);
  const double bytes = double(nin + 1) * double(n) * sizeof(T);

  // Copy bandwidth of the same bytes, same run.
  {
    Kokkos::View<T*> a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_a"), (nin + 1) * n / 2 + 1);
    Kokkos::View<T*> b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_b"), a.extent(0));
    fill_random(a.data(), int64_t(a.extent(0)), 5);
    const Timing t = time_runs(req.warmup, std::max(req.reps, 7), [&](int) { Kokkos::deep_copy(b, a); });
    sum.copy_gbps = t.median_s > 0 ? 2.0 * double(a.extent(0)) * sizeof(T) / t.median_s * 1e-9 : 0.0;
  }

  std::vector<ElementwiseConfig> picks{def};
  for (int i : order)
    if (!(space[i] == def)) picks.push_back(space[i]);
  if (picks.size() > order.size() + 1) picks.resize(order.size() + 1);
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t pi = 0; pi < picks.size(); ++pi) {
    const ElementwiseConfig& cfg = picks[pi];
    ElementwiseCandidate r;
    r.shape = shape;
    r.config = cfg;
    r.is_default = cfg == def;
    const std::string why = check_op<T>(req.op, scalars, inputs(0), o, cfg);
    if (!why.empty()) {
      r.status = "pruned";
      r.reason = why;
    } else {
      try {
        const Timing t = time_runs(req.warmup, std::max(req.reps, 7),
                                   [&](int i) { launch_op<T>(req.op, scalars, inputs(i % nsets), o, cfg); });
        fill_value(out.data(), n, convert<T>(-7.0));  // poison: every element must be written
        launch_op<T>(req.op, scalars, inputs(0), o, cfg);
        Kokkos::fence();
        const auto host_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);  // compare on the host
        const ElementwiseComparison cmp =
            compare_elementwise<T>(req.op, StridedMatrix<const T>{host_out.data(), M, N, N, 1}, ref);
        r.median_s = t.median_s, r.p20_s = t.p20_s, r.p80_s = t.p80_s;
        r.gbps = t.median_s > 0 ? bytes / t.median_s * 1e-9 : 0.0;
        if (cmp.pass()) {
          r.status = "ok";
        } else {
          r.status = "wrong_result";
          r.reason = fmt::format("{} of {} elements differ from the host reference", cmp.mismatches, cmp.elements);
        }
      } catch (const std::exception& e) {
        r.status = "launch_failed";
        r.reason = e.what();
      }
    }
    if (r.status == "ok" && (!sum.best || r.median_s < sum.best->median_s)) sum.best = r;
    if (r.is_default) sum.default_result = r;
    res.candidates.push_back(r);
    ++done;
    if (progress) progress(done, total, sum.best ? fmt::format("{} {:.1f} GB/s", sum.best->config.name(), sum.best->gbps) : "");
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (req.budget.seconds > 0 && elapsed > req.budget.seconds) {
      done += int(picks.size() - pi - 1);
      break;
    }
  }
  if (cache && sum.best) {
    TuneEntry e;
    e.key = elementwise_key(req.op, req.dtype, M, N);
    e.config = sum.best->config.name();
    e.median_s = sum.best->median_s, e.p20_s = sum.best->p20_s, e.p80_s = sum.best->p80_s;
    e.rate = sum.best->gbps;
    e.date = now_iso8601();
    try {
      cache->store(e);
    } catch (const std::runtime_error& err) {  // measured all the same: the report has it
      cache->add_in_memory(e);
      res.store_errors.push_back(err.what());
    }
  }
}

}  // namespace

ElementwiseTuneResult tune_elementwise(const ElementwiseTuneRequest& req, TuningCache* cache,
                                       const ElementwiseProgress& progress) {
  ElementwiseTuneResult res;
  const auto space = elementwise_search_space();
  const auto order = candidate_order(int(space.size()), req.strategy, req.budget, req.seed);
  const ElementwiseConfig def = default_elementwise_config(backend_name(), req.dtype, ElementwiseVariant::automatic);
  const int total = int(std::min(space.size(), order.size()) + 1) * int(req.shapes.size());
  int done = 0;
  for (const auto& shape : req.shapes) {
    ElementwiseShapeSummary sum;
    auto run = [&](auto tag) {
      sweep_shape<typename decltype(tag)::type>(req, shape, space, order, def, res, sum, cache, progress, done, total);
    };
    switch (req.dtype) {
      case DType::f64: run(TypeTag<double>{}); break;
      case DType::f32: run(TypeTag<float>{}); break;
      case DType::f16: run(TypeTag<f16>{}); break;
      case DType::bf16: run(TypeTag<bf16>{}); break;
      case DType::i32: run(TypeTag<int32_t>{}); break;
      default: throw InvalidArgument(fmt::format("elementwise type {} is not supported (allowed: f64, f32, f16, bf16, i32)",
                                                 dtype_name(req.dtype)));
    }
    res.shapes.push_back(sum);
  }
  return res;
}

ElementwiseConfig resolve_tuned_elementwise(OpKind op, DType t, int64_t M, int64_t N, std::string& source,
                                            std::string& why, const std::string& cache_dir,
                                            const std::string& shipped_dir,
                                            const std::function<std::string(const ElementwiseConfig&)>& valid,
                                            std::vector<std::string>* warnings) {
  const std::shared_ptr<const TuningCache> cached = load_tuned(cache_dir, warnings, shipped_dir);
  const TuningCache& tuned = *cached;
  const TuneKey key = elementwise_key(op, t, M, N);
  // The exact shape, then the other tuned shapes nearest first; an unusable entry is skipped.
  int unusable = 0;
  for (const TuneEntry& found : tuned.by_distance(key)) {
    ElementwiseConfig c;
    std::string perr;
    if (ElementwiseConfig::parse(found.config, c, perr) && (!valid || (perr = valid(c)).empty())) {
      if (unusable > 3) why += fmt::format("{} more tuned entries not usable; ", unusable - 3);
      source = found.key == key ? "exact" : "nearest";
      why += fmt::format("tuned for {} ({:.1f} GB/s measured {})", found.key.str(), found.rate, found.date);
      return c;
    }
    // The first few reasons, then a count: a large cache can hold hundreds of unusable entries.
    if (++unusable <= 3) why += fmt::format("tuned config {} for {} not usable: {}; ", found.config, found.key.str(), perr);
  }
  if (unusable > 3) why += fmt::format("{} more tuned entries not usable; ", unusable - 3);
  source = "default";
  why += fmt::format("no tuned entry for {}; using the {} default", key.family(), backend_name());
  return default_elementwise_config(backend_name(), t, ElementwiseVariant::automatic);
}

}  // namespace tuning
}  // namespace tilekit
