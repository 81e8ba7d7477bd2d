// Shared machinery of tilekit's Google Benchmark suites (bench_matmul.cpp, and bench_elementwise.cpp
// when it lands): options, shape lists, the run context, timing, input rotation, the time budget.
//
// A suite is a function that registers benchmarks; TILEKIT_BENCH_SUITE(name, fn) adds it to the
// binary's list, and bench_main.cpp calls every suite after Kokkos is up (registration itself must not
// need Kokkos: --benchmark_list_tests runs without it). Conventions every suite follows, so that
// scripts/report.py can read any of them:
//   - name    "<family>/<dtype>/<series>/<M>x<N>[x<K>]", e.g. "matmul/f32/tilekit:default/1024x1024x1024";
//             the series has no '/' ("tilekit:default+leaky_relu", "kokkos_kernels", "openblas", ...);
//   - counters: the rate from the median time (TFLOPS for matmul, GBps for elementwise), median_ms,
//             min_ms, max_ms, other_cpu_pct (other processes' CPU use while timing), submit_us (the
//             median host time until a run returned, before its fence: on CUDA the cost of enqueuing
//             it, which device events count too when the device was idle), the shape
//             (M, N, K), buffers (input sets rotated through), warmup;
//             on CUDA also the same from device events (TFLOPS_events, median_ms_events);
//   - label   what the series ran (e.g. the tile config name);
//   - a skipped or failed benchmark calls SkipWithError with the reason (the JSON keeps it).
// scripts/report.py knows two families: "matmul" (rate TFLOPS; ratio columns tilekit / vendor and
// tilekit / kokkos_kernels) and "elementwise" (rate GBps = bytes read + written / median time, via
// set_rate_counters(state, samples, bytes, "GBps", 1e-9); ratio columns every "tilekit:*" series /
// "copy" and / "kokkos_parallel_for", the series names an elementwise suite should use for the copy
// bandwidth and the plain Kokkos c(i) = a(i) + b(i)).
#pragma once

