#include "kernels/common.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cctype>

namespace tilekit {

std::string backend_name() {
  std::string s = Kokkos::DefaultExecutionSpace::name();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return s;
}

}  // namespace tilekit
