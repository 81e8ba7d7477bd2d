// Elementwise suite: c = a + b over M x N row-major tensors with tilekit's naive, vectorized, tiled
// and auto variants, against the copy bandwidth of the same bytes (Kokkos::deep_copy) and a plain
// Kokkos parallel_for computing c(i) = a(i) + b(i), as the CuTe notebook compares (16384 x 8192).
// GB/s = (2 inputs + 1 output) x elements x element size / median time.
#include "bench/harness.hpp"
#include "bench/shape_list.hpp"
#include "tilekit/kernels/elementwise/elementwise.hpp"
#include "tilekit/kernels/elementwise/validation.hpp"
#include "tilekit/kernels/core/fill.hpp"
#include "tilekit/tuning/elementwise_defaults.hpp"
#include "tilekit/tuning/elementwise_tuner.hpp"

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace tilekit {
namespace bench {
namespace elementwise_suite {

enum class Impl { tilekit, copy, kokkos_parallel_for };

struct Series {
  std::string name;  ///< "tilekit:naive", "copy", "kokkos_parallel_for", ...; no '/'
  Impl impl;
  ElementwiseVariant variant = ElementwiseVariant::automatic;
};

std::vector<Series> all_series() {
  return {{"tilekit:naive", Impl::tilekit, ElementwiseVariant::naive},
          {"tilekit:vectorized", Impl::tilekit, ElementwiseVariant::vectorized},
          {"tilekit:tiled", Impl::tilekit, ElementwiseVariant::tiled},
          {"tilekit:auto", Impl::tilekit, ElementwiseVariant::automatic},
          {"copy", Impl::copy},
          {"kokkos_parallel_for", Impl::kokkos_parallel_for}};
}

/// The plain Kokkos baseline: one element per work item, computed in the compute type.
/// (A named function: nvcc does not take device lambdas defined inside other lambdas.)
template <class T>
void plain_add(const T* a, const T* b, T* c, int64_t n) {
  using C = typename TypeTraits<T>::compute;
  Kokkos::parallel_for(
      "tilekit::bench_plain_add", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<int64_t>>(0, n),
      KOKKOS_LAMBDA(int64_t e) { c[e] = convert<T>(convert<C>(a[e]) + convert<C>(b[e])); });
}

template <class T>
void bm_add(benchmark::State& state, const Shape& shape, const Series& series) {
  const std::string dt = dtype_name(TypeTraits<T>::dtype);
  const std::string key = "elementwise/" + dt + "/" + series.name;
  const int64_t n = shape.M * shape.N;
  const double bytes = 3.0 * double(n) * sizeof(T);
  const int warmup = options().warmup;
  const std::string skip = over_budget(key, bytes, warmup + static_cast<int>(state.max_iterations));
  if (!skip.empty()) {
    state.SkipWithError(skip.c_str());
    return;
  }
  const int sets = rotation_count(2.0 * double(n) * sizeof(T));
  const int warmup_all = warmup_runs(sets);
  Kokkos::View<T*> in(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench_ew_in"), int64_t(sets) * 2 * n);
  Kokkos::View<T*> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench_ew_out"), n);
  fill_random(in.data(), int64_t(sets) * 2 * n, 21);
  auto a_of = [&](int64_t set) { return in.data() + set * 2 * n; };
  auto b_of = [&](int64_t set) { return in.data() + set * 2 * n + n; };
  std::string label;
  Samples samples;
  if (series.impl == Impl::tilekit) {
    ElementwiseConfig cfg;
    if (series.variant == ElementwiseVariant::automatic) {
      std::string source, why;
      cfg = tuning::resolve_tuned_elementwise(OpKind::add, TypeTraits<T>::dtype, shape.M, shape.N, source, why);
      label = cfg.name() + " (auto: " + source + ")";
    } else {
      cfg = tuning::default_elementwise_config(backend_name(), TypeTraits<T>::dtype, series.variant);
      label = cfg.name();
    }
    const StridedMatrix<T> o{out.data(), shape.M, shape.N, shape.N, 1};
    auto inputs = [&](int64_t set) {
      return std::vector<StridedMatrix<const T>>{{a_of(set), shape.M, shape.N, shape.N, 1},
                                                 {b_of(set), shape.M, shape.N, shape.N, 1}};
    };
    const std::string why = check_op<T>(OpKind::add, OpScalars{}, inputs(0), o, cfg);
    if (!why.empty()) {
      state.SkipWithError(("config rejected: " + why).c_str());
      return;
    }
    samples = time_iterations(state, warmup_all, [&](int64_t i) { launch_op<T>(OpKind::add, OpScalars{}, inputs(i % sets), o, cfg); });
  } else if (series.impl == Impl::copy) {
    // The same bytes as the add moves (3 n elements), half read and half written.
    Kokkos::View<T*> src(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_src"), (3 * n) / 2);
    Kokkos::View<T*> dst(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_dst"), (3 * n) / 2);
    fill_random(src.data(), int64_t(src.extent(0)), 22);
    label = "Kokkos::deep_copy of the same bytes";
    samples = time_iterations(state, warmup, [&](int64_t) { Kokkos::deep_copy(dst, src); });
  } else {
    label = "Kokkos::parallel_for c(i) = a(i) + b(i)";
    samples = time_iterations(state, warmup_all, [&](int64_t i) { plain_add<T>(a_of(i % sets), b_of(i % sets), out.data(), n); });
  }
  const double rate = set_rate_counters(state, samples, bytes, "GBps", 1e-9);
  record_rate(key, rate);
  state.counters["M"] = double(shape.M);
  state.counters["N"] = double(shape.N);
  state.counters["buffers"] = sets;
  state.counters["warmup"] = series.impl == Impl::copy ? warmup : warmup_all;
  state.SetLabel(label);
}

template <class T>
void register_type(const Shape& shape) {
  const std::string dt = dtype_name(TypeTraits<T>::dtype);
  const double bytes = 3.0 * double(shape.M) * double(shape.N) * sizeof(T);
  for (const Series& s : all_series()) {
    const std::string name = "elementwise/" + dt + "/" + s.name + "/" + shape.name();
    benchmark::RegisterBenchmark(name.c_str(), [shape, s](benchmark::State& st) { bm_add<T>(st, shape, s); })
        ->UseManualTime()
        ->Iterations(reps_for(bytes))
        ->Unit(benchmark::kMicrosecond);
  }
}

void register_elementwise() {
  std::vector<Shape> shapes;
  std::string why;
  const std::string text = options().shapes_text.empty() ? "16384x8192" : options().shapes_text;
  if (!parse_shapes(text, shapes, why)) throw std::invalid_argument(why);
  std::vector<std::string> dtypes = options().dtypes;
  if (dtypes.empty()) dtypes = {"f32", "f16"};
  for (const Shape& s : shapes)
    for (const auto& dt : dtypes) {
      if (!s.wants(dt)) continue;
      if (dt == "f32") register_type<float>(s);
      else if (dt == "f16") register_type<f16>(s);
      else if (dt == "bf16") register_type<bf16>(s);
      else if (dt == "f64") register_type<double>(s);
      else throw std::invalid_argument("elementwise: unknown dtype '" + dt + "' (allowed: f32, f16, bf16, f64)");
    }
  benchmark::AddCustomContext("elementwise_shapes", text);
  benchmark::AddCustomContext("elementwise_op", "add: c = a + b, row-major, contiguous; GBps counts 2 reads + 1 write");
}

}  // namespace elementwise_suite
}  // namespace bench
}  // namespace tilekit

TILEKIT_BENCH_SUITE(elementwise, &tilekit::bench::elementwise_suite::register_elementwise);
