#include "tilekit/kernels/matmul/matmul.hpp"

#include "tilekit/kernels/core/memory.hpp"
#include "tilekit/kernels/matmul/host/packed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

namespace tilekit {

const char* supported_type_pairs() {
  return "f64->f64, f32->f32, f16->f16, f16->f32, bf16->bf16, bf16->f32, i8->i32";
}

namespace detail {
// Declared in tilekit/kernels/matmul/host/packed.hpp: the packed operands of host matmuls. One buffer per
// calling thread (concurrent callers never share one), grown by at least half its size, freed at
// thread exit.
void* host_pack_workspace(std::size_t bytes) {
  struct Buffer {
    void* data = nullptr;
    std::size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buf;
  if (bytes <= buf.size) return buf.data;
  const std::size_t want = std::max(bytes, buf.size + buf.size / 2);
  const std::size_t rounded = (want + 63) / 64 * 64;
  void* fresh = std::aligned_alloc(64, rounded);
  if (!fresh)
    throw InsufficientMemory(fmt::format("the packed operands of a host matmul need {:.2f} GB ({} bytes); the "
                                         "allocation failed",
                                         double(rounded) * 1e-9, rounded));
  std::free(buf.data);
  buf.data = fresh;
  buf.size = rounded;
  return buf.data;
}

// Declared in tilekit/kernels/matmul/host/packed.hpp.
std::atomic<int>& host_pack_mode() {
  static std::atomic<int> mode{[] {
    const char* v = std::getenv("TILEKIT_HOST_PACK");
    const std::string s = v ? v : "";
    if (s.empty() || s == "by_size") return int(HostPackMode::by_size);
    if (s == "in_loop") return int(HostPackMode::in_loop);
    if (s == "passes") return int(HostPackMode::passes);
    throw InvalidArgument("TILEKIT_HOST_PACK='" + s + "': allowed values are by_size, in_loop, passes");
  }()};
  return mode;
}
}  // namespace detail

}  // namespace tilekit
