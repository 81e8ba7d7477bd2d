// Sizing a problem before allocating it: the memory the default execution space can still give,
// and the error a caller throws when a problem does not fit (the app exits with its resource
// status, 4, and both numbers, instead of thrashing or dying in an allocation).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilekit {

/// Thrown when a problem needs more memory than the device (or host) has available; what() gives
/// what was asked for and what is available, in bytes and GB.
struct InsufficientMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Memory the default execution space's memory space can still allocate, and where the figure
/// comes from: on GPU backends the device's free memory (cudaMemGetInfo / hipMemGetInfo), on host
/// backends MemAvailable of /proc/meminfo (else sysconf's available pages). bytes = 0 when unknown.
struct MemoryAvailable {
  double bytes = 0;
  std::string where;  ///< e.g. "host (MemAvailable in /proc/meminfo)", "CUDA device 0 (free memory)"
};
MemoryAvailable memory_available();

/// One named buffer of a problem, for the message: {"A", bytes}.
struct MemoryItem {
  std::string name;
  double bytes = 0;
};

/// Throws InsufficientMemory naming `what`, each item, the total and the available memory when the
/// items need more than `available` holds (a known figure only; 0 = unknown passes).
void require_memory(const std::string& what, const std::vector<MemoryItem>& items, const MemoryAvailable& available);

/// "1.50 GB (1500000000 bytes)"
std::string format_bytes(double bytes);

}  // namespace tilekit
