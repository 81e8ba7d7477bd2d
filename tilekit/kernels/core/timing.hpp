// Timing of device work: warm-up runs, then timed repetitions each ended by a fence, summarised by
// the median and the 20th/80th percentiles. Used by the app and the tuner (benchmarks use Google
// Benchmark's manual timing instead).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <vector>

namespace tilekit {

struct Timing {
  double median_s = 0.0, p20_s = 0.0, p80_s = 0.0, min_s = 0.0, max_s = 0.0;
  std::vector<double> samples_s;  ///< sorted
};

/// Runs run(i) for i in [0, warmup + reps): the first `warmup` untimed, then each timed from a
/// fenced start to a fenced end. `run` receives the repetition index (to rotate input buffers).
template <class F>
Timing time_runs(int warmup, int reps, F&& run) {
  Timing t;
  for (int i = 0; i < warmup + reps; ++i) {
    Kokkos::fence();
    Kokkos::Timer timer;
    run(i);
    Kokkos::fence();
    if (i >= warmup) t.samples_s.push_back(timer.seconds());
  }
  if (t.samples_s.empty()) return t;
  std::sort(t.samples_s.begin(), t.samples_s.end());
  const auto at = [&](double q) { return t.samples_s[static_cast<std::size_t>(q * (t.samples_s.size() - 1) + 0.5)]; };
  t.median_s = at(0.5);
  t.p20_s = at(0.2);
  t.p80_s = at(0.8);
  t.min_s = t.samples_s.front();
  t.max_s = t.samples_s.back();
  return t;
}

}  // namespace tilekit
