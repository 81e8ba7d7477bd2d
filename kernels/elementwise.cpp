// The non-template parts of the elementwise API: variant and config names, the op table.
#include "kernels/elementwise.hpp"

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <sstream>

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

// --- ops --------------------------------------------------------------------------------------

const std::vector<OpInfo>& op_table() {
  static const std::vector<OpInfo> table = {
      {OpKind::add, "add", 2, true, false, "a + b"},
      {OpKind::sub, "sub", 2, true, false, "a - b"},
      {OpKind::mul, "mul", 2, true, false, "a * b"},
      {OpKind::div, "div", 2, true, false, "a / b"},
      {OpKind::max, "max", 2, true, false, "max(a, b)"},
      {OpKind::min, "min", 2, true, false, "min(a, b)"},
      {OpKind::mul_relu, "mul_relu", 2, true, false, "relu(a * b)"},
      {OpKind::fma, "fma", 3, true, false, "a * b + c, fused"},
      {OpKind::axpby, "axpby", 2, true, false, "alpha * a + beta * b, as fma(alpha, a, beta * b)"},
      {OpKind::relu, "relu", 1, true, false, "max(a, 0)"},
      {OpKind::silu, "silu", 1, false, true, "a * sigmoid(a)"},
  };
  return table;
}

const OpInfo& op_info(OpKind op) {
  for (const auto& i : op_table())
    if (i.kind == op) return i;
  return op_table().front();
}

bool parse_op(const std::string& s, OpKind& out) {
  const std::string name = s == "mul+relu" ? "mul_relu" : s;
  for (const auto& i : op_table())
    if (name == i.name) {
      out = i.kind;
      return true;
    }
  return false;
}

std::string op_names() {
  std::string s;
  for (const auto& i : op_table()) s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

std::string ops::Axpby::check(DType t) const {
  if (t != DType::i32) return "";
  for (double v : {alpha, beta})
    if (!std::isfinite(v) || v != std::trunc(v) || std::fabs(v) > 2147483647.0)
      return fmt::format("axpby on i32 needs whole-number alpha and beta within the i32 range (got alpha {}, beta {})",
                         alpha, beta);
  return "";
}

}  // namespace tilekit
