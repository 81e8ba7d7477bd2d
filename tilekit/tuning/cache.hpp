// The on-disk tuning cache: one JSON file per backend and device, holding the best config found for
// each (kernel, types, layouts, epilogue, shape). Written atomically (temporary file, fsync, rename)
// under an exclusive lock, merging with what is on disk, so concurrent writers lose nothing and an
// interrupted write or sweep keeps every entry it finished.
//
// Versions (README, "Tuning"): every entry records the tilekit version that measured it. Entries of
// older versions are read and used (their configs are validated before use, like any other);
// entries of a newer tilekit, and entries this version cannot read, are kept in the file untouched
// and not used, with a warning. A file of a newer format is left as it is (not used, not
// overwritten). A file that is not JSON, or is for another device, is set aside (renamed, never
// deleted) with a warning.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
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
  std::string tilekit_version;  ///< the tilekit that measured it (older files: the file's version)
  std::string config;     ///< the config name (MatmulConfig::name() or the elementwise equivalent)
  double median_s = 0.0;  ///< median over the timed repetitions
  double p20_s = 0.0, p80_s = 0.0;
  double rate = 0.0;      ///< TFLOP/s (matmul) or GB/s (elementwise)
  std::string date;       ///< when it was measured (ISO 8601, UTC)
  /// Fields of the entry this version does not know (a JSON object's text, "" for none): written
  /// back as they were, so that a newer tilekit's additions survive an older one's rewrite.
  std::string extra;
};

struct CacheFile;

class TuningCache {
 public:
  static constexpr int kFormatVersion = 1;

  /// A cache at `path` for `identity` (the file need not exist).
  TuningCache(std::string path, DeviceIdentity identity);
  /// A cache for this machine in `dir` (see default_dir()).
  static TuningCache for_current_device(const std::string& dir);
  /// $TILEKIT_TUNING_DIR, else $XDG_CACHE_HOME/tilekit/tuning, else ~/.cache/tilekit/tuning.
  static std::string default_dir();

  /// Reads the file. Missing: empty cache. Not JSON or another device's: renamed to
  /// "<path>.corrupt-<stamp>" or "<path>.foreign-<stamp>", reported in warnings(), empty cache.
  /// A newer format: left in place, not used, reported; store() then refuses to overwrite it.
  void load();
  /// Reads a cache from JSON text (shipped results); foreign or corrupt text gives false + warning.
  bool load_text(const std::string& text, const std::string& origin);
  /// Reads any cache file for merging: the identity is the file's own. Throws std::runtime_error
  /// (the message names the file and why) when it cannot be read or is of a newer format.
  static TuningCache read_for_merge(const std::string& path);
  /// Adds `other`'s entries: for a key both have, the faster measurement (lower median) stays.
  /// Entries kept but not used (newer tilekit, unreadable) are carried over too.
  void merge(const TuningCache& other);
  /// Writes the file as it is in memory (atomically, under the lock), merged with what is on disk.
  void write();

  /// Adds or replaces the entry with the same key, then writes the file atomically under a lock,
  /// merged with entries other writers stored meanwhile. Throws std::runtime_error if the
  /// directory cannot be written or the file is of a newer format (the message names the path).
  void store(const TuneEntry& e);
  /// store() for several entries under one lock and one write (the merge of a distributed sweep).
  void store_all(const std::vector<TuneEntry>& entries);

  /// Adds or replaces an entry in memory only (no file is written).
  void add_in_memory(const TuneEntry& e);

  /// The entries in the order they were added (an entry replaced keeps its place).
  const std::vector<TuneEntry>& entries() const { return entries_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::string& path() const { return path_; }
  const DeviceIdentity& identity() const { return identity_; }

  /// The entry with this key: a hash lookup (the entries are indexed by key and by family, so
  /// that a cache of 100,000 entries answers in microseconds).
  std::optional<TuneEntry> find_exact(const TuneKey& key) const;
  /// The entry of the same family whose shape is nearest in log space (sum over dimensions of
  /// |log(a/b)|); ties go to the larger shape. Only entries `accept` takes count (all when empty).
  std::optional<TuneEntry> find_nearest(const TuneKey& key,
                                        const std::function<bool(const TuneEntry&)>& accept = nullptr) const;
  /// Every entry of the family that `accept` takes (all when empty), nearest first (the order of
  /// find_nearest; the exact shape first): a caller that cannot use one goes on to the next.
  std::vector<TuneEntry> by_distance(const TuneKey& key,
                                     const std::function<bool(const TuneEntry&)>& accept = nullptr) const;
  /// Entries kept in the file but not used (a newer tilekit's, or unreadable), as JSON text.
  const std::vector<std::string>& kept_entries() const { return kept_; }

 private:
  std::string path_;
  DeviceIdentity identity_;
  std::vector<TuneEntry> entries_;
  std::unordered_map<std::string, std::size_t> by_key_;                  ///< key.str() -> entries_ index
  std::unordered_map<std::string, std::vector<std::size_t>> by_family_;  ///< key.family() -> entries_ indices
  std::vector<std::string> kept_;
  std::unordered_set<std::string> kept_set_;
  std::string file_version_;  ///< the tilekit_version of the file on disk (a newer one is kept on rewrite)
  std::string file_extra_;    ///< the file's fields this version does not know (JSON object text)
  std::vector<std::string> warnings_;
  bool newer_format_ = false;  ///< the file on disk is of a newer format: never overwritten

  void clear_entries();
  void upsert(const TuneEntry& e);       ///< adds, or replaces the entry with the same key
  void add_kept(const std::string& k);   ///< adds unless already there
  void take(CacheFile&& f);              ///< the entries, kept entries and file fields of f
};

/// The file format, for the parsers (tilekit/tuning/cache_format.cpp, no Kokkos; fuzzed by fuzz/).
struct CacheFile {
  int format = TuningCache::kFormatVersion;
  std::string tilekit_version;           ///< of the writer
  DeviceIdentity device;
  std::vector<TuneEntry> entries;        ///< readable entries of this or an older tilekit
  std::vector<std::string> kept;         ///< JSON text of entries kept but not used
  std::vector<std::string> notes;        ///< why entries were kept (one line each)
  std::string extra;                     ///< top-level fields this version does not know (JSON object text)
};
enum class CacheParse { ok, corrupt, newer_format };
/// Parses the text of a cache file. `reader_version` is this tilekit's: entries of newer versions
/// are kept, not used. On corrupt/newer_format `why` says what is wrong (no library text).
CacheParse parse_cache_text(const std::string& text, const std::string& reader_version, CacheFile& out,
                            std::string& why);
/// The text of a cache file (entries, then the kept ones as they were).
std::string cache_file_text(const CacheFile& f);
/// Compares dotted versions numerically ("0.10.0" > "0.9.1"; "0.0.0-old" = "0.0.0"): -1, 0, 1.
int compare_versions(const std::string& a, const std::string& b);

/// The results shipped with tilekit, as (file name, JSON text): the *.json files of `dir` when it
/// names a directory holding some (an installed tilekit passes <prefix>/share/tilekit/tuning), else
/// of <directory of the running program>/../share/tilekit/tuning (the installed `tilekit` app), else
/// the copy of tilekit/tuning/results/ compiled into the library.
std::vector<std::pair<std::string, std::string>> shipped_results(const std::string& dir = "");
/// The copy of tilekit/tuning/results/*.json compiled into the library (generated by CMake).
const std::vector<std::pair<std::string, std::string>>& builtin_shipped_results();

}  // namespace tuning
}  // namespace tilekit
