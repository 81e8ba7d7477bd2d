// tilekit: run blocked matmul and elementwise ops (and, later, tuning) from the command line.
#include "app/commands.hpp"
#include "app/kokkos_args.hpp"
#include "app/ranks.hpp"
#include "tilekit/kernels/core/device.hpp"
#include "tilekit/kernels/core/memory.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/validation.hpp"

#include <Kokkos_Core.hpp>

#include <fmt/format.h>

#include <dlfcn.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <new>
#include <string>
#include <vector>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

namespace {

// Exit statuses (README, "The app"): 0 success, 1 a failed check (a wrong result), 2 bad input,
// 3 this machine cannot run this build (no device of its backend), 4 not enough memory for the
// problem (a resource limit, not a typing error), 5 an unexpected internal error (a bug: please
// report it with the command line).
constexpr int kExitBadInput = 2;
constexpr int kExitNoDevice = 3;
constexpr int kExitResources = 4;
constexpr int kExitInternal = 5;

// Kokkos reports a failed allocation as a std::runtime_error whose text starts "Kokkos failed to
// allocate memory for label ..." and goes on with a call stack: the first sentence is kept.
bool is_allocation_failure(const std::string& what) {
  return what.find("failed to allocate") != std::string::npos ||
         what.find("likely due to insufficient memory") != std::string::npos;
}
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// What the Kokkos of this build accepts (app/kokkos_args.hpp checks the options against it).
tilekit::app::KokkosLimits kokkos_limits() {
  tilekit::app::KokkosLimits l;
#if defined(KOKKOS_ENABLE_OPENMP)
  l.openmp = true;
  // Kokkos' OpenMP backend keeps its threads' data in a fixed array of MAX_THREAD_COUNT (512 in
  // 3.4's Kokkos_OpenMP_Exec.hpp and in 4.0 to 4.6's Kokkos_OpenMP_Instance.hpp), and neither checks
  // the count against it: more threads write past it and crash (3.4 here: 515, 530, 600 and 1024
  // threads end in SIGSEGV in disband_pool; 513 to 514 and 520 happened to survive; 4.6.01: 515,
  // 600 and 1024 abort in a pthread mutex behind the array, 512 runs). Read from the Kokkos of the
  // build, so a Kokkos with a larger pool moves the limit.
#if KOKKOS_VERSION >= 40000
  l.max_threads = Kokkos::Impl::OpenMPTraits::MAX_THREAD_COUNT;
#else
  l.max_threads = Kokkos::Impl::OpenMPExec::MAX_THREAD_COUNT;
#endif
#elif defined(KOKKOS_ENABLE_THREADS)
  l.max_threads = 1024;
#else
  l.max_threads = 1;  // Serial, and the host side of GPU builds: one host thread
#endif
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
  l.gpu = true;
  l.max_threads = 512;
#endif
  l.kokkos_major = KOKKOS_VERSION / 10000;
  l.kokkos_minor = KOKKOS_VERSION / 100 % 100;
  l.load_library = [](const std::string& path) -> std::string {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return "no such file";
    if (!S_ISREG(st.st_mode)) return "not a regular file";
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return "not a shared library this program can load";
    ::dlclose(h);
    return "";
  };
  return l;
}

// The thread count Kokkos' OpenMP backend takes when given none: OpenMP's default team size (the
// hardware threads of this process' CPU set, or OMP_NUM_THREADS). TILEKIT_TEST_HARDWARE_THREADS
// stands in for it (a test hook: tests/cli_bad_input.sh plays a machine with more threads than
// Kokkos' pool). 0 on other backends.
int openmp_default_threads() {
  if (const char* fake = std::getenv("TILEKIT_TEST_HARDWARE_THREADS"))
    return std::atoi(fake);
#if defined(KOKKOS_ENABLE_OPENMP)
  return omp_get_max_threads();
#else
  return 0;
#endif
}

// tilekit --version: the versions and the backend, without starting Kokkos.
void print_version() {
  fmt::print("tilekit {}\nKokkos {}.{}.{:02d}, Kokkos Kernels {}, backend {}\n", TILEKIT_VERSION, KOKKOS_VERSION / 10000,
             KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, tilekit::kokkos_kernels_version(),
             tilekit::backend_name());
}

// GPU builds on a machine without that GPU: say so, instead of Kokkos aborting in initialize.
// `count` receives the number of GPUs of the build's backend (0 on host backends).
std::string check_device(int& count) {
  count = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return fmt::format("no CUDA device found ({}); this is a build of the cuda preset, which runs on an "
                       "NVIDIA GPU (build the openmp preset for this machine)",
                       e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
#elif defined(KOKKOS_ENABLE_HIP)
  const hipError_t e = hipGetDeviceCount(&count);
  if (e != hipSuccess || count == 0)
    return fmt::format("no HIP device found ({}); this is a build of the hip preset, which runs on an "
                       "AMD GPU (build the openmp preset for this machine)",
                       e != hipSuccess ? hipGetErrorString(e) : "0 devices");
#endif
  return {};
}


// The first word that is not an option, if it is not one of `names`: what the user meant as a
// (sub)command. CLI11 would only say "A subcommand is required".
std::string unknown_command(const std::vector<std::string>& args, std::size_t from,
                            const std::vector<std::string>& names) {
  for (std::size_t i = from; i < args.size(); ++i) {
    if (args[i].empty() || args[i][0] == '-') return {};
    for (const auto& n : names)
      if (args[i] == n) return {};
    return args[i];
  }
  return {};
}

int tilekit_main(int argc, char* argv[]) {
  // Under mpirun (MPI builds): MPI first, Kokkos inside it; the session ends after Kokkos.
  tilekit::app::MpiSession mpi(argc, argv);
  // --version (or -V) as the first word, before anything else may fail.
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--kokkos-", 9) == 0) continue;
    if (std::strcmp(argv[i], "--version") == 0 || std::strcmp(argv[i], "-V") == 0) {
      print_version();
      return 0;
    }
    break;
  }
  const tilekit::app::KokkosLimits limits = kokkos_limits();
  if (const std::string why = tilekit::app::check_kokkos_options(std::vector<std::string>(argv + 1, argv + argc),
                                                                 [](const char* n) { return std::getenv(n); },
                                                                 limits);
      !why.empty()) {
    std::cerr << "error: " << why << "\n";
    return kExitBadInput;
  }
  if (const std::string why = tilekit::host_isa_missing(); !why.empty()) {
    std::cerr << "error: " << why << "\n";
    return kExitNoDevice;
  }
  int gpus = 0;
  if (const std::string why = check_device(gpus); !why.empty()) {
    std::cerr << "error: " << why << "\n";
    return kExitNoDevice;
  }
  // Each MPI rank on its own GPU (local rank -> device id) or its share of the node's cores.
  std::string note;
  std::vector<std::string> rank_args = tilekit::app::rank_device_arguments(argc, argv, gpus, note, limits);
  if (!note.empty() && tilekit::app::local_rank() == 0) std::cerr << "warning: " << note << "\n";
  // Kokkos sees only its own --kokkos-* arguments (so that --help is the app's, without Kokkos'
  // banner, and Kokkos' legacy --threads/--numa/--device are not taken silently); the app sees the rest.
  std::vector<char*> kokkos_argv{argv[0]}, app_argv{argv[0]};
  for (int i = 1; i < argc; ++i)
    (std::strncmp(argv[i], "--kokkos-", 9) == 0 ? kokkos_argv : app_argv).push_back(argv[i]);
  for (std::string& a : rank_args) kokkos_argv.push_back(a.data());
  // No thread count chosen on a machine with more hardware threads than Kokkos' OpenMP pool holds:
  // the pool's size instead of a crash (said under -v).
  std::string cap_arg;
  if (const int cap = tilekit::app::default_thread_cap(std::vector<std::string>(kokkos_argv.begin() + 1, kokkos_argv.end()),
                                                       [](const char* n) { return std::getenv(n); },
                                                       openmp_default_threads(), limits)) {
    cap_arg = tilekit::app::thread_count_option(cap, limits);
    kokkos_argv.push_back(cap_arg.data());
    tilekit::app::thread_cap_note() =
        fmt::format("{} (chosen by tilekit: this machine offers {} hardware threads, Kokkos' OpenMP pool holds at "
                    "most {}; give {}=N or OMP_NUM_THREADS=N to choose)",
                    cap, openmp_default_threads(), cap, cap_arg.substr(0, cap_arg.find('=')));
  }
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  kokkos_argv.push_back(nullptr);
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());

