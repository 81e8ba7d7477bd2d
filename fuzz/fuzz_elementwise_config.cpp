// ElementwiseConfig::parse (tilekit/kernels/elementwise/config.cpp), the names --config and the tuning
// cache hold. Properties: no crash or UB; an accepted name prints as a name that parses back to the
// same config.
#include "tilekit/kernels/elementwise/config.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  tilekit::ElementwiseConfig c;
  std::string why;
  if (!tilekit::ElementwiseConfig::parse(s, c, why)) {
    if (why.empty()) std::abort();
    return 0;
  }
  tilekit::ElementwiseConfig again;
  if (!tilekit::ElementwiseConfig::parse(c.name(), again, why) || !(again == c)) std::abort();
  return 0;
}
