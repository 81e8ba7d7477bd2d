// The tuning-cache reader (tilekit/tuning/cache_format.cpp): any file text. Properties: no crash, no UB, no
// uncaught exception; a readable file written back reads back with the same entries and keeps every
// entry it did not use.
#include "tilekit/tuning/cache.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace tilekit::tuning;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  CacheFile f;
  std::string why;
  const CacheParse r = parse_cache_text(text, "0.2.0", f, why);
  if (r != CacheParse::ok) {
    if (why.empty()) std::abort();
    return 0;
  }
  CacheFile again;
  if (parse_cache_text(cache_file_text(f), "0.2.0", again, why) != CacheParse::ok) std::abort();
  if (again.entries.size() != f.entries.size() || again.kept.size() != f.kept.size()) std::abort();
  for (std::size_t i = 0; i < f.entries.size(); ++i)
    if (!(again.entries[i].key == f.entries[i].key) || again.entries[i].config != f.entries[i].config) std::abort();
  return 0;
}
