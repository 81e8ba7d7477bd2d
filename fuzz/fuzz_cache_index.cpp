// The tuning cache's index (tilekit/tuning/cache.cpp over cache_format.cpp): any file text, loaded
// as the cache of the device it names. Properties: no crash, no UB, no exception; every readable
// entry is found by its key, with the config of the last entry of that key; the nearest entry of a
// key is of its family; merging the cache into an empty one keeps every key.
#include "tilekit/kernels/core/runtime.hpp"
#include "tilekit/tuning/cache.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

using namespace tilekit::tuning;

// cache.cpp's links to the rest of the library, unused here (no Kokkos in a fuzz target).
namespace tilekit {
RuntimeInfo runtime_info() { return {}; }
namespace tuning {
const std::vector<std::pair<std::string, std::string>>& builtin_shipped_results() {
  static const std::vector<std::pair<std::string, std::string>> none;
  return none;
}
}  // namespace tuning
}  // namespace tilekit

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  CacheFile f;
  std::string why;
  if (parse_cache_text(text, "0.2.0", f, why) != CacheParse::ok) return 0;
  DeviceIdentity id = f.device;
  id.tilekit_version = "0.2.0";
  TuningCache c("fuzz.json", id);
  if (!c.load_text(text, "fuzz")) std::abort();
  std::map<std::string, std::string> last;  // key -> config of its last entry
  for (const auto& e : f.entries) last[e.key.str()] = e.config;
  if (c.entries().size() != last.size()) std::abort();
  for (const auto& e : f.entries) {
    const auto found = c.find_exact(e.key);
    if (!found || found->key.str() != e.key.str() || found->config != last[e.key.str()]) std::abort();
    const auto near = c.find_nearest(e.key);
    if (!near || near->key.family() != e.key.family()) std::abort();
    const auto all = c.by_distance(e.key);
    if (all.empty() || all.front().key.family() != e.key.family()) std::abort();
  }
  TuningCache merged("merged.json", id);
  merged.merge(c);
  merged.merge(c);
  if (merged.entries().size() != c.entries().size()) std::abort();
  return 0;
}
