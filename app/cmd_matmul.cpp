// tilekit matmul M N K [options]: allocate, fill with random data, run, time, validate.
#include "app/commands.hpp"
#include "tilekit/kernels/core/fill.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/validation.hpp"
#include "tilekit/kernels/core/memory.hpp"
#include "tilekit/kernels/core/runtime.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"
#include "tilekit/tuning/matmul_tuner.hpp"
#include "tilekit/tuning/peak_cache.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <iostream>
#include <memory>
#include <vector>

namespace tilekit::app {

namespace {

struct MatmulOpts {
  int64_t M = 0, N = 0, K = 0;
  std::string dtype = "f32";
  std::string out_dtype;  // default: the input type (i32 for i8)
  std::string layout_a = "row", layout_b = "row", layout_c = "row";
  bool trans_a = false, trans_b = false;
  int64_t lda = 0, ldb = 0, ldc = 0;  // 0: tight
  double alpha = 1.0, beta = 0.0;
  std::string epilogue = "none";
  std::string math = "ieee";  // f32 inputs: ieee or tf32 (the TF32 tensor-core opt-in)
  std::string config = "auto";
  int reps = 10, warmup = 2;
  bool check = false, json = false, verbose = false;  // verbose: say which config auto chose, and why
  uint64_t seed = 42;
};

// Storage of one operand: `rows x cols` as stored (before op), row- or column-major, leading
// dimension ld (0 = tight). Returns the strided matrix over `data`, and the element count needed.
struct Storage {
  int64_t rows, cols, rs, cs, elems;
};

int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > (int64_t(1) << 40))
    throw InvalidArgument(fmt::format("{} = {} x {} is too large (limit 2^40 elements)", what, a, b));
  return r;
}

Storage make_storage(const std::string& name, int64_t rows, int64_t cols, const std::string& layout, int64_t ld) {
  const bool row = layout == "row";
  const int64_t tight = row ? cols : rows;
  if (ld != 0 && ld < std::max<int64_t>(tight, 1))
    throw InvalidArgument(fmt::format("ld{} = {} is smaller than the {} {}-major matrix needs ({})", name, ld,
                                      fmt::format("{}x{}", rows, cols), layout, std::max<int64_t>(tight, 1)));
  const int64_t lead = ld != 0 ? ld : std::max<int64_t>(tight, 1);
  Storage s{rows, cols, row ? lead : 1, row ? 1 : lead, 0};
  const int64_t outer = row ? rows : cols;
  s.elems = (rows == 0 || cols == 0) ? 0 : checked_mul(outer, lead, fmt::format("storage of {}", name));
  return s;
}

template <class T>
StridedMatrix<T> over(T* data, const Storage& s, bool transpose) {
  StridedMatrix<T> m{data, s.rows, s.cols, s.rs, s.cs};
  return transpose ? m.transposed() : m;
}

