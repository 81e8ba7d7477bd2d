// Matmul benchmarks: tilekit against Kokkos Kernels and the vendor BLAS on the same data, in the
// same process where the vendor allows it.
//
// Every series computes C = A B (alpha 1, beta 0) on A (M x K), B (K x N), C (M x N) stored in the
// order --tk_layout names (col: all column-major, the BLAS convention and the default; row: all
// row-major, as PyTorch and NumPy store them; kmajor: A row-major and B column-major, both
// K-contiguous, C row-major: torch._int_mm's layout, cuBLAS int8's fast one), from the same random
// inputs (tilekit/kernels/core/fill.hpp, fixed seeds; never zeros):
//   tilekit:<config>               tilekit's blocked matmul with that config source's config
//                                  (default: the backend's default tile; auto: what `--config auto`
//                                  and tilekit::gemm pick), or a config named in --tk_configs
//   tilekit:<config>+leaky_relu    the same with leaky_relu (slope 0.01) fused into the epilogue
//   tilekit:auto+bias+gelu         the auto config with a bias (one random value per column of C) and
//                                  gelu fused (floating-point types): the cost of a heavier epilogue
//   kokkos_kernels                 KokkosBlas::gemm, native (no TPL); f32 and f64 only: Kokkos
//                                  Kernels has no f16 gemm; col and row layouts
//   openblas                       cblas_{s,d}gemm (host backends, when OpenBLAS was found); for bf16
//                                  cblas_sbgemm (bf16 in, f32 out: tilekit's bf16 rows write bf16);
//                                  col and row layouts
//   openblas+leaky_relu            the same followed by a separate Kokkos activation pass over C
// On CUDA the vendor series (cuBLAS) come from bench/cublas_baseline.cu, a separate program built
// on the GPU machine with that machine's CUDA toolkit, writing the same JSON.
//
// Types (--tk_dtypes): f64, f32, and f16 with f32 accumulation (f16 in, f16 out) by default; bf16
// (bf16 in and out), i8 (i8 in, i32 out; no activation series: integer epilogues take relu only) and
// tf32 (f32 data with Math::tf32, the TF32 tensor-core opt-in; no Kokkos Kernels or OpenBLAS series,
// which compute IEEE f32) can be asked for. FLOPs (integer operations for i8) counted: 2 M N K per
// run (the activation is not counted).
#include "bench/harness.hpp"
#include "tilekit/kernels/core/fill.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/validation.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"
#include "tilekit/tuning/matmul_tuner.hpp"
#include "tilekit/tuning/peak_cache.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(TILEKIT_BENCH_HAVE_OPENBLAS)
#include <cblas.h>
#endif

