#include "tilekit/tuning/sweep_journal.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tilekit {
namespace tuning {

namespace fs = std::filesystem;

SweepJournal::SweepJournal(const std::string& cache_path, const std::string& id)
    : dir_((fs::path(sweeps_dir(cache_path)) / id).string()) {}

SweepJournal::~SweepJournal() {
  if (fd_ >= 0) ::close(fd_);
}

std::string SweepJournal::sweeps_dir(const std::string& cache_path) { return cache_path + ".sweeps"; }

std::vector<std::string> SweepJournal::unfinished(const std::string& cache_path) {
  std::vector<std::string> ids;
  std::error_code ec;
  const fs::path root(sweeps_dir(cache_path));
  if (!fs::is_directory(root, ec)) return ids;
  for (const auto& d : fs::directory_iterator(root, ec))
    if (fs::exists(d.path() / "plan.json", ec)) ids.push_back(d.path().filename().string());
  std::sort(ids.begin(), ids.end());
  return ids;
}

void SweepJournal::write_plan(const nlohmann::json& plan) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create the sweep journal {}: {}", dir_, ec.message()));
  const fs::path path = fs::path(dir_) / "plan.json";
  if (fs::exists(path, ec)) return;
  const std::string tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << plan.dump(1) << "\n";
    if (!f.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
}

nlohmann::json SweepJournal::read_plan() const {
  std::ifstream f(fs::path(dir_) / "plan.json");
  if (!f) return nullptr;
  try {
    return nlohmann::json::parse(f);
  } catch (const std::exception&) {
    return nullptr;
  }
}

void SweepJournal::write_run(const std::string& run, const nlohmann::json& deal) const {
  const fs::path path = fs::path(dir_) / ("run-" + run + ".json");
  const std::string tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << deal.dump() << "\n";
    if (!f.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
}

nlohmann::json SweepJournal::latest_run() const {
  std::error_code ec;
  std::vector<fs::path> runs;
  if (fs::is_directory(dir_, ec))
    for (const auto& f : fs::directory_iterator(dir_, ec)) {
      const std::string name = f.path().filename().string();
      if (name.rfind("run-", 0) == 0 && f.path().extension() == ".json") runs.push_back(f.path());
    }
  if (runs.empty()) return nullptr;
  std::sort(runs.begin(), runs.end());
  std::ifstream f(runs.back());
  try {
    return nlohmann::json::parse(f);
  } catch (const std::exception&) {
    return nullptr;
  }
}

void SweepJournal::open(int rank, const std::string& run) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const std::string path = (fs::path(dir_) / fmt::format("rank{}-{}.jsonl", rank, run)).string();
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open the sweep journal {}: {}", path, std::strerror(errno)));
}

void SweepJournal::append(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  const ssize_t n = ::write(fd_, line.data(), line.size());
  if (n != ssize_t(line.size()))
    throw std::runtime_error(fmt::format("cannot append to the sweep journal in {}: {}", dir_,
                                         n < 0 ? std::strerror(errno) : "short write"));
}

std::vector<nlohmann::json> SweepJournal::read_all(std::vector<std::string>& warnings) const {
  std::vector<nlohmann::json> out;
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(dir_, ec))
    for (const auto& f : fs::directory_iterator(dir_, ec))
      if (f.path().extension() == ".jsonl") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream f(path);
    std::string line;
    int n = 0;
    while (std::getline(f, line)) {
      ++n;
      if (line.empty()) continue;
      try {
        out.push_back(nlohmann::json::parse(line));
      } catch (const std::exception&) {
        warnings.push_back(fmt::format("{} line {}: not a whole record (skipped)", path.string(), n));
      }
    }
  }
  return out;
}

void SweepJournal::remove() const {
  std::error_code ec;
  fs::remove_all(dir_, ec);
  fs::remove(fs::path(dir_).parent_path(), ec);  // only when no other sweep is left (not empty: fails)
}

std::string run_stamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", std::gmtime(&t));
  return fmt::format("{}-{}", buf, ::getpid());
}

}  // namespace tuning
}  // namespace tilekit