template <class TIn, class TOut>
int run_typed(const MatmulOpts& o) {
  using compute = typename TypeTraits<TIn>::compute;
  using ES = Kokkos::DefaultExecutionSpace;
  const RuntimeInfo info = runtime_info();
  if (!info.optimized) fmt::print(stderr, "{}\n", unoptimized_build_warning(info));
  if (o.verbose) print_binding_note();

  checked_mul(o.M, o.K, "M x K");
  checked_mul(o.K, o.N, "K x N");
  checked_mul(o.M, o.N, "M x N");

  // Scalars in the compute type; integer types take whole alpha/beta that fit it (i32 for i8).
  if constexpr (std::is_integral<compute>::value) {
    const double lo = double(std::numeric_limits<compute>::min()), hi = double(std::numeric_limits<compute>::max());
    for (const auto& [name, v] : {std::make_pair("alpha", o.alpha), std::make_pair("beta", o.beta)})
      if (v != std::floor(v) || v < lo || v > hi)
        throw InvalidArgument(fmt::format("--{} {} does not fit {} inputs: alpha and beta must be integers from {} "
                                          "to {} (the {} accumulation type)",
                                          name, v, o.dtype, lo, hi, dtype_name(TypeTraits<compute>::dtype)));
  }

  Epilogue ep;
  std::string why;
  if (!Epilogue::parse(o.epilogue, ep, why)) throw InvalidArgument(why);
  const Math math = o.math == "tf32" ? Math::tf32 : Math::ieee;  // CLI11 allowed only ieee, tf32
  if (math == Math::tf32 && TypeTraits<TIn>::dtype != DType::f32)
    throw InvalidArgument(fmt::format("--math tf32 applies to --dtype f32 only (got --dtype {}); use --math ieee",
                                      o.dtype));

  MatmulConfig cfg;
  std::string config_source;
  // (the problem `p` below is complete before the config is resolved, so auto can validate)
  auto resolve_auto = [&](const MatmulProblem<TIn, TOut>& prob) {
    const tuning::MatmulLayouts layouts{o.layout_a == "row" ? o.trans_a : !o.trans_a,
                                        o.layout_b == "row" ? o.trans_b : !o.trans_b, o.layout_c == "col"};
    const auto key =
        tuning::matmul_key(TypeTraits<TIn>::dtype, TypeTraits<TOut>::dtype, layouts, ep, o.M, o.N, o.K, math);
    const auto r = tuning::resolve_matmul_config(
        key, TypeTraits<TIn>::dtype, [&](const MatmulConfig& c) { return check_matmul(prob, c); }, "", "", math);
    cfg = r.config;
    config_source = "auto: " + r.source;
    for (const auto& w : r.warnings) fmt::print(stderr, "warning: {}\n", w);
    if (o.verbose) fmt::print(stderr, "config auto -> {} ({}): {}\n", cfg.name(), r.source, r.why);
  };
  if (o.config == "auto") {
    config_source = "auto";
  } else {
    cfg = tuning::default_matmul_config(info.backend, TypeTraits<TIn>::dtype, math);
    if (!MatmulConfig::parse(o.config, cfg, why)) throw InvalidArgument(why);
    config_source = "given";
  }

  // op(A) is M x K: stored K x M when transposed. Likewise op(B) is K x N.
  const Storage sa = make_storage("a", o.trans_a ? o.K : o.M, o.trans_a ? o.M : o.K, o.layout_a, o.lda);
  const Storage sb = make_storage("b", o.trans_b ? o.N : o.K, o.trans_b ? o.K : o.N, o.layout_b, o.ldb);
  const Storage sc = make_storage("c", o.M, o.N, o.layout_c, o.ldc);

  // Size the problem before allocating it: refused with both numbers (exit 4) rather than thrashing.
  std::vector<MemoryItem> need{{"A", double(sa.elems) * sizeof(TIn)},
                               {"B", double(sb.elems) * sizeof(TIn)},
                               {"C and its initial copy", 2.0 * double(sc.elems) * sizeof(TOut)},
                               {"bias", ep.bias ? double(o.N) * sizeof(compute) : 0.0}};
  if (o.check)  // the f64 copies of op(A), op(B) and the reference result (tilekit/kernels/matmul/validation.hpp)
    need.push_back({"--check's f64 copies", 8.0 * (double(o.M) * double(o.K) + double(o.K) * double(o.N) +
                                                   2.0 * double(o.M) * double(o.N))});
  require_memory(fmt::format("matmul {}x{}x{} {} -> {}", o.M, o.N, o.K, dtype_name(TypeTraits<TIn>::dtype),
                             dtype_name(TypeTraits<TOut>::dtype)),
                 need, memory_available());

  Kokkos::View<TIn*> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "A"), sa.elems);
  Kokkos::View<TIn*> B(Kokkos::view_alloc(Kokkos::WithoutInitializing, "B"), sb.elems);
  Kokkos::View<TOut*> C(Kokkos::view_alloc(Kokkos::WithoutInitializing, "C"), sc.elems);
  Kokkos::View<TOut*> C_init(Kokkos::view_alloc(Kokkos::WithoutInitializing, "C_init"), sc.elems);
  Kokkos::View<compute*> bias(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bias"), ep.bias ? o.N : 0);
  fill_random(A.data(), sa.elems, o.seed);
  fill_random(B.data(), sb.elems, o.seed + 1);
  fill_random(C_init.data(), sc.elems, o.seed + 2);
  fill_random(bias.data(), static_cast<int64_t>(bias.extent(0)), o.seed + 3);

  MatmulProblem<TIn, TOut> p;
  p.M = o.M;
  p.N = o.N;
  p.K = o.K;
  p.a = over<const TIn>(A.data(), sa, o.trans_a);
  p.b = over<const TIn>(B.data(), sb, o.trans_b);
  p.c = over<TOut>(C.data(), sc, false);
  p.alpha = static_cast<compute>(o.alpha);
  p.beta = static_cast<compute>(o.beta);
  p.bias = ep.bias ? bias.data() : nullptr;
  p.act = ep.act;
  p.math = math;
  if (o.config == "auto") resolve_auto(p);
  why = check_matmul(p, cfg);
  if (!why.empty()) throw InvalidArgument(why);

  // Time: warm-up, then `reps` runs each ended by a fence; median. C starts from C_init each run.
  std::vector<double> times;
  MatmulLaunchReport launched;  // what the last launch ran
  for (int r = 0; r < o.warmup + o.reps; ++r) {
    Kokkos::deep_copy(C, C_init);
    ES().fence();
    Kokkos::Timer timer;
    launched = launch_matmul(p, cfg);
    ES().fence();
    if (r >= o.warmup) times.push_back(timer.seconds());
  }
  std::sort(times.begin(), times.end());
  const double median = times.empty() ? 0.0 : times[times.size() / 2];
  const double flops = 2.0 * double(o.M) * double(o.N) * double(o.K);
  const double tflops = median > 0 ? flops / median * 1e-12 : 0.0;
  // The machine's peak for the type: a vendor-independent reading of the rate.
  const PeakRate peak = tuning::machine_peak(TypeTraits<TIn>::dtype, math, tuning::TuningCache::default_dir());

  double err = 0.0, tol = 0.0;
  bool pass = true;
  int64_t overflowed = 0, first_overflow = -1;  // elements whose exact value TOut cannot hold
  double first_overflow_value = 0.0;
  if (o.check) {
    const StridedMatrix<const TOut> c_before{C_init.data(), sc.rows, sc.cols, sc.rs, sc.cs};
    const RefMatrix ref = reference_kokkos_kernels(p, c_before);
    const StridedMatrix<const TOut> c_out{C.data(), sc.rows, sc.cols, sc.rs, sc.cs};
    // An overflow of the output type is not a wrong result: those elements are counted apart and
    // the error is measured over the others (the status stays 1: the result is not usable).
    overflowed = overflowed_elements<TOut>(ref, first_overflow);
    if (overflowed > 0) {
      auto r = Kokkos::create_mirror_view(ref);
      Kokkos::deep_copy(r, ref);
      first_overflow_value = r(first_overflow / o.N, first_overflow % o.N);
    }
    err = relative_error(c_out, ref, largest_finite<TOut>());
    tol = matmul_tolerance(TypeTraits<TIn>::dtype, TypeTraits<TOut>::dtype, o.K, math);
    pass = err <= tol && overflowed == 0;
  }

  const std::string in_name = dtype_name(TypeTraits<TIn>::dtype), out_name = dtype_name(TypeTraits<TOut>::dtype);
  auto op_desc = [](const std::string& layout, bool t, int64_t ld) {
    return fmt::format("{}-major{}{}", layout, t ? ", transposed" : "", ld ? fmt::format(", ld {}", ld) : "");
  };
  if (o.json) {
    nlohmann::json j = {{"M", o.M}, {"N", o.N}, {"K", o.K}, {"dtype", in_name}, {"out_dtype", out_name},
                        {"backend", info.backend}, {"device", info.device}, {"config", cfg.name()},
                        {"config_source", config_source}, {"layout_a", o.layout_a}, {"layout_b", o.layout_b},
                        {"layout_c", o.layout_c}, {"trans_a", o.trans_a}, {"trans_b", o.trans_b},
                        {"alpha", o.alpha}, {"beta", o.beta}, {"epilogue", ep.name()},
                        {"math", math_name(math)}, {"reps", o.reps},
                        {"median_s", median}, {"times_s", times}, {"tflops", tflops},
                        {"kernel", launched.kernel}, {"packed", launched.packed}};
    if (peak.flops > 0)
      j["peak"] = {{"tflops", peak.flops * 1e-12}, {"fraction", tflops * 1e12 / peak.flops}, {"basis", peak.basis}};
    if (cfg.ws)
      j["ws"] = {{"loads", launched.ws_loads}, {"drift_bound", launched.ws_drift_bound},
                 {"multicast", launched.ws_multicast}, {"stores", launched.ws_stores}};
    if (o.check)
      j["check"] = {{"oracle", "KokkosBlas::gemm (f64)"}, {"rel_error", err}, {"tolerance", tol}, {"pass", pass},
                    {"overflowed", overflowed}};
    std::cout << j.dump(2) << "\n";
  } else {
    fmt::print("tilekit matmul  M={} N={} K={}  {} -> {}{}\n", o.M, o.N, o.K, in_name, out_name,
               math == Math::tf32 ? " (TF32 math)" : "");
    fmt::print("backend   {} ({} threads/lanes)  device: {}\n", info.backend, info.concurrency, info.device);
    fmt::print("config    {} ({})\n", cfg.name(), config_source);
    fmt::print("operands  A {}, B {}, C {}; alpha={} beta={} epilogue={}\n", op_desc(o.layout_a, o.trans_a, o.lda),
               op_desc(o.layout_b, o.trans_b, o.ldb), op_desc(o.layout_c, false, o.ldc), o.alpha, o.beta, ep.name());
    if (!launched.packed.empty()) fmt::print("packed    {} (for vector loads)\n", launched.packed);
    if (cfg.ws) {  // how the warp-specialised kernel ran (tilekit/kernels/matmul/gpu/wgmma_ws_sm90.hpp)
      fmt::print("ws        loads {}; stores {}; drift bound {}{}\n", launched.ws_loads, launched.ws_stores,
                 launched.ws_drift_bound.empty() ? "off" : launched.ws_drift_bound,
                 launched.ws_multicast.empty() ? "" : "; " + launched.ws_multicast);
    }
    if (!times.empty())
      fmt::print("time      median {:.3f} ms over {} reps (min {:.3f}, max {:.3f})\n", median * 1e3, times.size(),
                 times.front() * 1e3, times.back() * 1e3);
    fmt::print("rate      {:.3f} TFLOP/s ({:.1f} GFLOP/s)\n", tflops, tflops * 1e3);
    if (peak.flops > 0)
      fmt::print("peak      {:.0f}% of {:.1f} GFLOP/s ({})\n", 100.0 * tflops * 1e12 / peak.flops, peak.flops * 1e-9,
                 peak.basis);
    if (o.check)
      fmt::print("check     rel error {:.3e} (tolerance {:.3e}) vs KokkosBlas::gemm in f64{}: {}\n", err, tol,
                 overflowed ? " over the elements that fit" : "",
                 pass ? "PASS" : err <= tol ? "OVERFLOW" : "FAIL");
  }
  std::fflush(stdout);  // the report first, then why it did not pass
  if (overflowed > 0)
    fmt::print(stderr,
               "error: {} of {} elements of C overflowed {} (largest finite {:g}), first C({},{}) = {:g} exactly: the "
               "output type cannot hold the result; {}\n",
               overflowed, o.M * o.N, out_name, largest_finite<TOut>(), first_overflow / o.N, first_overflow % o.N,
               first_overflow_value,
               TypeTraits<TOut>::dtype == DType::f16 || TypeTraits<TOut>::dtype == DType::bf16
                   ? "use --out-dtype f32 (or a smaller --alpha)"
                   : TypeTraits<TOut>::dtype == DType::f32 ? "use --dtype f64 (or a smaller --alpha)"
                                                           : "use a smaller --alpha");
  return pass ? 0 : 1;
}

