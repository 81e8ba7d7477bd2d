// Device workspaces of the matmul kernels: packed operands and split-K counters and partial sums.
#include "tilekit/kernels/core/workspace.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <mutex>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace tilekit {

namespace {
#if defined(KOKKOS_ENABLE_CUDA)
// One device buffer per Kokkos session and use (packed operands; split-K partial sums), grown on
// demand, ordered across streams by an event behind its last kernels, freed at Kokkos::finalize.
struct DeviceWorkspace {
  std::mutex mutex;
  void* device = nullptr;
  std::size_t bytes = 0;
  cudaEvent_t last_use = nullptr;
  bool recorded = false;
  bool hook = false;
  // Split K: bytes at the start that only ever hold arrival counters, which kernels leave at zero
  // (zeroed when the buffer is allocated or this prefix grows); partial sums always lie after it.
  std::size_t counter_prefix = 0;
  void release() {
    if (last_use) {
      (void)cudaEventSynchronize(last_use);
      (void)cudaEventDestroy(last_use);
      last_use = nullptr;
    }
    if (device) (void)cudaFree(device);
    device = nullptr;
    bytes = 0;
    recorded = false;
    counter_prefix = 0;
  }
  static DeviceWorkspace& pack() {
    static DeviceWorkspace w;
    return w;
  }
  static DeviceWorkspace& split_k() {
    static DeviceWorkspace w;
    return w;
  }
  static DeviceWorkspace& partial_sums() {
    static DeviceWorkspace w;
    return w;
  }

  // Locks the workspace (until release_after), makes it at least `want` bytes (a new buffer is
  // zeroed in `stream` when `zero`) and orders `stream` after its last use.
  std::string acquire(std::size_t want, bool zero, void* stream, void*& out, const char* what) {
    mutex.lock();
    auto fail = [&](std::string why) {
      (void)cudaGetLastError();
      mutex.unlock();
      return why;
    };
    if (!last_use && cudaEventCreateWithFlags(&last_use, cudaEventDisableTiming) != cudaSuccess)
      return fail(std::string("no CUDA event for the ") + what);
    if (!hook) {  // free before Kokkos (and with it the CUDA context's state) goes away
      DeviceWorkspace* self = this;
      Kokkos::push_finalize_hook([self] {
        std::lock_guard<std::mutex> lock(self->mutex);
        self->release();
      });
      hook = true;
    }
    if (bytes < want) {  // grow: the old buffer goes once its last kernel is done
      if (recorded) (void)cudaEventSynchronize(last_use);
      if (device) (void)cudaFree(device);
      device = nullptr;
      bytes = 0;
      recorded = false;
      if (cudaMalloc(&device, want) != cudaSuccess) {
        device = nullptr;
        return fail("no device memory for " + std::to_string(want) + " bytes of " + what);
      }
      bytes = want;
      if (zero && cudaMemsetAsync(device, 0, want, static_cast<cudaStream_t>(stream)) != cudaSuccess)
        return fail(std::string("zeroing the ") + what + " failed");
    }
    if (recorded && cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), last_use, 0) != cudaSuccess)
      return fail(std::string("ordering a stream after the last use of the ") + what + " failed");
    out = device;
    return {};
  }
  void release_after(void* stream) {
    if (cudaEventRecord(last_use, static_cast<cudaStream_t>(stream)) == cudaSuccess)
      recorded = true;
    else
      (void)cudaGetLastError();
    mutex.unlock();
  }
};
#endif
}  // namespace

std::string acquire_pack_workspace(std::size_t bytes, void* stream, void*& device) {
#if defined(KOKKOS_ENABLE_CUDA)
  return DeviceWorkspace::pack().acquire(bytes, false, stream, device, "packed operands");
#else
  (void)bytes, (void)stream, (void)device;
  return "the packing workspace exists only on CUDA";
#endif
}

void release_pack_workspace(void* stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  DeviceWorkspace::pack().release_after(stream);
#else
  (void)stream;
#endif
}

std::string acquire_split_k_workspace(std::size_t counter_bytes, std::size_t partial_bytes, void* stream,
                                      int*& counters, void*& partials) {
#if defined(KOKKOS_ENABLE_CUDA)
  DeviceWorkspace& w = DeviceWorkspace::split_k();
  // Counters at [0, counter_bytes), partials from the end of the largest counter region any launch
  // used so far: a partial sum never lands where a later launch expects a zero counter.
  const std::size_t prefix = std::max(w.counter_prefix, (counter_bytes + 255) / 256 * 256);
  void* device = nullptr;
  std::string why = w.acquire(prefix + partial_bytes, true, stream, device, "split-K partial sums");
  if (!why.empty()) return why;
  if (prefix > w.counter_prefix) {  // partial sums of earlier launches may lie there: zero it
    if (cudaMemsetAsync(static_cast<char*>(device) + w.counter_prefix, 0, prefix - w.counter_prefix,
                        static_cast<cudaStream_t>(stream)) != cudaSuccess) {
      (void)cudaGetLastError();
      w.release_after(stream);
      return "zeroing the split-K counters failed";
    }
    w.counter_prefix = prefix;
  }
  counters = static_cast<int*>(device);
  partials = static_cast<char*>(device) + prefix;
  return {};
#else
  (void)counter_bytes, (void)partial_bytes, (void)stream, (void)counters, (void)partials;
  return "the split-K workspace exists only on CUDA";
#endif
}

std::string acquire_partial_sum_workspace(std::size_t bytes, void* stream, void*& device) {
#if defined(KOKKOS_ENABLE_CUDA)
  return DeviceWorkspace::partial_sums().acquire(bytes, false, stream, device, "split-K partial sums");
#else
  (void)bytes, (void)stream, (void)device;
  return "the partial-sum workspace exists only on CUDA";
#endif
}

void release_partial_sum_workspace(void* stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  DeviceWorkspace::partial_sums().release_after(stream);
#else
  (void)stream;
#endif
}

void release_split_k_workspace(void* stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  DeviceWorkspace::split_k().release_after(stream);
#else
  (void)stream;
#endif
}

}  // namespace tilekit
