#include "tilekit/kernels/core/memory.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <fstream>
#include <sstream>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

namespace tilekit {

#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP)
namespace {
// MemAvailable (kB) of /proc/meminfo: what the kernel can give without swapping. sysconf's
// available pages (free only, no reclaimable cache) when the file is missing.
double host_available_bytes(std::string& where) {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  double kb = 0;
  while (f >> key >> kb) {
    std::getline(f, unit);
    if (key == "MemAvailable:") {
      where = "host memory (MemAvailable in /proc/meminfo)";
      return kb * 1024.0;
    }
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  where = "host memory (free pages, sysconf)";
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}
}  // namespace
#endif

MemoryAvailable memory_available() {
  MemoryAvailable m;
#if defined(KOKKOS_ENABLE_CUDA)
  std::size_t free_b = 0, total_b = 0;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = 0;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    m.bytes = double(free_b);
    m.where = fmt::format("CUDA device {} memory (free, of {} total)", dev, format_bytes(double(total_b)));
  }
#elif defined(KOKKOS_ENABLE_HIP)
  std::size_t free_b = 0, total_b = 0;
  int dev = 0;
  if (hipGetDevice(&dev) != hipSuccess) dev = 0;
  if (hipMemGetInfo(&free_b, &total_b) == hipSuccess) {
    m.bytes = double(free_b);
    m.where = fmt::format("HIP device {} memory (free, of {} total)", dev, format_bytes(double(total_b)));
  }
#else
  m.bytes = host_available_bytes(m.where);
#endif
  return m;
}

std::string format_bytes(double bytes) {
  return fmt::format("{:.2f} GB ({:.0f} bytes)", bytes * 1e-9, bytes);
}

void require_memory(const std::string& what, const std::vector<MemoryItem>& items, const MemoryAvailable& available) {
  double total = 0;
  std::string parts;
  for (const auto& i : items) {
    if (i.bytes <= 0) continue;
    total += i.bytes;
    parts += fmt::format("{}{} {:.2f} GB", parts.empty() ? "" : ", ", i.name, i.bytes * 1e-9);
  }
  if (available.bytes <= 0 || total <= available.bytes) return;
  throw InsufficientMemory(fmt::format("{} needs {} ({}), more than the {} available in {}", what,
                                       format_bytes(total), parts, format_bytes(available.bytes), available.where));
}

}  // namespace tilekit
