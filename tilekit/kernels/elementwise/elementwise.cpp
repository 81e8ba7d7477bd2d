// The non-template parts of the elementwise API: the op table and the ops' own checks.
#include "tilekit/kernels/elementwise/elementwise.hpp"

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <sstream>

namespace tilekit {

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
