#include "kernels/common.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

namespace tilekit {

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

std::string encode_tma_2d(void* out128, const void* base, long long inner, long long outer, long long pitch,
                          int box_outer, int elem_bytes) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return "base address not 16-byte aligned";
  if (elem_bytes != 2 && elem_bytes != 4) return "elements of 2 or 4 bytes only";
  if ((pitch * elem_bytes) % 16 != 0) return "row pitch not a multiple of 16 bytes";
  if (inner < 1 || outer < 1 || inner > INT32_MAX || outer > INT32_MAX) return "a dimension outside 1..2^31-1";
  if (pitch < inner) return "row pitch under the row length (a stride of 0 repeats a row)";
  if (box_outer < 1 || box_outer > 256) return "box outside 1..256 rows";
  // The driver's encoder, through the runtime (no link against libcuda).
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (!encode) return "the CUDA driver has no cuTensorMapEncodeTiled";
  // The last kEncoded encodings, by their arguments, in a hash map (oldest replaced first): no
  // driver call per map when a launch repeats its operands. 1024, not 64: a benchmark's rotating
  // buffers (67 sets at 512^3 f16) or a model's layers cycle through more than 64 operand sets,
  // and a cache smaller than the cycle misses on every launch (1-2 us each, perf notes 27).
  struct EncodedKey {
    const void* base;
    long long inner, outer, pitch;
    int box_outer, elem_bytes;
    bool operator==(const EncodedKey& o) const {
      return base == o.base && inner == o.inner && outer == o.outer && pitch == o.pitch &&
             box_outer == o.box_outer && elem_bytes == o.elem_bytes;
    }
  };
  struct EncodedHash {
    std::size_t operator()(const EncodedKey& k) const {
      std::size_t h = std::hash<const void*>()(k.base);
      for (long long v : {k.inner, k.outer, k.pitch, (long long)k.box_outer * 16 + k.elem_bytes})
        h = h * 1000003u ^ std::hash<long long>()(v);
      return h;
    }
  };
  struct Encoded {
    EncodedKey key;
    alignas(64) unsigned char map[128];
  };
  constexpr int kEncoded = 1024;
  static std::mutex encoded_mutex;
  static std::vector<Encoded> encoded;  // kEncoded entries once filled; encoded_next is the oldest
  static std::unordered_map<EncodedKey, int, EncodedHash> encoded_index;
  static int encoded_next = 0;
  const EncodedKey key{base, inner, outer, pitch, box_outer, elem_bytes};
  {
    std::lock_guard<std::mutex> lock(encoded_mutex);
    const auto it = encoded_index.find(key);
    if (it != encoded_index.end()) {
      std::memcpy(out128, encoded[it->second].map, 128);
      return {};
    }
  }
  const cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(outer)};
  const cuuint64_t strides[1] = {cuuint64_t(pitch) * cuuint64_t(elem_bytes)};  // bytes between rows
  const cuuint32_t box[2] = {cuuint32_t(128 / elem_bytes), cuuint32_t(box_outer)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encode(static_cast<CUtensorMap*>(out128),
                            elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_UINT32, 2,
                            const_cast<void*>(base), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")";
  {
    std::lock_guard<std::mutex> lock(encoded_mutex);
    if (encoded_index.count(key) == 0) {  // (another thread may have added it meanwhile)
      if (int(encoded.size()) < kEncoded) {
        encoded.emplace_back();
        encoded_next = int(encoded.size()) - 1;
      } else {
        encoded_index.erase(encoded[encoded_next].key);
      }
      Encoded& c = encoded[encoded_next];
      c.key = key;
      std::memcpy(c.map, out128, 128);
      encoded_index[key] = encoded_next;
      encoded_next = (encoded_next + 1) % kEncoded;
    }
  }
  return {};
#else
  (void)out128, (void)base, (void)inner, (void)outer, (void)pitch, (void)box_outer, (void)elem_bytes;
  return "TMA exists only on CUDA";
#endif
}

namespace {
std::mutex& ws_loads_mutex() {
  static std::mutex m;
  return m;
}
std::string& ws_loads_record() {
  static std::string how;
  return how;
}
}  // namespace

std::string last_ws_loads() {
  std::lock_guard<std::mutex> lock(ws_loads_mutex());
  return ws_loads_record();
}

void set_last_ws_loads(std::string how) {
  std::lock_guard<std::mutex> lock(ws_loads_mutex());
  ws_loads_record() = std::move(how);
}

namespace {
#if defined(KOKKOS_ENABLE_CUDA)
// The ring of tensor-map slots: device memory and pinned host staging (the copy is asynchronous,
// so its source must stay untouched until it has run: the slot's event guards both). kSlots = 1024
// (256 KB each side), found by their contents through a hash map: like the encodings above, a cycle
// of more operand sets than slots would copy on every launch.
struct TensorMapRing {
  static constexpr int kSlots = 1024;
  static constexpr std::size_t kSlotBytes = 256;
  std::mutex mutex;
  unsigned char* device = nullptr;
  unsigned char* host = nullptr;
  cudaEvent_t events[kSlots] = {};   // created on the slot's first use
  bool recorded[kSlots] = {};
  bool filled[kSlots] = {};          // host[i] holds what device[i] holds (or will, in upload_stream order)
  void* upload_stream[kSlots] = {};  // the stream the slot's copy was issued in
  std::unordered_map<std::string, int> index;  // the contents of each filled slot -> the slot
  int next = 0;
  bool hook = false;

  std::string ensure() {
    if (device) return {};
    if (cudaMalloc(reinterpret_cast<void**>(&device), kSlots * kSlotBytes) != cudaSuccess) {
      (void)cudaGetLastError();
      device = nullptr;
      return "no device memory for the tensor maps";
    }
    if (cudaMallocHost(reinterpret_cast<void**>(&host), kSlots * kSlotBytes) != cudaSuccess) {
      (void)cudaGetLastError();
      release();
      return "no pinned host memory for the tensor maps";
    }
    for (int i = 0; i < kSlots; ++i) recorded[i] = filled[i] = false;
    index.clear();
    if (!hook) {  // free before Kokkos (and with it the CUDA context's state) goes away
      Kokkos::push_finalize_hook([] {
        std::lock_guard<std::mutex> lock(tensor_map_ring().mutex);
        tensor_map_ring().release();
      });
      hook = true;
    }
    return {};
  }
  void release() {
    for (int i = 0; i < kSlots; ++i)
      if (events[i]) {
        (void)cudaEventSynchronize(events[i]);
        (void)cudaEventDestroy(events[i]);
        events[i] = nullptr;
      }
    if (device) (void)cudaFree(device);
    if (host) (void)cudaFreeHost(host);
    device = host = nullptr;
    next = 0;
    for (int i = 0; i < kSlots; ++i) recorded[i] = filled[i] = false;
    index.clear();
  }
  static TensorMapRing& tensor_map_ring() {
    static TensorMapRing ring;
    return ring;
  }
};
#endif
}  // namespace

std::string acquire_tensor_map_slot(const void* maps256, void* stream, TensorMapSlot& slot) {
#if defined(KOKKOS_ENABLE_CUDA)
  TensorMapRing& ring = TensorMapRing::tensor_map_ring();
  std::lock_guard<std::mutex> lock(ring.mutex);
  const std::string why = ring.ensure();
  if (!why.empty()) return why;
  // A slot that already holds these maps is used again without a copy: where it was copied in this
  // stream, stream order puts the copy first; elsewhere, once the event behind its last kernel has
  // completed (which follows the copy). Products that repeat their operands (a layer called again,
  // a benchmark's rotating buffers) then cost no copy and no wait per launch (at 512^3 f16, whose
  // suite rotates 67 operand sets, a copy and two encodings cost 1-2 us of a 9-15 us launch while the
  // ring had 64 slots; perf notes 27).
  std::string contents(static_cast<const char*>(maps256), TensorMapRing::kSlotBytes);
  const auto hit = ring.index.find(contents);
  if (hit != ring.index.end()) {
    const int j = hit->second;
    if (ring.upload_stream[j] == stream || (ring.recorded[j] && cudaEventQuery(ring.events[j]) == cudaSuccess)) {
      slot.device = ring.device + j * TensorMapRing::kSlotBytes;
      slot.index = j;
      return {};
    }
    (void)cudaGetLastError();  // cudaErrorNotReady: copy the maps into another slot
  }
  const int i = ring.next;
  ring.next = (ring.next + 1) % TensorMapRing::kSlots;
  if (ring.filled[i]) {
    const auto old = ring.index.find(std::string(reinterpret_cast<const char*>(ring.host + i * TensorMapRing::kSlotBytes),
                                                 TensorMapRing::kSlotBytes));
    if (old != ring.index.end() && old->second == i) ring.index.erase(old);
  }
  ring.filled[i] = false;
  if (!ring.events[i] && cudaEventCreateWithFlags(&ring.events[i], cudaEventDisableTiming) != cudaSuccess) {
    (void)cudaGetLastError();
    ring.events[i] = nullptr;
    return "no CUDA event for a tensor-map slot";
  }
  if (ring.recorded[i] && cudaEventSynchronize(ring.events[i]) != cudaSuccess) {
    (void)cudaGetLastError();
    return "a CUDA event of the tensor-map ring failed";
  }
  unsigned char* host = ring.host + i * TensorMapRing::kSlotBytes;
  unsigned char* device = ring.device + i * TensorMapRing::kSlotBytes;
  std::memcpy(host, maps256, TensorMapRing::kSlotBytes);
  if (cudaMemcpyAsync(device, host, TensorMapRing::kSlotBytes, cudaMemcpyHostToDevice,
                      static_cast<cudaStream_t>(stream)) != cudaSuccess) {
    (void)cudaGetLastError();
    return "copying the tensor maps to the device failed";
  }
  ring.filled[i] = true;
  ring.upload_stream[i] = stream;
  ring.index[std::move(contents)] = i;  // (a slot copied for the same maps before stays, unindexed)
  slot.device = device;
  slot.index = i;
  return {};
#else
  (void)maps256, (void)stream, (void)slot;
  return "TMA exists only on CUDA";
#endif
}

void release_tensor_map_slot(const TensorMapSlot& slot, void* stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (slot.index < 0) return;
  TensorMapRing& ring = TensorMapRing::tensor_map_ring();
  std::lock_guard<std::mutex> lock(ring.mutex);
  if (!ring.device) return;
  if (cudaEventRecord(ring.events[slot.index], static_cast<cudaStream_t>(stream)) == cudaSuccess)
    ring.recorded[slot.index] = true;
  else
    (void)cudaGetLastError();
#else
  (void)slot, (void)stream;
#endif
}

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

void release_split_k_workspace(void* stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  DeviceWorkspace::split_k().release_after(stream);
#else
  (void)stream;
#endif
}

bool ws_tma_disabled_by_env() {
  static const bool disabled = [] {
    const char* v = std::getenv("TILEKIT_WS_LOADS");
    return v != nullptr && std::string(v) == "cp.async";
  }();
  return disabled;
}

bool ws_persistent_disabled_by_env() {
  static const bool disabled = [] {
    const char* v = std::getenv("TILEKIT_WS_PERSISTENT");
    return v != nullptr && std::string(v) == "0";
  }();
  return disabled;
}

namespace {
std::mutex& ws_drift_mutex() {
  static std::mutex m;
  return m;
}
std::string& ws_drift_record() {
  static std::string how;
  return how;
}
WsDriftOverride& ws_drift_override_value() {
  static WsDriftOverride o;
  return o;
}
}  // namespace

std::string last_ws_drift_bound() {
  std::lock_guard<std::mutex> lock(ws_drift_mutex());
  return ws_drift_record();
}

void set_last_ws_drift_bound(std::string how) {
  std::lock_guard<std::mutex> lock(ws_drift_mutex());
  ws_drift_record() = std::move(how);
}

int ws_drift_slack_from_env() {
  // (-2: not a valid value; the first call and every later one throw the same message)
  static const int slack = [] {
    const char* v = std::getenv("TILEKIT_WS_DRIFT");
    if (v == nullptr) return -1;
    const std::string text(v);
    if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos) return -2;
    const long n = std::stol(text);
    return n <= (1L << 20) ? int(n) : -2;
  }();
  if (slack == -2)
    throw InvalidArgument(std::string("TILEKIT_WS_DRIFT='") + std::getenv("TILEKIT_WS_DRIFT") +
                          "' is not allowed: 0 (no drift bound) or a slack of 1 to 1048576 K steps");
  return slack;
}

