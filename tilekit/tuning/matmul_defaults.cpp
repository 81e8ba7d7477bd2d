// Per-backend default matmul configurations: one table. Later tuning sweeps rewrite its rows.
#include "tilekit/kernels/core/cpu.hpp"
#include "tilekit/kernels/core/device.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>


#include <string>

namespace tilekit {
namespace tuning {

namespace {
struct DefaultRow {
  const char* backend;
  const char* config;  // full config name
};
// The CUDA defaults by type. f16/bf16: the warpgroup-MMA tiles where the GPU and the build allow
// them (Hopper, sm_90a), else the mma.sync tile; f64, i8 and TF32: their mma.sync tiles; f32 (IEEE):
// the warp-tiled SIMT kernel. Each was the fastest of the menu at 4096^3-8192^3 on an H100
// (docs/perf-notes.md sections 7, 10, 12-16); the shape rules below pick smaller tiles where these
// leave SMs idle.
constexpr const char* kCudaWgmmaDefault = "bm128_bn128_bk64_tm64_tn128_wg_g8_t8_v32";
// Where even the 64x128 ws tile leaves half the SMs idle (512^3: 32 tiles), the 64x64 ws tile: one
// consumer warpgroup, so more teams per SM (section 27). The 128x128 `_wg` tile stays the
// shape-free default (default_matmul_config without sizes).
constexpr const char* kCudaWgmmaSmall = "bm64_bn64_bk64_tm64_tn64_ws_g8_t8_v32";
// The 128x256 warp-specialised tile (TMA producer, persistent grid) where K is at least
// kCudaWgmmaDeepKMin and its tiles fill 7/8 of the SMs: a deep K hides its prologue and epilogue,
// and the wide tile halves B's loads per FLOP (sections 13 and 16).
constexpr const char* kCudaWgmmaDeepK = "bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32";
constexpr int64_t kCudaWgmmaDeepKMin = 2048;
// Where the 128x256 tile's K loop is long enough for two-team clusters (kWsMulticast.min_k_steps),
// grouped order over 16 tile rows instead of 8: a wave of teams then reads the least A and B per K
// step, and DRAM traffic falls by a fifth at the same cycles (sections 41 and 42).
constexpr int kCudaWgmmaLongKGroupM = 16;
// Elsewhere, where its tiles fill half the SMs, the 64x128 ws tile: one consumer warpgroup and two
// teams per SM keep mid sizes (1024^3-2048^3) busier than the wider tiles (section 16).
constexpr const char* kCudaWgmmaMid = "bm64_bn128_bk64_tm64_tn128_ws_g8_t8_v32";
constexpr const char* kCudaMmaDefault = "bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32";
constexpr const char* kCudaDmmaDefault = "bm128_bn64_bk16_tm64_tn32_tc_g8_t4_v32";
// f64 where the 128x64 tiles number fewer than the SMs: the 64x64 DMMA tile, two teams an SM
// (section 30), 32 deep (section 65).
constexpr const char* kCudaDmmaSmall = "bm64_bn64_bk32_tm32_tn32_tc_g8_t4_v32";
constexpr const char* kCudaTf32Default = "bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32";
// f32 with TF32 math on a Hopper: the warp-specialised wgmma tile (operands that are not K-major
// are packed first), three times the mma.sync tile's rate at the big squares (section 14) ...
constexpr const char* kCudaTf32Ws = "bm128_bn256_bk32_tm64_tn256_ws_g8_t12_v32";
// ... where its tiles fill 7/8 of the SMs; below that the 64x128 TF32 ws tile (section 27) ...
constexpr const char* kCudaTf32WsMid = "bm64_bn128_bk32_tm64_tn128_ws_g8_t8_v32";
// ... from 1/8 of the SMs on; fewer tiles take the mma.sync tile.
constexpr int64_t kCudaTf32WsMinFill = 8;
constexpr const char* kCudaImmaDefault = "bm128_bn128_bk64_tm64_tn64_tc_g8_t4_v32";
// CUDA f32 with IEEE math: the warp-tiled SIMT kernel (f32 only, so the backend row below, which
// every type can run, keeps the first SIMT kernel's tile). 256x128 needs 50 KB of scratch (the
// patched Kokkos); where the limit is 48 KB, 128x128; where the teams leave SMs idle, the smaller
// tiles in order (section 10).
constexpr const char* kCudaSimtF32Default = "bm256_bn128_bk16_tm16_tn8_g16_t256_v1";
constexpr const char* kCudaSimtF32Fallback = "bm128_bn128_bk16_tm8_tn8_g16_t256_v1";
constexpr std::array<const char*, 3> kCudaSimtF32SmallerTiles{kCudaSimtF32Fallback,
                                                              "bm64_bn64_bk16_tm8_tn4_g16_t128_v1",
                                                              "bm32_bn32_bk32_tm2_tn2_g8_t256_v1"};
// CUDA f32 with a shallow K (up to kShallowK): the store of C is most of the work, and the 64x64
// tile (four teams an SM, 16-byte stores of C) stores it fastest (section 11).
constexpr const char* kCudaSimtF32Shallow = "bm64_bn64_bk16_tm8_tn4_g16_t128_v1";
// CUDA f32 where even the 64x64 tiles leave SMs idle and K is deep: that tile with K split across
// teams (a power of two up to kCudaSimtF32MaxSplits, for about two teams per SM, at least 2 K steps
// per team; section 20).
constexpr const char* kCudaSimtF32SplitK = "bm64_bn64_bk16_tm8_tn4_g8_t128_v1";
constexpr int kCudaSimtF32MaxSplits = 8;
// Host: the packed kernel's tiles of the widest micro-kernel path this CPU runs for the input type
// (tilekit/kernels/core/cpu.hpp; one tile pair per compute size: f64 has half the lanes per
// vector); team_size 1, each OpenMP thread a team owning whole C tiles. The large tile when its
// per-thread working set (A panel BM x BK, running sums BM x BN, one B sliver BK x TN) fits the L2
// cache of a core, read at run time (host_l2_bytes); else the half-height tile (sections 9, 43).
// The avx2 path's large tiles walk C in groups of 32 tile rows (g32; whole columns up to 3072 rows):
// each block of the packed B is then read by every row tile of its column while it is in cache,
// where groups of 8 rows read it again from memory for each group (2048^3 +1.4-3.9%, section 55).
// The avx512 path's large tiles likewise (2048^3 +1-4%, with the packed A prefetch of packed.hpp
// +6-9% f64, section 56).
struct HostPathTiles {
  const char* f32;  // f32, f16, bf16, i8
  const char* f32_small;
  const char* f64;
  const char* f64_small;
  const char* f32_tiny = nullptr;  // where even the small tile leaves threads idle (perf notes 43)
};
constexpr std::array<HostPathTiles, 3> kHostPathTiles{{
    {"bm96_bn512_bk256_tm12_tn32_g32_t1_v1", "bm48_bn128_bk256_tm12_tn32_g8_t1_v1",  // avx512
     "bm96_bn256_bk256_tm12_tn16_g32_t1_v1", "bm48_bn64_bk256_tm12_tn16_g8_t1_v1"},
    {"bm96_bn256_bk256_tm6_tn16_g32_t1_v1", "bm48_bn128_bk256_tm6_tn16_g8_t1_v1",  // avx2
     "bm96_bn128_bk256_tm6_tn8_g32_t1_v1", "bm48_bn64_bk256_tm6_tn8_g8_t1_v1", "bm24_bn64_bk256_tm6_tn16_g8_t1_v1"},
    {"bm96_bn192_bk256_tm8_tn12_g8_t1_v1", "bm96_bn192_bk256_tm8_tn12_g8_t1_v1",  // portable
     "bm96_bn96_bk256_tm8_tn6_g8_t1_v1", "bm96_bn96_bk256_tm8_tn6_g8_t1_v1"},
}};
constexpr const char* kHostDefault = "bm96_bn192_bk256_tm8_tn12_g8_t1_v1";  // the backend rows' placeholder
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
// compute type) at most kThinHostSumsBytes (tilekit/kernels/matmul/tiles.hpp) so that they stay in
// L1 (section 25).
constexpr int kThinGpuThreads = 256;
constexpr int kThinGpuMaxKgroups = 32;
constexpr int kThinHostMinCols = 16;
constexpr int kThinHostTeamsPerThread = 4;
// Smaller tiles, tried in order when the default tile gives fewer teams than the device runs at
// once (GPU: SMs, taken as concurrency / 2048; host: threads).
constexpr std::array<const char*, 2> kGpuSmallerTiles{"bm64_bn64_bk16_tm4_tn4_g8_t256_v1",
                                                      "bm32_bn32_bk32_tm2_tn2_g8_t256_v1"};
// Host: a tile whose teams are fewer than this many per thread leaves threads idle at the end (each
// team is one thread's share of C: 3 teams on 2 threads run at 2/3 of the rate).
constexpr int64_t kHostTeamsPerThread = 4;

int64_t pow2_floor(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
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

/// L2 bytes per core of the host CPU (tilekit/kernels/core/cpu.hpp), 0 when unknown.
static int64_t host_l2_bytes() { return int64_t(cpu_info().l2_bytes); }

/// The host tiles of the widest path whose micro-kernel this CPU runs for `input` inputs.
const HostPathTiles& host_path_tiles(DType input) {
  for (const HostPathTiles& t : kHostPathTiles) {
    MatmulConfig c;
    std::string why;
    if (!MatmulConfig::parse(input == DType::f64 ? t.f64 : t.f32, c, why)) throw std::logic_error(why);
    if (tile_supports(c, input)) return t;
  }
  return kHostPathTiles.back();
}

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
      const HostPathTiles& ht = host_path_tiles(input);
      const char* name = tc ? tc : host ? (input == DType::f64 ? ht.f64 : ht.f32) : row.config;
      MatmulConfig c;
      std::string why;
      if (!MatmulConfig::parse(name, c, why)) throw std::logic_error(why);
      if (host) {
        const int64_t bytes = input == DType::f64 ? 8 : 4;  // the accumulation type's size
        const int64_t working_set = bytes * (int64_t(c.bm) * c.bk + int64_t(c.bm) * c.bn + int64_t(c.bk) * c.tn);
        const int64_t l2 = host_l2_bytes();
        if (l2 > 0 && working_set > l2) {
          const char* smaller = input == DType::f64 ? ht.f64_small : ht.f32_small;
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
  else {
    const HostPathTiles& ht = host_path_tiles(input);
    smaller.push_back(input == DType::f64 ? ht.f64_small : ht.f32_small);
    if (input != DType::f64 && ht.f32_tiny) smaller.push_back(ht.f32_tiny);
  }
  for (const char* name : smaller) {
    MatmulConfig t = base;
    if (!MatmulConfig::parse(name, t, why)) throw std::logic_error(why);
    best = t;
    if (teams(t) >= slots) break;
  }
  return best;
}

}  // namespace tuning
}  // namespace tilekit