namespace tilekit {
namespace bench {
// A named namespace, not an anonymous one: nvcc's extended (device) lambdas need enclosing
// functions it can name.
namespace matmul_suite {

using ES = Kokkos::DefaultExecutionSpace;

/// Where operand elements live in the storage order --tk_layout names.
struct Storage {
  bool a_col = true, b_col = true, c_col = true;
  static Storage of(const std::string& layout) {
    if (layout == "row") return {false, false, false};
    if (layout == "kmajor") return {false, true, false};
    return {};
  }
  /// Offsets of A(i, k), B(k, j), C(i, j) of an M x N x K product.
  static int64_t at(bool col, int64_t r, int64_t c, int64_t rows, int64_t cols) {
    return col ? r + c * rows : r * cols + c;
  }
  /// The strided view of a rows x cols operand at `p`.
  template <class T>
  static StridedMatrix<T> matrix(bool col, T* p, int64_t rows, int64_t cols) {
    return col ? StridedMatrix<T>{p, rows, cols, 1, rows} : StridedMatrix<T>{p, rows, cols, cols, 1};
  }
  bool all(bool col) const { return a_col == col && b_col == col && c_col == col; }
};

Storage storage() { return Storage::of(options().layout); }

// ---- config sources of the tilekit series ------------------------------------------------------

/// Where a tilekit series gets its config for a shape, input type and math.
using ConfigFn = MatmulConfig (*)(const Shape&, DType, Math);

MatmulConfig default_config(const Shape& sh, DType t, Math math) {
  return tuning::default_matmul_config(backend_name(), t, sh.M, sh.N, sh.K, math);
}

/// The output type of a benchmarked input type: the input type, i32 for i8.
template <class T>
using out_type = std::conditional_t<std::is_same<T, int8_t>::value, int32_t, T>;

/// The series' type name in benchmark names: the input type, or "tf32" for f32 with TF32 math.
template <class T>
std::string type_name(Math math) {
  return math == Math::tf32 ? "tf32" : dtype_name(TypeTraits<T>::dtype);
}

struct ConfigSource {
  const char* label;  ///< series name part: "tilekit:<label>"
  ConfigFn config;
};

/// What `--config auto` picks for the shape, for the benchmark's storage order and no epilogue.
MatmulConfig auto_config(const Shape& sh, DType t, Math math) {
  const Storage st = storage();
  const tuning::MatmulLayouts layouts{st.a_col, st.b_col, st.c_col};
  const DType out = default_out_dtype(t);
  const auto key = tuning::matmul_key(t, out, layouts, Epilogue{}, sh.M, sh.N, sh.K, math);
  // As the library's check would: a tuned tile this CPU's (or TILEKIT_HOST_ISA's) path cannot run
  // is passed over, not taken.
  const auto runnable = [&](const MatmulConfig& c) {
    return c.thin || tile_supports(c, t, math) ? std::string() : std::string("its tile does not run here");
  };
  return tuning::resolve_matmul_config(key, t, runnable, "", "", math).config;
}

/// One tilekit series per entry, each also run with the fused activation.
const ConfigSource kConfigSources[] = {
    {"default", &default_config},
    {"auto", &auto_config},
};

// ---- series ------------------------------------------------------------------------------------

enum class Impl { tilekit, kokkos_kernels, openblas, copy };

struct Series {
  std::string name;  ///< e.g. "tilekit:default+leaky_relu"; no '/'
  Impl impl;
  Activation act;              ///< fused (tilekit) or a separate pass (vendor)
  ConfigFn config = nullptr;   ///< tilekit only (null: `fixed`)
  bool bias = false;           ///< tilekit only: a per-column bias fused before the activation
  MatmulConfig fixed{};        ///< tilekit with no config source: this config at every shape (--tk_configs)
};

constexpr Activation kActivation = Activation::leaky_relu;  // the seeds' fused activation

template <class T>
constexpr bool kk_has_type() {
  return std::is_same<T, float>::value || std::is_same<T, double>::value;
}

template <class T>
std::vector<Series> series_for(Math math) {
  std::vector<Series> s;
  // what Kokkos Kernels and OpenBLAS compute, in the storage orders they run here (col, row)
  const bool ieee_float =
      kk_has_type<T>() && math == Math::ieee && (storage().all(true) || storage().all(false));
  for (const auto& src : kConfigSources) {
    s.push_back({std::string("tilekit:") + src.label, Impl::tilekit, Activation::none, src.config});
    if (!std::is_integral<T>::value)  // integer accumulators take relu only
      s.push_back({std::string("tilekit:") + src.label + "+" + activation_name(kActivation), Impl::tilekit,
                   kActivation, src.config});
    if (!std::is_integral<T>::value && std::string(src.label) == "auto")
      s.push_back({"tilekit:auto+bias+gelu", Impl::tilekit, Activation::gelu, src.config, true});
  }
  for (const std::string& name : options().configs) {  // --tk_configs (checked in register_matmul)
    MatmulConfig cfg;
    std::string why;
    if (!MatmulConfig::parse(name, cfg, why)) continue;
    s.push_back({"tilekit:" + name, Impl::tilekit, Activation::none, nullptr, false, cfg});
    if (!std::is_integral<T>::value)
      s.push_back({"tilekit:" + name + "+" + activation_name(kActivation), Impl::tilekit, kActivation, nullptr,
                   false, cfg});
  }
  if (ieee_float) s.push_back({"kokkos_kernels", Impl::kokkos_kernels, Activation::none});
  // Not a matmul: the time the shape's compulsory bytes take at the copy bandwidth (below).
  s.push_back({"copy", Impl::copy, Activation::none});
#if defined(TILEKIT_BENCH_HAVE_OPENBLAS)
#if defined(TILEKIT_BENCH_HAVE_OPENBLAS_SBGEMM)
  constexpr bool sbgemm = std::is_same<T, bf16>::value;
#else
  constexpr bool sbgemm = false;  // this OpenBLAS does not export cblas_sbgemm (context: openblas_sbgemm)
#endif
  if (ieee_float || sbgemm) {  // OpenBLAS: sgemm, dgemm, sbgemm where exported (no f16 gemm)
    s.push_back({"openblas", Impl::openblas, Activation::none});
    s.push_back({std::string("openblas+") + activation_name(kActivation), Impl::openblas, kActivation});
  }
#endif
  return s;
}

// ---- operands ----------------------------------------------------------------------------------

constexpr uint64_t kSeedA = 1, kSeedB = 2, kSeedC = 3, kSeedBias = 4;

/// `sets` input sets of column-major A, B and C, each operand one allocation (set s at offset
/// s * size). Rotating through the sets keeps small problems from running out of cache.
template <class T>
struct Operands {
  using TOut = out_type<T>;
  using compute = typename TypeTraits<T>::compute;
  int64_t M, N, K;
  int sets;
  Kokkos::View<T*> a, b;
  Kokkos::View<TOut*> c;
  Kokkos::View<compute*> bias;  // N values (the bias+gelu series)
  Kokkos::View<float*> cf;  // bf16 on host backends: cblas_sbgemm's f32 C (empty otherwise)

