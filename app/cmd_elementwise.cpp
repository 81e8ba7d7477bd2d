// tilekit elementwise M N [options]: allocate, fill with random data, run an op, time it in GB/s next
// to a Kokkos::deep_copy of the same byte count, optionally validate against the host reference.
#include "app/commands.hpp"
#include "tilekit/kernels/elementwise/elementwise.hpp"
#include "tilekit/tuning/elementwise_tuner.hpp"
#include "tilekit/kernels/elementwise/validation.hpp"
#include "tilekit/kernels/core/fill.hpp"
#include "tilekit/kernels/core/memory.hpp"
#include "tilekit/kernels/core/runtime.hpp"
#include "tilekit/tuning/elementwise_defaults.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <vector>

namespace tilekit::app {

namespace {

struct ElementwiseOpts {
  int64_t M = 0, N = 0;
  std::string op = "add";
  std::string dtype = "f32";
  std::string variant = "auto";
  std::string config;  // a full or partial config name; overrides the variant's defaults
  int inputs = 0;      // 0: the op's arity
  std::string layout = "row";
  int64_t ld = 0;  // 0: tight
  std::string last_shape;  // "RxC"; default MxN
  double alpha = 1.0, beta = 1.0;
  int reps = 20, warmup = 3, buffers = 0;  // buffers 0: automatic
  bool check = false, json = false, verbose = false;
  uint64_t seed = 42;
};

constexpr int64_t kMaxElems = int64_t(1) << 40;
// Automatic rotation: enough buffer sets that the operands of consecutive runs span at least this
// many bytes (more than the last-level cache of the CPUs and GPUs we run on), at most kMaxSets.
constexpr double kRotationBytes = 256.0 * 1024 * 1024;
constexpr int kMaxSets = 16;

int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > kMaxElems)
    throw InvalidArgument(fmt::format("{} = {} x {} is too large (limit 2^40 elements)", what, a, b));
  return r;
}

/// Storage of one operand of rows x cols, row- or column-major, leading dimension ld (0 = tight).
struct Storage {
  int64_t rows, cols, rs, cs, elems;
};

Storage make_storage(int64_t rows, int64_t cols, bool row_major, int64_t ld) {
  const int64_t lead = ld != 0 ? ld : std::max<int64_t>(row_major ? cols : rows, 1);
  Storage s{rows, cols, row_major ? lead : 1, row_major ? 1 : lead, 0};
  s.elems = (rows == 0 || cols == 0) ? 0 : checked_mul(row_major ? rows : cols, lead, "operand storage");
  return s;
}

