#include "bench/harness.hpp"
#include "tilekit/kernels/core/runtime.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace tilekit {
namespace bench {

namespace {
const auto g_start = std::chrono::steady_clock::now();

std::map<std::string, double>& rates() {
  static std::map<std::string, double> r;
  return r;
}
}  // namespace

std::size_t last_level_cache_bytes() { return runtime_info().last_level_cache; }  // tilekit/kernels/core/runtime.hpp

int rotation_count(double set_bytes) {
  double target = options().rotate_bytes;
  if (target <= 0.0) target = 2.0 * static_cast<double>(last_level_cache_bytes());
  if (set_bytes <= 0.0 || target <= set_bytes) return 1;
  return static_cast<int>(std::min(4096.0, std::ceil(target / set_bytes)));
}

int warmup_runs(int sets) { return std::max(options().warmup, sets); }

int reps_for(double work) {
  const Options& o = options();
  const double want = work > 0.0 ? std::ceil(o.rep_work * 1e9 / work) : o.max_reps;
  return static_cast<int>(std::max<double>(o.min_reps, std::min<double>(o.max_reps, want)));
}

double seconds_since_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

std::string over_budget(const std::string& series_key, double work, int runs) {
  const double deadline = options().deadline_s;
  if (deadline <= 0.0) return "";
  const double now = seconds_since_start();
  if (now >= deadline) {
    std::ostringstream m;
    m << "skipped: the --tk_deadline_s budget of " << deadline << " s is spent (" << now << " s elapsed)";
    return m.str();
  }
  const auto it = rates().find(series_key);
  if (it == rates().end() || it->second <= 0.0) return "";  // no rate yet: the first shape runs
  const double estimate = runs * work / it->second;
  if (now + estimate > deadline) {
    std::ostringstream m;
    m.precision(3);
    m << "skipped: " << runs << " runs at this series' rate on its previous shape would take about " << estimate
      << " s, past the --tk_deadline_s budget of " << deadline << " s (" << now << " s elapsed)";
    return m.str();
  }
  return "";
}

void record_rate(const std::string& series_key, double work_per_s) { rates()[series_key] = work_per_s; }

namespace {
bool g_failed = false;
}
void record_failure() { g_failed = true; }
bool any_failure() { return g_failed; }

namespace {
// All CPUs' busy and total ticks (/proc/stat), and this process's user + system ticks (/proc/self/stat).
bool read_ticks(long long& busy, long long& total, long long& self) {
  std::ifstream st("/proc/stat");
  std::string cpu;
  long long v[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
  if (!(st >> cpu) || cpu != "cpu") return false;
  for (auto& x : v)
    if (!(st >> x)) return false;
  total = 0;
  for (auto x : v) total += x;
  busy = total - v[3] - v[4];
  std::ifstream ps("/proc/self/stat");
  std::string line;
  if (!std::getline(ps, line)) return false;
  const auto close = line.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15: utime, stime
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  self = utime + stime;
  return true;
}
}  // namespace

OtherLoad::OtherLoad() {
  if (!read_ticks(busy0_, total0_, self0_)) busy0_ = total0_ = self0_ = -1;
}

double OtherLoad::percent() const {
  long long busy = 0, total = 0, self = 0;
  // Below 20 ticks (0.1 s of one CPU) a single tick of anyone decides the figure: unknown.
  if (total0_ < 0 || !read_ticks(busy, total, self) || total - total0_ < 20) return -1.0;
  const double other = double((busy - busy0_) - (self - self0_));
  return std::max(0.0, 100.0 * other / double(total - total0_));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double set_rate_counters(benchmark::State& state, const Samples& s, double work, const char* rate_name,
                         double rate_scale) {
  if (s.host_s.empty()) return 0.0;
  const double med = median(s.host_s);
  const auto mm = std::minmax_element(s.host_s.begin(), s.host_s.end());
  state.counters[rate_name] = med > 0 ? work / med * rate_scale : 0.0;
  state.counters["median_ms"] = med * 1e3;
  state.counters["min_ms"] = *mm.first * 1e3;
  state.counters["max_ms"] = *mm.second * 1e3;
  if (s.other_cpu_pct >= 0.0) state.counters["other_cpu_pct"] = s.other_cpu_pct;
  if (!s.submit_s.empty()) state.counters["submit_us"] = median(s.submit_s) * 1e6;
  if (!s.device_s.empty()) {
    const double dmed = median(s.device_s);
    state.counters[std::string(rate_name) + "_events"] = dmed > 0 ? work / dmed * rate_scale : 0.0;
    state.counters["median_ms_events"] = dmed * 1e3;
  }
  return med > 0 ? work / med : 0.0;
}

#if defined(KOKKOS_ENABLE_CUDA)
namespace {
cudaStream_t default_stream() { return Kokkos::DefaultExecutionSpace().cuda_stream(); }
}  // namespace
DeviceTimer::DeviceTimer() {
  cudaEvent_t a = nullptr, b = nullptr;
  if (cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess) {
    start_ = a;
    stop_ = b;
  }
}
DeviceTimer::~DeviceTimer() {
  if (start_) cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  if (stop_) cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}
void DeviceTimer::start() {
  if (start_) cudaEventRecord(static_cast<cudaEvent_t>(start_), default_stream());
}
void DeviceTimer::stop() {
  if (stop_) cudaEventRecord(static_cast<cudaEvent_t>(stop_), default_stream());
}
double DeviceTimer::elapsed_s() const {
  if (!start_ || !stop_) return -1.0;
  float ms = 0.0f;
  if (cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)) != cudaSuccess ||
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)) != cudaSuccess)
    return -1.0;
  return ms * 1e-3;
}
#else
DeviceTimer::DeviceTimer() = default;
DeviceTimer::~DeviceTimer() = default;
void DeviceTimer::start() {}
void DeviceTimer::stop() {}
double DeviceTimer::elapsed_s() const { return -1.0; }
#endif

}  // namespace bench
}  // namespace tilekit
