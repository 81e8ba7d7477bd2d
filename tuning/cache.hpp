// The on-disk tuning cache: one JSON file per backend and device, holding the best config found for
// each (kernel, types, layouts, epilogue, shape). Written atomically (temporary file + rename) under
// an exclusive lock, merging with what is on disk, so concurrent writers lose nothing and an
// interrupted sweep keeps every entry it finished. A corrupt or foreign file (other format, tilekit
// version or device) is reported and set aside, never trusted and never fatal.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tilekit {
namespace tuning {

/// The machine a cache file belongs to.
struct DeviceIdentity {
  std::string backend;       ///< serial, openmp, cuda, hip
  std::string device;        ///< GPU name or CPU model
  std::string architecture;  ///< sm_90, x86_64, ...
  int compute_units = 0;     ///< SMs / CUs / CPU threads
  std::string tilekit_version;

  static DeviceIdentity current();  ///< needs Kokkos initialized
  /// File name for this identity, e.g. "cuda__nvidia-h100-80gb-hbm3__sm_90__132.json".
  std::string file_name() const;
  bool same_machine(const DeviceIdentity& o) const {
    return backend == o.backend && device == o.device && architecture == o.architecture &&
           compute_units == o.compute_units;
  }
};

/// What a tuned entry is for. `shape` is {M, N, K} for matmul, {M, N} for elementwise.
struct TuneKey {
  std::string kernel;    ///< "matmul" or "elementwise"
  std::string types;     ///< e.g. "f16->f32"
  std::string layout;    ///< e.g. "a=row,b=col^T,c=row"
  std::string epilogue;  ///< matmul epilogue name, or the elementwise op
  std::vector<int64_t> shape;

  /// Everything but the shape: entries of one family can stand in for each other's shapes.
  std::string family() const;
  std::string str() const;  ///< family plus shape, e.g. "matmul f32->f32 a=row,b=row,c=row none 1024x1024x1024"
  bool operator==(const TuneKey& o) const { return str() == o.str(); }
};

struct TuneEntry {
  TuneKey key;
  std::string config;     ///< the config name (MatmulConfig::name() or the elementwise equivalent)
  double median_s = 0.0;  ///< median over the timed repetitions
  double p20_s = 0.0, p80_s = 0.0;
  double rate = 0.0;      ///< TFLOP/s (matmul) or GB/s (elementwise)
  std::string date;       ///< when it was measured (ISO 8601, UTC)
};

class TuningCache {
 public:
  static constexpr int kFormatVersion = 1;

  /// A cache at `path` for `identity` (the file need not exist).
  TuningCache(std::string path, DeviceIdentity identity);
  /// A cache for this machine in `dir` (see default_dir()).
  static TuningCache for_current_device(const std::string& dir);
  /// $TILEKIT_TUNING_DIR, else $XDG_CACHE_HOME/tilekit/tuning, else ~/.cache/tilekit/tuning.
  static std::string default_dir();

  /// Reads the file. Missing: empty cache. Corrupt or foreign: renamed to "<path>.corrupt-<stamp>"
  /// or "<path>.foreign-<stamp>", reported in warnings(), empty cache.
  void load();
  /// Reads a cache from JSON text (shipped results); foreign or corrupt text gives false + warning.
  bool load_text(const std::string& text, const std::string& origin);

  /// Adds or replaces the entry with the same key, then writes the file atomically under a lock,
  /// merged with entries other writers stored meanwhile. Throws std::runtime_error if the
  /// directory cannot be written (the message names the path).
  void store(const TuneEntry& e);
  /// store() for several entries under one lock and one write (the merge of a distributed sweep).
  void store_all(const std::vector<TuneEntry>& entries);

  /// Adds or replaces an entry in memory only (no file is written).
  void add_in_memory(const TuneEntry& e);

  const std::vector<TuneEntry>& entries() const { return entries_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::string& path() const { return path_; }
  const DeviceIdentity& identity() const { return identity_; }

  std::optional<TuneEntry> find_exact(const TuneKey& key) const;
  /// The entry of the same family whose shape is nearest in log space (sum over dimensions of
  /// |log(a/b)|); ties go to the larger shape. Only entries `accept` takes count (all when empty).
  std::optional<TuneEntry> find_nearest(const TuneKey& key,
                                        const std::function<bool(const TuneEntry&)>& accept = nullptr) const;

 private:
  std::string path_;
  DeviceIdentity identity_;
  std::vector<TuneEntry> entries_;
  std::vector<std::string> warnings_;
};

/// The results shipped with tilekit, as (file name, JSON text): the *.json files of `dir` when it
/// names a directory holding some (an installed tilekit passes <prefix>/share/tilekit/tuning), else
/// of <directory of the running program>/../share/tilekit/tuning (the installed `tilekit` app), else
/// the copy of tuning/results/ compiled into the library.
std::vector<std::pair<std::string, std::string>> shipped_results(const std::string& dir = "");
/// The copy of tuning/results/*.json compiled into the library (generated by CMake).
const std::vector<std::pair<std::string, std::string>>& builtin_shipped_results();

}  // namespace tuning
}  // namespace tilekit
