// The tuning cache at cluster sizes: loading a file of 1k, 10k and 100k entries (read, parse,
// index) and looking an entry up (the exact key; the nearest shapes of a family, as --config auto
// does). Host work only: no kernel runs. Issue 54 asks for a load under a second and lookups in
// microseconds at 100k entries.
//
//   tilekit_bench_cache [--benchmark_filter=...]
#include "bench/harness.hpp"
#include "tilekit/tuning/cache.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace tilekit {
namespace bench {
namespace cache_suite {

using tuning::CacheFile;
using tuning::DeviceIdentity;
using tuning::TuneEntry;
using tuning::TuneKey;
using tuning::TuningCache;

const DeviceIdentity& identity() {
  static const DeviceIdentity id{"openmp", "bench CPU", "x86_64", 2, TILEKIT_VERSION};
  return id;
}

// The key of entry i of a cache written by many sweeps: 6 type pairs x 4 layouts x 10 epilogues
// (240 families), each with shapes on a grid of multiples of 64.
TuneKey key_of(int64_t i) {
  static const char* const kTypes[] = {"f32->f32", "f64->f64", "f16->f16", "f16->f32", "bf16->f32", "i8->i32"};
  static const char* const kLayouts[] = {"a=row,b=row,c=row", "a=col,b=row,c=row", "a=row,b=col,c=row",
                                         "a=col,b=col,c=col"};
  static const char* const kEpilogues[] = {"none", "bias", "relu", "bias+relu", "silu",
                                           "bias+silu", "gelu", "bias+gelu", "leaky_relu", "bias+leaky_relu"};
  const int64_t family = i % 240, s = i / 240;
  return TuneKey{"matmul", kTypes[family % 6], kLayouts[family / 6 % 4], kEpilogues[family / 24],
                 {64 * (1 + s % 23), 64 * (1 + s / 23 % 29), 64 * (1 + s / 667)}};
}

// The files this process wrote, removed at exit.
struct TempFiles {
  std::vector<std::string> paths;
  ~TempFiles() {
    std::error_code ec;
    for (const auto& p : paths) std::filesystem::remove(p, ec);
  }
};

// A cache file of n entries in a temporary directory, written once per size.
std::string cache_file(int64_t n) {
  static TempFiles files;
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("tilekit-bench-cache-{}-{}.json", ::getpid(), n)).string();
  if (std::filesystem::exists(path)) return path;
  files.paths.push_back(path);
  CacheFile f;
  f.tilekit_version = TILEKIT_VERSION;
  f.device = identity();
  for (int64_t i = 0; i < n; ++i) {
    TuneEntry e;
    e.key = key_of(i);
    e.config = "bm128_bn128_bk64_tm8_tn8_g8_t1_v1";
    e.median_s = 1e-3 + 1e-9 * double(i);
    e.p20_s = e.median_s * 0.99;
    e.p80_s = e.median_s * 1.01;
    e.rate = 12.5;
    e.date = "2026-11-27T12:00:00Z";
    e.tilekit_version = TILEKIT_VERSION;
    f.entries.push_back(std::move(e));
  }
  std::ofstream(path) << tuning::cache_file_text(f);
  return path;
}

void bm_load(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::string path = cache_file(n);
  std::size_t loaded = 0;
  for (auto _ : state) {
    TuningCache c(path, identity());
    c.load();
    loaded = c.entries().size();
    benchmark::DoNotOptimize(loaded);
  }
  if (loaded != std::size_t(n)) state.SkipWithError("the cache did not load every entry");
  state.counters["entries"] = double(n);
  state.counters["file_MB"] = double(std::filesystem::file_size(path)) * 1e-6;
}

// One loaded cache per size, kept for the lookups.
const TuningCache& loaded(int64_t n) {
  static std::vector<std::pair<int64_t, std::unique_ptr<TuningCache>>> caches;
  for (const auto& [size, c] : caches)
    if (size == n) return *c;
  auto c = std::make_unique<TuningCache>(cache_file(n), identity());
  c->load();
  caches.emplace_back(n, std::move(c));
  return *caches.back().second;
}

void bm_find_exact(benchmark::State& state) {
  const int64_t n = state.range(0);
  const TuningCache& c = loaded(n);
  int64_t i = 0, found = 0;
  for (auto _ : state) {
    const auto e = c.find_exact(key_of(i));
    found += e.has_value();
    i = (i + 7919) % n;
  }
  if (found != int64_t(state.iterations())) state.SkipWithError("a key that is in the cache was not found");
  state.counters["entries"] = double(n);
}

void bm_nearest(benchmark::State& state) {
  const int64_t n = state.range(0);
  const TuningCache& c = loaded(n);
  int64_t i = 0;
  for (auto _ : state) {
    TuneKey k = key_of(i);
    k.shape = {1000, 1000, 1000};  // not tuned: every shape of the family is ranked
    const auto e = c.find_nearest(k);
    benchmark::DoNotOptimize(e);
    i = (i + 7919) % n;
  }
  state.counters["entries"] = double(n);
  state.counters["family_entries"] = double(n) / 240.0;
}

void register_cache() {
  for (int64_t n : {1000, 10000, 100000}) {
    benchmark::RegisterBenchmark(fmt::format("cache/load/{}", n).c_str(), bm_load)->Arg(n)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(fmt::format("cache/find_exact/{}", n).c_str(), bm_find_exact)
        ->Arg(n)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(fmt::format("cache/find_nearest/{}", n).c_str(), bm_nearest)
        ->Arg(n)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::AddCustomContext("cache_entries", "240 families (6 type pairs x 4 layouts x 10 epilogues), shapes on a "
                                               "64-multiple grid; files in the temporary directory");
}

}  // namespace cache_suite
}  // namespace bench
}  // namespace tilekit

TILEKIT_BENCH_SUITE(cache, &tilekit::bench::cache_suite::register_cache);