template <class T>
StridedMatrix<T> over(T* data, const Storage& s) {
  return {data, s.rows, s.cols, s.rs, s.cs};
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class T>
int run_typed(const ElementwiseOpts& o, OpKind kind) {
  using ES = Kokkos::DefaultExecutionSpace;
  const RuntimeInfo info = runtime_info();
  if (!info.optimized) fmt::print(stderr, "{}\n", unoptimized_build_warning(info));
  if (o.verbose) print_binding_note();
  const OpInfo& opi = op_info(kind);
  const int nin = o.inputs == 0 ? opi.arity : o.inputs;
  const int64_t elems = checked_mul(o.M, o.N, "M x N");

  // --- config: the variant's default for this backend, then any fields --config names
  ElementwiseVariant variant;
  if (!parse_variant(o.variant, variant))
    throw InvalidArgument(fmt::format("unknown --variant '{}' (allowed: naive, vectorized, tiled, auto)", o.variant));
  ElementwiseConfig cfg = tuning::default_elementwise_config(info.backend, TypeTraits<T>::dtype, variant);
  std::string config_source = variant == ElementwiseVariant::automatic
                                  ? fmt::format("auto: default for {}", info.backend)
                                  : fmt::format("default {} config for {}", o.variant, info.backend);
  if (!o.config.empty()) {
    // Fields the name leaves out come from the default config of the variant it names.
    std::string why;
    ElementwiseConfig named;
    if (!ElementwiseConfig::parse(o.config, named, why)) throw InvalidArgument(why);
    cfg = tuning::default_elementwise_config(info.backend, TypeTraits<T>::dtype, named.variant);
    ElementwiseConfig::parse(o.config, cfg, why);
    config_source = "given";
  }
  const bool tuned_auto = variant == ElementwiseVariant::automatic && o.config.empty();  // resolved below
  cfg = resolve_elementwise_config(cfg, TypeTraits<T>::dtype);

  // --- operands: every input M x N except a broadcast last input (--last-shape)
  const bool row_major = o.layout == "row";
  int64_t last_rows = o.M, last_cols = o.N;
  if (!o.last_shape.empty()) {
    const std::string why = parse_shape(o.last_shape, last_rows, last_cols);
    if (!why.empty()) throw InvalidArgument("--last-shape " + why);
  }
  const int64_t tight = std::max<int64_t>(row_major ? o.N : o.M, 1);
  if (o.ld != 0 && o.ld < tight)
    throw InvalidArgument(fmt::format("--ld {} is smaller than the {}x{} {}-major operands need ({})", o.ld, o.M, o.N,
                                      o.layout, tight));
  std::vector<Storage> in_store;
  for (int k = 0; k < nin; ++k) {
    const bool last = k == nin - 1;
    const bool full = !last || (last_rows == o.M && last_cols == o.N);
    in_store.push_back(make_storage(last ? last_rows : o.M, last ? last_cols : o.N, row_major, full ? o.ld : 0));
  }
  const Storage out_store = make_storage(o.M, o.N, row_major, o.ld);

  // --- buffers: `sets` copies of every operand, used in turn so that runs do not hit in cache
  const double bytes = double(nin + 1) * double(elems) * double(sizeof(T));  // the definition
  double set_bytes = double(out_store.elems) * sizeof(T);
  for (const auto& s : in_store) set_bytes += double(s.elems) * sizeof(T);
  int sets = o.buffers;
  if (sets == 0)
    sets = set_bytes <= 0 ? 1 : static_cast<int>(std::min<double>(kMaxSets, std::ceil(kRotationBytes / set_bytes)));
  sets = std::max(sets, 1);

  // Size the problem before allocating it: refused with both numbers (exit 4) rather than thrashing.
  require_memory(fmt::format("elementwise {}x{} {} {}", o.M, o.N, opi.name, dtype_name(TypeTraits<T>::dtype)),
                 {{fmt::format("{} operand set{}", sets, sets == 1 ? "" : "s"), double(sets) * set_bytes},
                  {"the copy it is compared with", 2.0 * double(static_cast<int64_t>(bytes / 2))},
                  {"--check's host copies", o.check ? 2.0 * set_bytes : 0.0}},
                 memory_available());

  // Set 0 first, then the check (a shape mismatch or bad config stops here), then the other sets.
  std::vector<std::vector<Kokkos::View<T*>>> in_views(sets);
  std::vector<Kokkos::View<T*>> out_views;
  uint64_t seed = o.seed;
  auto allocate_set = [&](int s) {
    for (int k = 0; k < nin; ++k) {
      in_views[s].emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, fmt::format("in{}_{}", k, s)),
                               in_store[k].elems);
      fill_random(in_views[s][k].data(), in_store[k].elems, seed++);
    }
    out_views.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, fmt::format("out_{}", s)), out_store.elems);
    fill_random(out_views[s].data(), out_store.elems, seed++);
  };
  auto inputs_of = [&](int s) {
    std::vector<StridedMatrix<const T>> v;
    for (int k = 0; k < nin; ++k) v.push_back(over<const T>(in_views[s][k].data(), in_store[k]));
    return v;
  };
  const OpScalars scalars{o.alpha, o.beta};
  allocate_set(0);
  if (tuned_auto) {
    // auto: the tuned config of this op/type/shape (exact, then nearest) that fits this problem,
    // else the default.
    std::string source, why;
    std::vector<std::string> warnings;
    const auto fits = [&](const ElementwiseConfig& c) {
      return check_op<T>(kind, scalars, inputs_of(0), over<T>(out_views[0].data(), out_store),
                         resolve_elementwise_config(c, TypeTraits<T>::dtype));
    };
    cfg = tuning::resolve_tuned_elementwise(kind, TypeTraits<T>::dtype, o.M, o.N, source, why, "", "", fits, &warnings);
    cfg = resolve_elementwise_config(cfg, TypeTraits<T>::dtype);
    for (const auto& w : warnings) fmt::print(stderr, "warning: {}\n", w);
    config_source = "auto: " + source;
    if (o.verbose) fmt::print(stderr, "variant auto -> {} ({}): {}\n", cfg.name(), source, why);
  }
  {
    const std::string why = check_op<T>(kind, scalars, inputs_of(0), over<T>(out_views[0].data(), out_store), cfg);
    if (!why.empty()) throw InvalidArgument(why);
  }
  for (int s = 1; s < sets; ++s) allocate_set(s);

  // --- time the op: warm-up, then reps, each ended by a fence; median
  std::vector<double> times;
  ES().fence();
  for (int r = 0; r < o.warmup + o.reps; ++r) {
    const int s = r % sets;
    const auto in = inputs_of(s);
    const auto out = over<T>(out_views[s].data(), out_store);
    Kokkos::Timer timer;
    launch_op<T>(kind, scalars, in, out, cfg);
    ES().fence();
    if (r >= o.warmup) times.push_back(timer.seconds());
  }
  const double median = median_of(times);
  const double gbps = median > 0 ? bytes / median * 1e-9 : 0.0;

  // --- the same bytes through Kokkos::deep_copy: half read, half written, same rotation
  const int64_t copy_half = static_cast<int64_t>(bytes / 2);
  std::vector<Kokkos::View<unsigned char*>> csrc, cdst;
  for (int s = 0; s < sets; ++s) {
    csrc.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_src"), copy_half);
    cdst.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_dst"), copy_half);
    Kokkos::deep_copy(csrc[s], static_cast<unsigned char>(s + 1));  // touched, not zeros
  }
  std::vector<double> copy_times;
  ES().fence();
  for (int r = 0; r < o.warmup + o.reps; ++r) {
    const int s = r % sets;
    Kokkos::Timer timer;
    Kokkos::deep_copy(cdst[s], csrc[s]);
    ES().fence();
    if (r >= o.warmup) copy_times.push_back(timer.seconds());
  }
  csrc.clear();
  cdst.clear();
  const double copy_median = median_of(copy_times);
  const double copy_gbps = copy_median > 0 ? 2.0 * double(copy_half) / copy_median * 1e-9 : 0.0;
  const double ratio = copy_gbps > 0 ? gbps / copy_gbps : 0.0;

  // --- check set 0 (every run computes the same values) against the host reference
  ElementwiseComparison cmp;
  if (o.check) {
    std::vector<typename Kokkos::View<T*>::HostMirror> hin;
    std::vector<StridedMatrix<const T>> host_in;
    for (int k = 0; k < nin; ++k) {
      hin.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in_views[0][k]));
      host_in.push_back(over<const T>(hin.back().data(), in_store[k]));
    }
    auto hout = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out_views[0]);
    const std::vector<T> ref = reference_elementwise<T>(kind, scalars, host_in, o.M, o.N);
    cmp = compare_elementwise<T>(kind, over<const T>(hout.data(), out_store), ref);
  }

  const std::string tname = dtype_name(TypeTraits<T>::dtype);
  const std::string last_desc = fmt::format("{}x{}", last_rows, last_cols);
  if (o.json) {
    std::vector<double> times_us, copy_us;
    for (double t : times) times_us.push_back(t * 1e6);
    for (double t : copy_times) copy_us.push_back(t * 1e6);
    nlohmann::json j = {{"M", o.M}, {"N", o.N}, {"op", opi.name}, {"inputs", nin}, {"dtype", tname},
                        {"backend", info.backend}, {"device", info.device}, {"variant", variant_name(cfg.variant)},
                        {"config", cfg.name()}, {"config_source", config_source}, {"layout", o.layout},
                        {"ld", o.ld}, {"last_input_shape", last_desc}, {"reps", o.reps}, {"buffer_sets", sets},
                        {"bytes", bytes}, {"median_us", median * 1e6}, {"times_us", times_us}, {"gbps", gbps},
                        {"copy_median_us", copy_median * 1e6}, {"copy_times_us", copy_us},
                        {"copy_gbps", copy_gbps}, {"ratio_to_copy", ratio}};
    if (kind == OpKind::axpby) j["alpha"] = o.alpha, j["beta"] = o.beta;
    if (o.check)
      j["check"] = {{"oracle", "host reference"}, {"exact", cmp.exact}, {"tolerance", cmp.tolerance},
                    {"elements", cmp.elements}, {"mismatches", cmp.mismatches},
                    {"max_rel_error", cmp.max_rel_error}, {"pass", cmp.pass()}};
    std::cout << j.dump(2) << "\n";
  } else {
    fmt::print("tilekit elementwise  M={} N={}  op={} ({}), {} input{}  {}\n", o.M, o.N, opi.name, opi.formula, nin,
               nin == 1 ? "" : "s", tname);
    fmt::print("backend   {} ({} threads/lanes)  device: {}\n", info.backend, info.concurrency, info.device);
    fmt::print("config    {} ({})\n", cfg.name(), config_source);
    fmt::print("operands  {}-major{}; last input {}{}\n", o.layout, o.ld ? fmt::format(", ld {}", o.ld) : "",
               last_desc, kind == OpKind::axpby ? fmt::format("; alpha={} beta={}", o.alpha, o.beta) : "");
    if (!times.empty())
      fmt::print("time      median {:.1f} us over {} reps (min {:.1f}, max {:.1f}); {} buffer set{} of {:.1f} MB in turn\n",
                 median * 1e6, times.size(), *std::min_element(times.begin(), times.end()) * 1e6,
                 *std::max_element(times.begin(), times.end()) * 1e6, sets, sets == 1 ? "" : "s", set_bytes * 1e-6);
    fmt::print("rate      {:.2f} GB/s  (bytes = ({} inputs + 1) x {} elements x {} B = {:.1f} MB)\n", gbps, nin, elems,
               sizeof(T), bytes * 1e-6);
    fmt::print("copy      Kokkos::deep_copy of the same {:.1f} MB (half read, half written): median {:.1f} us, "
               "{:.2f} GB/s\n",
               2.0 * double(copy_half) * 1e-6, copy_median * 1e6, copy_gbps);
    fmt::print("ratio     {:.3f} of the copy bandwidth\n", ratio);
    if (o.check) {
      if (cmp.exact)
        fmt::print("check     bit-exact vs host reference: {} ({} of {} elements differ)\n", cmp.pass() ? "PASS" : "FAIL",
                   cmp.mismatches, cmp.elements);
      else
        fmt::print("check     vs host reference within {:.3e} relative: {} ({} of {} elements outside; max rel error "
                   "{:.3e})\n",
                   cmp.tolerance, cmp.pass() ? "PASS" : "FAIL", cmp.mismatches, cmp.elements, cmp.max_rel_error);
      if (!cmp.pass())
        fmt::print("          first at ({}, {}): got {} expected {}\n", cmp.first_i, cmp.first_j, cmp.first_got,
                   cmp.first_ref);
    }
  }
  return cmp.pass() ? 0 : 1;
}

