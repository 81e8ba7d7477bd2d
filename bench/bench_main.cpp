// main() of every tilekit benchmark binary: reads the --tk_* options, starts Kokkos, lets each
// suite register its benchmarks, records the run context, runs Google Benchmark.
//
//   tilekit_bench_<suite> [--tk_* options] [--benchmark_* options] [--kokkos-* options]
//
// With --benchmark_list_tests Kokkos is not started, so the names can be listed on a machine without
// the backend's device (e.g. a CUDA build on a CPU-only machine).
#include "bench/harness.hpp"
#include "tilekit/kernels/core/runtime.hpp"

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

extern const char* const tilekit_bench_git_revision;  // generated at build time (git_revision.cmake)

namespace tilekit {
namespace bench {

namespace {
Options g_options;

std::vector<std::pair<const char*, SuiteFn>>& suites() {
  static std::vector<std::pair<const char*, SuiteFn>> s;
  return s;
}

const char* kHelp =
    "tilekit benchmark options (each also read from the environment variable in brackets):\n"
    "  --tk_shapes=LIST       shapes: n, a:b:s (squares a..b step s), MxNxK (MxN for 2-D suites), each\n"
    "                         optionally @dtype[+dtype] to limit its types; e.g.\n"
    "                         128:4096:128,8192,9728x8192x65536@f16 [TILEKIT_BENCH_SHAPES]\n"
    "  --tk_dtypes=LIST       element types, comma-separated, e.g. f32,f64,f16 [TILEKIT_BENCH_DTYPES]\n"
    "  --tk_warmup=N          untimed runs before the timed ones (default 2; and at least one run on\n"
    "                         each rotated input set) [TILEKIT_BENCH_WARMUP]\n"
    "  --tk_min_reps=N        fewest timed iterations (default 3) [TILEKIT_BENCH_MIN_REPS]\n"
    "  --tk_max_reps=N        most timed iterations (default 50) [TILEKIT_BENCH_MAX_REPS]\n"
    "  --tk_rep_work=X        work (GFLOP, or GB for bandwidth suites) the timed iterations of one\n"
    "                         benchmark aim at, clamped to [min_reps, max_reps] (default 20)\n"
    "                         [TILEKIT_BENCH_REP_WORK]\n"
    "  --tk_deadline_s=S      skip benchmarks that would end more than S seconds after start, judged\n"
    "                         from the series' rate on its previous shape (default 0: no limit)\n"
    "                         [TILEKIT_BENCH_DEADLINE_S]\n"
    "  --tk_rotate_mib=X      input MiB to rotate through so small problems do not run from cache\n"
    "                         (default: twice the last-level cache) [TILEKIT_BENCH_ROTATE_MIB]\n"
    "  --tk_note=TEXT         free text recorded in the JSON context [TILEKIT_BENCH_NOTE]\n"
    "  --tk_configs=LIST      matmul: one more tilekit series per config name (tilekit:<name>, and\n"
    "                         with the fused activation), the same config at every shape; a shape or\n"
    "                         type it cannot run is skipped with the reason [TILEKIT_BENCH_CONFIGS]\n"
    "  --tk_layout=L          matmul storage order: col (A, B, C column-major; default), row (all\n"
    "                         row-major, as PyTorch and NumPy store them) or kmajor (A row-major, B\n"
    "                         column-major: both K-contiguous, C row-major; torch._int_mm's layout)\n"
    "                         [TILEKIT_BENCH_LAYOUT]\n"
    "Timing: each iteration runs from a fenced start to a fence after the work, on the host clock\n"
    "(and CUDA events on CUDA); rates use the median. JSON: --benchmark_out=F --benchmark_out_format=json\n\n";

[[noreturn]] void bad(const std::string& msg) {
  std::fprintf(stderr, "tilekit bench: %s\n", msg.c_str());
  std::exit(2);
}

int to_int(const std::string& name, const std::string& v, int lo) {
  try {
    std::size_t pos = 0;
    const long x = std::stol(v, &pos);
    if (pos == v.size() && x >= lo && x <= 1000000) return static_cast<int>(x);
  } catch (...) {
  }
  bad(name + " = '" + v + "' is not a whole number from " + std::to_string(lo) + " to 1000000");
}

double to_double(const std::string& name, const std::string& v) {
  try {
    std::size_t pos = 0;
    const double x = std::stod(v, &pos);
    if (pos == v.size() && x >= 0.0) return x;
  } catch (...) {
  }
  bad(name + " = '" + v + "' is not a non-negative number");
}

// Sets one option from its flag name (without "--tk_") and text value.
void set_option(const std::string& key, const std::string& v) {
  Options& o = g_options;
  if (key == "shapes") {
    o.shapes_text = v;
    std::vector<Shape> tmp;
    std::string why;
    if (!parse_shapes(v, tmp, why)) bad(why);
  } else if (key == "dtypes") {
    o.dtypes = split_list(v, ',');
  } else if (key == "warmup") {
    o.warmup = to_int("--tk_warmup", v, 0);
  } else if (key == "min_reps") {
    o.min_reps = to_int("--tk_min_reps", v, 1);
  } else if (key == "max_reps") {
    o.max_reps = to_int("--tk_max_reps", v, 1);
  } else if (key == "rep_work") {
    o.rep_work = to_double("--tk_rep_work", v);
  } else if (key == "deadline_s") {
    o.deadline_s = to_double("--tk_deadline_s", v);
  } else if (key == "rotate_mib") {
    o.rotate_bytes = to_double("--tk_rotate_mib", v) * 1024.0 * 1024.0;
  } else if (key == "note") {
    o.note = v;
  } else if (key == "configs") {
    o.configs = split_list(v, ',');
  } else if (key == "layout") {
    if (v != "col" && v != "row" && v != "kmajor")
      bad("--tk_layout = '" + v + "' is not a storage order (allowed: col, row, kmajor)");
    o.layout = v;
  } else {
    bad("unknown option --tk_" + key + " (see --help)");
  }
}

// Environment first, then flags (which win); --tk_* flags are removed from argv.
void parse_options(int* argc, char** argv) {
  for (const char* key : {"shapes", "dtypes", "warmup", "min_reps", "max_reps", "rep_work", "deadline_s",
                          "rotate_mib", "note", "configs", "layout"}) {
    std::string env = std::string("TILEKIT_BENCH_") + key;
    for (auto& ch : env) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (const char* v = std::getenv(env.c_str())) set_option(key, v);
  }
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--tk_", 0) == 0) {
      const auto eq = a.find('=');
      if (eq == std::string::npos) bad("option " + a + " needs a value: " + a + "=VALUE");
      set_option(a.substr(5, eq - 5), a.substr(eq + 1));
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  argv[kept] = nullptr;
  if (g_options.min_reps > g_options.max_reps) bad("--tk_min_reps is larger than --tk_max_reps");
}

bool has_flag(int argc, char** argv, const char* prefix) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void add_context(const std::string& command_line) {
  const RuntimeInfo info = runtime_info();
  const Options& o = g_options;
  benchmark::AddCustomContext("tilekit_backend", info.backend);
  benchmark::AddCustomContext("device", info.device);
  benchmark::AddCustomContext("architecture", info.architecture);
  benchmark::AddCustomContext("compute_units", std::to_string(info.compute_units));
  benchmark::AddCustomContext("concurrency", std::to_string(info.concurrency));
  benchmark::AddCustomContext("kokkos_version", info.kokkos_version);
  benchmark::AddCustomContext("kokkos_kernels_version", info.kokkos_kernels_version);
  benchmark::AddCustomContext("tilekit_version", info.tilekit_version);
  benchmark::AddCustomContext("build_type", info.build_type);
  if (!info.optimized) std::cerr << unoptimized_build_warning(info) << "\n";
  benchmark::AddCustomContext("git_revision", tilekit_bench_git_revision);
  benchmark::AddCustomContext("compiler", TILEKIT_BENCH_COMPILER);
#if defined(KOKKOS_ENABLE_CUDA)
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  benchmark::AddCustomContext("cuda_runtime", std::to_string(rt));
  benchmark::AddCustomContext("cuda_driver", std::to_string(drv));
#endif
  benchmark::AddCustomContext("command_line", command_line);
  for (const char* v : {"OMP_PROC_BIND", "OMP_PLACES", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS",
                        "CUDA_VISIBLE_DEVICES"})
    benchmark::AddCustomContext(std::string("env_") + v, env_or(v, "(unset)"));
  benchmark::AddCustomContext("last_level_cache_bytes", std::to_string(last_level_cache_bytes()));
  std::ostringstream policy;
  policy << "warmup " << o.warmup << " (and one run on each rotated input set); timed iterations = " << o.rep_work
         << " G(FLOP|B) / work per run, clamped to [" << o.min_reps << ", " << o.max_reps
         << "]; median of the iterations; inputs rotated through "
         << (o.rotate_bytes > 0 ? std::to_string(o.rotate_bytes / 1048576.0) + " MiB"
                                : std::string("2 x last-level cache"))
         << "; deadline " << (o.deadline_s > 0 ? std::to_string(o.deadline_s) + " s" : std::string("none"));
  benchmark::AddCustomContext("timing_policy", policy.str());
  if (!o.note.empty()) benchmark::AddCustomContext("note", o.note);
}
}  // namespace

const Options& options() { return g_options; }

SuiteRegistrar::SuiteRegistrar(const char* name, SuiteFn fn) { suites().emplace_back(name, fn); }

}  // namespace bench
}  // namespace tilekit

int main(int argc, char** argv) {
  using namespace tilekit::bench;
  std::string command_line;
  for (int i = 0; i < argc; ++i) {
    if (i) command_line += ' ';
    command_line += argv[i];
  }

  if (has_flag(argc, argv, "--help") || has_flag(argc, argv, "-h")) {
    std::fputs(kHelp, stdout);
    benchmark::PrintDefaultHelp();
    return 0;
  }
  parse_options(&argc, argv);
  const bool list_only = has_flag(argc, argv, "--benchmark_list_tests") &&
                         !has_flag(argc, argv, "--benchmark_list_tests=false");

  if (!list_only) Kokkos::initialize(argc, argv);
  int status = 0;
  {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
      status = 2;
    } else {
      try {
        for (auto& s : suites()) s.second();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tilekit bench: %s\n", e.what());
        status = 2;
      }
      if (status == 0) {
        if (!list_only) add_context(command_line);
        benchmark::RunSpecifiedBenchmarks();
        if (any_failure()) {
          std::fprintf(stderr, "tilekit bench: some benchmarks computed wrong results (see their error messages)\n");
          status = 1;
        }
      }
      benchmark::Shutdown();
    }
  }
  if (!list_only) Kokkos::finalize();
  return status;
}
