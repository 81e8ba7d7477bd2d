// MatmulConfig::parse (tilekit/kernels/matmul/config.cpp), the names --config and the tuning cache hold.
// Properties: no crash or UB; an accepted name prints as a name that parses back to the same config.
#include "tilekit/kernels/matmul/config.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  tilekit::MatmulConfig c;
  std::string why;
  if (!tilekit::MatmulConfig::parse(s, c, why)) {
    if (why.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  tilekit::MatmulConfig again;
  if (!tilekit::MatmulConfig::parse(c.name(), again, why) || !(again == c)) std::abort();
  return 0;
}