  Operands(const Shape& sh, int nsets)
      : M(sh.M), N(sh.N), K(sh.K), sets(nsets),
        a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::A"), nsets * sh.M * sh.K),
        b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::B"), nsets * sh.K * sh.N),
        c(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::C"), nsets * sh.M * sh.N),
        bias(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::bias"), sh.N) {
    fill_random(bias.data(), static_cast<int64_t>(bias.size()), kSeedBias);
    fill_random(a.data(), static_cast<int64_t>(a.size()), kSeedA);
    fill_random(b.data(), static_cast<int64_t>(b.size()), kSeedB);
    fill_random(c.data(), static_cast<int64_t>(c.size()), kSeedC);  // beta = 0: never read
    if (std::is_same<T, bf16>::value && !is_gpu_space<ES>())
      cf = Kokkos::View<float*>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::Cf32"), nsets * sh.M * sh.N);
    ES().fence();
  }
  float* CF(int s) const { return cf.data() + s * M * N; }
  T* A(int s) const { return a.data() + s * M * K; }
  T* B(int s) const { return b.data() + s * K * N; }
  TOut* C(int s) const { return c.data() + s * M * N; }
};

template <class T>
MatmulProblem<T, out_type<T>> problem(const Operands<T>& o, int s, Activation act, Math math, bool bias = false) {
  MatmulProblem<T, out_type<T>> p;
  p.M = o.M;
  p.N = o.N;
  p.K = o.K;
  const Storage st = storage();
  p.a = Storage::matrix<const T>(st.a_col, o.A(s), o.M, o.K);
  p.b = Storage::matrix<const T>(st.b_col, o.B(s), o.K, o.N);
  p.c = Storage::matrix(st.c_col, o.C(s), o.M, o.N);
  p.act = act;
  p.math = math;
  p.bias = bias ? o.bias.data() : nullptr;
  return p;
}

/// The vendor's separate activation pass: one Kokkos kernel over C, in the accumulation type.
template <class T>
void activation_pass(T* c, int64_t n, Activation act) {
  using compute = typename TypeTraits<T>::compute;
  Kokkos::parallel_for(
      "tilekit::bench::activation_pass", Kokkos::RangePolicy<ES, Kokkos::IndexType<int64_t>>(0, n),
      KOKKOS_LAMBDA(int64_t i) { c[i] = convert<T>(activate(act, convert<compute>(c[i]))); });
}

template <class T>
void kokkos_kernels_run(const Operands<T>& o, int s) {
  if constexpr (kk_has_type<T>()) {
    if (storage().all(true)) {
      Kokkos::View<const T**, Kokkos::LayoutLeft> A(o.A(s), o.M, o.K), B(o.B(s), o.K, o.N);
      Kokkos::View<T**, Kokkos::LayoutLeft> C(o.C(s), o.M, o.N);
      kokkos_kernels_gemm(A, B, C);
    } else {  // row-major C = A B is column-major C^T = B^T A^T over the same memory
      Kokkos::View<const T**, Kokkos::LayoutLeft> At(o.A(s), o.K, o.M), Bt(o.B(s), o.N, o.K);
      Kokkos::View<T**, Kokkos::LayoutLeft> Ct(o.C(s), o.N, o.M);
      kokkos_kernels_gemm(Bt, At, Ct);
    }
  }
}

#if defined(TILEKIT_BENCH_HAVE_OPENBLAS)
template <class T>
void openblas_run(const Operands<T>& o, int s, Activation act) {
  const int m = static_cast<int>(o.M), n = static_cast<int>(o.N), k = static_cast<int>(o.K);
  const bool col = storage().all(true);  // else all row-major (series_for)
  const CBLAS_ORDER order = col ? CblasColMajor : CblasRowMajor;
  const int lda = col ? m : k, ldb = col ? k : n, ldc = col ? m : n;
  if constexpr (std::is_same<T, float>::value)
    cblas_sgemm(order, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, o.A(s), lda, o.B(s), ldb, 0.0f, o.C(s), ldc);
  if constexpr (std::is_same<T, double>::value)
    cblas_dgemm(order, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, o.A(s), lda, o.B(s), ldb, 0.0, o.C(s), ldc);
#if defined(TILEKIT_BENCH_HAVE_OPENBLAS_SBGEMM)
  if constexpr (std::is_same<T, bf16>::value) {
    static_assert(sizeof(bfloat16) == sizeof(bf16), "OpenBLAS bfloat16 is the bf16 bits");
    cblas_sbgemm(order, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, reinterpret_cast<const bfloat16*>(o.A(s)),
                 lda, reinterpret_cast<const bfloat16*>(o.B(s)), ldb, 0.0f, o.CF(s), ldc);
    if (act != Activation::none) activation_pass(o.CF(s), o.M * o.N, act);
    return;
  }
#endif
  if (act != Activation::none) activation_pass(o.C(s), o.M * o.N, act);
}
#endif

// ---- result check ------------------------------------------------------------------------------

/// Compares 16 entries of C (set s; corners and pseudo-random ones) with sums in double on the host,
/// recomputing A and B from the generator, so even 9728x8192x65536 is checked in O(16 K).
/// Returns the relative error over the samples (2-norm); sets `tol` to tilekit's bound for the type.
template <class T>
double spot_check(const Operands<T>& o, int s, Activation act, Math math, double& tol, bool f32_out = false,
                  bool bias = false) {
  constexpr int P = 16;
  Kokkos::View<int64_t*> idx("bench::check_idx", P);
  Kokkos::View<double*> got("bench::check_got", P);
  auto idx_h = Kokkos::create_mirror_view(idx);
  for (int p = 0; p < P; ++p) {
    const uint64_t r = splitmix64(0xc0ffee + p);
    int64_t i = static_cast<int64_t>(r % static_cast<uint64_t>(o.M));
    int64_t j = static_cast<int64_t>((r >> 32) % static_cast<uint64_t>(o.N));
    if (p == 0) i = j = 0;
    if (p == 1) i = o.M - 1, j = o.N - 1;
    idx_h(p) = i + j * o.M;  // (i, j); the offset in C is taken in the gather below
  }
  Kokkos::deep_copy(idx, idx_h);
  const out_type<T>* c = o.C(s);
  const float* cf = f32_out ? o.CF(s) : nullptr;  // cblas_sbgemm's f32 output
  const Storage st = storage();
  const int64_t M = o.M, N = o.N;
  const bool c_col = st.c_col;
  Kokkos::parallel_for(
      "tilekit::bench::gather", Kokkos::RangePolicy<ES>(0, P), KOKKOS_LAMBDA(int p) {
        const int64_t i = idx(p) % M, j = idx(p) / M;
        const int64_t at = c_col ? i + j * M : i * N + j;
        got(p) = cf ? double(cf[at]) : convert<double>(c[at]);
      });
  auto got_h = Kokkos::create_mirror_view(got);
  Kokkos::deep_copy(got_h, got);
  tol = matmul_tolerance(TypeTraits<T>::dtype, f32_out ? DType::f32 : TypeTraits<out_type<T>>::dtype, o.K, math);
  double d2 = 0.0, r2 = 0.0;
  const uint64_t off_a = static_cast<uint64_t>(s) * o.M * o.K, off_b = static_cast<uint64_t>(s) * o.K * o.N;
  for (int p = 0; p < P; ++p) {
    const int64_t i = idx_h(p) % o.M, j = idx_h(p) / o.M;
    double ref = 0.0;
    for (int64_t k = 0; k < o.K; ++k)
      ref += convert<double>(random_value<T>(kSeedA, off_a + Storage::at(st.a_col, i, k, o.M, o.K))) *
             convert<double>(random_value<T>(kSeedB, off_b + Storage::at(st.b_col, k, j, o.K, o.N)));
    if (bias) ref += convert<double>(random_value<typename TypeTraits<T>::compute>(kSeedBias, uint64_t(j)));
    ref = activate(act, ref);
    const double v = got_h(p);
    if (!(v - v == 0.0)) return INFINITY;  // NaN or inf
    d2 += (v - ref) * (v - ref);
    r2 += ref * ref;
  }
  return r2 > 0.0 ? std::sqrt(d2 / r2) : (d2 == 0.0 ? 0.0 : INFINITY);
}

// ---- the benchmark -----------------------------------------------------------------------------

template <class T>
void bm_matmul(benchmark::State& state, const Shape& shape, const Series& series, Math math) {
  using TOut = out_type<T>;
  const std::string dt = type_name<T>(math);
  const std::string key = "matmul/" + dt + "/" + series.name;
  const double flops = 2.0 * double(shape.M) * double(shape.N) * double(shape.K);
  const int warmup = options().warmup;
  const std::string skip = over_budget(key, flops, warmup + static_cast<int>(state.max_iterations));
  if (!skip.empty()) {
    state.SkipWithError(skip.c_str());
    return;
  }

  const double set_bytes =
      double(shape.M * shape.K + shape.K * shape.N) * sizeof(T) + double(shape.M * shape.N) * sizeof(TOut);
  if (series.impl == Impl::copy) {
    // The memory-bound floor of the shape: Kokkos::deep_copy moving the bytes a matmul must move
    // (A and B read once, C written once: set_bytes in all, half read and half written). Its rate is
    // counted as 2 M N K per run like every series, so tilekit's rate over this one is the copy
    // time over tilekit's time (0.5: tilekit takes twice the copy time of its bytes).
    const int64_t n = std::max<int64_t>(int64_t(set_bytes / 2 / sizeof(T)), 1);
    const int copy_sets = rotation_count(double(2 * n) * sizeof(T));
    const int copy_warmup = warmup_runs(copy_sets);
    Kokkos::View<T*> src(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::copy_src"), copy_sets * n);
    Kokkos::View<T*> dst(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::copy_dst"), copy_sets * n);
    Kokkos::deep_copy(src, convert<T>(1.0f));
    ES().fence();
    const Samples samples = time_iterations(state, copy_warmup, [&](int64_t i) {
      const int64_t o = (i % copy_sets) * n;
      Kokkos::deep_copy(Kokkos::subview(dst, std::make_pair(o, o + n)), Kokkos::subview(src, std::make_pair(o, o + n)));
    });
    const double rate = set_rate_counters(state, samples, flops, "TFLOPS", 1e-12);
    record_rate(key, rate);
    state.counters["GBps"] = rate > 0 ? set_bytes / (flops / (rate * 1e12)) * 1e-9 : 0.0;
    state.counters["M"] = double(shape.M);
    state.counters["N"] = double(shape.N);
    state.counters["K"] = double(shape.K);
    state.SetLabel("Kokkos::deep_copy of the shape's A + B + C bytes (the memory-bound floor)");
    return;
  }
  const int sets = rotation_count(set_bytes);
  const int warmup_all = warmup_runs(sets);
  Operands<T> ops(shape, sets);
  int last = 0;  // the set the last run wrote

  Samples samples;
  std::string label;
  if (series.impl == Impl::tilekit) {
    const MatmulConfig cfg = series.config ? series.config(shape, TypeTraits<T>::dtype, math) : series.fixed;
    const std::string why = check_matmul(problem(ops, 0, series.act, math, series.bias), cfg);
    if (!why.empty()) {
      state.SkipWithError(("config rejected: " + why).c_str());
      return;
    }
    label = cfg.name();
    samples = time_iterations(state, warmup_all, [&](int64_t i) {
      last = static_cast<int>(i % sets);
      launch_matmul(problem(ops, last, series.act, math, series.bias), cfg);
    });
  } else if (series.impl == Impl::kokkos_kernels) {
    label = "KokkosBlas::gemm (native, no TPL)";
    samples = time_iterations(state, warmup_all, [&](int64_t i) {
      last = static_cast<int>(i % sets);
      kokkos_kernels_run(ops, last);
    });
  } else {
#if defined(TILEKIT_BENCH_HAVE_OPENBLAS)
    label = std::string(std::is_same<T, float>::value ? "cblas_sgemm"
                        : std::is_same<T, bf16>::value ? "cblas_sbgemm (f32 out)"
                                                       : "cblas_dgemm") +
            (series.act != Activation::none ? std::string(" + Kokkos ") + activation_name(series.act) + " pass"
                                            : std::string());
    samples = time_iterations(state, warmup_all, [&](int64_t i) {
      last = static_cast<int>(i % sets);
      openblas_run(ops, last, series.act);
    });
#endif
  }

  const double rate = set_rate_counters(state, samples, flops, "TFLOPS", 1e-12);
  record_rate(key, rate);
  // The fraction of the machine's peak for the type (FMA probe on CPUs, the device's table on GPUs).
  const double peak = tuning::machine_peak(TypeTraits<T>::dtype, math, tuning::TuningCache::default_dir()).flops;
  // rate is FLOP/s on the host clock; GPUs are judged by their events.
  const auto events = state.counters.find("TFLOPS_events");
  const double flop_s = events != state.counters.end() ? double(events->second) * 1e12 : rate;
  if (peak > 0) state.counters["peak_frac"] = flop_s / peak;
  state.counters["M"] = double(shape.M);
  state.counters["N"] = double(shape.N);
  state.counters["K"] = double(shape.K);
  state.counters["buffers"] = sets;
  state.counters["warmup"] = warmup_all;
  state.SetLabel(label);

  double tol = 0.0;
  const bool f32_out = std::is_same<T, bf16>::value && series.impl == Impl::openblas;
  const double err = spot_check(ops, last, series.act, math, tol, f32_out, series.bias);
  state.counters["check_rel_error"] = err;
  if (!(err <= tol)) {
    const std::string msg = "wrong result: relative error " + std::to_string(err) + " over 16 sampled entries " +
                            "exceeds the tolerance " + std::to_string(tol);
    state.SkipWithError(msg.c_str());
    record_failure();
  }
}

template <class T>
void register_type(const Shape& shape, Math math = Math::ieee) {
  const std::string dt = type_name<T>(math);
  const double flops = 2.0 * double(shape.M) * double(shape.N) * double(shape.K);
  for (const Series& s : series_for<T>(math)) {
    const std::string name = "matmul/" + dt + "/" + s.name + "/" + shape.name();
    benchmark::RegisterBenchmark(name.c_str(),
                                 [shape, s, math](benchmark::State& st) { bm_matmul<T>(st, shape, s, math); })
        ->UseManualTime()
        ->Iterations(reps_for(flops))
        ->Unit(benchmark::kMillisecond);
  }
}

/// Square 128..1024 on host backends (2 cores take a while); the GPU list on GPUs.
const char* default_shapes() {
  return is_gpu_space<ES>() ? "128:4096:128,8192,9728x8192x65536@f16" : "128:1024:128";
}

void register_matmul() {
  std::vector<Shape> shapes;
  std::string why;
  const std::string text = options().shapes_text.empty() ? default_shapes() : options().shapes_text;
  if (!parse_shapes(text, shapes, why)) throw std::invalid_argument(why);
  for (const Shape& s : shapes)
    if (s.K == 0) throw std::invalid_argument("matmul: shape '" + s.name() + "' needs three sizes, MxNxK");
  std::vector<std::string> dtypes = options().dtypes;
  if (dtypes.empty()) dtypes = {"f32", "f64", "f16"};
  for (const auto& dt : dtypes)
    if (dt != "f32" && dt != "f64" && dt != "f16" && dt != "bf16" && dt != "i8" && dt != "tf32")
      throw std::invalid_argument("matmul: unknown dtype '" + dt + "' (allowed: f32, f64, f16, bf16, i8, tf32)");
  for (const auto& name : options().configs) {
    MatmulConfig cfg;
    if (!MatmulConfig::parse(name, cfg, why))
      throw std::invalid_argument("matmul: --tk_configs entry '" + name + "' is not a config: " + why);
  }

  // Shape-major order: a series' previous shape gives the rate the time budget judges it by.
  for (const Shape& s : shapes)
    for (const auto& dt : dtypes) {
      if (!s.wants(dt)) continue;
      if (dt == "f32") register_type<float>(s);
      if (dt == "f64") register_type<double>(s);
      if (dt == "f16") register_type<f16>(s);
      if (dt == "bf16") register_type<bf16>(s);
      if (dt == "i8") register_type<int8_t>(s);
      if (dt == "tf32") register_type<float>(s, Math::tf32);
    }

  benchmark::AddCustomContext("matmul_shapes", text);
  std::string dl;
  for (const auto& dt : dtypes) dl += (dl.empty() ? "" : ",") + dt;
  benchmark::AddCustomContext("matmul_dtypes", dl);
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::i8})
    benchmark::AddCustomContext(std::string("matmul_config_default_") + dtype_name(t),
                                tuning::default_matmul_config(backend_name(), t).name());
  benchmark::AddCustomContext("matmul_config_default_tf32",
                              tuning::default_matmul_config(backend_name(), DType::f32, Math::tf32).name());
  const std::string order = options().layout == "row"      ? "row-major A (MxK), B (KxN), C (MxN)"
                            : options().layout == "kmajor" ? "row-major A (MxK), column-major B (KxN): both "
                                                             "K-contiguous; row-major C (MxN)"
                                                           : "column-major A (MxK), B (KxN), C (MxN)";
  benchmark::AddCustomContext("matmul_layout", options().layout);
  benchmark::AddCustomContext("matmul_operands", order +
                                                     "; alpha 1, beta 0; uniform random in [-1, 1) from "
                                                     "tilekit/kernels/core/fill.hpp (seeds 1, 2); f16 "
                                                     "accumulates in f32");
  benchmark::AddCustomContext("matmul_activation",
                              std::string(activation_name(kActivation)) +
                                  " (slope 0.01): fused into tilekit's epilogue; a separate Kokkos pass over C "
                                  "after the vendor gemm. tilekit:auto+bias+gelu: a per-column bias (random, "
                                  "seed 4) and gelu (tanh form) fused");
  benchmark::AddCustomContext("matmul_kokkos_kernels",
                              "KokkosBlas::gemm " + kokkos_kernels_version() +
                                  ", native (no TPL); f32 and f64 only (Kokkos Kernels has no f16 gemm)");
#if defined(TILEKIT_BENCH_HAVE_OPENBLAS)
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext("openblas_num_threads", std::to_string(openblas_get_num_threads()));
#if defined(TILEKIT_BENCH_HAVE_OPENBLAS_SBGEMM)
  benchmark::AddCustomContext("openblas_sbgemm", "cblas_sbgemm: the bf16 series");
#else
  benchmark::AddCustomContext("openblas_sbgemm",
                              "not exported by this OpenBLAS (built without BUILD_BFLOAT16): no bf16 vendor series");
#endif
#endif
}

}  // namespace matmul_suite

TILEKIT_BENCH_SUITE(matmul, &matmul_suite::register_matmul);

}  // namespace bench
}  // namespace tilekit
