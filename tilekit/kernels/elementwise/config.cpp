// Names of elementwise configs: printing and parsing (no Kokkos; fuzzed by fuzz/elementwise_config.cpp).
#include "tilekit/kernels/elementwise/config.hpp"

#include <fmt/format.h>

#include <regex>
#include <sstream>
#include <vector>

namespace tilekit {

const char* variant_name(ElementwiseVariant v) {
  switch (v) {
    case ElementwiseVariant::naive: return "naive";
    case ElementwiseVariant::vectorized: return "vectorized";
    case ElementwiseVariant::tiled: return "tiled";
    case ElementwiseVariant::automatic: return "auto";
  }
  return "?";
}

bool parse_variant(const std::string& s, ElementwiseVariant& out) {
  for (auto v : {ElementwiseVariant::naive, ElementwiseVariant::vectorized, ElementwiseVariant::tiled,
                 ElementwiseVariant::automatic})
    if (s == variant_name(v)) {
      out = v;
      return true;
    }
  return false;
}

std::string ElementwiseConfig::name() const {
  switch (variant) {
    case ElementwiseVariant::naive:
    case ElementwiseVariant::automatic: return variant_name(variant);
    case ElementwiseVariant::vectorized: return fmt::format("vectorized_vb{}", vector_bytes);
    case ElementwiseVariant::tiled:
      return fmt::format("tiled_vb{}_r{}_c{}_t{}_n{}_{}", vector_bytes, rows_per_thread, vectors_per_thread,
                         team_size, threads_n, remap_teams ? "remap" : "noremap");
  }
  return "?";
}

bool ElementwiseConfig::parse(const std::string& s, ElementwiseConfig& out, std::string& why) {
  static const char* kForm =
      "naive, vectorized[_vb<bytes>], tiled[_vb<bytes>][_r<rows per thread>][_c<vectors per thread>]"
      "[_t<team size>][_n<threads along a row>][_remap|_noremap] or auto, e.g. tiled_vb16_r16_c1_t256_n64_remap";
  std::vector<std::string> parts;
  std::stringstream ss(s);
  for (std::string p; std::getline(ss, p, '_');) parts.push_back(p);
  ElementwiseConfig c = out;
  if (parts.empty() || !parse_variant(parts[0], c.variant)) {
    why = fmt::format("malformed elementwise config '{}' (expected {})", s, kForm);
    return false;
  }
  static const std::regex field(R"((vb|r|c|t|n)(\d{1,6}))");
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    std::smatch m;
    const bool tiled = c.variant == ElementwiseVariant::tiled;
    if (tiled && (p == "remap" || p == "noremap")) {
      c.remap_teams = p == "remap";
      continue;
    }
    if (!std::regex_match(p, m, field) || (c.variant != ElementwiseVariant::vectorized && !tiled) ||
        (!tiled && m[1] != "vb")) {
      why = fmt::format("malformed elementwise config '{}': field '{}' is not one a {} config has (expected {})", s, p,
                        parts[0], kForm);
      return false;
    }
    const int v = std::stoi(m[2]);
    if (m[1] == "vb") c.vector_bytes = v;
    if (m[1] == "r") c.rows_per_thread = v;
    if (m[1] == "c") c.vectors_per_thread = v;
    if (m[1] == "t") c.team_size = v;
    if (m[1] == "n") c.threads_n = v;
  }
  out = c;
  return true;
}

}  // namespace tilekit
