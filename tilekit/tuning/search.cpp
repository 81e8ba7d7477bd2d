#include "tilekit/tuning/search.hpp"

#include <algorithm>
#include <numeric>
#include <random>

namespace tilekit {
namespace tuning {

bool parse_strategy(const std::string& s, Strategy& out) {
  if (s == "exhaustive") return out = Strategy::exhaustive, true;
  if (s == "random") return out = Strategy::random, true;
  if (s == "listed") return out = Strategy::listed, true;
  if (s == "model") return out = Strategy::model, true;
  return false;
}

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::random: return "random";
    case Strategy::listed: return "listed";
    case Strategy::model: return "model";
    default: return "exhaustive";
  }
}

std::vector<int> candidate_order(int n, Strategy strategy, const Budget& budget, uint64_t seed) {
  if (strategy == Strategy::listed || strategy == Strategy::model) return {};  // model: ranked per shape
  std::vector<int> order(static_cast<std::size_t>(std::max(n, 0)));
  std::iota(order.begin(), order.end(), 0);
  if (strategy == Strategy::random) {
    // Fisher-Yates with a fixed engine: std::shuffle's use of the engine is unspecified across
    // standard libraries, so the order would not be reproducible between toolchains.
    std::mt19937_64 rng(seed);
    for (int i = n - 1; i > 0; --i) {
      const int j = static_cast<int>(rng() % static_cast<uint64_t>(i + 1));
      std::swap(order[i], order[j]);
    }
  }
  if (budget.count > 0 && budget.count < n) order.resize(static_cast<std::size_t>(budget.count));
  return order;
}

}  // namespace tuning
}  // namespace tilekit
