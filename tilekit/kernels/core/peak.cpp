// The machine's peak rate per input type: the GPU table and the host FMA probe.
#include "tilekit/kernels/core/peak.hpp"

#include "tilekit/kernels/core/cpu.hpp"
#include "tilekit/kernels/core/device.hpp"

#include <Kokkos_Core.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace tilekit {

namespace {

using Clock = std::chrono::steady_clock;

// Independent FMA chains in vectors of VB bytes: CHAINS of them hide the FMA latency on two pipes
// (latency 4-5 cycles x 2 pipes; 12 ymm or 24 zmm, as the micro-kernels hold). Returns FLOPs done.
// The starting values are hidden from the optimizer: chain 1 starts at 1, a fixed point of
// x * 0.999999f + 1e-6f in f32, and GCC folded it away, so the loop ran CHAINS - 1 FMAs an iteration
// and the probe reported 12/11 (avx2, portable) and 24/23 (avx512) of the machine's rate
// (docs/perf-notes.md section 55).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__NVCC__) && !defined(__HIPCC__)
#define TILEKIT_PEAK_X86 1
template <int VB, int CHAINS>
__attribute__((always_inline)) inline double fma_chains(long iterations) {
  typedef float v_t __attribute__((vector_size(VB)));
  v_t acc[CHAINS];
  const v_t mul = v_t{} + 0.999999f, add = v_t{} + 1e-6f;
#pragma GCC unroll 32
  for (int c = 0; c < CHAINS; ++c) {
    acc[c] = v_t{} + float(c);
    __asm__("" : "+v"(acc[c]));
  }
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 32
    for (int c = 0; c < CHAINS; ++c) acc[c] = acc[c] * mul + add;
  }
  float sink = 0;
  for (int c = 0; c < CHAINS; ++c) sink += acc[c][0];
  __asm__ volatile("" : : "x"(sink));  // the chains' results are used: the loop stays
  return 2.0 * (VB / 4) * CHAINS * double(iterations);
}
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"), noinline)) double fma_avx512(long n) {
  return fma_chains<64, 24>(n);
}
__attribute__((target("avx2,fma"), noinline)) double fma_avx2(long n) { return fma_chains<32, 12>(n); }
__attribute__((noinline)) double fma_portable(long n) { return fma_chains<16, 12>(n); }
#endif

[[maybe_unused]] double fma_flops(HostIsa isa, long iterations) {
#if defined(TILEKIT_PEAK_X86)
  if (isa == HostIsa::avx512) return fma_avx512(iterations);
  if (isa == HostIsa::avx2) return fma_avx2(iterations);
  return fma_portable(iterations);
#else
  (void)isa;
  // Other hosts: plain loops over 16-byte vectors' worth of floats, which the compiler vectorizes.
  float acc[48];
  for (int c = 0; c < 48; ++c) acc[c] = float(c);
  for (long i = 0; i < iterations; ++i)
    for (int c = 0; c < 48; ++c) acc[c] = acc[c] * 0.999999f + 1e-6f;
  volatile float sink = acc[0];
  (void)sink;
  return 2.0 * 48 * double(iterations);
#endif
}

}  // namespace

double measure_host_fma_peak() {
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
  return 0.0;
#else
  using ES = Kokkos::DefaultExecutionSpace;
  {
    const HostIsa isa = host_isa();
    const int threads = std::max(1, ES().concurrency());
    // Iterations for ~50 ms at a few GHz; one warm-up pass brings the cores to their clock.
    const long iterations = isa == HostIsa::avx512 ? 2000000 : 4000000;
    double best = 0.0;
    for (int pass = 0; pass < 3; ++pass) {
      std::atomic<long long> flops{0};
      const auto t0 = Clock::now();
      Kokkos::parallel_for(
          "tilekit::fma_peak_probe", Kokkos::RangePolicy<ES, Kokkos::Schedule<Kokkos::Static>>(0, threads),
          [&](int) { flops += static_cast<long long>(fma_flops(isa, iterations)); });
      ES().fence();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (pass > 0 && s > 0) best = std::max(best, double(flops.load()) / s);
    }
    return best;
  }
#endif
}

PeakRate device_peak(DType in, Math math, double probed_f32) {
  PeakRate r;
#if defined(KOKKOS_ENABLE_CUDA)
  (void)probed_f32;
  int dev = 0, sms = 0, khz = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return r;
  }
  const int cc = cuda_compute_capability();
  const bool hopper = cc >= 90, ampere = cc >= 80;
  // Dense FLOP (OP for i8) per clock per SM of the units the kernels use (NVIDIA's data sheets).
  double per_clock = 0;
  const char* units = "";
  switch (in) {
    case DType::f16:
    case DType::bf16: per_clock = hopper ? 4096 : ampere ? 2048 : 0, units = "tensor cores"; break;
    case DType::i8: per_clock = hopper ? 8192 : ampere ? 4096 : 0, units = "tensor cores"; break;
    case DType::f64: per_clock = hopper ? 256 : ampere ? 128 : 0, units = "FP64 tensor cores"; break;
    case DType::f32:
      if (math == Math::tf32) per_clock = hopper ? 2048 : ampere ? 1024 : 0, units = "TF32 tensor cores";
      else per_clock = hopper ? 256 : ampere ? 128 : 0, units = "FP32 units";
      break;
    default: break;
  }
  if (per_clock == 0) return r;
  r.flops = double(sms) * khz * 1e3 * per_clock;
  r.basis = fmt::format("{} SMs x {} MHz x {} per clock ({})", sms, khz / 1000, per_clock, units);
#elif defined(KOKKOS_ENABLE_HIP)
  (void)in, (void)math, (void)probed_f32;
#else
  (void)math;
  if (probed_f32 <= 0) return r;
  const HostIsa isa = host_isa();
  double scale = 1.0;
  const char* how = "f32 FMA";
  if (in == DType::f64) scale = 0.5, how = "f64 FMA (half the f32 lanes)";
  const CpuInfo& cpu = cpu_info();
  if (in == DType::bf16 && isa == HostIsa::avx512 && cpu.avx512_bf16) scale = 2.0, how = "bf16 dot products (2x f32)";
  if (in == DType::i8 && isa == HostIsa::avx512 && cpu.avx512_vnni) scale = 4.0, how = "i8 dot products (4x f32)";
  else if (in == DType::i8 && isa != HostIsa::portable) scale = 2.0, how = "i8 pairs, vpmaddwd (2x f32)";
  r.flops = probed_f32 * scale;
  r.basis = fmt::format("{} path, {} threads, {}: FMA probe", host_isa_name(isa),
                        Kokkos::DefaultExecutionSpace().concurrency(), how);
#endif
  return r;
}

}  // namespace tilekit
