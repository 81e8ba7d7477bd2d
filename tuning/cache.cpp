#include "tuning/cache.hpp"

#include "kernels/runtime.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tilekit {
namespace tuning {

namespace fs = std::filesystem;
using nlohmann::json;

DeviceIdentity DeviceIdentity::current() {
  const RuntimeInfo r = runtime_info();
  return {r.backend, r.device, r.architecture, r.compute_units, r.tilekit_version};
}

std::string DeviceIdentity::file_name() const {
  std::string slug;
  for (char ch : device) {
    if (std::isalnum(static_cast<unsigned char>(ch)))
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return fmt::format("{}__{}__{}__{}.json", backend, slug.empty() ? "unknown" : slug, architecture, compute_units);
}

std::string TuneKey::family() const { return fmt::format("{} {} {} {}", kernel, types, layout, epilogue); }

std::string TuneKey::str() const {
  std::string shp;
  for (std::size_t i = 0; i < shape.size(); ++i) shp += (i ? "x" : "") + std::to_string(shape[i]);
  return family() + " " + shp;
}

namespace {

json identity_json(const DeviceIdentity& d) {
  return {{"backend", d.backend}, {"device", d.device}, {"architecture", d.architecture},
          {"compute_units", d.compute_units}};
}

json entry_json(const TuneEntry& e) {
  return {{"kernel", e.key.kernel},   {"types", e.key.types},   {"layout", e.key.layout},
          {"epilogue", e.key.epilogue}, {"shape", e.key.shape},  {"config", e.config},
          {"median_s", e.median_s},   {"p20_s", e.p20_s},       {"p80_s", e.p80_s},
          {"rate", e.rate},           {"date", e.date}};
}

TuneEntry entry_from(const json& j) {
  TuneEntry e;
  e.key.kernel = j.at("kernel").get<std::string>();
  e.key.types = j.at("types").get<std::string>();
  e.key.layout = j.at("layout").get<std::string>();
  e.key.epilogue = j.at("epilogue").get<std::string>();
  e.key.shape = j.at("shape").get<std::vector<int64_t>>();
  e.config = j.at("config").get<std::string>();
  e.median_s = j.at("median_s").get<double>();
  e.p20_s = j.value("p20_s", e.median_s);
  e.p80_s = j.value("p80_s", e.median_s);
  e.rate = j.value("rate", 0.0);
  e.date = j.value("date", std::string());
  return e;
}

std::string stamp() {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
}

enum class Parse { ok, corrupt, foreign };

// Parses cache text; fills entries, or says why it cannot be used.
Parse parse(const std::string& text, const DeviceIdentity& me, std::vector<TuneEntry>& out, std::string& why) {
  json j;
  try {
    j = json::parse(text);
    if (!j.is_object()) throw std::runtime_error("not a JSON object");
    const int format = j.at("format").get<int>();
    const std::string version = j.at("tilekit_version").get<std::string>();
    DeviceIdentity d;
    const json& dj = j.at("device");
    d.backend = dj.at("backend").get<std::string>();
    d.device = dj.at("device").get<std::string>();
    d.architecture = dj.at("architecture").get<std::string>();
    d.compute_units = dj.at("compute_units").get<int>();
    if (format != TuningCache::kFormatVersion) {
      why = fmt::format("format {} (this tilekit reads format {})", format, TuningCache::kFormatVersion);
      return Parse::foreign;
    }
    if (version != me.tilekit_version) {
      why = fmt::format("written by tilekit {} (this is {})", version, me.tilekit_version);
      return Parse::foreign;
    }
    if (!d.same_machine(me)) {
      why = fmt::format("for {} {} ({}, {} units), not this {} {}", d.backend, d.device, d.architecture,
                        d.compute_units, me.backend, me.device);
      return Parse::foreign;
    }
    std::vector<TuneEntry> entries;
    for (const json& e : j.at("entries")) entries.push_back(entry_from(e));
    out = std::move(entries);
    return Parse::ok;
  } catch (const std::exception& e) {
    why = e.what();
    return Parse::corrupt;
  }
}

std::string read_file(const std::string& path, bool& exists) {
  std::ifstream f(path, std::ios::binary);
  exists = static_cast<bool>(f);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void upsert(std::vector<TuneEntry>& entries, const TuneEntry& e) {
  for (auto& x : entries)
    if (x.key == e.key) {
      x = e;
      return;
    }
  entries.push_back(e);
}

// An exclusive advisory lock on "<path>.lock", held for the object's lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open((path + ".lock").c_str(), O_CREAT | O_RDWR, 0644)) {
    if (fd_ < 0) throw std::runtime_error("cannot create lock file " + path + ".lock");
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
    if (f.path().extension() != ".json") continue;
    bool exists = false;
    std::string text = read_file(f.path().string(), exists);
    if (exists) out.emplace_back(f.path().filename().string(), std::move(text));
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

void TuningCache::load() {
  bool exists = false;
  const std::string text = read_file(path_, exists);
  entries_.clear();
  if (!exists) return;
  std::string why;
  const Parse r = parse(text, identity_, entries_, why);
  if (r == Parse::ok) return;
  const std::string aside = path_ + (r == Parse::corrupt ? ".corrupt-" : ".foreign-") + stamp();
  std::error_code ec;
  fs::rename(path_, aside, ec);
  warnings_.push_back(fmt::format("tuning cache {} is {} ({}); set aside as {}{}", path_,
                                  r == Parse::corrupt ? "corrupt" : "foreign", why, aside,
                                  ec ? " (rename failed: " + ec.message() + ")" : ""));
  entries_.clear();
}

bool TuningCache::load_text(const std::string& text, const std::string& origin) {
  std::string why;
  std::vector<TuneEntry> entries;
  if (parse(text, identity_, entries, why) != Parse::ok) {
    warnings_.push_back(fmt::format("{} not used: {}", origin, why));
    return false;
  }
  for (const auto& e : entries) upsert(entries_, e);
  return true;
}

void TuningCache::store(const TuneEntry& e) { store_all({e}); }

void TuningCache::store_all(const std::vector<TuneEntry>& new_entries) {
  const fs::path p(path_);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create tuning cache directory {}: {}",
                                               p.parent_path().string(), ec.message()));
  FileLock lock(path_);
  // Merge with what other writers stored since we loaded.
  bool exists = false;
  const std::string text = read_file(path_, exists);
  std::vector<TuneEntry> on_disk;
  std::string why;
  if (exists && parse(text, identity_, on_disk, why) != Parse::ok) {
    const std::string aside = path_ + ".corrupt-" + stamp();
    fs::rename(path_, aside, ec);
    warnings_.push_back(fmt::format("tuning cache {} was unreadable ({}); set aside as {}", path_, why, aside));
    on_disk.clear();
  }
  for (const auto& x : entries_) upsert(on_disk, x);
  for (const auto& e : new_entries) upsert(on_disk, e);
  entries_ = on_disk;

  json j = {{"format", kFormatVersion}, {"tilekit_version", identity_.tilekit_version},
            {"device", identity_json(identity_)}, {"entries", json::array()}};
  for (const auto& x : entries_) j["entries"].push_back(entry_json(x));
  const std::string tmp = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + stamp();
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << j.dump(1) << "\n";
    f.flush();
    if (!f) {
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write tuning cache " + tmp);
    }
  }
  fs::rename(tmp, path_, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error(fmt::format("cannot replace tuning cache {}: {}", path_, ec.message()));
  }
}

void TuningCache::add_in_memory(const TuneEntry& e) { upsert(entries_, e); }

std::optional<TuneEntry> TuningCache::find_exact(const TuneKey& key) const {
  for (const auto& e : entries_)
    if (e.key == key) return e;
  return std::nullopt;
}

std::optional<TuneEntry> TuningCache::find_nearest(const TuneKey& key,
                                                   const std::function<bool(const TuneEntry&)>& accept) const {
  const std::string fam = key.family();
  std::optional<TuneEntry> best;
  double best_d = 0.0;
  int64_t best_vol = 0;
  for (const auto& e : entries_) {
    if (e.key.family() != fam || e.key.shape.size() != key.shape.size()) continue;
    if (accept && !accept(e)) continue;
    double d = 0.0;
    int64_t vol = 1;
    for (std::size_t i = 0; i < key.shape.size(); ++i) {
      const double a = std::max<int64_t>(key.shape[i], 1), b = std::max<int64_t>(e.key.shape[i], 1);
      d += std::fabs(std::log(a / b));
      vol *= std::max<int64_t>(e.key.shape[i], 1);
    }
    if (!best || d < best_d - 1e-12 || (std::fabs(d - best_d) <= 1e-12 && vol > best_vol)) {
      best = e;
      best_d = d;
      best_vol = vol;
    }
  }
  return best;
}

}  // namespace tuning
}  // namespace tilekit
