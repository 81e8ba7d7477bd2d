// tilekit tune matmul: sweep the search space for a list of shapes, verify every candidate, keep
// the best per shape in the tuning cache, and report (table, CSV + JSON of every candidate, plot).
#include "app/commands.hpp"
#include "app/svg_plot.hpp"
#include "app/tune_sweep.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/core/memory.hpp"
#include "tilekit/kernels/core/runtime.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"
#include "tilekit/tuning/matmul_tuner.hpp"
#include "tilekit/tuning/elementwise_tuner.hpp"
#include "tilekit/tuning/sweep_journal.hpp"
#include "tilekit/tuning/vendor_blas.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace tilekit::app {

namespace {

struct TuneOpts {
  std::string sizes = "256:1024:256";
  std::string dtype = "f32", out_dtype;
  std::string math = "ieee";  // f32 inputs: ieee or tf32
  std::string layout_a = "row", layout_b = "row", layout_c = "row";
  std::string epilogue = "none";
  std::string strategy = "exhaustive";
  int budget = 0;
  double seconds = 0;
  uint64_t seed = 1;
  int reps = 7, warmup = 2;
  std::string out;    // report directory
  std::string cache;  // cache directory
  bool no_baselines = false, no_cache = false, quiet = false;
  std::vector<std::string> also;  // configs to try besides the strategy's picks
  double tie_tolerance = 0.02;
};

}  // namespace

namespace {
// Why a file or directory cannot be created, in words: the C library's text for ENOENT ("No such
// file or directory") is misleading for a directory that exists on a file system that takes no new
// files (/proc, /sys).
std::string cannot_create(int err) {
  switch (err) {
    case ENOENT: return "the file system there does not take new files (e.g. /proc or /sys)";
    case EACCES:
    case EPERM: return "permission denied";
    case EROFS: return "the file system is read-only";
    case ENOSPC: return "the disk is full";
    case EDQUOT: return "the disk quota is used up";
    case ENOTDIR: return "a part of the path is a file, not a directory";
    case ENAMETOOLONG: return "the path is too long";
    default: return std::strerror(err);
  }
}
}  // namespace

