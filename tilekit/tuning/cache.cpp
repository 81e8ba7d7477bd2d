#include "tilekit/tuning/cache.hpp"

#include "tilekit/kernels/core/runtime.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tilekit {
namespace tuning {

namespace fs = std::filesystem;

DeviceIdentity DeviceIdentity::current() {
  const RuntimeInfo r = runtime_info();
  return {r.backend, r.device, r.architecture, r.compute_units, r.tilekit_version};
}

namespace {

std::string stamp() {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
}

// The text of a regular file. `exists` is false when there is nothing at `path`; `why` is set
// (and the text empty) when there is something that is not a regular file (a FIFO would block the
// read forever, a device could be endless) or it cannot be read.
std::string read_file(const std::string& path, bool& exists, std::string* why = nullptr) {
  exists = false;
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    exists = errno != ENOENT && errno != ENOTDIR;
    if (exists && why) *why = std::strerror(errno);
    return {};
  }
  exists = true;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (why)
      *why = S_ISDIR(st.st_mode)    ? "it is a directory, not a file"
             : S_ISFIFO(st.st_mode) ? "it is a FIFO (named pipe), not a regular file"
                                    : "it is not a regular file";
    ::close(fd);
    return {};
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (true) {
    if (done == text.size()) text.resize(text.size() + 65536);  // the file grew since fstat
    const ssize_t n = ::read(fd, &text[done], text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && why) *why = std::strerror(errno);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(done);
  return text;
}

// An exclusive advisory lock on "<path>.lock", held for the object's lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open((path + ".lock").c_str(), O_CREAT | O_RDWR, 0644)) {
    if (fd_ < 0)
      throw std::runtime_error(fmt::format("cannot create the lock file {}.lock: {}", path, std::strerror(errno)));
    while (::flock(fd_, LOCK_EX) != 0) {
    }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// Writes `text` to `path` so that a reader sees the old file or the new one, never a part: a
// temporary file beside it, flushed to the disk (fsync), then renamed over it.
void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + stamp();
  const int fd = ::open(tmp.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  std::size_t done = 0;
  int err = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = errno ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (!err && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  std::error_code ec;
  if (!err) {
    fs::rename(tmp, path, ec);
    if (!ec) return;
  }
  fs::remove(tmp, ec);
  throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(err ? err : EIO)));
}

}  // namespace

TuningCache::TuningCache(std::string path, DeviceIdentity identity)
    : path_(std::move(path)), identity_(std::move(identity)) {}

TuningCache TuningCache::for_current_device(const std::string& dir) {
  const DeviceIdentity id = DeviceIdentity::current();
  return TuningCache((fs::path(dir) / id.file_name()).string(), id);
}

