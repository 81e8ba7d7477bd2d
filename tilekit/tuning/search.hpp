// Search strategies shared by the tuners: which candidates to try, in which order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilekit {
namespace tuning {

/// exhaustive: every candidate in menu order; random: a seeded shuffle; listed: none of the menu (only
/// the shape's default and the configs named by the caller, e.g. `tilekit tune matmul --also`);
/// model (matmul on CUDA): the GPU model's top candidates for each shape (matmul_model.hpp), at most
/// budget.count of them (default kModelCandidates).
enum class Strategy { exhaustive, random, listed, model };
/// How many of the model's ranked candidates `--strategy model` measures when no count is given.
constexpr int kModelCandidates = 4;

/// Limits of a sweep, per shape: at most `count` candidates (0 = all) and `seconds` of measuring
/// (0 = no limit; checked between candidates).
struct Budget {
  int count = 0;
  double seconds = 0.0;
};

bool parse_strategy(const std::string& s, Strategy& out);
const char* strategy_name(Strategy s);

/// The order in which to try candidates 0..n-1: all in order (exhaustive, truncated to
/// budget.count if set), a shuffle seeded by `seed` truncated to budget.count (random), or none
/// (listed). The same (n, strategy, budget, seed) always gives the same order.
std::vector<int> candidate_order(int n, Strategy strategy, const Budget& budget, uint64_t seed);

}  // namespace tuning
}  // namespace tilekit
