// The machine's peak rate for a matmul's input type: what `tilekit matmul` and the benchmarks divide
// their rate by, a reading that does not depend on any vendor library. GPUs: the device's SM count x
// clock x the per-SM rate of the units this build's kernels use for the type. CPUs: a short
// FMA-throughput probe of the micro-kernel path that runs (tilekit/kernels/core/cpu.hpp) on every
// thread at once, scaled for the type (f64 half the lanes; bf16 and i8 dot products 2x and 4x).
#pragma once

#include "tilekit/kernels/core/types.hpp"

#include <string>

namespace tilekit {

struct PeakRate {
  double flops = 0.0;  ///< FLOP/s (OP/s for i8); 0: unknown
  std::string basis;   ///< how it was found, e.g. "FMA probe: avx512, 2 threads"
};

/// GPUs: from the device's attributes (no measurement); host backends: `probed_f32`, the f32 FMA
/// rate of all threads that measure_host_fma_peak() measured, scaled for `in`.
PeakRate device_peak(DType in, Math math, double probed_f32 = 0.0);

/// Host backends: the f32 FMA rate (FLOP/s) of the path host matmuls take, every thread of the
/// default execution space running independent FMA chains for about 50 ms; 0 on GPU backends.
double measure_host_fma_peak();
/// The version of measure_host_fma_peak's loop, part of the name of its kept results
/// (tilekit/tuning/peak_cache.hpp): 2 since every chain of the loop runs (docs/perf-notes.md section 55).
constexpr int kHostFmaProbeVersion = 2;

}  // namespace tilekit