std::string TuningCache::default_dir() {
  if (const char* d = std::getenv("TILEKIT_TUNING_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "tilekit" / "tuning").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".cache" / "tilekit" / "tuning").string();
}

namespace {
// The *.json files of dir, sorted by name; empty when dir is not a directory.
std::vector<std::pair<std::string, std::string>> json_files_in(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return out;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    if (f.path().extension() != ".json" || !f.is_regular_file(ec)) continue;
    bool exists = false;
    std::string why;
    std::string text = read_file(f.path().string(), exists, &why);
    if (exists && why.empty()) out.emplace_back(f.path().filename().string(), std::move(text));
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> shipped_results(const std::string& dir) {
  auto files = json_files_in(dir);
  if (files.empty()) {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) files = json_files_in(exe.parent_path().parent_path() / "share" / "tilekit" / "tuning");
  }
  return files.empty() ? builtin_shipped_results() : files;
}

void TuningCache::clear_entries() {
  entries_.clear();
  by_key_.clear();
  by_family_.clear();
  kept_.clear();
  kept_set_.clear();
}

void TuningCache::upsert(const TuneEntry& e) {
  std::string k = e.key.str();
  const auto it = by_key_.find(k);
  if (it != by_key_.end()) {
    entries_[it->second] = e;
    return;
  }
  by_key_.emplace(std::move(k), entries_.size());
  by_family_[e.key.family()].push_back(entries_.size());
  entries_.push_back(e);
}

void TuningCache::add_kept(const std::string& k) {
  if (kept_set_.insert(k).second) kept_.push_back(k);
}

void TuningCache::take(CacheFile&& f) {
  clear_entries();
  entries_.reserve(f.entries.size());
  by_key_.reserve(f.entries.size());
  for (auto& e : f.entries) upsert(e);
  for (auto& k : f.kept) add_kept(k);
  file_version_ = f.tilekit_version;
  file_extra_ = f.extra;
}

void TuningCache::load() {
  bool exists = false;
  std::string unreadable;
  const std::string text = read_file(path_, exists, &unreadable);
  clear_entries();
  newer_format_ = false;
  if (!exists) return;
  if (!unreadable.empty()) {  // left where it is (not a file tilekit wrote), and never replaced
    newer_format_ = true;
    warnings_.push_back(fmt::format("tuning cache {} cannot be read ({}); not used", path_, unreadable));
    return;
  }
  std::string why;
  CacheFile f;
  const CacheParse r = parse_cache_text(text, identity_.tilekit_version, f, why);
  if (r == CacheParse::newer_format) {
    newer_format_ = true;
    warnings_.push_back(fmt::format("tuning cache {} is of a newer {}: left as it is and not used", path_, why));
    return;
  }
  if (r == CacheParse::ok && f.device.same_machine(identity_)) {
    for (const auto& n : f.notes) warnings_.push_back(fmt::format("tuning cache {}: {}", path_, n));
    take(std::move(f));
    return;
  }
  const bool corrupt = r != CacheParse::ok;
  if (!corrupt)
    why = fmt::format("for {} {} ({}, {} units), not this {} {} ({}, {} units)", f.device.backend, f.device.device,
                      f.device.architecture, f.device.compute_units, identity_.backend, identity_.device,
                      identity_.architecture, identity_.compute_units);
  const std::string aside = path_ + (corrupt ? ".corrupt-" : ".foreign-") + stamp();
  std::error_code ec;
  fs::rename(path_, aside, ec);
  warnings_.push_back(fmt::format("tuning cache {} is {} ({}); {}", path_, corrupt ? "corrupt" : "foreign", why,
                                  ec ? "it could not be set aside (" + ec.message() + ") and is not used"
                                     : "set aside as " + aside + ", not used"));
}

bool TuningCache::load_text(const std::string& text, const std::string& origin) {
  std::string why;
  CacheFile f;
  const CacheParse r = parse_cache_text(text, identity_.tilekit_version, f, why);
  if (r != CacheParse::ok || !f.device.same_machine(identity_)) {
    if (r == CacheParse::ok) why = fmt::format("for {} {}", f.device.backend, f.device.device);
    warnings_.push_back(fmt::format("{} not used: {}", origin, why));
    return false;
  }
  for (const auto& e : f.entries) upsert(e);
  return true;
}

TuningCache TuningCache::read_for_merge(const std::string& path) {
  bool exists = false;
  std::string unreadable;
  const std::string text = read_file(path, exists, &unreadable);
  if (!exists) throw std::runtime_error(fmt::format("tuning cache {} cannot be merged: there is no such file", path));
  if (!unreadable.empty())
    throw std::runtime_error(fmt::format("tuning cache {} cannot be merged: {}", path, unreadable));
  CacheFile f;
  std::string why;
  const DeviceIdentity me = DeviceIdentity{"", "", "", 0, TILEKIT_VERSION};
  const CacheParse r = parse_cache_text(text, me.tilekit_version, f, why);
  if (r != CacheParse::ok) throw std::runtime_error(fmt::format("tuning cache {} cannot be merged: {}", path, why));
  DeviceIdentity id = f.device;
  id.tilekit_version = me.tilekit_version;
  TuningCache c(path, id);
  for (const auto& n : f.notes) c.warnings_.push_back(fmt::format("{}: {}", path, n));
  c.take(std::move(f));
  return c;
}

void TuningCache::merge(const TuningCache& other) {
  for (const auto& e : other.entries_) {
    const auto it = by_key_.find(e.key.str());
    if (it == by_key_.end() || e.median_s < entries_[it->second].median_s) upsert(e);
  }
  for (const auto& k : other.kept_) add_kept(k);
  if (compare_versions(other.file_version_, file_version_) > 0) file_version_ = other.file_version_;
  if (file_extra_.empty()) file_extra_ = other.file_extra_;
}

void TuningCache::write() {
  if (newer_format_)
    throw std::runtime_error(fmt::format("tuning cache {} is of a newer format or not a file tilekit can read; it "
                                         "is not overwritten",
                                         path_));
  const fs::path p(path_);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec)
    throw std::runtime_error(fmt::format("cannot create tuning cache directory {}: {}", p.parent_path().string(),
                                         ec.message()));
  FileLock lock(path_);
  // Merge with what other writers stored since we loaded; their entries for our keys give way.
  bool exists = false;
  std::string unreadable;
  const std::string text = read_file(path_, exists, &unreadable);
  if (!unreadable.empty())
    throw std::runtime_error(fmt::format("tuning cache {} cannot be replaced: {}", path_, unreadable));
  CacheFile on_disk;
  std::string why;
  if (exists) {
    const CacheParse r = parse_cache_text(text, identity_.tilekit_version, on_disk, why);
    if (r == CacheParse::newer_format)
      throw std::runtime_error(fmt::format("tuning cache {} is now of a newer {}; it is not overwritten", path_, why));
    if (r != CacheParse::ok || !on_disk.device.same_machine(identity_)) {
      const std::string aside = path_ + ".corrupt-" + stamp();
      fs::rename(path_, aside, ec);
      warnings_.push_back(fmt::format("tuning cache {} was unreadable ({}); set aside as {}", path_,
                                      r != CacheParse::ok ? why : "another device's", aside));
      on_disk = CacheFile();
    }
  }
  // The file's entries, then ours over them (same key: ours), through one index.
  std::vector<TuneEntry> mine = std::move(entries_);
  std::vector<std::string> my_kept = std::move(kept_);
  const std::string my_version = file_version_, my_extra = file_extra_;
  take(std::move(on_disk));
  for (const auto& x : mine) upsert(x);
  for (const auto& k : my_kept) add_kept(k);
  if (compare_versions(my_version, file_version_) > 0) file_version_ = my_version;
  if (file_extra_.empty()) file_extra_ = my_extra;
  CacheFile out;
  // The writer's version, or the file's when a newer tilekit wrote it (its fields are kept too).
  out.tilekit_version = compare_versions(file_version_, identity_.tilekit_version) > 0 ? file_version_
                                                                                        : identity_.tilekit_version;
  out.device = identity_;
  out.entries = entries_;
  out.kept = kept_;
  out.extra = file_extra_;
  write_atomically(path_, cache_file_text(out));
}

void TuningCache::store(const TuneEntry& e) { store_all({e}); }

void TuningCache::store_all(const std::vector<TuneEntry>& new_entries) {
  for (TuneEntry x : new_entries) {
    if (x.tilekit_version.empty()) x.tilekit_version = identity_.tilekit_version;
    upsert(x);
  }
  write();
}

void TuningCache::add_in_memory(const TuneEntry& e) { upsert(e); }

std::optional<TuneEntry> TuningCache::find_exact(const TuneKey& key) const {
  const auto it = by_key_.find(key.str());
  if (it == by_key_.end()) return std::nullopt;
  return entries_[it->second];
}

namespace {
// The rank of an entry's shape as seen from `key`: the distance in log space rounded to 1e-9 (so
// that equal ratios tie exactly), then the larger shape first.
struct Ranked {
  long long d;
  double vol;
  const TuneEntry* e;
  bool before(const Ranked& o) const { return d != o.d ? d < o.d : vol > o.vol; }
};
Ranked rank(const TuneKey& key, const TuneEntry& e) {
  double d = 0.0, vol = 1.0;
  for (std::size_t i = 0; i < key.shape.size(); ++i) {
    const double a = double(std::max<int64_t>(key.shape[i], 1)), b = double(std::max<int64_t>(e.key.shape[i], 1));
    d += std::fabs(std::log(a / b));
    vol *= b;
  }
  return {std::llround(std::min(d, 1e9) * 1e9), vol, &e};
}
}  // namespace

std::vector<TuneEntry> TuningCache::by_distance(const TuneKey& key,
                                               const std::function<bool(const TuneEntry&)>& accept) const {
  const auto family = by_family_.find(key.family());
  if (family == by_family_.end()) return {};
  std::vector<Ranked> r;
  for (const std::size_t i : family->second) {
    const TuneEntry& e = entries_[i];
    if (e.key.shape.size() != key.shape.size() || (accept && !accept(e))) continue;
    r.push_back(rank(key, e));
  }
  std::stable_sort(r.begin(), r.end(), [](const Ranked& a, const Ranked& b) { return a.before(b); });
  std::vector<TuneEntry> out;
  out.reserve(r.size());
  for (const auto& x : r) out.push_back(*x.e);
  return out;
}

std::optional<TuneEntry> TuningCache::find_nearest(const TuneKey& key,
                                                   const std::function<bool(const TuneEntry&)>& accept) const {
  // by_distance's first, in one pass and without copying the family.
  const auto family = by_family_.find(key.family());
  if (family == by_family_.end()) return std::nullopt;
  std::optional<Ranked> best;
  for (const std::size_t i : family->second) {
    const TuneEntry& e = entries_[i];
    if (e.key.shape.size() != key.shape.size() || (accept && !accept(e))) continue;
    const Ranked r = rank(key, e);
    if (!best || r.before(*best)) best = r;
  }
  if (!best) return std::nullopt;
  return *best->e;
}

}  // namespace tuning
}  // namespace tilekit