bool ws_drift_disabled_by_env() { return ws_drift_slack_from_env() == 0; }

WsDriftOverride set_ws_drift_override(const WsDriftOverride& o) {
  std::lock_guard<std::mutex> lock(ws_drift_mutex());
  const WsDriftOverride previous = ws_drift_override_value();
  ws_drift_override_value() = o;
  return previous;
}

WsDriftOverride ws_drift_override() {
  std::lock_guard<std::mutex> lock(ws_drift_mutex());
  return ws_drift_override_value();
}

namespace {
std::string& ws_multicast_record() {
  static std::string how;
  return how;
}
std::atomic<int>& ws_multicast_min_k_value() {
  static std::atomic<int> steps{-1};
  return steps;
}
}  // namespace

std::string last_ws_multicast() {
  std::lock_guard<std::mutex> lock(ws_drift_mutex());
  return ws_multicast_record();
}

void set_last_ws_multicast(std::string how) {
  std::lock_guard<std::mutex> lock(ws_drift_mutex());
  ws_multicast_record() = std::move(how);
}

bool ws_multicast_disabled_by_env() {
  // (-1: not a valid value; the first call and every later one throw the same message)
  static const int mode = [] {
    const char* v = std::getenv("TILEKIT_WS_MULTICAST");
    if (v == nullptr) return 1;
    const std::string text(v);
    return text == "0" ? 0 : text == "1" ? 1 : -1;
  }();
  if (mode == -1)
    throw InvalidArgument(std::string("TILEKIT_WS_MULTICAST='") + std::getenv("TILEKIT_WS_MULTICAST") +
                          "' is not allowed: 0 (no clusters) or 1 (clusters where tuning::kWsMulticast says)");
  return mode == 0;
}

int set_ws_multicast_min_k_steps(int min_k_steps) {
  return ws_multicast_min_k_value().exchange(min_k_steps < 0 ? -1 : min_k_steps);
}
int ws_multicast_min_k_steps_override() { return ws_multicast_min_k_value().load(std::memory_order_relaxed); }

namespace {
std::atomic<int>& ws_team_cap_value() {
  static std::atomic<int> cap{0};
  return cap;
}
}  // namespace
int set_ws_team_cap(int teams) { return ws_team_cap_value().exchange(teams < 0 ? 0 : teams); }
int ws_team_cap() { return ws_team_cap_value().load(std::memory_order_relaxed); }

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
