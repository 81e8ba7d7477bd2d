// What this build runs on: backend, device, concurrency, scratch limits, library versions.
#pragma once

#include <cstddef>
#include <string>

namespace tilekit {

struct RuntimeInfo {
  std::string backend;          ///< serial, openmp, cuda, hip
  std::string device;           ///< GPU name or CPU model
  std::string architecture;     ///< e.g. "sm_90" or "x86_64"
  int compute_units = 0;        ///< SMs / CUs, or CPU threads Kokkos uses
  int concurrency = 0;          ///< Kokkos::DefaultExecutionSpace().concurrency()
  std::size_t scratch_level0 = 0;  ///< bytes of level-0 team scratch per team (what Kokkos allows)
  std::size_t scratch_level1 = 0;  ///< bytes of level-1 team scratch per team
  std::size_t device_shared_per_block = 0;  ///< GPUs: the device's shared memory per block (opt-in max); 0 on hosts
  std::size_t last_level_cache = 0;  ///< bytes of the last-level cache (GPU L2, CPU L3)
  std::string kokkos_version;
  std::string kokkos_kernels_version;
  std::string tilekit_version;
  std::string build_type;       ///< CMAKE_BUILD_TYPE of this build ("Release", ...)
  bool optimized = false;       ///< built with optimisation (Release, RelWithDebInfo, MinSizeRel)
};

/// The one-line warning printed before timings of a build without optimisation ("" when optimized).
std::string unoptimized_build_warning(const RuntimeInfo& info);

/// Call after Kokkos::initialize.
RuntimeInfo runtime_info();


}  // namespace tilekit