void require_writable_directory(const std::string& option, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p = dir.empty() ? fs::path(".") : fs::path(dir);
  fs::create_directories(p, ec);
  if (ec || !fs::is_directory(p, ec))
    throw InvalidArgument(fmt::format("{} '{}' cannot be used as a directory: {} (give a directory you can write)",
                                      option, dir, ec ? cannot_create(ec.value()) : "it is not a directory"));
  const fs::path probe = p / fmt::format(".tilekit-write-test-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_EXCL, 0644);
  if (fd < 0)
    throw InvalidArgument(fmt::format("{} '{}' is not writable: {} (give a directory you can write)", option, dir,
                                      cannot_create(errno)));
  ::close(fd);
  fs::remove(probe, ec);
}

namespace {

// --sizes as shapes ({M, N, K}; K = 1 for rank 2), or InvalidArgument naming the bad item.
std::vector<std::array<int64_t, 3>> sizes_or_throw(const std::string& text, int rank) {
  std::vector<std::array<int64_t, 3>> out;
  const std::string why = parse_sizes(text, rank, out);
  if (!why.empty()) throw InvalidArgument(why);
  return out;
}

// A cache directory that cannot be written does not stop a sweep (it measures and reports): said
// before measuring, and again at the end with where the results are.
std::string cache_not_writable(const tuning::TuningCache* cache) {
  if (!cache) return "";
  try {
    require_writable_directory("--cache", std::filesystem::path(cache->path()).parent_path().string());
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

// The end of a sweep: where the results are, and what could not be stored. Exit status 4 when a
// finished shape could not be stored (README: a resource, the file system), 1 when no shape had a
// verified candidate, else 0.
int finish_sweep(const tuning::TuningCache* cache, std::size_t warned, const std::string& out_dir,
                 const std::vector<std::string>& errors, int shapes_with_best, int shapes) {
  if (cache)  // warnings since open_cache printed its own (a file set aside while storing)
    for (std::size_t i = warned; i < cache->warnings().size(); ++i)
      fmt::print(stderr, "warning: {}\n", cache->warnings()[i]);
  const bool stored = cache && errors.empty();
  fmt::print("\nwrote {0}/candidates.csv, {0}/candidates.json, {0}/plot.svg{1}\n", out_dir,
             stored && shapes_with_best > 0 ? fmt::format("; best configs stored in {}", cache->path()) : "");
  if (!errors.empty()) {
    fmt::print(stderr,
               "error: the best configs could not be stored in the tuning cache {} ({}); they are in "
               "{}/candidates.json (run again with a writable --cache)\n",
               cache->path(), errors.front(), out_dir);
    return 4;
  }
  if (shapes_with_best == 0 && shapes > 0) {
    fmt::print(stderr, "error: no candidate passed verification for any shape; nothing was stored\n");
    return 1;
  }
  return 0;
}

std::string shape_str(const std::array<int64_t, 3>& s) { return fmt::format("{}x{}x{}", s[0], s[1], s[2]); }

// A one-line progress bar on a terminal: done/total, ETA, best so far.
struct ProgressBar {
  bool enabled;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  explicit ProgressBar(bool on) : enabled(on && ::isatty(STDERR_FILENO)) {}
  void operator()(int done, int total, const std::string& best) const {
    if (!enabled) return;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = done > 0 ? el / done * (total - done) : 0.0;
    const int width = 30, filled = total > 0 ? width * done / total : width;
    fmt::print(stderr, "\r[{}{}] {}/{}  ETA {:.0f}s  best {}\033[K", std::string(filled, '#'),
               std::string(width - filled, '.'), done, total, eta, best.empty() ? "-" : best);
    if (done == total) fmt::print(stderr, "\n");
  }
};

// The tuning cache of this device in `dir` (default dir when empty), loaded; null with --no-cache.
// Only the leader loads (and, if corrupt, sets aside) the file: the other ranks of a sweep only
// need its path, for their journal.
std::unique_ptr<tuning::TuningCache> open_cache(bool no_cache, const std::string& dir, bool load = true,
                                                const tuning::DeviceIdentity& device = tuning::DeviceIdentity::current()) {
  if (no_cache) return nullptr;
  const std::string folder = dir.empty() ? tuning::TuningCache::default_dir() : dir;
  auto cache = std::make_unique<tuning::TuningCache>((std::filesystem::path(folder) / device.file_name()).string(), device);
  if (!load) return cache;
  cache->load();
  for (const auto& w : cache->warnings()) fmt::print(stderr, "warning: {}\n", w);
  return cache;
}

nlohmann::json sweep_json(const SweepOutcome& s) {
  nlohmann::json missing = nlohmann::json::array();
  for (const auto& m : s.missing) missing.push_back({{"shape", m.shape}, {"config", m.config}, {"rank", m.rank}});
  return {{"id", s.id}, {"ranks", s.ranks}, {"pairs", s.pairs}, {"measured_now", s.measured_now},
          {"from_earlier_runs", s.from_earlier_runs}, {"duplicates", s.duplicates}, {"missing", missing},
          {"stopped", s.stopped}, {"journal", s.journal}, {"rank_info", s.rank_info}};
}

// Says what an unfinished sweep lacks, candidate by candidate; true when something is missing.
bool print_unfinished(const SweepOutcome& s) {
  for (const auto& why : s.stopped) fmt::print(stderr, "error: stopped early: {}\n", why);
  if (s.missing.empty()) return !s.stopped.empty();
  fmt::print(stderr, "sweep {}: {} of {} candidates have no result (missing):\n", s.id, s.missing.size(), s.pairs);
  for (const auto& m : s.missing)
    fmt::print(stderr, "  missing {} {}{}\n", shape_str(m.shape), m.config,
               m.rank >= 0 ? fmt::format(" (dealt to rank {})", m.rank) : "");
  fmt::print(stderr, "{}\n", s.journal.empty()
                                 ? std::string("(no journal: --no-cache) re-run the sweep to measure them")
                                 : fmt::format("what finished is kept in {}; the winners of complete shapes are in the "
                                               "cache; re-run the same command to measure only the missing candidates",
                                               s.journal));
  return true;
}

int run_tune_matmul(const TuneOpts& o) {
  using namespace tuning;
  MatmulTuneRequest req;
  req.shapes = sizes_or_throw(o.sizes, 3);
  if (!parse_dtype(o.dtype, req.in) || req.in == DType::i32)
    throw InvalidArgument(fmt::format("unknown --dtype '{}' (allowed: f64, f32, f16, bf16, i8)", o.dtype));
  const std::string out_name = o.out_dtype.empty() ? dtype_name(default_out_dtype(req.in)) : o.out_dtype;
  if (!parse_dtype(out_name, req.out))
    throw InvalidArgument(fmt::format("unknown --out-dtype '{}' (allowed pairs: {})", out_name, supported_type_pairs()));
  with_type_pair(req.in, req.out, [](auto, auto) { return 0; });  // rejects unsupported pairs
  req.math = o.math == "tf32" ? Math::tf32 : Math::ieee;  // CLI11 allowed only ieee, tf32
  if (req.math == Math::tf32 && req.in != DType::f32)
    throw InvalidArgument(fmt::format("--math tf32 applies to --dtype f32 only (got --dtype {}); use --math ieee",
                                      o.dtype));
  std::string why;
  if (!Epilogue::parse(o.epilogue, req.epilogue, why)) throw InvalidArgument(why);
  // The kernel's own rule (check_matmul), said before a sweep in which no candidate could run.
  if (req.in == DType::i8 && req.epilogue.act != Activation::none && req.epilogue.act != Activation::relu)
    throw InvalidArgument(fmt::format("--epilogue '{}': activation '{}' needs a floating-point accumulator; for {} "
                                      "inputs allowed: none, bias, relu, bias+relu",
                                      o.epilogue, activation_name(req.epilogue.act), dtype_name(req.in)));
  if (!parse_strategy(o.strategy, req.strategy))
    throw InvalidArgument(
        fmt::format("unknown --strategy '{}' (allowed: exhaustive, random, listed, model)", o.strategy));
  if (req.strategy == Strategy::model && backend_name() != std::string("cuda"))
    throw InvalidArgument(fmt::format("--strategy model ranks the GPU tiles (CUDA builds); on the {} backend use "
                                      "exhaustive, random or listed",
                                      backend_name()));
  req.layouts = {o.layout_a == "col", o.layout_b == "col", o.layout_c == "col"};
  req.budget = {o.budget, o.seconds};
  req.seed = o.seed;
  req.reps = o.reps;
  req.warmup = o.warmup;
  req.baselines = !o.no_baselines;
  req.tie_tolerance = o.tie_tolerance;
  // Ranks that split one node's cores each see a device of fewer threads than a 1-rank run does
  // (another cache file, and other team sizes among the candidates): the winners of the two would
  // not be comparable. The user chooses the thread count instead, the same for every run.
  if (world_size() > 1 && split_threads() > 0)
    throw InvalidArgument(fmt::format(
        "{} MPI ranks share this node's CPU cores, so each would run {} thread{}: a smaller device than a "
        "1-rank sweep's, with other candidates and another cache file; give every sweep the same thread count "
        "({}=T or OMP_NUM_THREADS=T), or run one rank per node",
        local_size(), split_threads(), split_threads() == 1 ? "" : "s",
        KOKKOS_VERSION >= 40000 ? "--kokkos-num-threads" : "--kokkos-threads"));
  if (world_size() > 1 && o.seconds > 0)
    throw InvalidArgument(fmt::format("--seconds {}: a time budget makes the measured set depend on the speed of "
                                      "each rank; with {} MPI ranks use --budget N (a count) instead",
                                      o.seconds, world_size()));
  for (const auto& name : o.also) {
    MatmulConfig c = tuning::default_matmul_config(backend_name(), req.in, req.math);
    if (!MatmulConfig::parse(name, c, why)) throw InvalidArgument("--also: " + why);
    req.extra_candidates.push_back(c);
  }

  const RuntimeInfo info = runtime_info();
  // Ranks with the same device share one sweep; ranks on another device model sweep for their own
  // device, into its own cache file (the identity names the device), never mixed.
  DeviceIdentity device = DeviceIdentity::current();
  // Test hook (tests/mpi_sweep.sh): this world rank claims another device model, to check that
  // ranks of different devices sweep into their own cache files.
  if (const char* r = std::getenv("TILEKIT_TEST_OTHER_DEVICE_RANK"); r && std::atoi(r) == world_rank())
    device.device += " (test: another model)";
  const RankGroup group = RankGroup::by_device(device.file_name());
  const bool quiet = o.quiet || !group.leader();
  if (!info.optimized && group.leader()) fmt::print(stderr, "{}\n", unoptimized_build_warning(info));
  std::string out_dir = o.out.empty() ? fmt::format("tilekit-tune-matmul-{}-{}", info.backend, o.dtype) : o.out;
  if (group.groups() > 1) out_dir += fmt::format("-{}", device.file_name().substr(0, device.file_name().size() - 5));
  if (group.leader()) require_writable_directory("--out", out_dir);  // before measuring, not after
  // The largest shape must fit: A, B, C, and the f64 copies of the verification.
  {
    double worst = 0;
    for (const auto& sh : req.shapes) {
      const double M = double(sh[0]), N = double(sh[1]), K = double(sh[2]);
      worst = std::max(worst, (M * K + K * N) * dtype_size(req.in) + 2 * M * N * dtype_size(req.out) +
                                  8.0 * (M * K + K * N + 2 * M * N));
    }
    require_memory("tuning the largest of --sizes", {{"operands and f64 verification copies", worst}},
                   memory_available());
  }
  const std::unique_ptr<tuning::TuningCache> cache = open_cache(o.no_cache, o.cache, group.leader(), device);
  const std::size_t warned = cache ? cache->warnings().size() : 0;
  // A cache directory that cannot be written: measured all the same, without a journal; said now
  // and at the end.
  const std::string unwritable = cache_not_writable(cache.get());
  if (!unwritable.empty() && group.leader())
    fmt::print(stderr, "warning: {}; measuring anyway, the results will be in {}/candidates.json\n", unwritable,
               out_dir);

  if (!quiet)
    fmt::print("tuning matmul {} -> {} {} epilogue={} on {} ({}), {} shapes, strategy {}{}{}\n", dtype_name(req.in),
               dtype_name(req.out), req.layouts.str(), req.epilogue.name(), info.backend, info.device,
               req.shapes.size(), strategy_name(req.strategy),
               req.budget.count ? fmt::format(" (budget {} per shape, seed {})", req.budget.count, req.seed) : "",
               group.size() > 1 ? fmt::format(", {} MPI ranks", group.size()) : "");
  const ProgressBar bar(!quiet);
  const SweepOutcome sweep =
      run_matmul_sweep(req, unwritable.empty() ? cache.get() : nullptr, device, group,
                       [&](int d, int t, const std::string& b) { bar(d, t, b); });
  if (!group.leader()) return sweep.stopped.empty() ? 0 : 1;
  const MatmulTuneResult& res = sweep.result;
  for (const auto& w : sweep.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (sweep.from_earlier_runs > 0)
    fmt::print("resumed sweep {}: {} of {} candidates were measured by an earlier, unfinished run; measured the "
               "other {} now\n", sweep.id, sweep.from_earlier_runs, sweep.pairs, sweep.measured_now);

  // --- table
  fmt::print("\n{:>16} {:>38} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "shape", "best config", "time ms", "TFLOP/s",
             "x default", "KK TF/s", "x KK", "vendor");
  for (const auto& s : res.shapes) {
    if (s.missing > 0) {
      fmt::print("{:>16} incomplete: {} candidates missing{}\n", shape_str(s.shape), s.missing,
                 s.best ? fmt::format(" (best so far {})", s.best->config.name()) : "");
      continue;
    }
    if (!s.best) {
      fmt::print("{:>16} no verified candidate ({} pruned, {} failed, {} rejected)\n", shape_str(s.shape), s.pruned,
                 s.failed, s.rejected);
      continue;
    }
    const double xdef = s.default_result && s.default_result->status == "ok" ? s.default_result->median_s / s.best->median_s : 0;
    fmt::print("{:>16} {:>38} {:>10.3f} {:>9.3f} {:>9.2f} {:>9.3f} {:>9.2f} {:>9}\n", shape_str(s.shape),
               s.best->config.name(), s.best->median_s * 1e3, s.best->tflops, xdef, s.kk_tflops,
               s.kk_tflops > 0 ? s.best->tflops / s.kk_tflops : 0.0,
               s.vendor_tflops > 0 ? fmt::format("{:.3f}", s.vendor_tflops) : "-");
  }

  // --- CSV and JSON of every candidate, the summary, the plot
  {
    std::ofstream csv(out_dir + "/candidates.csv");
    csv << "M,N,K,config,status,median_s,p20_s,p80_s,tflops,rel_error,is_default,reason\n";
    for (const auto& c : res.candidates) {
      std::string reason = c.reason;
      for (char& ch : reason)
        if (ch == '"') ch = '\'';
      csv << fmt::format("{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.6g},{:.3e},{},\"{}\"\n", c.shape[0], c.shape[1],
                         c.shape[2], c.config.name(), c.status, c.median_s, c.p20_s, c.p80_s, c.tflops, c.rel_error,
                         c.is_default ? 1 : 0, reason);
    }
  }
  nlohmann::json j;
  j["context"] = {{"backend", info.backend}, {"device", info.device}, {"architecture", info.architecture},
                  {"tilekit_version", info.tilekit_version}, {"kokkos_version", info.kokkos_version},
                  {"dtype", dtype_name(req.in)}, {"out_dtype", dtype_name(req.out)},
                  {"layouts", req.layouts.str()}, {"epilogue", req.epilogue.name()},
                  {"strategy", strategy_name(req.strategy)}, {"budget", req.budget.count},
                  {"seconds", req.budget.seconds}, {"seed", req.seed}, {"reps", req.reps},
                  {"vendor_blas", vendor_blas_name()}};
  j["context"]["tie_tolerance"] = req.tie_tolerance;
  for (const auto& c : res.candidates) j["candidates"].push_back(candidate_json(c));
  j["sweep"] = sweep_json(sweep);
  PlotSeries tuned{"tuned", {}, {}}, def{"default", {}, {}}, kk{"Kokkos Kernels", {}, {}}, vendor{"vendor BLAS", {}, {}};
  for (const auto& s : res.shapes) {
    const double x = double(s.shape[0]);
    tuned.x.push_back(x), tuned.y.push_back(s.best ? s.best->tflops : 0);
    def.x.push_back(x), def.y.push_back(s.default_result ? s.default_result->tflops : 0);
    kk.x.push_back(x), kk.y.push_back(s.kk_tflops);
    vendor.x.push_back(x), vendor.y.push_back(s.vendor_tflops);
    j["shapes"].push_back({{"shape", s.shape},
                           {"best", s.best ? s.best->config.name() : ""},
                           {"best_tflops", s.best ? s.best->tflops : 0.0},
                           {"default_tflops", s.default_result ? s.default_result->tflops : 0.0},
                           {"kokkos_kernels_tflops", s.kk_tflops},
                           {"vendor_tflops", s.vendor_tflops},
                           {"baselines_computed_in", s.baseline_note},
                           {"tried", s.tried}, {"pruned", s.pruned}, {"failed", s.failed}, {"rejected", s.rejected}});
  }
  std::ofstream(out_dir + "/candidates.json") << j.dump(1) << "\n";
  std::vector<PlotSeries> series{tuned, def, kk};
  if (vendor_blas_available()) series.push_back(vendor);
  write_svg_plot(out_dir + "/plot.svg",
                 fmt::format("matmul {}->{} on {} ({})", dtype_name(req.in), dtype_name(req.out), info.backend, info.device),
                 "M (= N = K for square sizes)", "TFLOP/s", series);
  int with_best = 0;
  for (const auto& sh : res.shapes) with_best += sh.best && sh.missing == 0 ? 1 : 0;
  std::vector<std::string> store_errors = sweep.store_errors;
  if (!unwritable.empty() && with_best > 0) store_errors.push_back(unwritable);
  const bool unfinished = print_unfinished(sweep);
  const int status = finish_sweep(cache.get(), warned, out_dir, store_errors, with_best, int(res.shapes.size()));
  return status != 0 ? status : unfinished ? 1 : 0;
}

struct TuneEwOpts {
  std::string sizes = "4096x4096";
  std::string op = "add", dtype = "f32", strategy = "exhaustive", out, cache;
  int budget = 0;
  double seconds = 0;
  uint64_t seed = 1;
  int reps = 7, warmup = 2;
  bool no_cache = false, quiet = false;
};

int run_tune_elementwise(const TuneEwOpts& o) {
  using namespace tuning;
  if (world_size() > 1)
    throw InvalidArgument(fmt::format("tune elementwise is not divided among MPI ranks (only tune matmul is); "
                                      "run it as one process, not under mpirun -np {}", world_size()));
  ElementwiseTuneRequest req;
  for (const auto& s : sizes_or_throw(o.sizes, 2)) req.shapes.push_back({s[0], s[1]});
  if (!parse_op(o.op, req.op)) throw InvalidArgument(fmt::format("unknown --op '{}' (allowed: {})", o.op, op_names()));
  if (!parse_dtype(o.dtype, req.dtype) || req.dtype == DType::i8)
    throw InvalidArgument(fmt::format("unknown --dtype '{}' (allowed: f64, f32, f16, bf16, i32)", o.dtype));
  // The elementwise command's own rule, said before a sweep in which no candidate could run.
  if (op_info(req.op).floating_only && req.dtype == DType::i32)
    throw InvalidArgument(fmt::format("op '{}' needs a floating-point type (got --dtype i32; allowed: f64, f32, f16, bf16)",
                                      o.op));
  if (!parse_strategy(o.strategy, req.strategy) || req.strategy == Strategy::model)
    throw InvalidArgument(fmt::format("unknown --strategy '{}' for elementwise (allowed: exhaustive, random, listed)",
                                      o.strategy));
  req.budget = {o.budget, o.seconds};
  req.seed = o.seed;
  req.reps = o.reps;
  req.warmup = o.warmup;
  const RuntimeInfo info = runtime_info();
  if (!info.optimized) fmt::print(stderr, "{}\n", unoptimized_build_warning(info));
  const std::string out_dir = o.out.empty() ? fmt::format("tilekit-tune-elementwise-{}-{}-{}", info.backend, o.op, o.dtype) : o.out;
  require_writable_directory("--out", out_dir);
  {
    double worst = 0;
    const double arity = op_info(req.op).arity;
    for (const auto& sh : req.shapes) worst = std::max(worst, 3.0 * (arity + 1) * double(sh[0]) * double(sh[1]) * dtype_size(req.dtype));
    require_memory("tuning the largest of --sizes", {{"operands, their copy and the reference", worst}},
                   memory_available());
  }
  const std::unique_ptr<tuning::TuningCache> cache = open_cache(o.no_cache, o.cache);
  const std::size_t warned = cache ? cache->warnings().size() : 0;
  if (const std::string w = cache_not_writable(cache.get()); !w.empty())
    fmt::print(stderr, "warning: {}; measuring anyway, the results will be in {}/candidates.json\n", w, out_dir);
  if (!o.quiet)
    fmt::print("tuning elementwise {} {} on {} ({}), {} shapes, strategy {}\n", o.op, o.dtype, info.backend,
               info.device, req.shapes.size(), strategy_name(req.strategy));
  const ProgressBar bar(!o.quiet);
  const auto res = tune_elementwise(req, cache.get(), [&](int d, int t, const std::string& b) { bar(d, t, b); });
  fmt::print("\n{:>12} {:>36} {:>10} {:>9} {:>9} {:>9} {:>8}\n", "shape", "best config", "time us", "GB/s",
             "x default", "copy GB/s", "x copy");
  nlohmann::json j;
  j["context"] = {{"backend", info.backend}, {"device", info.device}, {"op", o.op}, {"dtype", o.dtype},
                  {"strategy", strategy_name(req.strategy)}, {"budget", req.budget.count}, {"seed", req.seed}};
  for (const auto& s : res.shapes) {
    if (!s.best) {
      fmt::print("{:>12} no verified candidate\n", fmt::format("{}x{}", s.shape[0], s.shape[1]));
      continue;
    }
    const double xdef = s.default_result && s.default_result->status == "ok" ? s.default_result->median_s / s.best->median_s : 0;
    fmt::print("{:>12} {:>36} {:>10.1f} {:>9.1f} {:>9.2f} {:>9.1f} {:>8.3f}\n", fmt::format("{}x{}", s.shape[0], s.shape[1]),
               s.best->config.name(), s.best->median_s * 1e6, s.best->gbps, xdef, s.copy_gbps,
               s.copy_gbps > 0 ? s.best->gbps / s.copy_gbps : 0.0);
    j["shapes"].push_back({{"shape", s.shape}, {"best", s.best->config.name()}, {"best_gbps", s.best->gbps},
                           {"default_gbps", s.default_result ? s.default_result->gbps : 0.0}, {"copy_gbps", s.copy_gbps}});
  }
  std::ofstream csv(out_dir + "/candidates.csv");
  csv << "M,N,config,status,median_s,p20_s,p80_s,gbps,is_default,reason\n";
  for (const auto& c : res.candidates) {
    std::string reason = c.reason;
    for (char& ch : reason)
      if (ch == '"') ch = '\'';
    csv << fmt::format("{},{},{},{},{:.9g},{:.9g},{:.9g},{:.6g},{},\"{}\"\n", c.shape[0], c.shape[1], c.config.name(),
                       c.status, c.median_s, c.p20_s, c.p80_s, c.gbps, c.is_default ? 1 : 0, reason);
    j["candidates"].push_back({{"shape", c.shape}, {"config", c.config.name()}, {"status", c.status},
                               {"reason", c.reason}, {"median_s", c.median_s}, {"p20_s", c.p20_s},
                               {"p80_s", c.p80_s}, {"gbps", c.gbps}, {"is_default", c.is_default}});
  }
  std::ofstream(out_dir + "/candidates.json") << j.dump(1) << "\n";
  PlotSeries tuned{"tuned", {}, {}}, def{"default", {}, {}}, copy{"copy (deep_copy)", {}, {}};
  for (const auto& s : res.shapes) {
    const double x = double(s.shape[0]) * double(s.shape[1]) / 1e6;
    tuned.x.push_back(x), tuned.y.push_back(s.best ? s.best->gbps : 0);
    def.x.push_back(x), def.y.push_back(s.default_result ? s.default_result->gbps : 0);
    copy.x.push_back(x), copy.y.push_back(s.copy_gbps);
  }
  write_svg_plot(out_dir + "/plot.svg", fmt::format("elementwise {} {} on {} ({})", o.op, o.dtype, info.backend, info.device),
                 "elements (millions)", "GB/s", {tuned, def, copy});
  int with_best = 0;
  for (const auto& sh : res.shapes) with_best += sh.best ? 1 : 0;
  return finish_sweep(cache.get(), warned, out_dir, res.store_errors, with_best, int(res.shapes.size()));
}

struct MergeOpts {
  std::vector<std::string> inputs;
  std::string out;
};

// tilekit tune merge A B ... --out C: every input (and C, if it exists) must be for the same device;
// entries of a newer tilekit and unreadable ones are carried over untouched.
int run_tune_merge_files(const MergeOpts& o) {
  using tuning::TuningCache;
  std::vector<std::string> files = o.inputs;
  std::error_code ec;
  if (std::filesystem::exists(o.out, ec)) {
    if (!std::filesystem::is_regular_file(o.out, ec))
      throw InvalidArgument(fmt::format("--out '{}' exists and is not a regular file (give the path of the merged "
                                        "cache file)", o.out));
    files.push_back(o.out);
  }
  std::vector<TuningCache> caches;
  for (const auto& f : files) {
    try {
      caches.push_back(TuningCache::read_for_merge(f));
    } catch (const std::runtime_error& err) {
      throw InvalidArgument(err.what());
    }
    const auto& a = caches.front().identity();
    const auto& b = caches.back().identity();
    if (!a.same_machine(b))
      throw InvalidArgument(fmt::format("{} is for {} {} ({}, {} units) but {} is for {} {} ({}, {} units): only caches "
                                        "of one device can be merged",
                                        files.front(), a.backend, a.device, a.architecture, a.compute_units, f,
                                        b.backend, b.device, b.architecture, b.compute_units));
  }
  TuningCache merged(o.out, caches.front().identity());
  std::size_t read = 0;
  for (const auto& c : caches) {
    merged.merge(c);
    read += c.entries().size();
    for (const auto& w : c.warnings()) fmt::print(stderr, "warning: {}\n", w);
  }
  require_writable_directory("--out", std::filesystem::path(o.out).parent_path().string());
  merged.write();
  fmt::print("merged {} entries from {} file{} into {}: {} entries{}\n", read, files.size(),
             files.size() == 1 ? "" : "s", o.out, merged.entries().size(),
             merged.kept_entries().empty() ? "" : fmt::format(" (and {} kept, not used)", merged.kept_entries().size()));
  return 0;
}

int run_tune_merge(const std::string& dir) {
  std::error_code ec;
  if (!dir.empty() && std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw InvalidArgument(fmt::format("--cache '{}' is a file, not a directory (give the tuning cache directory; to "
                                      "merge cache files: tilekit tune merge A.json B.json --out C.json)",
                                      dir));
  const std::unique_ptr<tuning::TuningCache> cache = open_cache(false, dir);
  if (world_size() > 1 && RankGroup::by_device(cache->identity().file_name()).rank() != 0) return 0;
  const std::vector<SweepOutcome> sweeps = merge_unfinished(*cache);
  if (sweeps.empty()) fmt::print("no unfinished sweep for this device in {}\n", tuning::SweepJournal::sweeps_dir(cache->path()));
  int unfinished = 0;
  for (const SweepOutcome& s : sweeps) {
    for (const auto& w : s.warnings) fmt::print(stderr, "warning: {}\n", w);
    int complete = 0;
    for (const auto& sh : s.result.shapes) complete += sh.missing == 0 && sh.best ? 1 : 0;
    fmt::print("sweep {}: {} of {} candidates measured; {} complete shapes stored in {}{}\n", s.id,
               s.from_earlier_runs, s.pairs, complete, cache->path(), s.missing.empty() ? "; sweep finished" : "");
    unfinished += print_unfinished(s) ? 1 : 0;
  }
  return unfinished > 0 ? 1 : 0;
}

}  // namespace

Runner add_tune(CLI::App& app) {
  app.require_subcommand(1);
  CLI::App* mm = app.add_subcommand("matmul", "tune the blocked matmul for a list of shapes");
  auto o = std::make_shared<TuneOpts>();
  const auto layouts = CLI::IsMember({"row", "col"});
  mm->add_option("--sizes", o->sizes, "shapes: N, MxNxK, first:last:step (squares), comma-separated")
      ->capture_default_str()
      ->check(word_validator("N, MxNxK, first:last:step, or a comma list"));
  mm->add_option("--dtype", o->dtype, "input type: f64, f32, f16, bf16, i8")->capture_default_str()
      ->check(word_validator("f64, f32, f16, bf16, i8"));
  mm->add_option("--out-dtype", o->out_dtype, "output type (default: input type, i32 for i8)")
      ->check(word_validator("a type: f64, f32, f16, bf16, i32"));
  mm->add_option("--math", o->math, "f32 arithmetic: ieee, or tf32 (adds the TF32 tensor-core tiles; own cache key)")
      ->check(CLI::IsMember({"ieee", "tf32"}))
      ->capture_default_str();
  mm->add_option("--layout-a", o->layout_a, "storage of op(A): row or col")->check(layouts)->capture_default_str();
  mm->add_option("--layout-b", o->layout_b, "storage of op(B): row or col")->check(layouts)->capture_default_str();
  mm->add_option("--layout-c", o->layout_c, "storage of C: row or col")->check(layouts)->capture_default_str();
  mm->add_option("--epilogue", o->epilogue, std::string("fused epilogue: ") + Epilogue::allowed())->capture_default_str()
      ->check(word_validator("an epilogue, e.g. none, bias, relu"));
  mm->add_option("--strategy", o->strategy,
                 "exhaustive, random, listed (only the shape's default and the --also configs), or model (CUDA: "
                 "the GPU model's top candidates per shape)")->capture_default_str()
      ->check(word_validator("exhaustive, random, listed, model"));
  mm->add_option("--budget", o->budget,
                 "random/exhaustive/model: at most this many candidates per shape (0 = all; model: 4)")
      ->check(whole_validator(0, 1000000, "a candidate budget"));
  mm->add_option("--seconds", o->seconds, "stop measuring a shape after this many seconds (0 = no limit)")
      ->check(finite_validator(0.0, 1e7));
  mm->add_option("--seed", o->seed, "seed of the random strategy and of the inputs")
      ->check(seed_validator())
      ->capture_default_str();
  mm->add_option("--reps", o->reps, "timed repetitions per candidate (>= 7)")
      ->check(whole_validator(7, 100000, "a repetition count"))
      ->capture_default_str();
  mm->add_option("--warmup", o->warmup, "untimed runs per candidate")
      ->check(whole_validator(0, 1000, "a warm-up count"))
      ->capture_default_str();
  mm->add_option("--out", o->out, "report directory (CSV, JSON, plot); default tilekit-tune-matmul-<backend>-<dtype>")
      ->check(path_validator());
  mm->add_option("--cache", o->cache, "tuning cache directory (default $TILEKIT_TUNING_DIR or ~/.cache/tilekit/tuning)")
      ->check(path_validator());
  mm->add_option("--also", o->also, "a config to try besides the strategy's picks (repeatable)")
      ->check(word_validator("a config name"));
  mm->add_flag("--no-cache", o->no_cache, "do not store the results in the tuning cache");
  mm->add_flag("--no-baselines", o->no_baselines, "skip timing Kokkos Kernels gemm and the vendor BLAS");
  mm->add_flag("-q,--quiet", o->quiet, "no progress bar");
  mm->add_option("--tie-tolerance", o->tie_tolerance,
                 "candidates within this fraction of the fastest median are tied; a tie goes to the default, "
                 "then to the config name first in byte order")
      ->check(finite_validator(0.0, 1.0))
      ->capture_default_str();
  CLI::App* ew = app.add_subcommand("elementwise", "tune an elementwise op for a list of shapes");
  auto e = std::make_shared<TuneEwOpts>();
  ew->add_option("--sizes", e->sizes, "shapes: MxN (or N for N x N), comma-separated")->capture_default_str()
      ->check(word_validator("MxN or N, or a comma list"));
  ew->add_option("--op", e->op, "the op to tune")->capture_default_str()
      ->check(word_validator("an op name, e.g. add, silu"));
  ew->add_option("--dtype", e->dtype, "f64, f32, f16, bf16, i32")->capture_default_str()
      ->check(word_validator("f64, f32, f16, bf16, i32"));
  ew->add_option("--strategy", e->strategy, "exhaustive, random, or listed (only the default)")->capture_default_str()
      ->check(word_validator("exhaustive, random, listed"));
  ew->add_option("--budget", e->budget, "at most this many candidates per shape (0 = all)")
      ->check(whole_validator(0, 1000000, "a candidate budget"));
  ew->add_option("--seconds", e->seconds, "stop measuring a shape after this many seconds")
      ->check(finite_validator(0.0, 1e7));
  ew->add_option("--seed", e->seed, "seed of the random strategy and of the inputs")
      ->check(seed_validator())
      ->capture_default_str();
  ew->add_option("--reps", e->reps, "timed repetitions per candidate (>= 7)")
      ->check(whole_validator(7, 100000, "a repetition count"));
  ew->add_option("--warmup", e->warmup, "untimed runs per candidate")->check(whole_validator(0, 1000, "a warm-up count"));
  ew->add_option("--out", e->out, "report directory (CSV, JSON, plot)")->check(path_validator());
  ew->add_option("--cache", e->cache, "tuning cache directory")->check(path_validator());
  ew->add_flag("--no-cache", e->no_cache, "do not store the results in the tuning cache");
  ew->add_flag("-q,--quiet", e->quiet, "no progress bar");
  CLI::App* merge = app.add_subcommand(
      "merge",
      "with cache files: merge tuning caches of one device (two machines' sweeps) into --out, the faster of two "
      "measurements of a shape staying; without: store what unfinished sweeps of this device measured (winners of "
      "complete shapes) and list what they miss (e.g. after an MPI rank died)");
  auto merge_dir = std::make_shared<std::string>();
  auto m = std::make_shared<MergeOpts>();
  merge->add_option("--cache", *merge_dir, "tuning cache directory (default $TILEKIT_TUNING_DIR or ~/.cache/tilekit/tuning)")
      ->check(path_validator());
  merge->add_option("files", m->inputs, "cache files to merge (JSON, as tune writes them); needs --out")
      ->check(path_validator());
  merge->add_option("--out", m->out, "the merged file (if it exists, its entries are merged too)")
      ->check(path_validator());
  return [mm, o, ew, e, merge, merge_dir, m]() -> int {
    if (mm->parsed()) return run_tune_matmul(*o);
    if (ew->parsed()) return run_tune_elementwise(*e);
    if (merge->parsed() && (!m->inputs.empty() || !m->out.empty())) {
      if (m->inputs.empty() || m->out.empty())
        throw InvalidArgument("tune merge: cache files and --out go together (tilekit tune merge A.json B.json --out "
                              "C.json); without either it merges the unfinished sweeps of --cache");
      return run_tune_merge_files(*m);
    }
    if (merge->parsed()) return run_tune_merge(*merge_dir);
    return 2;
  };
}

}  // namespace tilekit::app