int dispatch(const MatmulOpts& o) {
  DType in, out;
  if (!parse_dtype(o.dtype, in))
    throw InvalidArgument(fmt::format("unknown --dtype '{}' (allowed: f64, f32, f16, bf16, i8)", o.dtype));
  const std::string out_name = o.out_dtype.empty() ? dtype_name(default_out_dtype(in)) : o.out_dtype;
  if (!parse_dtype(out_name, out))
    throw InvalidArgument(fmt::format("unknown --out-dtype '{}' (allowed pairs: {})", out_name, supported_type_pairs()));
  return with_type_pair(in, out, [&](auto tin, auto tout) {
    return run_typed<typename decltype(tin)::type, typename decltype(tout)::type>(o);
  });
}

}  // namespace

Runner add_matmul(CLI::App& app) {
  auto o = std::make_shared<MatmulOpts>();
  const auto layouts = CLI::IsMember({"row", "col"});
  const CLI::Validator size_check = size_validator();
  app.add_option("M", o->M, "rows of C and op(A)")->required()->check(size_check);
  app.add_option("N", o->N, "columns of C and op(B)")->required()->check(size_check);
  app.add_option("K", o->K, "columns of op(A), rows of op(B)")->required()->check(size_check);
  app.add_option("--dtype", o->dtype, "input type: f64, f32, f16, bf16, i8")->capture_default_str()
      ->check(word_validator("f64, f32, f16, bf16, i8"));
  app.add_option("--out-dtype", o->out_dtype,
                 "output type (default: the input type, i32 for i8; f16/bf16 may also write f32)")
      ->check(word_validator("a type: f64, f32, f16, bf16, i32"));
  app.add_option("--layout-a", o->layout_a, "storage of A: row or col")->check(layouts)->capture_default_str();
  app.add_option("--layout-b", o->layout_b, "storage of B: row or col")->check(layouts)->capture_default_str();
  app.add_option("--layout-c", o->layout_c, "storage of C: row or col")->check(layouts)->capture_default_str();
  app.add_flag("--trans-a", o->trans_a, "A is stored K x M and used transposed")->check(flag_validator("--trans-a"));
  app.add_flag("--trans-b", o->trans_b, "B is stored N x K and used transposed")->check(flag_validator("--trans-b"));
  app.add_option("--lda", o->lda, "leading dimension of A (0 = tight)")->check(ld_validator());
  app.add_option("--ldb", o->ldb, "leading dimension of B (0 = tight)")->check(ld_validator());
  app.add_option("--ldc", o->ldc, "leading dimension of C (0 = tight)")->check(ld_validator());
  app.add_option("--alpha", o->alpha, "scale of op(A) op(B)")->check(finite_validator())->capture_default_str();
  app.add_option("--beta", o->beta, "scale of C (0: C is not read)")->check(finite_validator())->capture_default_str();
  app.add_option("--epilogue", o->epilogue, std::string("fused epilogue: ") + Epilogue::allowed())
      ->capture_default_str()
      ->check(word_validator("an epilogue, e.g. none, bias, relu, bias+gelu"));
  app.add_option("--math", o->math,
                 "f32 arithmetic: ieee, or tf32 (opt-in: TF32 tensor cores on CUDA sm_80+, inputs rounded to "
                 "11-bit significands, f32 accumulation)")
      ->check(CLI::IsMember({"ieee", "tf32"}))
      ->capture_default_str();
  app.add_option("--config", o->config,
                 "tile config name (e.g. bm96_bn512_bk256_tm12_tn32_g8_t1_v1; fields after tn are optional) "
                 "or auto")
      ->capture_default_str()
      ->check(word_validator("a config name or auto"));
  app.add_option("--reps", o->reps, "timed repetitions")
      ->check(whole_validator(1, 100000, "a repetition count"))
      ->capture_default_str();
  app.add_option("--warmup", o->warmup, "untimed warm-up runs")
      ->check(whole_validator(0, 100000, "a warm-up count"))
      ->capture_default_str();
  app.add_option("--seed", o->seed, "random seed of the inputs")->check(seed_validator())->capture_default_str();
  app.add_flag("--check", o->check, "validate against KokkosBlas::gemm (in f64) on the same execution space");
  app.add_flag("--json", o->json, "print JSON instead of text");
  app.add_flag("-v,--verbose", o->verbose, "say which config --config auto chose, and why");
  return [o]() { return dispatch(*o); };
}

}  // namespace tilekit::app
