#include "app/parse.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tilekit::app {

namespace {
// Digits only (at most `max_digits`), as an unsigned value; false on anything else or overflow.
bool digits_value(const std::string& s, std::size_t max_digits, uint64_t& v) {
  if (s.empty() || s.size() > max_digits || s.find_first_not_of("0123456789") != std::string::npos) return false;
  v = 0;
  for (char c : s) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  return true;
}

// Text as the user typed it, quoted, with control characters escaped and long text cut.
std::string quoted(const std::string& s) {
  std::string q;
  for (unsigned char c : s.substr(0, 64)) q += (c < 0x20 || c == 0x7f) ? fmt::format("\\x{:02x}", c) : std::string(1, char(c));
  return "'" + q + (s.size() > 64 ? "...'" : "'");
}
}  // namespace

std::string check_size(const std::string& s, int64_t& value) {
  uint64_t v = 0;
  if (!digits_value(s, 13, v) || v > uint64_t(kMaxSize))
    return quoted(s) + " is not a size (allowed: a whole number from 0 to 2^40)";
  value = static_cast<int64_t>(v);
  return "";
}

std::string check_whole(const std::string& s, int64_t min, int64_t max, const std::string& what, int64_t& value) {
  const bool neg = !s.empty() && s[0] == '-' && min < 0;
  uint64_t v = 0;
  const bool ok = digits_value(neg ? s.substr(1) : s, 19, v) && v <= uint64_t(std::numeric_limits<int64_t>::max());
  const int64_t x = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  if (!ok || x < min || x > max)
    return fmt::format("{} is not {} (allowed: a whole number from {} to {})", quoted(s), what, min, max);
  value = x;
  return "";
}

std::string check_seed(const std::string& s, uint64_t& value) {
  uint64_t v = 0;
  if (!digits_value(s, 20, v)) return quoted(s) + " is not a seed (allowed: a whole number from 0 to 2^64-1)";
  value = v;
  return "";
}

std::string check_finite(const std::string& s, double min, double max, double& value) {
  const std::string allowed = std::isinf(min) && std::isinf(max)
                                  ? std::string("a finite number, e.g. 1.5 or -2e-3")
                                  : fmt::format("a finite number from {} to {}", min, max);
  // strtod takes "nan", "inf", hex floats and leading spaces: only a plain decimal is allowed.
  if (s.empty() || s.size() > 64 || s.find_first_not_of("0123456789+-.eE") != std::string::npos)
    return fmt::format("{} is not a number (allowed: {})", quoted(s), allowed);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
    return fmt::format("{} is not a number (allowed: {})", quoted(s), allowed);
  if (v < min || v > max) return fmt::format("{} is out of range (allowed: {})", quoted(s), allowed);
  value = v;
  return "";
}

std::string check_nonempty(const std::string& s, const std::string& allowed) {
  return s.empty() ? fmt::format("an empty value is not allowed (allowed: {})", allowed) : "";
}

std::string check_flag_value(const std::string& s, const std::string& flag) {
  static const char* const kAllowed[] = {"true", "false", "1", "0", "yes", "no", "on", "off"};
  for (const char* a : kAllowed)
    if (s == a) return "";
  return fmt::format("{} is not a value of {} (allowed: {} alone, or {}=true / {}=false)", quoted(s), flag, flag,
                     flag, flag);
}

std::string check_word(const std::string& s, const std::string& allowed) {
  if (s.empty()) return check_nonempty(s, allowed);
  if (s.size() > 1 && s[0] == '-' && s[1] == '-')
    return fmt::format("{} looks like an option, not a value (the value is missing; allowed: {})", quoted(s), allowed);
  return "";
}

std::string check_path(const std::string& s) {
  if (s.empty()) return "an empty path is not allowed (leave the option out for its default)";
  if (s[0] == '-')
    return fmt::format("{} looks like an option, not a path (a value is missing before it; for a file of that "
                       "name write ./{})",
                       quoted(s), s);
  return "";
}

std::string parse_sizes(const std::string& s, int rank, std::vector<std::array<int64_t, 3>>& out) {
  constexpr std::size_t kMaxShapes = 10000;
  constexpr int64_t kMaxDim = 9999999, kMaxMatrix = int64_t(1) << 34;
  const std::string allowed = fmt::format("N, {}, first:last:step, or a comma list of them; each from 1 to {}",
                                          rank == 2 ? "MxN" : "MxNxK", kMaxDim);
  std::vector<std::array<int64_t, 3>> shapes;
  auto dim = [&](const std::string& t, int64_t& v) {
    uint64_t u = 0;
    if (!digits_value(t, 7, u) || u == 0) return false;
    v = static_cast<int64_t>(u);
    return true;
  };
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t colon = item.find(':');
    if (colon != std::string::npos) {
      const std::size_t colon2 = item.find(':', colon + 1);
      int64_t a = 0, b = 0, step = 0;
      if (colon2 == std::string::npos || !dim(item.substr(0, colon), a) ||
          !dim(item.substr(colon + 1, colon2 - colon - 1), b) || !dim(item.substr(colon2 + 1), step) || a > b)
        return fmt::format("--sizes: {} is not a range (allowed: first:last:step with 1 <= first <= last, step >= 1)",
                           quoted(item));
      if (uint64_t((b - a) / step) >= kMaxShapes) return fmt::format("--sizes: {} has more than {} shapes", quoted(item), kMaxShapes);
      for (int64_t v = a; v <= b; v += step) shapes.push_back({v, v, v});
    } else {
      std::vector<std::string> parts;
      std::size_t p = 0;
      while (true) {
        const std::size_t x = item.find('x', p);
        parts.push_back(item.substr(p, x == std::string::npos ? std::string::npos : x - p));
        if (x == std::string::npos) break;
        p = x + 1;
      }
      std::array<int64_t, 3> sh{1, 1, 1};
      bool ok = parts.size() == 1 || int(parts.size()) == rank;
      for (std::size_t i = 0; ok && i < parts.size(); ++i) ok = dim(parts[i], sh[i]);
      if (!ok) return fmt::format("--sizes: {} is not a size (allowed: {})", quoted(item), allowed);
      if (parts.size() == 1) sh = {sh[0], sh[0], rank == 2 ? 1 : sh[0]};
      shapes.push_back(sh);
    }
    if (shapes.size() > kMaxShapes) return fmt::format("--sizes: more than {} shapes", kMaxShapes);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (const auto& sh : shapes)
    if (sh[0] * sh[1] > kMaxMatrix || sh[1] * sh[2] > kMaxMatrix || sh[0] * sh[2] > kMaxMatrix)
      return fmt::format("--sizes: {}x{}x{} is too large to tune (limit 2^34 elements a matrix)", sh[0], sh[1], sh[2]);
  out = std::move(shapes);
  return "";
}

std::string parse_shape(const std::string& s, int64_t& rows, int64_t& cols) {
  const std::size_t x = s.find('x');
  int64_t r = 0, c = 0;
  if (x == std::string::npos || !check_size(s.substr(0, x), r).empty() || !check_size(s.substr(x + 1), c).empty())
    return fmt::format("{} is not a shape (expected RxC with R and C whole numbers, e.g. 1x4096 for a row vector)",
                       quoted(s));
  if (r != 0 && c > kMaxSize / r) return fmt::format("{} is too large (limit 2^40 elements)", quoted(s));
  rows = r;
  cols = c;
  return "";
}

}  // namespace tilekit::app
