// Per-backend default matmul configurations: one table. Later tuning sweeps rewrite its rows.
#include "kernels/common.hpp"
#include "kernels/matmul.hpp"
#include "tuning/matmul_tiles.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <unistd.h>

#include <fstream>
#include <string>

namespace tilekit {
namespace tuning {

namespace {
struct DefaultRow {
  const char* backend;
  const char* config;  // full config name
};
// Host: team_size 1 (each OpenMP thread is a team and owns whole C tiles; no intra-team barrier
// traffic between cores); the 128x128 tile won most shapes of every type in the 2-core EPYC sweep
// shipped in tuning/results (scripts/tune-cpu.sh), by 1.1-2x over 64x64. GPU: 256 threads per team as one Kokkos team of 256 x vector length 1.
// CUDA f16/bf16: a tensor-core tile, its warps as team members of 32 vector lanes each: the
// warpgroup-MMA tile where the GPU and the build allow it (Hopper, sm_90a), else the mma.sync tile
// that was fastest at 8192^3 on the H100 (docs/perf-notes.md).
// f64, i8 and f32 with TF32 math (the opt-in) on sm_80+: the sm_80+ mma.sync tiles of those types
// (kernels/matmul_mma_sm80_f64_tf32_i8.hpp) that won at 4096^3 and 8192^3 on the H100.
constexpr const char* kCudaWgmmaDefault = "bm128_bn128_bk64_tm64_tn128_wg_g8_t8_v32";
// Where even the 64x128 warp-specialised tile below leaves half the SMs idle (512^3: 32 tiles), the
// 64x64 ws tile (one consumer warpgroup, 65 KB): H100, Nsight Compute, column-major 512^3, kernel
// 5.86 us (f16) / 5.79 (bf16) against 6.88 / 6.88 for 64x128 ws; suite event medians 16.7 / 16.4 us
// against 19.8 / 19.8 for the 64x64 mma.sync tile this entry named before (docs/perf-notes.md
// section 27). The 128x128 `_wg` tile above stays the shape-free default (default_matmul_config
// without sizes); with sizes, `auto` on a Hopper takes the ws tiles (section 16).
constexpr const char* kCudaWgmmaSmall = "bm64_bn64_bk64_tm64_tn64_ws_g8_t8_v32";
// Where K is 2048 or more and the 128x256 tiles fill 7/8 of the SMs, the warp-specialised tile (TMA
// producer, persistent grid, compact epilogue: kernels/matmul_wgmma_ws_sm90.hpp). H100 f16,
// column-major, `tilekit matmul` in one call at f4f1eda (2026-11-23) after the compact epilogue: 4096^3 626
// TFLOP/s against 394 for 128x128, 8192^3 705 against 428, 9728x8192x65536 654; before that
// epilogue the ws tile lost at 4096^3 (278 against 345) and the threshold was 8192. Operands TMA
// cannot describe (pitches not a multiple of 16 bytes) take its cp.async producer, slower (297
// TFLOP/s at 8192^3 before the compact epilogue; not re-measured).
constexpr const char* kCudaWgmmaDeepK = "bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32";
// 92ec43b, 2026-11-24 (same call, f16, column-major, `tilekit matmul`, TFLOP/s): 2048^3 376 against 299 for
// 128x128 (its 128 tiles on 132 SMs), so from K = 2048 where its tiles fill 7/8 of the SMs.
constexpr int64_t kCudaWgmmaDeepKMin = 2048;
// Where the 128x256 tile's K loop is long enough for two-team clusters (kWsMulticast.min_k_steps:
// K >= 16384 at BK = 64), grouped order over 16 tile rows instead of 8: a wave of 132 teams then
// reads the least A and B per K step (532 KB against 671 at g8, 9728x8192x65536). H100, Nsight
// Compute at base clock, drift bound on, no clusters: DRAM 12.1 GB at g16 against 15.0 at g8 (g4
// 22.6, g12 12.6, g32 14.1) at the same cycles; under the power cap with clusters, 30 rounds of one
// series a process: the fused leaky_relu above cuBLAS + a separate pass in 24-30 of 30 rounds at g16
// (medians of the ratios 1.013-1.017) against 15-23 of 30 at g8 (1.000-1.008); `tilekit tune` at
// that shape measured g16 0.8% (f16) and 1.1% (bf16) ahead of g8 (perf notes 41). As `tilekit:tuned`
// there (perf notes 42): fused leaky_relu / (cuBLAS + pass) 1.010-1.020 in two calls of 30 rounds.
constexpr int kCudaWgmmaLongKGroupM = 16;
// Elsewhere, where its tiles fill half the SMs, the 64x128 warp-specialised tile (one consumer
// warpgroup, two teams per SM): 1024^3 95 against 70 for 64x64 _tc and 76 for 128x128 _wg;
// 1024x1024x8192 294 against 159 (_wg) and 176 (128x256 _ws); 2048x2048x512 155 against 150;
// 2048^3 318 against 299.
constexpr const char* kCudaWgmmaMid = "bm64_bn128_bk64_tm64_tn128_ws_g8_t8_v32";
constexpr const char* kCudaMmaDefault = "bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32";
constexpr const char* kCudaDmmaDefault = "bm128_bn64_bk16_tm64_tn32_tc_g8_t4_v32";
// f64 where the 128x64 tiles number fewer than the SMs (1024^3: 128 tiles for 132 SMs, one team of
// 4 warps each): the 64x64 DMMA tile, two teams an SM. H100, Nsight Compute, column-major, kernel us
// (2026-11-25, perf notes 30): 1024^3 58.0-58.3 against 69.6-69.7 for 128x64; 2048^3 (512 tiles of
// 128x64) 431 against 411.
constexpr const char* kCudaDmmaSmall = "bm64_bn64_bk16_tm32_tn32_tc_g8_t4_v32";
constexpr const char* kCudaTf32Default = "bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32";
// f32 with TF32 math on a Hopper: the warp-specialised wgmma tile (kernels/matmul_wgmma_ws_sm90.hpp;
// operands that are not K-major are packed first). H100, column-major, `tilekit matmul`, one call:
// 4096^3 313 TFLOP/s against 96 for the mma.sync tile, 8192^3 359 against 108 (docs/perf-notes.md
// section 14) ...
constexpr const char* kCudaTf32Ws = "bm128_bn256_bk32_tm64_tn256_ws_g8_t12_v32";
// ... where its tiles fill 7/8 of the SMs: at 2048^3 (128 tiles on 132 SMs) it ran 209 TFLOP/s
// against 80 for the mma.sync tile. Below that, the 64x128 TF32 ws tile (one consumer warpgroup, two
// teams per SM): H100, Nsight Compute, column-major, kernel us against 128x256: 512^3 8.5 / 16.3,
// 1024^3 13.2 / 26.1, 1024x1024x4096 44.8 / 81.5; at 2048^3 47.3 for 128x256 against 63.6
// (docs/perf-notes.md section 27) ...
constexpr const char* kCudaTf32WsMid = "bm64_bn128_bk32_tm64_tn128_ws_g8_t8_v32";
// ... from 1/8 of the SMs (512^3: 32 tiles of 64x128) on; fewer tiles take the mma.sync tile.
constexpr int64_t kCudaTf32WsMinFill = 8;
constexpr const char* kCudaImmaDefault = "bm128_bn128_bk64_tm64_tn64_tc_g8_t4_v32";
// CUDA f32 with IEEE math: the warp-tiled SIMT kernel (kernels/matmul_simt_warp.hpp; f32 only, so
// the backend row below, which every type can run, keeps the first SIMT kernel's tile): 256x128
// (16x8 per lane) won 2048^3-8192^3 on the H100, needs 50 KB of scratch (the patched Kokkos; where
// the limit is 48 KB, 128x128 with 8x8 per lane, 34 KB); where the teams leave SMs idle, the
// smaller tiles in order (docs/perf-notes.md section 10).
constexpr const char* kCudaSimtF32Default = "bm256_bn128_bk16_tm16_tn8_g16_t256_v1";
constexpr const char* kCudaSimtF32Fallback = "bm128_bn128_bk16_tm8_tn8_g16_t256_v1";
constexpr std::array<const char*, 3> kCudaSimtF32SmallerTiles{kCudaSimtF32Fallback,
                                                              "bm64_bn64_bk16_tm8_tn4_g16_t128_v1",
                                                              "bm32_bn32_bk32_tm2_tn2_g8_t256_v1"};
// CUDA f32 with a shallow K (up to kShallowK): the store of C is most of the work; the 64x64 tile
// (4 teams of 4 warps per SM, 16-byte stores of C) won both shallow shapes of the H100 sweep
// (8192x8192x16: 12.1 TFLOP/s against 9.8 for 256x128; docs/perf-notes.md section 11).
constexpr const char* kCudaSimtF32Shallow = "bm64_bn64_bk16_tm8_tn4_g16_t128_v1";
// CUDA f32 where even the 64x64 tiles leave SMs idle and K is deep: that tile with K split across
// teams (a power of two, up to 8, for about two teams per SM; at least 2 K steps per team). At 512^3
// on the H100 the split in 4 ran 9.4 TFLOP/s against 7.1 unsplit and 5.8 for the 32x32 tiles
// (tuning sweep of 2026-11-24, docs/perf-notes.md section 20).
constexpr const char* kCudaSimtF32SplitK = "bm64_bn64_bk16_tm8_tn4_g8_t128_v1";
constexpr int kCudaSimtF32MaxSplits = 8;
// Host: the packed kernel's tiles (one per compute size: f64 has half the lanes per vector);
// team_size 1. The large tile when its per-thread working set (A panel BM x BK, running sums
// BM x BN, one B sliver BK x TN) fits the L2 cache of a core, read at run time (host_l2_bytes);
// else the half-height tile (e.g. on CPUs with 256 KB of L2).
constexpr const char* kHostDefault = "bm96_bn512_bk256_tm12_tn32_g8_t1_v1";
constexpr const char* kHostF64Default = "bm96_bn256_bk256_tm12_tn16_g8_t1_v1";
constexpr std::array<DefaultRow, 4> kDefaults{{
    {"serial", kHostDefault},
    {"openmp", kHostDefault},
    {"cuda", "bm128_bn128_bk8_tm8_tn8_g8_t256_v1"},
    {"hip", "bm128_bn128_bk8_tm8_tn8_g8_t256_v1"},
}};

// Shape classes of the default (the tuning sweeps refine each): a thin product (M or N up to
// kThinMaxRows) takes the thin kernel; other products take the backend's tile above, or a smaller
// menu tile when the big one leaves threads idle.
// GPU thin teams: kThinGpuThreads threads, split into columns x K groups so that the launch holds at
// least half the device's thread slots; host thin teams: a column block per thread, at least
// kThinHostTeamsPerThread blocks per thread, its running sums (row class x columns values of the
// compute type) at most kThinHostSumsBytes (matmul_tiles.hpp) so that they stay in L1. (The cap
// was 256 columns whatever the row class: for one row, 1 KB of sums. 2-core EPYC, f32 1048576x1x1
// in the benchmark (inputs rotated through 2 x the LLC), ms: 256 columns 0.23-0.41, 4096
// 0.211-0.218 (the copy of its bytes 0.20-0.22), 64 0.217-0.231; bias+gelu 0.50-0.54 at 256
// columns against 0.33-0.36 at 4096; perf notes 25.)
constexpr int kThinGpuThreads = 256;
constexpr int kThinGpuMaxKgroups = 32;
constexpr int kThinHostMinCols = 16;
constexpr int kThinHostTeamsPerThread = 4;
// Smaller tiles, tried in order when the default tile gives fewer teams than the device runs at
// once (GPU: SMs, taken as concurrency / 2048; host: threads).
constexpr std::array<const char*, 2> kGpuSmallerTiles{"bm64_bn64_bk16_tm4_tn4_g8_t256_v1",
                                                      "bm32_bn32_bk32_tm2_tn2_g8_t256_v1"};
constexpr std::array<const char*, 1> kHostSmallerTiles{"bm48_bn128_bk256_tm12_tn32_g8_t1_v1"};
constexpr std::array<const char*, 1> kHostF64SmallerTiles{"bm48_bn64_bk256_tm12_tn16_g8_t1_v1"};
// Host: a tile whose teams are fewer than this many per thread leaves threads idle at the end (each
// team is one thread's share of C: 3 teams on 2 threads run at 2/3 of the rate).
constexpr int64_t kHostTeamsPerThread = 4;

int64_t pow2_floor(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

template <class... Tiles>
bool supports(TileList<Tiles...>, const MatmulConfig& c, DType input, Math math) {
  bool yes = false;
  auto one = [&](auto tile) {
    using T = decltype(tile);
    yes = yes || (c.same_tile(T::config()) && T::runs(input) && (!T::tf32 || math == Math::tf32));
  };
  (one(Tiles{}), ...);
  return yes;
}

template <class... Tiles>
std::string names(TileList<Tiles...>, const DType* input = nullptr, Math math = Math::ieee) {
  std::string s;
  auto add = [&](const MatmulConfig& c) {
    const std::string n = c.tile_name();
    if ((", " + s + ", ").find(", " + n + ", ") != std::string::npos) return;  // tiles of other types, same name
    if (!input || tile_supports(c, *input, math)) s += (s.empty() ? "" : ", ") + n;
  };
  (add(Tiles::config()), ...);
  return s;
}

/// The CUDA tensor-core default for an input type, or null where SIMT tiles are the default.
const char* cuda_tensor_core_default(DType input, Math math) {
  if (cuda_compute_capability() < 80) return nullptr;
  switch (input) {
    case DType::f16:
    case DType::bf16: return warpgroup_mma_available() ? kCudaWgmmaDefault : kCudaMmaDefault;
    case DType::f64: return kCudaDmmaDefault;
    case DType::i8: return kCudaImmaDefault;
    case DType::f32: return math == Math::tf32 ? kCudaTf32Default : nullptr;
    default: return nullptr;
  }
}
}  // namespace

/// L2 bytes per core of the host CPU (sysconf, else /sys), 0 when unknown.
static int64_t host_l2_bytes() {
  static const int64_t bytes = [] {
    long v = 0;
#if defined(_SC_LEVEL2_CACHE_SIZE)
    v = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    if (v > 0) return int64_t(v);
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index2/size");
    int64_t n = 0;
    std::string unit;
    if (f >> n) {
      f >> unit;
      return n * (unit.empty() || unit[0] == 'K' ? 1024 : unit[0] == 'M' ? 1024 * 1024 : 1);
    }
    return int64_t(0);
  }();
  return bytes;
}

bool tile_supports(const MatmulConfig& c, DType input, Math math) {
  return supports(MatmulTiles<Kokkos::DefaultExecutionSpace>{}, c, input, math);
}

template <class... Tiles>
bool splits_k(TileList<Tiles...>, const MatmulConfig& c) {
  return ((c.same_tile(Tiles::config()) && TileSplitsK<Tiles>::value) || ...);
}
bool tile_splits_k(const MatmulConfig& c) { return splits_k(MatmulTiles<Kokkos::DefaultExecutionSpace>{}, c); }

MatmulConfig default_matmul_config(const std::string& backend, DType input, Math math) {
  for (const auto& row : kDefaults) {
    if (backend == row.backend) {
      const char* tc = backend == "cuda" ? cuda_tensor_core_default(input, math) : nullptr;
      if (!tc && backend == "cuda" && input == DType::f32) {
        MatmulConfig big;
        std::string why;
        if (!MatmulConfig::parse(kCudaSimtF32Default, big, why)) throw std::logic_error(why);
        tc = team_scratch_limit(0) >= matmul_scratch_bytes<float, float>(big) ? kCudaSimtF32Default
                                                                               : kCudaSimtF32Fallback;
      }
      const bool host = backend == "serial" || backend == "openmp";
      const char* name = tc ? tc : host && input == DType::f64 ? kHostF64Default : row.config;
      MatmulConfig c;
      std::string why;
      if (!MatmulConfig::parse(name, c, why)) throw std::logic_error(why);
      if (host) {
        const int64_t bytes = input == DType::f64 ? 8 : 4;  // the accumulation type's size
        const int64_t working_set = bytes * (int64_t(c.bm) * c.bk + int64_t(c.bm) * c.bn + int64_t(c.bk) * c.tn);
        const int64_t l2 = host_l2_bytes();
        if (l2 > 0 && working_set > l2) {
          const char* smaller = input == DType::f64 ? kHostF64SmallerTiles[0] : kHostSmallerTiles[0];
          if (!MatmulConfig::parse(smaller, c, why)) throw std::logic_error(why);
        }
      }
      return c;
    }
  }
  throw std::invalid_argument("no default matmul config for backend '" + backend +
                              "' (known: serial, openmp, cuda, hip)");
}

MatmulConfig default_matmul_config(const std::string& backend, DType input, int64_t M, int64_t N, int64_t K,
                                   Math math) {
  const MatmulConfig base = default_matmul_config(backend, input, math);
  const bool gpu = backend == "cuda" || backend == "hip";
  const int64_t concurrency = std::max(1, Kokkos::DefaultExecutionSpace().concurrency());
  const int64_t thin = std::min(M, N), L = std::max(M, N);
  MatmulConfig c;
  std::string why;
  if (thin >= 1 && thin <= kThinMaxRows) {
    c.thin = true;
    c.group_m = 1;
    c.team_size = c.vector_length = 0;
    if (gpu) {
      const int64_t want = (concurrency / 2 + L - 1) / std::max<int64_t>(L, 1);  // K groups to fill half the slots
      int64_t g = 1;
      while (g < want && g < kThinGpuMaxKgroups) g *= 2;
      g = std::min(g, pow2_floor(std::max<int64_t>(K, 1)));
      c.thin_kgroups = static_cast<int>(g);
      c.thin_cols = static_cast<int>(kThinGpuThreads / g);
    } else {
      const int64_t per_team = L / (concurrency * kThinHostTeamsPerThread);
      // Sums in the compute type: f64 for f64 inputs, 4-byte types for the rest (f32, or i32 for i8)
      const int64_t sum_bytes = thin_row_class(thin) * (input == DType::f64 ? 8 : 4);
      const int64_t max_cols = pow2_floor(std::max<int64_t>(kThinHostSumsBytes / sum_bytes, kThinHostMinCols));
      c.thin_cols = static_cast<int>(
          std::clamp<int64_t>(pow2_floor(std::max<int64_t>(per_team, 1)), kThinHostMinCols, max_cols));
      c.thin_kgroups = 1;
    }
    return c;
  }
  const int64_t slots = gpu ? std::max<int64_t>(concurrency / 2048, 1) : concurrency * kHostTeamsPerThread;
  auto teams = [&](const MatmulConfig& t) { return ((M + t.bm - 1) / t.bm) * ((N + t.bn - 1) / t.bn); };
  if (base.mma) {
    if (input == DType::f32 && math == Math::tf32 && warpgroup_mma_available() &&
        std::max({M, N, K}) <= int64_t(INT32_MAX)) {
      MatmulConfig ws = base, ws_mid = base;
      if (!MatmulConfig::parse(kCudaTf32Ws, ws, why) || !MatmulConfig::parse(kCudaTf32WsMid, ws_mid, why))
        throw std::logic_error(why);
      if (teams(ws) >= slots - slots / 8) return ws;
      if (teams(ws_mid) >= slots / kCudaTf32WsMinFill) return ws_mid;
    }
    if (base.wgmma) {
      MatmulConfig deep = base, mid = base;
      if (!MatmulConfig::parse(kCudaWgmmaDeepK, deep, why) || !MatmulConfig::parse(kCudaWgmmaMid, mid, why))
        throw std::logic_error(why);
      if (K >= kCudaWgmmaDeepKMin && teams(deep) >= slots - slots / 8) {
        if (K >= int64_t(kWsMulticast.min_k_steps) * deep.bk) deep.group_m = kCudaWgmmaLongKGroupM;
        return deep;
      }
      if (teams(mid) >= slots / 2) return mid;
    }
    if (input == DType::f64 && teams(base) < slots) {
      MatmulConfig small = base;
      if (!MatmulConfig::parse(kCudaDmmaSmall, small, why)) throw std::logic_error(why);
      return small;
    }
    if (base.wgmma && teams(base) < slots) {
      MatmulConfig small = base;
      if (!MatmulConfig::parse(kCudaWgmmaSmall, small, why)) throw std::logic_error(why);
      return small;
    }
    return base;
  }
  if (backend == "cuda" && input == DType::f32 && K <= kShallowK) {  // (smaller shapes: the loop below)
    MatmulConfig shallow = base;
    if (!MatmulConfig::parse(kCudaSimtF32Shallow, shallow, why)) throw std::logic_error(why);
    if (teams(shallow) >= slots) return shallow;
  }
  if (teams(base) >= slots) return base;
  if (backend == "cuda" && input == DType::f32) {
    MatmulConfig split = base;
    if (!MatmulConfig::parse(kCudaSimtF32SplitK, split, why)) throw std::logic_error(why);
    const int64_t tiles = teams(split);
    if (tiles < slots && tile_splits_k(split)) {
      int64_t s = 1;
      while (s < kCudaSimtF32MaxSplits && tiles * 2 * s <= 2 * slots && K / (2 * s * split.bk) >= 2) s *= 2;
      if (s >= 2) {
        split.k_splits = static_cast<int>(s);
        return split;
      }
    }
  }
  MatmulConfig best = base;
  std::vector<const char*> smaller;
  if (backend == "cuda" && input == DType::f32)
    smaller.assign(kCudaSimtF32SmallerTiles.begin(), kCudaSimtF32SmallerTiles.end());
  else if (gpu) smaller.assign(kGpuSmallerTiles.begin(), kGpuSmallerTiles.end());
  else if (input == DType::f64) smaller.assign(kHostF64SmallerTiles.begin(), kHostF64SmallerTiles.end());
  else smaller.assign(kHostSmallerTiles.begin(), kHostSmallerTiles.end());
  for (const char* name : smaller) {
    MatmulConfig t = base;
    if (!MatmulConfig::parse(name, t, why)) throw std::logic_error(why);
    best = t;
    if (teams(t) >= slots) break;
  }
  return best;
}

std::string menu_names() { return names(MatmulTiles<Kokkos::DefaultExecutionSpace>{}); }
std::string menu_names(DType input, Math math) {
  return names(MatmulTiles<Kokkos::DefaultExecutionSpace>{}, &input, math);
}

}  // namespace tuning
}  // namespace tilekit