int dispatch(const ElementwiseOpts& o) {
  OpKind kind;
  if (!parse_op(o.op, kind)) throw InvalidArgument(fmt::format("unknown --op '{}' (allowed: {})", o.op, op_names()));
  const OpInfo& opi = op_info(kind);
  if (o.inputs != 0 && o.inputs != opi.arity)
    throw InvalidArgument(fmt::format("op '{}' ({}) takes {} input{} (got --inputs {})", opi.name, opi.formula,
                                      opi.arity, opi.arity == 1 ? "" : "s", o.inputs));
  DType t;
  if (!parse_dtype(o.dtype, t) || t == DType::i8)
    throw InvalidArgument(fmt::format("unknown --dtype '{}' for elementwise (allowed: f64, f32, f16, bf16, i32)", o.dtype));
  if (opi.floating_only && t == DType::i32)
    throw InvalidArgument(fmt::format("op '{}' needs a floating-point type (got i32; allowed: f64, f32, f16, bf16)",
                                      opi.name));
  switch (t) {
    case DType::f64: return run_typed<double>(o, kind);
    case DType::f32: return run_typed<float>(o, kind);
    case DType::f16: return run_typed<f16>(o, kind);
    case DType::bf16: return run_typed<bf16>(o, kind);
    default: return run_typed<int32_t>(o, kind);
  }
}

}  // namespace

