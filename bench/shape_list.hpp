// Shape lists of the benchmarks, in plain C++17 (no Kokkos): shared by the Kokkos benchmark binaries
// (bench/harness.hpp) and the cuBLAS baseline (cublas_baseline.cu, built on the GPU machine by nvcc alone),
// so both read --tk_shapes / --shapes the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace tilekit {
namespace bench {

/// One problem shape: M x N x K for matmul (K = 0 for 2-D elementwise shapes). `dtypes` restricts
/// which element types run it (empty = every type the run selects).
struct Shape {
  int64_t M = 0, N = 0, K = 0;
  std::vector<std::string> dtypes;

  /// "1024x1024x1024", or "16384x8192" when K == 0.
  std::string name() const {
    std::string s = std::to_string(M) + "x" + std::to_string(N);
    if (K > 0) s += "x" + std::to_string(K);
    return s;
  }
  bool wants(const std::string& dtype) const {
    return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
  }
};

/// Non-empty pieces of `s` between separators.
inline std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

namespace detail {
inline bool parse_size(const std::string& s, int64_t& v) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  v = std::stoll(s);
  return v > 0;
}
}  // namespace detail

/// Parses a shape list: comma-separated entries, each one of
///   n          the square n x n x n
///   a:b:s      the squares a, a+s, ..., up to b
///   MxNxK      one shape (MxN for 2-D suites)
/// optionally followed by @dtype[+dtype...] to run that entry only for those types, e.g.
///   "128:4096:128,8192,9728x8192x65536@f16". On failure returns false and says why.
inline bool parse_shapes(const std::string& text, std::vector<Shape>& out, std::string& why) {
  out.clear();
  for (const std::string& entry : split_list(text, ',')) {
    std::string body = entry;
    std::vector<std::string> dts;
    const auto at = entry.find('@');
    if (at != std::string::npos) {
      body = entry.substr(0, at);
      dts = split_list(entry.substr(at + 1), '+');
      if (dts.empty()) {
        why = "shape entry '" + entry + "' has an empty type list after '@'";
        return false;
      }
    }
    int64_t v[3] = {0, 0, 0};
    if (body.find(':') != std::string::npos) {  // a:b:s, squares
      const auto p = split_list(body, ':');
      if (p.size() != 3 || !detail::parse_size(p[0], v[0]) || !detail::parse_size(p[1], v[1]) ||
          !detail::parse_size(p[2], v[2]) || v[1] < v[0]) {
        why = "shape range '" + body + "' is not start:stop:step (positive, start <= stop)";
        return false;
      }
      for (int64_t n = v[0]; n <= v[1]; n += v[2]) out.push_back({n, n, n, dts});
      continue;
    }
    const auto p = split_list(body, 'x');
    if (p.empty() || p.size() > 3) {
      why = "shape '" + body + "' is not n, a:b:s, MxN or MxNxK";
      return false;
    }
    for (std::size_t d = 0; d < p.size(); ++d)
      if (!detail::parse_size(p[d], v[d])) {
        why = "shape '" + body + "' is not n, a:b:s, MxN or MxNxK with positive sizes";
        return false;
      }
    if (p.size() == 1) v[1] = v[2] = v[0];  // n: the square n x n x n
    out.push_back({v[0], v[1], v[2], dts});
  }
  if (out.empty()) {
    why = "the shape list '" + text + "' is empty";
    return false;
  }
  return true;
}

}  // namespace bench
}  // namespace tilekit
