// The automatic configs of the library API (tilekit/tilekit.hpp): the `--config auto` lookup of the
// app, remembered per problem key so that only the first call for a shape reads the tuning files.
#include "tilekit/tilekit.hpp"

#include "tilekit/tuning/elementwise_tuner.hpp"
#include "tilekit/tuning/matmul_tuner.hpp"

#include <fmt/format.h>

#include <cctype>
#include <mutex>
#include <unordered_map>

namespace tilekit {
namespace detail {

namespace {
// Resolved configs by key (the tuning key, the cache directory and the shipped directory).
template <class Config>
struct Memo {
  std::mutex mutex;
  std::unordered_map<std::string, Config> map;

  template <class Resolve>
  Config get(const std::string& key, Resolve&& resolve) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      const auto it = map.find(key);
      if (it != map.end()) return it->second;
    }
    bool keep = true;
    const Config c = resolve(keep);  // outside the lock: it reads files
    if (keep) {
      std::lock_guard<std::mutex> lock(mutex);
      map.emplace(key, c);
    }
    return c;
  }
};
}  // namespace

MatmulConfig auto_matmul_config(DType in, DType out, bool a_col, bool b_col, bool c_col, const Epilogue& ep,
                                int64_t M, int64_t N, int64_t K, Math math,
                                const std::function<std::string(const MatmulConfig&)>& valid,
                                const char* shipped_dir) {
  static Memo<MatmulConfig> memo;
  const tuning::TuneKey key =
      tuning::matmul_key(in, out, tuning::MatmulLayouts{a_col, b_col, c_col}, ep, M, N, K, math);
  const std::string cache_dir = tuning::TuningCache::default_dir();
  return memo.get(fmt::format("{}|{}|{}", key.str(), cache_dir, shipped_dir), [&](bool& keep) {
    const MatmulConfig c = tuning::resolve_matmul_config(key, in, valid, cache_dir, shipped_dir, math).config;
    keep = valid(c).empty();  // an invalid problem (strides, pointers) must not pin its fallback
    return c;
  });
}

ElementwiseConfig auto_elementwise_config(const char* op, DType t, int64_t M, int64_t N, const char* shipped_dir,
                                          const std::function<std::string(const ElementwiseConfig&)>& valid) {
  static Memo<ElementwiseConfig> memo;
  OpKind kind;
  if (!parse_op(op, kind)) return ElementwiseConfig();  // an op of the caller's: the backend default
  const std::string cache_dir = tuning::TuningCache::default_dir();
  return memo.get(fmt::format("{}|{}|{}x{}|{}|{}", op, dtype_name(t), M, N, cache_dir, shipped_dir), [&](bool& keep) {
    std::string source, why;
    const ElementwiseConfig c = tuning::resolve_tuned_elementwise(kind, t, M, N, source, why, cache_dir, shipped_dir, valid);
    keep = !valid || valid(c).empty();  // an invalid problem (strides, overlap) must not pin its fallback
    return c;
  });
}

Op parse_trans(const char* trans, const char* which) {
  const char c = trans && trans[0] && !trans[1] ? static_cast<char>(std::toupper(trans[0])) : '\0';
  if (c == 'N') return Op::N;
  if (c == 'T' || c == 'C') return Op::T;
  throw InvalidArgument(fmt::format("{} must be \"N\" or \"T\" (\"C\" is \"T\" for real types); got \"{}\"",
                                    which, trans ? trans : "(null)"));
}

}  // namespace detail
}  // namespace tilekit
