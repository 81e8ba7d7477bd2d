#include "tilekit/kernels/core/runtime.hpp"

#include "tilekit/kernels/core/cpu.hpp"

#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/validation.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <fstream>
#include <thread>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

namespace tilekit {

namespace {
[[maybe_unused]] std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  }
  return "unknown CPU";
}
}  // namespace

RuntimeInfo runtime_info() {
  using ES = Kokkos::DefaultExecutionSpace;
  RuntimeInfo r;
  r.backend = backend_name();
  r.concurrency = ES().concurrency();
  r.scratch_level0 = team_scratch_limit(0);
  r.scratch_level1 = team_scratch_limit(1);
  r.device_shared_per_block = device_shared_memory_per_block();
  r.kokkos_version = std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
                     "." + std::to_string(KOKKOS_VERSION % 100);
  r.kokkos_kernels_version = kokkos_kernels_version();
  r.tilekit_version = TILEKIT_VERSION;
#if defined(TILEKIT_BUILD_TYPE)
  r.build_type = TILEKIT_BUILD_TYPE;
#endif
  r.optimized = r.build_type == "Release" || r.build_type == "RelWithDebInfo" || r.build_type == "MinSizeRel";
#if defined(KOKKOS_ENABLE_CUDA)
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
    r.device = prop.name;
    r.architecture = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    r.compute_units = prop.multiProcessorCount;
    r.last_level_cache = static_cast<std::size_t>(prop.l2CacheSize);
  }
#elif defined(KOKKOS_ENABLE_HIP)
  int dev = 0;
  hipDeviceProp_t prop{};
  if (hipGetDevice(&dev) == hipSuccess && hipGetDeviceProperties(&prop, dev) == hipSuccess) {
    r.device = prop.name;
    r.architecture = prop.gcnArchName;
    r.compute_units = prop.multiProcessorCount;
    r.last_level_cache = static_cast<std::size_t>(prop.l2CacheSize);
  }
#else
  r.device = cpu_model();
  r.architecture = cpu_info().architecture();
  r.compute_units = r.concurrency;
  const std::size_t llc = std::max(cpu_info().l3_bytes, cpu_info().l2_bytes);  // per core's view (sysfs)
  r.last_level_cache = llc > 0 ? llc : std::size_t(32) << 20;
#endif
  return r;
}

std::string unoptimized_build_warning(const RuntimeInfo& info) {
  if (info.optimized) return {};
  return "warning: this build is not optimised (CMAKE_BUILD_TYPE='" + info.build_type +
         "'); its timings are not meaningful. Configure with a preset (cmake --preset openmp) or "
         "-DCMAKE_BUILD_TYPE=Release.";
}

}  // namespace tilekit
