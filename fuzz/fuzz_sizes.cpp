// The size parsers of the app (app/parse.cpp): --sizes lists, RxC shapes, sizes, whole numbers,
// seeds and finite numbers. Properties: no crash or UB; what is accepted is within the documented
// limits; a message is given exactly when the text is refused.
#include "app/parse.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace tilekit::app;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  for (int rank : {2, 3}) {
    std::vector<std::array<int64_t, 3>> shapes;
    if (parse_sizes(s, rank, shapes).empty()) {
      if (shapes.empty() || shapes.size() > 20000) std::abort();
      for (const auto& sh : shapes)
        for (int64_t d : sh)
          if (d < 1 || d > 9999999) std::abort();
    }
  }
  int64_t r = -1, c = -1;
  if (parse_shape(s, r, c).empty() && (r < 0 || c < 0 || (r != 0 && c > kMaxSize / r))) std::abort();
  int64_t v = -1;
  if (check_size(s, v).empty() && (v < 0 || v > kMaxSize)) std::abort();
  if (check_whole(s, -5, 100000, "a count", v).empty() && (v < -5 || v > 100000)) std::abort();
  uint64_t seed = 0;
  (void)check_seed(s, seed);
  double x = 0;
  if (check_finite(s, -1e300, 1e7, x).empty() && (!std::isfinite(x) || x > 1e7)) std::abort();
  return 0;
}
