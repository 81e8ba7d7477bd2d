// tilekit: run blocked matmul and elementwise ops (and, later, tuning) from the command line.
#include "app/commands.hpp"
#include "app/ranks.hpp"
#include "kernels/matmul.hpp"

#include <Kokkos_Core.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

namespace {

// Exit statuses (README, "The app"): 0 success, 1 a failed --check, 2 bad input, 3 this machine
// cannot run this build (no device of its backend).
constexpr int kExitBadInput = 2;
constexpr int kExitNoDevice = 3;

// Kokkos::initialize aborts or throws on numeric --kokkos-* values it cannot use (threads=0,
// =abc, =-1): they are checked here first, with a message naming the value and what is allowed.
std::string check_kokkos_args(int argc, char* argv[]) {
  struct Numeric {
    const char* prefix;
    long min, max;
  };
  static const Numeric kOptions[] = {{"--kokkos-threads=", 1, 4096},
                                     {"--kokkos-num-threads=", 1, 4096},
                                     {"--kokkos-numa=", 1, 1024},
                                     {"--kokkos-device-id=", 0, 1023}};
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    for (const Numeric& o : kOptions) {
      const std::size_t n = std::strlen(o.prefix);
      if (std::strncmp(a, o.prefix, n) != 0) continue;
      const char* v = a + n;
      const char* end = v + std::strlen(v);
      long value = 0;
      const auto [stop, ec] = std::from_chars(v, end, value);
      if (v == end || ec != std::errc() || stop != end || value < o.min || value > o.max)
        return fmt::format("'{}': {} takes an integer in {}..{}", a, std::string(o.prefix, n - 1), o.min, o.max);
    }
  }
  return {};
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

}  // namespace

int main(int argc, char* argv[]) {
  // Under mpirun (MPI builds): MPI first, Kokkos inside it; the session ends after Kokkos.
  tilekit::app::MpiSession mpi(argc, argv);
  if (const std::string why = check_kokkos_args(argc, argv); !why.empty()) {
    std::cerr << "error: " << why << "\n";
    return kExitBadInput;
  }
  int gpus = 0;
  if (const std::string why = check_device(gpus); !why.empty()) {
    std::cerr << "error: " << why << "\n";
    return kExitNoDevice;
  }
  // Each MPI rank on its own GPU (local rank -> device id) or its share of the node's cores.
  std::string note;
  std::vector<std::string> rank_args = tilekit::app::rank_device_arguments(argc, argv, gpus, note);
  if (!note.empty() && tilekit::app::local_rank() == 0) std::cerr << "warning: " << note << "\n";
  std::vector<char*> args(argv, argv + argc);
  for (std::string& a : rank_args) args.push_back(a.data());
  args.push_back(nullptr);
  argc = int(args.size()) - 1;
  argv = args.data();
  // Kokkos takes its own --kokkos-* arguments out of argv first.
  Kokkos::ScopeGuard kokkos(argc, argv);

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the error
    return code == 0 ? 0 : kExitBadInput;
  }
  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const tilekit::InvalidArgument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return tilekit::app::abort_all(1);  // other ranks may be waiting for this one in a collective
  }
  return 0;
}
