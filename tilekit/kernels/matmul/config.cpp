#include "tilekit/kernels/matmul/config.hpp"

#include <fmt/format.h>

#include <regex>

namespace tilekit {

std::string MatmulConfig::tile_name() const {
  if (thin) return fmt::format("thin_l{}_k{}", thin_cols, thin_kgroups);
  return fmt::format("bm{}_bn{}_bk{}_tm{}_tn{}{}", bm, bn, bk, tm, tn, ws ? "_ws" : wgmma ? "_wg" : mma ? "_tc" : "");
}

std::string MatmulConfig::name() const {
  if (thin) return tile_name();
  // "_s" whenever the split is not 1 (an out-of-range one too: the name must parse back to it)
  const std::string split = k_splits != 1 ? fmt::format("_s{}", k_splits) : std::string();
  return fmt::format("{}{}_g{}_t{}_v{}", tile_name(), split, group_m, team_size, vector_length);
}

bool MatmulConfig::parse(const std::string& s, MatmulConfig& out, std::string& why) {
  static const std::regex re(
      R"(bm(\d{1,4})_bn(\d{1,4})_bk(\d{1,4})_tm(\d{1,3})_tn(\d{1,3})(_tc|_wg|_ws)?(?:_s(\d{1,3}))?(?:_g(\d{1,4}))?(?:_t(\d{1,4}))?(?:_v(\d{1,3}))?)");
  // Thin configs carry no team shape: the kernel derives it (tilekit/kernels/matmul/thin.hpp).
  static const std::regex thin_re(R"(thin_l(\d{1,4})_k(\d{1,3}))");
  std::smatch m;
  if (std::regex_match(s, m, thin_re)) {
    MatmulConfig c;
    c.thin = true;
    c.thin_cols = std::stoi(m[1]);
    c.thin_kgroups = std::stoi(m[2]);
    c.group_m = 1;
    c.team_size = c.vector_length = 0;
    out = c;
    return true;
  }
  if (!std::regex_match(s, m, re)) {
    why = "malformed config name '" + s +
          "' (expected bm<int>_bn<int>_bk<int>_tm<int>_tn<int>[_tc|_wg|_ws][_s<int>][_g<int>][_t<int>][_v<int>], "
          "e.g. bm64_bn64_bk16_tm4_tn4_g8, or thin_l<int>_k<int> for M or N up to 16)";
    return false;
  }
  MatmulConfig c = out;
  c.thin = false;
  c.bm = std::stoi(m[1]);
  c.bn = std::stoi(m[2]);
  c.bk = std::stoi(m[3]);
  c.tm = std::stoi(m[4]);
  c.tn = std::stoi(m[5]);
  c.mma = m[6].matched;
  c.wgmma = m[6].matched && m[6].str() != "_tc";
  c.ws = m[6].matched && m[6].str() == "_ws";
  c.k_splits = m[7].matched ? std::stoi(m[7]) : 1;
  if (m[8].matched) c.group_m = std::stoi(m[8]);
  if (m[9].matched) c.team_size = std::stoi(m[9]);
  if (m[10].matched) c.vector_length = std::stoi(m[10]);
  out = c;
  return true;
}

}  // namespace tilekit