Runner add_elementwise(CLI::App& app) {
  auto o = std::make_shared<ElementwiseOpts>();
  app.add_option("M", o->M, "rows of the output")->required()->check(size_validator());
  app.add_option("N", o->N, "columns of the output")->required()->check(size_validator());
  app.add_option("--op", o->op, "op: " + op_names())->capture_default_str()
      ->check(word_validator("an op name, e.g. add, fma, silu"));
  app.add_option("--dtype", o->dtype, "element type: f64, f32, f16, bf16, i32")->capture_default_str()
      ->check(word_validator("f64, f32, f16, bf16, i32"));
  app.add_option("--variant", o->variant, "naive, vectorized, tiled, or auto (the backend's default)")
      ->capture_default_str()
      ->check(word_validator("naive, vectorized, tiled, auto"));
  app.add_option("--config", o->config,
                 "config name, whole or in part (fields left out: the named variant's default), e.g. "
                 "tiled_r8_c32 or tiled_vb16_r16_c1_t256_n64_remap; overrides --variant")
      ->check(word_validator("a config name, e.g. tiled_r8_c32 (leave --config out for the --variant's)"));
  app.add_option("--inputs", o->inputs, "number of inputs (default: the op's arity)")
      ->check(whole_validator(0, 4, "an input count (0 = the op's arity)"));
  app.add_option("--layout", o->layout, "storage of every operand: row or col")
      ->check(CLI::IsMember({"row", "col"}))
      ->capture_default_str();
  app.add_option("--ld", o->ld, "leading dimension of the MxN operands (0 = tight; more pads every row)")
      ->check(ld_validator());
  app.add_option("--last-shape", o->last_shape,
                 "shape RxC of the last input, broadcast to MxN: 1xN (row vector, bias add), Mx1, 1x1 (default MxN)")
      ->check(nonempty_validator("a shape RxC: 1xN, Mx1, 1x1 or MxN"));
  app.add_option("--alpha", o->alpha, "axpby: alpha")->check(finite_validator())->capture_default_str();
  app.add_option("--beta", o->beta, "axpby: beta")->check(finite_validator())->capture_default_str();
  app.add_option("--reps", o->reps, "timed repetitions")
      ->check(whole_validator(1, 100000, "a repetition count"))
      ->capture_default_str();
  app.add_option("--warmup", o->warmup, "untimed warm-up runs")
      ->check(whole_validator(0, 100000, "a warm-up count"))
      ->capture_default_str();
  app.add_option("--buffers", o->buffers,
                 "operand sets used in turn (0 = enough for 256 MiB of operands, at most 16)")
      ->check(whole_validator(0, 1024, "a buffer-set count"))
      ->capture_default_str();
  app.add_option("--seed", o->seed, "random seed of the inputs")->check(seed_validator())->capture_default_str();
  app.add_flag("--check", o->check,
               "validate against the host reference: bit for bit, or within the stated tolerance for silu");
  app.add_flag("--json", o->json, "print JSON instead of text");
  app.add_flag("-v,--verbose", o->verbose, "say which config --variant auto chose, and why");
  return [o]() { return dispatch(*o); };
}

}  // namespace tilekit::app
