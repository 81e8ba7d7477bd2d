// The journal of a sweep in progress: what each process has measured, on disk as it is measured, so
// that a process that dies (a killed MPI rank, a crashed GPU, Ctrl-C) loses nothing it finished, a
// re-run measures only what is missing, and `tilekit tune merge` can store and report an
// unfinished sweep. One folder per (device, sweep) beside the device's cache file:
//   <cache file>.sweeps/<sweep id>/plan.json            the pairs of the sweep (written once, atomically)
//   <cache file>.sweeps/<sweep id>/rank<k>-<run>.jsonl  one JSON record per line, appended by rank k
// A line is appended with a single write(2) of the whole line, so a process killed mid-sweep leaves
// whole lines only (a torn last line, after a power cut, is skipped with a warning). The folder is
// removed once every pair of the sweep has a result and the winners are in the cache.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tilekit {
namespace tuning {

class SweepJournal {
 public:
  /// The journal of sweep `id` of the cache file at `cache_path`.
  SweepJournal(const std::string& cache_path, const std::string& id);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  /// The folder holding every unfinished sweep of the cache file at `cache_path`.
  static std::string sweeps_dir(const std::string& cache_path);
  /// The ids of the unfinished sweeps there (folders with a plan), sorted.
  static std::vector<std::string> unfinished(const std::string& cache_path);

  const std::string& dir() const { return dir_; }
  /// Writes plan.json if absent (temporary file + rename). Throws if the folder cannot be written.
  void write_plan(const nlohmann::json& plan) const;
  /// plan.json, or null when there is none.
  nlohmann::json read_plan() const;
  /// Records which pairs run `run` dealt to how many ranks (run-<run>.json), so that a later
  /// `tilekit tune merge` can say which rank was to measure a missing pair.
  void write_run(const std::string& run, const nlohmann::json& deal) const;
  /// The latest run-*.json, or null.
  nlohmann::json latest_run() const;
  /// Opens (appending) this process's file rank<rank>-<run>.jsonl. Throws if it cannot.
  void open(int rank, const std::string& run);
  /// Appends one record as one line (one write). Throws if the write fails.
  void append(const nlohmann::json& record);
  /// Every whole record of every file, in file-name order; torn or unreadable lines are skipped and
  /// reported in `warnings`.
  std::vector<nlohmann::json> read_all(std::vector<std::string>& warnings) const;
  /// Removes the folder (the sweep is complete and merged).
  void remove() const;

 private:
  std::string dir_;
  int fd_ = -1;
};

/// A time stamp naming one run ("20261124T053011Z-12345", UTC + process id).
std::string run_stamp();

}  // namespace tuning
}  // namespace tilekit