  CLI::App app{"tilekit: performance-portable blocked matmul and elementwise kernels (Kokkos)"};
  app.require_subcommand(1);
  std::map<CLI::App*, tilekit::app::Runner> runners;
  auto add = [&](const char* name, const char* help, auto&& adder) {
    CLI::App* sub = app.add_subcommand(name, help);
    runners[sub] = adder(*sub);
  };
  add("matmul", "C = alpha op(A) op(B) + beta C with a fused epilogue; timed, optionally validated",
      tilekit::app::add_matmul);
  add("elementwise", "out = op(inputs) over M x N tensors (add, fma, silu, ...); timed in GB/s against a copy, "
      "optionally validated",
      tilekit::app::add_elementwise);
  add("tune", "sweep tile configs, verify each, keep the best per shape in the tuning cache",
      tilekit::app::add_tune);
  add("info", "backend, device, concurrency, scratch limits, versions", tilekit::app::add_info);

  const std::vector<std::string> args(app_argv.begin() + 1, app_argv.end());
  try {
    app.parse(static_cast<int>(app_argv.size()), app_argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      // An unknown (sub)command: name it and the allowed ones, rather than "A subcommand is required".
      std::vector<std::string> names;
      for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
      std::string word = unknown_command(args, 0, names), level = "command";
      if (word.empty() && !args.empty() && args[0] == "tune") {
        names = {"matmul", "elementwise", "merge"};
        word = unknown_command(args, 1, names);
        level = "tune command";
      }
      // An option before the command (`tilekit --json info`): the app itself takes only --help and
      // --version; every other option belongs to a command.
      if (word.empty() && !args.empty() && args[0].size() > 1 && args[0][0] == '-') {
        std::string allowed;
        for (const auto& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
        std::cerr << "error: '" << args[0].substr(0, 64) << "' before the command: tilekit itself takes only --help "
                  << "and --version; other options go after the command (tilekit <command> [options]; commands: "
                  << allowed << ")\n";
        return kExitBadInput;
      }
      if (!word.empty()) {
        std::string allowed;
        for (const auto& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
        std::cerr << "error: unknown " << level << " '" << word << "' (allowed: " << allowed
                  << "; add --help for the options)\n";
        return kExitBadInput;
      }
    }
    const int code = app.exit(e);  // prints help or the error
    return code == 0 ? 0 : kExitBadInput;
  }
  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const tilekit::InvalidArgument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const tilekit::InsufficientMemory& e) {
    std::cerr << "error: not enough memory: " << e.what() << "\n";
    return kExitResources;
  } catch (const std::bad_alloc& e) {
    std::cerr << "error: not enough memory: an allocation failed (" << e.what() << ")\n";
    return kExitResources;
  } catch (const std::filesystem::filesystem_error& e) {  // e.g. a full or read-only disk mid-run
    std::cerr << "error: cannot write " << e.path1() << ": " << e.code().message() << "\n";
    return kExitResources;
  } catch (const std::exception& e) {
    if (is_allocation_failure(e.what())) {
      std::cerr << "error: not enough memory: " << first_line(e.what()) << "\n";
      return tilekit::app::abort_all(kExitResources);
    }
    std::cerr << "error: internal error: " << first_line(e.what()) << "\n";
    return tilekit::app::abort_all(kExitInternal);  // other ranks may be waiting for this one in a collective
  }
  return 0;
}

// Thread binding when the user chose none (OpenMP backend): OMP_PROC_BIND=spread, OMP_PLACES=threads,
// what Kokkos recommends, so that threads do not migrate between cores mid-measurement and Kokkos
// prints no 4-line warning. libgomp reads its variables when it is loaded, before main: the app
// starts itself again with them set (once; TILEKIT_BIND_CHOSEN marks it, and `-v` says so). Not
// under an MPI launcher, which binds its ranks itself.
void choose_thread_binding([[maybe_unused]] char* argv[]) {
#if defined(KOKKOS_ENABLE_OPENMP)
  for (const char* v : {"OMP_PROC_BIND", "OMP_PLACES", "TILEKIT_BIND_CHOSEN", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
                        "PMIX_RANK", "MPI_LOCALRANKID"})
    if (std::getenv(v)) return;
  ::setenv("OMP_PROC_BIND", "spread", 1);
  ::setenv("OMP_PLACES", "threads", 1);
  ::setenv("TILEKIT_BIND_CHOSEN", "OMP_PROC_BIND=spread OMP_PLACES=threads", 1);
  ::execv("/proc/self/exe", argv);
  // Not restarted (no /proc): run as the user started it.
  ::unsetenv("OMP_PROC_BIND");
  ::unsetenv("OMP_PLACES");
  ::unsetenv("TILEKIT_BIND_CHOSEN");
#endif
}

}  // namespace

int main(int argc, char* argv[]) {
  choose_thread_binding(argv);
  try {
    return tilekit_main(argc, argv);
  } catch (const std::exception& e) {  // e.g. thrown by Kokkos::initialize or finalize
    std::cerr << "error: internal error: " << first_line(e.what()) << "\n";
    return kExitInternal;
  }
}
