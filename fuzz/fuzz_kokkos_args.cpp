// The Kokkos-option pre-parser (app/kokkos_args.cpp): any command line and KOKKOS_* variables.
// Input: lines; "ENV NAME=VALUE" sets a variable, any other line is one argument. The first byte
// picks the limits (GPU or host, Kokkos 3 or 4). Properties: no crash, no UB, no exception; a
// message is one line; what it accepts Kokkos takes (a thread count within the pool, a value after
// '=' for every option that takes one, no unknown --kokkos-* option).
#include "app/kokkos_args.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace tilekit::app;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  KokkosLimits l;
  l.gpu = data[0] & 1;
  l.openmp = !l.gpu && (data[0] & 2);
  l.kokkos_major = data[0] & 4 ? 4 : 3;
  l.kokkos_minor = l.kokkos_major == 3 ? 4 : (data[0] & 8 ? 6 : 2);  // 3.4, 4.2 or 4.6
  l.max_threads = l.openmp ? 512 : 1;
  l.load_library = [](const std::string& p) { return p == "/ok.so" ? std::string() : std::string("no such file"); };
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, nl - at);
    if (line.compare(0, 4, "ENV ") == 0) {
      const std::size_t eq = line.find('=', 4);
      if (eq != std::string::npos) env[line.substr(4, eq - 4)] = line.substr(eq + 1);
    } else {
      args.push_back(line);
    }
    at = nl + 1;
  }
  const std::string why = check_kokkos_options(
      args, [&](const char* n) { const auto it = env.find(n); return it == env.end() ? nullptr : it->second.c_str(); },
      l);
  if (!why.empty()) {
    for (unsigned char ch : why)
      if (ch < 0x20) std::abort();  // one line: user text is quoted with control characters escaped
    return 0;
  }
  for (const std::string& a : args) {
    if (a.compare(0, 9, "--kokkos-") != 0) continue;
    const std::size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (name == "--kokkos-threads" && l.kokkos_major * 100 + l.kokkos_minor > 402) std::abort();  // gone in 4.3
    if (name == "--kokkos-threads" || name == "--kokkos-num-threads") {
      const std::string v = a.substr(eq == std::string::npos ? a.size() : eq + 1);
      if (eq == std::string::npos || v.empty() || v.size() > 9) std::abort();
      const long n = std::strtol(v.c_str(), nullptr, 10);
      if (n < 1 || n > l.max_threads) std::abort();
    }
    static const char* const kKnown[] = {"--kokkos-threads", "--kokkos-num-threads", "--kokkos-numa",
                                         "--kokkos-device-id", "--kokkos-num-devices", "--kokkos-map-device-id-by",
                                         "--kokkos-tools-library", "--kokkos-tools-libs", "--kokkos-tools-args",
                                         "--kokkos-tools-help", "--kokkos-help", "--kokkos-disable-warnings",
                                         "--kokkos-tune-internals", "--kokkos-print-configuration"};
    bool known = false;
    for (const char* k : kKnown) known = known || name == k;
    if (!known) std::abort();
  }
  return 0;
}