#include "bench/shape_list.hpp"

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace tilekit {
namespace bench {

/// Options shared by every suite: --tk_* flags, with TILEKIT_BENCH_* environment fallbacks.
struct Options {
  std::string shapes_text;            ///< --tk_shapes / TILEKIT_BENCH_SHAPES (suite default if empty)
  std::vector<std::string> dtypes;    ///< --tk_dtypes / TILEKIT_BENCH_DTYPES (empty = suite default)
  int warmup = 2;                     ///< --tk_warmup: untimed runs before the timed iterations
  int min_reps = 3;                   ///< --tk_min_reps: fewest timed iterations
  int max_reps = 50;                  ///< --tk_max_reps: most timed iterations
  double rep_work = 20.0;             ///< --tk_rep_work: work per benchmark (GFLOP or GB) the timed
                                      ///< iterations aim at, clamped to [min_reps, max_reps]
  double deadline_s = 0.0;            ///< --tk_deadline_s: skip what would end past this many seconds
                                      ///< after start (0 = no limit)
  double rotate_bytes = 0.0;          ///< --tk_rotate_mib: input bytes to rotate through (0 = 2 x LLC)
  std::string note;                   ///< --tk_note: free text recorded in the context
  std::vector<std::string> configs;   ///< --tk_configs: fixed matmul configs, one series each
  std::string layout = "col";         ///< --tk_layout: matmul storage order (col, row, kmajor)
};
const Options& options();

/// A suite registration function and its self-registration helper.
using SuiteFn = void (*)();
struct SuiteRegistrar {
  SuiteRegistrar(const char* name, SuiteFn fn);
};
#define TILEKIT_BENCH_SUITE(name, fn) static ::tilekit::bench::SuiteRegistrar tilekit_bench_suite_##name(#name, fn)

/// Last-level cache bytes of the device the default execution space runs on (GPU L2, or the largest
/// CPU cache in sysfs); 0 if unknown.
std::size_t last_level_cache_bytes();

/// How many input sets of `set_bytes` to rotate through so that one pass over them exceeds the
/// rotation target (--tk_rotate_mib, default twice the last-level cache): at least 1, at most 4096.
int rotation_count(double set_bytes);

/// Untimed runs before the timed ones for a benchmark rotating through `sets` input sets: --tk_warmup,
/// and at least one pass over the sets, so that no timed run is the first on its set (first touches,
/// and per-operand state of a library: tilekit's tensor-map cache, a vendor's own). With 2 warm-up
/// runs over 67 sets (f16 512^3), 65 of 100 timed launches met their operands for the first time
/// and the host part of a launch moved by up to 4 us between series (perf notes 28).
int warmup_runs(int sets);

/// Timed iterations for a benchmark doing `work` (FLOP or bytes) per run: --tk_rep_work / work,
/// clamped to [--tk_min_reps, --tk_max_reps].
int reps_for(double work);

/// The time budget (--tk_deadline_s). Rates are remembered per series key ("matmul/f32/openblas"),
/// so a benchmark is skipped when its previous shape's rate says it would end past the deadline.
/// Returns "" to go ahead, else the reason to skip.
std::string over_budget(const std::string& series_key, double work, int runs);
void record_rate(const std::string& series_key, double work_per_s);
double seconds_since_start();

/// Per-iteration times of one benchmark: host clock around each iteration (closed by a fence), and
/// device-event times where the backend has them (CUDA), else empty.
struct Samples {
  std::vector<double> host_s;
  std::vector<double> device_s;
  std::vector<double> submit_s;  ///< host clock from the start until `run` returned (before the fence):
                                 ///< on CUDA, the host's cost of enqueuing the work
  double other_cpu_pct = -1.0;  ///< CPU use of other processes while timing (OtherLoad), -1 unknown
};

/// How much of the machine's CPU time other processes used between construction and percent():
/// all CPUs' busy time minus this process's own, over all CPUs' time, in percent (Linux /proc, with
/// its 10 ms tick resolution; -1 where unavailable or under 20 ticks of all CPUs' time). Host timings on shared cores mean little when
/// this is high: a thread descheduled in favour of another process stalls the whole parallel region.
class OtherLoad {
 public:
  OtherLoad();
  double percent() const;

 private:
  long long busy0_ = -1, total0_ = -1, self0_ = -1;
};

/// Records a CUDA event pair on the default execution space instance's stream; no-op elsewhere.
class DeviceTimer {
 public:
  DeviceTimer();
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;
  void start();
  void stop();
  /// Seconds between start and stop (call after a fence); negative when there are no events.
  double elapsed_s() const;

 private:
  [[maybe_unused]] void* start_ = nullptr;  // CUDA events (unused on other backends)
  [[maybe_unused]] void* stop_ = nullptr;
};

/// Runs `run(i)` `warmup` times untimed, then once per benchmark iteration (i counts on), each
/// timed on the host clock from a fenced start to a fence after the run (the fence is inside the
/// timed region: device work is asynchronous), with device events too on CUDA. Sets the
/// iteration's manual time to the host-clock seconds.
template <class Run>
Samples time_iterations(benchmark::State& state, int warmup, Run&& run) {
  using ES = Kokkos::DefaultExecutionSpace;
  using clock = std::chrono::steady_clock;
  int64_t i = 0;
  for (int w = 0; w < warmup; ++w) run(i++);
  ES().fence();
  Samples s;
  DeviceTimer events;
  const OtherLoad other;
  for (auto _ : state) {
    const auto t0 = clock::now();
    events.start();
    run(i++);
    const auto t_submitted = clock::now();
    events.stop();
    ES().fence();  // the clock stops only once the device is done
    const double sec = std::chrono::duration<double>(clock::now() - t0).count();
    state.SetIterationTime(sec);
    s.host_s.push_back(sec);
    s.submit_s.push_back(std::chrono::duration<double>(t_submitted - t0).count());
    const double ev = events.elapsed_s();
    if (ev >= 0.0) s.device_s.push_back(ev);
  }
  s.other_cpu_pct = other.percent();
  return s;
}

/// Sets the counters of the conventions above from the samples: `rate_name` (e.g. "TFLOPS") =
/// work / median seconds * rate_scale, median_ms, min_ms, max_ms, other_cpu_pct, submit_us; and the "_events"
/// versions when device times exist. Returns the work per second at the median (host clock).
double set_rate_counters(benchmark::State& state, const Samples& s, double work, const char* rate_name,
                         double rate_scale);

/// A benchmark computed a wrong result: main() then exits with status 1 (a skip for time does not).
void record_failure();
bool any_failure();

/// Median of a sample (0 for an empty one).
double median(std::vector<double> v);

}  // namespace bench
}  // namespace tilekit
