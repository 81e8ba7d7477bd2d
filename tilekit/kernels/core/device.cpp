// Device queries: the backend, team-scratch limits, compute capability, SM counts, and whether this
// CPU runs the build's host code.
#include "tilekit/kernels/core/device.hpp"
#include "tilekit/kernels/core/error.hpp"
#include "tilekit/kernels/core/execution_space.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <type_traits>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

namespace tilekit {

std::string launch_thread_problem() {
  if (!Kokkos::is_initialized())
    return "Kokkos is not initialized (or already finalized): call Kokkos::initialize, or hold a "
           "Kokkos::ScopeGuard, around every tilekit call";
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  // Kokkos 3.x keeps the OpenMP instance in a thread_local of the initializing thread: any other
  // thread (a std::thread, a worker pool, an OpenMP parallel region) cannot launch.
  if (std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::OpenMP>::value && Kokkos::OpenMP::in_parallel())
    return "this host thread cannot launch Kokkos kernels: with Kokkos " + std::to_string(KOKKOS_VERSION / 10000) +
           "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
           "'s OpenMP backend only the thread that called Kokkos::initialize can, and not from inside an "
           "OpenMP parallel region (a mutex does not help); call tilekit from that thread (e.g. hand the work "
           "to it through a queue), or build tilekit against Kokkos 4.x";
#endif
  return "";
}

bool concurrent_launches_allowed() {
#if KOKKOS_VERSION >= 40000
  // Kokkos 4: every host parallel_* locks the instance's mutex (Kokkos_OpenMP_Parallel_*.hpp,
  // Kokkos_Serial_Parallel_*.hpp); GPU instances queue on their streams.
  return true;
#else
  // Kokkos 3: the host backends have no such lock (Serial's team scratch is one global arena).
  return is_gpu_space<Kokkos::DefaultExecutionSpace>();
#endif
}

void require_launch_thread() {
  const std::string why = launch_thread_problem();
  if (!why.empty()) throw InvalidArgument(why);
}

std::string backend_name() {
  std::string s = Kokkos::DefaultExecutionSpace::name();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return s;
}

std::size_t team_scratch_limit(int level) {
  using ES = Kokkos::DefaultExecutionSpace;
  return static_cast<std::size_t>(Kokkos::TeamPolicy<ES>::scratch_size_max(level));
}

std::size_t device_shared_memory_per_block() {
  int dev = 0, bytes = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
    return 0;
#elif defined(KOKKOS_ENABLE_HIP)
  if (hipGetDevice(&dev) != hipSuccess ||
      hipDeviceGetAttribute(&bytes, hipDeviceAttributeMaxSharedMemoryPerBlock, dev) != hipSuccess)
    return 0;
#endif
  (void)dev;
  return static_cast<std::size_t>(bytes);
}

int cuda_compute_capability() {
#if defined(KOKKOS_ENABLE_CUDA)
  static const int cc = [] {
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
      return 0;
    return major * 10 + minor;
  }();
  return cc;
#else
  return 0;
#endif
}

namespace {
#if defined(KOKKOS_ENABLE_CUDA)
// 1 when the device ran this kernel's sm_90a code (wgmma available), 0 for any other machine code.
int probe_sm90a_code() {
  Kokkos::View<int, Kokkos::CudaSpace> flag("tilekit::sm90a_probe");
  Kokkos::parallel_for(
      "tilekit::sm90a_probe", Kokkos::RangePolicy<Kokkos::Cuda>(0, 1), KOKKOS_LAMBDA(int) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
        flag() = 1;
#else
        flag() = 0;
#endif
      });
  int h = 0;
  Kokkos::deep_copy(h, flag);
  return h;
}
#endif
}  // namespace

bool warpgroup_mma_available() {
#if defined(KOKKOS_ENABLE_CUDA)
  static const bool available = probe_sm90a_code() == 1;
  return available;
#else
  return false;
#endif
}

#if defined(KOKKOS_ENABLE_CUDA)
namespace {
int cuda_device_attribute(cudaDeviceAttr attr) {
  int dev = 0, value = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&value, attr, dev) != cudaSuccess) return 0;
  return value;
}
}  // namespace
#endif

int cuda_sm_count() {
#if defined(KOKKOS_ENABLE_CUDA)
  static const int n = cuda_device_attribute(cudaDevAttrMultiProcessorCount);
  return n;
#else
  return 0;
#endif
}

int cuda_shared_memory_per_sm() {
#if defined(KOKKOS_ENABLE_CUDA)
  static const int n = cuda_device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  return n;
#else
  return 0;
#endif
}

std::string check_team_scratch(std::size_t bytes, int level) {
  const std::size_t limit = team_scratch_limit(level);
  if (bytes <= limit) return {};
  std::string msg = "needs " + std::to_string(bytes) + " bytes of level-" + std::to_string(level) +
                    " team scratch per team, over this build's limit of " + std::to_string(limit) + " bytes";
  const std::size_t device = device_shared_memory_per_block();
  if (level == 0 && device > 0)
    msg += " (the device allows " + std::to_string(device) + " bytes of shared memory per block; Kokkos " +
           std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
           " reserves the rest or caps it lower)";
  return msg;
}

std::string host_isa_missing() {
  std::string missing;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(__CUDACC__) && !defined(__HIPCC__)
  auto need = [&](bool has, const char* name) {
    if (!has) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  __builtin_cpu_init();
#if defined(__AVX2__)
  need(__builtin_cpu_supports("avx2"), "AVX2");
#endif
#if defined(__FMA__)
  need(__builtin_cpu_supports("fma"), "FMA");
#endif
#if defined(__F16C__)
  need(__builtin_cpu_supports("f16c"), "F16C");
#endif
#if defined(__AVX512F__)
  need(__builtin_cpu_supports("avx512f"), "AVX-512 F");
#endif
#if defined(__AVX512BF16__)
  need(__builtin_cpu_supports("avx512bf16"), "AVX-512 BF16");
#endif
#if defined(__AVX512VNNI__)
  need(__builtin_cpu_supports("avx512vnni"), "AVX-512 VNNI");
#endif
#endif
  if (missing.empty()) return {};
  return "this build's host code uses instructions this CPU lacks: " + missing +
         " (it was compiled for another CPU: rebuild on this machine, or configure with "
         "-DTILEKIT_HOST_ARCH=<an -march value this CPU supports>, e.g. x86-64-v3)";
}

}  // namespace tilekit
