// The GPU matmul model (matmul_model.hpp). Times are predicted for one SM, the busiest: the tiles
// (times the K splits) are dealt to the SMs, ceil(tiles / SMs) each, and an SM runs them in groups of
// the teams it holds at once. A group of r < teams_per_sm teams runs each team faster than a full
// group, but not r / teams_per_sm times the work in that share of the time: fewer warps hide less
// latency, modelled as (r / teams_per_sm)^kPartialGroupExponent of the full group's time per K step.
#include "tilekit/tuning/matmul_model.hpp"

#include "tilekit/kernels/core/device.hpp"
#include "tilekit/kernels/core/peak.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tilekit {
namespace tuning {

namespace {
// The fixed cost of a tile besides its K steps and its store of C: the pipeline's fill, about two
// K steps of the wide tiles before the first MMA (perf notes 44).
constexpr double kPrologueSteps = 2.0;
// 0.7 for the other tensor-core tiles (mma.sync, the wgmma tile without warp specialisation),
// and for a grid of one partial group: of 0.3, 0.5, 0.7 and 1 (with 1, 2 or 4
// prologue steps), the one whose picks came within 5% of the best tile at the most zoo shapes
// (perf notes 45); at 0.3, f64's splits at 2304x768x3072 fell 3% (perf notes 60).
constexpr double kPartialGroupExponent = 0.7;
// 0.3 for the warp-specialised tiles' last group after full ones: since C leaves them through TMA
// stores, that group of the 64x128 tile runs nearer its full rate than 0.7 said, and the 128x256
// tile's fewer waves won where the two were timed alike (3072^3, 12608x768x3072: +7-8%). Where the
// grid is one partial group (640^3), 0.7 stays: 0.3 took a tile 7% slower there (perf notes 60).
// 0.3 also for a K split whose work items leave a team alone on an SM: such a team streaming its
// share of a long K runs no faster than in a full group, and the split that fills the group wins
// (f16 128x4096x11008 on an H200, the 64x128 tile split 2 / 4: 57.7 / 51.2 us; TF32 32x4096x4096,
// the 64x64 tile split 2 / 4: 42.3 / 35.8 us; perf notes 71).
constexpr double kPartialGroupExponentWs = 0.3;
// The SIMT tiles gain nothing from running fewer teams than an SM holds: a lone 128-thread team has
// one warp per scheduler and no latency hidden (f32 3072^3 on an H200: the 2-teams-an-SM 128x128
// tile, 2.2 waves with a last group of one team, 30.7 TFLOP/s against 34.5 for the 1-team tile the
// exponent 0.7 ranked below it). Exponent 0 for them: of the menu's f32 rates at the zoo, the model's
// picks then come within 5% of the best tile at 46 of 48 tile shapes, against 43 (perf notes 52).
constexpr double kPartialGroupExponentSimt = 0.0;
// Split K on the tensor-core tiles: the model tries every split count from 2 to kMaxKSplits for the
// tiles that split (tile_splits_k: one that fills the last wave is among them, whatever the SM
// count), and the second kernel that adds the partial sums costs a launch and its tail besides its
// bytes, counted at the DRAM rate.
constexpr double kSplitSumFixedSeconds = 4e-6;
// ... but only where the tiles of C unsplit fill fewer than this many waves: past a few waves the
// last wave's idle share is small, and a split's costs the model does not count (its partial sums
// through L2 beside the operands, the second kernel's tail) outweigh it. f64 on an H200, splits the
// model ranked 0.2-0.8% ahead at 7-10 waves ran 4-6% slower (5000x3000x7000, 4096x5120x13824,
// 2048x8192x28672); under one wave they gained 4-150% (perf notes 54).
constexpr double kSplitMaxWaves = 4.0;
// ... 8 for the SIMT tiles, whose split sums its partial tiles in the kernel (no second kernel): on
// an H200, f32 4097^3 (1089 tiles of 128x128, 4.1 waves) split in 3 ran 29.8 -> 33.2 TFLOP/s and
// 2048x11008x4096 (4.9 waves) split in 2 36.6 -> 39.6 (perf notes 59).
constexpr double kSplitMaxWavesSimt = 8.0;
// ... and a SIMT split must be predicted this much faster than the tile unsplit: the teams of one
// tile read different K ranges at once, which the L2 shares worse. f32 on an H200: a split the model
// ranked 1% ahead at 2048x8192x28672 ran 9% slower; those ranked 3.6-18% ahead ran 1.5-24% faster
// (perf notes 57). (The tensor-core tiles' splits were measured against the rule above alone.)
constexpr double kSimtSplitMinGain = 0.03;
// ... and only where the partial sums take at most this many bytes of device workspace (splits x
// the tiles of C in the accumulator type; the workspace is kept for later launches): up to 16
// splits of 1000 tiles of 128x128 would hold a gigabyte. The zoo's largest pick holds 189 MB
// (f32 5000x3000x7000, 128x128 tiles split in 3).
constexpr double kSplitMaxPartialBytes = 256.0 * 1024 * 1024;
// The tiles' own time and the DRAM time of the operands overlap, not perfectly: a tenth of the
// smaller adds to the larger (which also ranks the tiles of a DRAM-bound product by their own time).
constexpr double kDramOverlapLoss = 0.1;
// Products with a thin side (M or N up to kThinMaxRows) go to the thin kernel, except f16/bf16 with
// at least this many rows where the warp-specialised tiles run: there a 64-row tile, most of it
// padding, still ran 2.1x the thin kernel's rate at 8-16 rows (f16 Rx12288x4096 on an H200, the
// 64x128 tile against the thin kernel: 8 rows 14.2 / 6.5 TFLOP/s, 16 rows 26.1 / 12.9; at 4 rows
// 6.6 / 6.5; perf notes 48). f64 and TF32 take the tiles in the thin kernel's 16-row class (5-16
// rows), TF32 where the long operand runs along K or is a B along N that the transposed product
// reads through registers (otherwise it would be copied first): 16x12288x4096 on an H200, f64 64x64
// DMMA tile split in 4 against the thin kernel 9.1 / 7.7 TFLOP/s row-major, 9.0 / 5.7 column-major;
// TF32 column-major, the 64x128 ws tile 19.7 against 12.5, row-major with the copy 7.0 against 13.3
// (perf notes 57), as the transposed product on the 64x64 ws tile 15.3 against 12.9 (perf notes 68).
constexpr int64_t kModelThinMinRows = 8;
// The mma.sync tiles read an operand that does not run along K as it is stored: f64 at full speed
// (8-byte units), TF32 and i8 at about half their K-major rate (4-byte loads of single elements, i8
// gathered a byte at a time). TF32 row-major B on an H200, 128x128 tile: 64x11008x4096 27.2 TFLOP/s
// where the model's K-major rate predicted 52.6, 256x8192x8192 89 for 161 (perf notes 51).
constexpr double kMmaMnMajorEfficiency = 0.5;
// The TF32 warp-specialised 64x128 tile with A from registers (an A stored along M, or the
// transposed product of a B stored along N) runs at about 0.8 of its rate with both operands along
// K: on an H200, 4096^3 230 / 287 TFLOP/s, 3072^3 202 / 259, 8192x8192x512 197 / 235,
// 2048x2048x16384 243 / 250 (perf notes 67).
constexpr double kTf32ARegistersEfficiency = 0.8;
// Where the rows of B that the f16/bf16 tiles load start off a 32-byte L2 sector (B's pitch not a
// multiple of kWsMulticast.aligned_pitch_bytes), each 128-byte row of a box touches five sectors,
// not four; only the 128x256 ws tile's two-team clusters, which halve B's reads, keep their rate
// (tiles.hpp: WsMulticast). The others run at about 0.75 of it: the 128x256 tile on an H200 without
// clusters / with them 0.73 at 5000x3000x7000, 0.81-0.82 at 5120x3000x7168 and 3072x5000x2048
// (perf notes 60); the 128x192 tile / the clustered 128x256 0.69 at 5000x3000x7000, where the
// model without this term ranked the 128x192 tile first (perf notes 68).
constexpr double kSectorStraddleEfficiency = 0.75;

// Candidate tiles per type (CUDA). teams_per_sm: what the tile's registers and scratch allow on a
// Hopper (227 KB of scratch, 64K registers); efficiency: the steady-state fraction of the type's
// peak the tile reached where every SM is full, f16 and f32 each tile's median rate at 6144^3 and
// 4096x12288x4096 on an H200 (bench/results/gpu-h200-zoo-row/menu, 2026-11-28; perf notes 45; the
// 128x192 f16 and the TF32 ws tiles, measured along K in the zoo, perf notes 68: 128x256 0.65-0.69,
// 64x128 0.54-0.55, 64x64 0.36-0.37); f64 and i8 from the H100 squares (perf notes sections 7, 14,
// 27, 30). The model ranks; it need not predict rates exactly.
const GpuTileModel kWgmmaF16[] = {
    {"bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32", 1, 0.68},
    // 0.67-0.68 measured; 0.66 keeps the 128x256 tile where both fill many waves (8192x8192x1024:
    // 16 of 128x256 ran 2-3% faster than 21 of 128x192; perf notes 68).
    {"bm128_bn192_bk64_tm64_tn192_ws_g8_t12_v32", 1, 0.66},
    {"bm64_bn128_bk64_tm64_tn128_ws_g8_t8_v32", 2, 0.52},
    {"bm128_bn128_bk64_tm64_tn128_wg_g8_t8_v32", 2, 0.39},
    {"bm64_bn64_bk64_tm64_tn64_ws_g8_t8_v32", 3, 0.31},
};
const GpuTileModel kMmaF16[] = {
    {"bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32", 1, 0.20},
    {"bm128_bn128_bk16_tm64_tn32_tc_g8_t8_v32", 2, 0.19},
    {"bm64_bn64_bk32_tm32_tn32_tc_g8_t4_v32", 2, 0.16},
};
const GpuTileModel kWgmmaTf32[] = {
    {"bm128_bn256_bk32_tm64_tn256_ws_g8_t12_v32", 1, 0.68},
    {"bm64_bn128_bk32_tm64_tn128_ws_g8_t8_v32", 2, 0.55},
    {"bm64_bn64_bk32_tm64_tn64_ws_g8_t8_v32", 2, 0.37},
    {"bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32", 1, 0.33},
};
const GpuTileModel kMmaTf32[] = {
    {"bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32", 1, 0.33},
    {"bm128_bn128_bk32_tm64_tn32_tc_g8_t8_v32", 1, 0.31},
};
// f64 on an H200 (zoo menu, perf notes 65): 128x64 0.70 of the peak at 6144^3 and 4096x12288x4096,
// 64x128 0.68 (alike on average over the zoo, 1.5x at 16-64 rows), the 32-deep 64x64 0.65 (the
// 16-deep one 0.60); the 16-row tile 0.42-0.45 there (perf notes 70), for products of up to 32 rows:
// 16x12288x4096 13-14 TFLOP/s against 10 for the 64x128 tile split in 8.
const GpuTileModel kDmma[] = {
    {"bm128_bn64_bk16_tm64_tn32_tc_g8_t4_v32", 2, 0.72},
    {"bm64_bn128_bk16_tm32_tn64_tc_g8_t4_v32", 2, 0.71},
    {"bm64_bn64_bk32_tm32_tn32_tc_g8_t4_v32", 2, 0.67},
    {"bm16_bn128_bk16_tm16_tn32_tc_g8_t4_v32", 2, 0.44},
};
// i8 on s8 warpgroup MMA: efficiencies guessed from the f16 ws tiles' (not yet measured).
const GpuTileModel kWgmmaImma[] = {
    {"bm128_bn256_bk128_tm64_tn256_ws_g8_t12_v32", 1, 0.60},
    {"bm64_bn128_bk128_tm64_tn128_ws_g8_t8_v32", 2, 0.45},
    {"bm128_bn128_bk64_tm64_tn64_tc_g8_t4_v32", 2, 0.20},
    {"bm128_bn128_bk64_tm64_tn32_tc_g8_t8_v32", 2, 0.19},
};
const GpuTileModel kImma[] = {
    {"bm128_bn128_bk64_tm64_tn64_tc_g8_t4_v32", 2, 0.20},
    {"bm128_bn128_bk64_tm64_tn32_tc_g8_t8_v32", 2, 0.19},
};
// f32 with IEEE math: the warp-tiled SIMT kernel. The tiles that run several teams an SM also split
// K (with_splits; their partial sums are stores of their own, counted as such). The 32x128 tile
// (products of up to 32 rows) is guessed from the 64x64 one: the same 32 accumulators and scratch
// reads a lane.
const GpuTileModel kSimtF32[] = {
    {"bm256_bn128_bk16_tm16_tn8_g16_t256_v1", 1, 0.60},
    {"bm128_bn128_bk16_tm8_tn16_g16_t128_v1", 2, 0.66},
    {"bm128_bn128_bk16_tm8_tn8_g16_t256_v1", 1, 0.58},
    {"bm128_bn64_bk16_tm8_tn8_g8_t128_v1", 2, 0.55},
    {"bm64_bn64_bk16_tm8_tn4_g16_t128_v1", 4, 0.52},
    {"bm32_bn128_bk16_tm4_tn8_g8_t128_v1", 4, 0.50},
};

template <std::size_t N>
std::vector<GpuTileModel> list(const GpuTileModel (&a)[N]) {
  return std::vector<GpuTileModel>(a, a + N);
}

/// a, and each of its tiles that split K once more per split count from 2 to kMaxKSplits (tiles.hpp:
/// WgmmaTileShape::split_k, the warp-specialised tiles of 128 to 256 columns and the TF32 64x64 one;
/// MmaFragTileShape::split_k, every f64 / TF32 / i8 mma.sync tile; SimtWarpTileShape::split_k, the
/// SIMT tiles of several teams an SM).
template <std::size_t N>
std::vector<GpuTileModel> with_splits(const GpuTileModel (&a)[N]) {
  std::vector<GpuTileModel> out = list(a);
  for (const GpuTileModel& t : a) {
    MatmulConfig c;
    std::string why;
    if (!MatmulConfig::parse(t.config, c, why)) throw std::logic_error(why);
    const bool tf32_ws = c.ws && c.bk == 32;  // BK = 32: the TF32 ws tiles (tiles.hpp: WgmmaTileShape)
    const bool splits_k = c.ws ? ws_tile_splits_k(c.bn, tf32_ws) : c.mma ? !c.wgmma : t.teams_per_sm >= 2;
    if (!splits_k) continue;
    for (int s = 2; s <= kMaxKSplits; ++s) {
      GpuTileModel split = t;
      split.k_splits = s;
      out.push_back(split);
    }
  }
  return out;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Team scratch of a tile for an input type (with its default output type: the operands' stages
/// are what the scratch holds).
std::size_t scratch_bytes(const MatmulConfig& c, DType in) {
  switch (in) {
    case DType::f16: return matmul_scratch_bytes<f16, f16>(c);
    case DType::bf16: return matmul_scratch_bytes<bf16, bf16>(c);
    case DType::f64: return matmul_scratch_bytes<double, double>(c);
    case DType::i8: return matmul_scratch_bytes<int8_t, int32_t>(c);
    default: return matmul_scratch_bytes<float, float>(c);
  }
}
}  // namespace

std::vector<GpuTileModel> gpu_model_candidates(DType in, Math math, bool wgmma, int compute_capability) {
  if (compute_capability < 80) return in == DType::f32 && math == Math::ieee ? with_splits(kSimtF32) : std::vector<GpuTileModel>{};
  switch (in) {
    case DType::f16:
    case DType::bf16: return wgmma ? with_splits(kWgmmaF16) : list(kMmaF16);
    case DType::f64: return with_splits(kDmma);
    case DType::i8: return wgmma ? with_splits(kWgmmaImma) : with_splits(kImma);
    case DType::f32: return math == Math::tf32 ? (wgmma ? with_splits(kWgmmaTf32) : with_splits(kMmaTf32)) : with_splits(kSimtF32);
    default: return {};
  }
}

std::vector<RankedConfig> rank_gpu_matmul(const std::vector<GpuTileModel>& candidates, DType in, DType out,
                                          int64_t M, int64_t N, int64_t K, const GpuModelDevice& dev,
                                          OperandOrders orders) {
  std::vector<RankedConfig> ranked;
  const double sms = std::max(dev.sms, 1);
  // Relative units where the peak is unknown: the ranking is the same.
  const double sm_peak = (dev.peak_flops > 0 ? dev.peak_flops : 1e15) / sms;
  const double store_per_sm = dev.store_bytes_per_s / sms;  // every SM storing at once
  const int64_t M_given = M, N_given = N;
  for (const GpuTileModel& t : candidates) {
    RankedConfig r;
    std::string why;
    if (!MatmulConfig::parse(t.config, r.config, why)) throw std::logic_error(why);
    const MatmulConfig& c = r.config;
    // The TF32 warp-specialised tiles up to kTf32ARegistersMaxBN wide read an A stored along M
    // through registers where C has up to kTf32ARegistersMaxN columns, and run a product whose B is
    // stored along N and A along K as its transpose where C has that many rows (dispatch.hpp,
    // tf32_runs_transposed): their tiles then cover C^T. (The model does not see a bias, with
    // which the launch copies such a B instead: it ranks those products as if without one.)
    const bool tf32_ws = c.ws && in == DType::f32;
    const bool registers_tile = tf32_ws && c.bn <= kTf32ARegistersMaxBN;
    const bool transposed =
        registers_tile && orders.a_k_major && !orders.b_k_major && M_given <= kTf32ARegistersMaxN;
    const bool a_in_registers = registers_tile && (transposed || (!orders.a_k_major && N_given <= kTf32ARegistersMaxN));
    M = transposed ? N_given : M_given;
    N = transposed ? M_given : N_given;
    const int splits = std::max(t.k_splits, 1);
    r.config.k_splits = splits;
    const int64_t tiles = ceil_div(M, c.bm) * ceil_div(N, c.bn) * splits;
    const double max_waves = c.mma ? kSplitMaxWaves : kSplitMaxWavesSimt;
    if (splits > 1 && double(tiles / splits) >= max_waves * sms * t.teams_per_sm) continue;
    // Split K stores partial sums in the accumulator type: f64 for f64 inputs, else 4 bytes (f32, i32).
    const double partial_size = in == DType::f64 ? 8.0 : 4.0;
    if (splits > 1 && double(tiles) * c.bm * c.bn * partial_size > kSplitMaxPartialBytes) continue;
    const int64_t k_steps = ceil_div(ceil_div(K, splits), c.bk);
    const bool mn_major = !orders.a_k_major || !orders.b_k_major;
    // B's rows as the f16/bf16 tiles load them, storage taken as contiguous: K apart along K, N
    // along N; a pitch of part of a 16-byte vector is packed K-major to whole vectors first.
    const int64_t elem = int64_t(dtype_size(in));
    const int64_t pitch_b = orders.b_k_major || (N * elem) % 16 != 0 ? ceil_div(K * elem, 16) * 16 : N * elem;
    const bool sixteen_bit = in == DType::f16 || in == DType::bf16;
    const bool b_straddles = sixteen_bit && pitch_b % kWsMulticast.aligned_pitch_bytes != 0;
    const bool clustered = c.ws && c.bm == 128 && c.bn == 256 && splits == 1 && ceil_div(M, c.bm) % 2 == 0;
    const double efficiency =
        t.efficiency *
        (c.mma && !c.wgmma && mn_major && (in == DType::f32 || in == DType::i8) ? kMmaMnMajorEfficiency : 1.0) *
        (a_in_registers ? kTf32ARegistersEfficiency : 1.0) *
        (b_straddles && c.mma && !clustered ? kSectorStraddleEfficiency : 1.0);
    // One team's K step with the SM full (teams_per_sm teams sharing its rate), and its store of C.
    const double step = t.teams_per_sm * 2.0 * c.bm * c.bn * c.bk / (sm_peak * efficiency);
    const double store = double(c.bm) * c.bn * (splits > 1 ? partial_size : double(dtype_size(out))) / store_per_sm;
    const double tile_full = (double(k_steps) + kPrologueSteps) * step + store;
    const int64_t per_sm = ceil_div(tiles, int64_t(sms));
    const int64_t groups = per_sm / t.teams_per_sm, rest = per_sm % t.teams_per_sm;
    r.seconds = double(groups) * tile_full;
    if (rest > 0)
      r.seconds +=
          (double(k_steps) + kPrologueSteps) * step *
              std::pow(double(rest) / t.teams_per_sm, c.ws && (groups > 0 || splits > 1) ? kPartialGroupExponentWs
                                                : c.mma ? kPartialGroupExponent
                                                        : kPartialGroupExponentSimt) +
          store;
    // No faster than DRAM delivers the operands once and takes C (or the partial sums) back: where
    // few rows or columns meet a long side (64x11008x4096), the tiles' own time underestimates it
    // and a K split only adds the partial sums' traffic (perf notes 48).
    const bool sum_pass = splits > 1 && c.mma;  // the tensor-core tiles' split K: a second kernel
    const double dram_bytes = double(dtype_size(in)) * (double(M) * K + double(K) * N) +
                              double(M) * N * (sum_pass ? partial_size * splits : double(dtype_size(out)));
    const double dram = dram_bytes / dev.store_bytes_per_s;
    r.seconds = std::max(r.seconds, dram) + kDramOverlapLoss * std::min(r.seconds, dram);
    // The tensor-core tiles' split K ends with a kernel that reads every partial C and writes C.
    if (sum_pass)
      r.seconds += kSplitSumFixedSeconds + double(M) * double(N) *
                                               (partial_size * splits + double(dtype_size(out))) / dev.store_bytes_per_s;
    // The i8 and TF32 warp-specialised tiles load K-major operands only: any other is copied first,
    // read once and written once (at 64x11008x4096 TF32 with row-major B the copy of B took longer
    // than the product; perf notes 51), except an A that goes through registers (above): then only
    // a B along N is.
    double packed_bytes = 0.0;
    if (c.ws && (in == DType::i8 || (tf32_ws && !a_in_registers))) {
      if (!orders.a_k_major) packed_bytes += double(M) * K;
      if (!orders.b_k_major) packed_bytes += double(K) * N;
    } else if (a_in_registers && !orders.a_k_major && !orders.b_k_major) {
      packed_bytes += double(K) * N;
    }
    r.seconds += 2.0 * packed_bytes * double(dtype_size(in)) /
                 (in == DType::i8 ? dev.pack_i8_bytes_per_s : dev.pack_bytes_per_s);
    if (splits > 1 && !c.mma) r.seconds *= 1.0 + kSimtSplitMinGain;
    r.waves = double(tiles) / (sms * t.teams_per_sm);
    r.note = fmt::format("{} tiles{}, {:.2f} waves, {} K steps{}", tiles,
                         splits > 1 ? fmt::format(" (K split {})", splits) : "", r.waves, k_steps,
                         packed_bytes > 0 ? fmt::format(", {:.0f} MB copied K-major first",
                                                        packed_bytes * double(dtype_size(in)) / 1e6)
                                          : "");
    ranked.push_back(std::move(r));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedConfig& a, const RankedConfig& b) { return a.seconds < b.seconds; });
  return ranked;
}

std::vector<RankedConfig> model_ranked_configs(DType in, DType out, int64_t M, int64_t N, int64_t K, Math math,
                                               int* sms, OperandOrders orders) {
  const bool wgmma = warpgroup_mma_available() && std::max({M, N, K}) <= int64_t(INT32_MAX);
  const std::vector<GpuTileModel> candidates = gpu_model_candidates(in, math, wgmma, cuda_compute_capability());
  GpuModelDevice dev;
  dev.sms = std::max(1, Kokkos::DefaultExecutionSpace().concurrency() / 2048);
  dev.peak_flops = device_peak(in, math).flops;
  if (sms) *sms = dev.sms;
  std::vector<RankedConfig> out_list;
  if (candidates.empty()) return out_list;
  // A tile this build or this GPU cannot run (scratch above the limit, no sm_90a code) is passed over.
  const auto runnable = [&](const MatmulConfig& c) {
    if (!tile_supports(c, in, math)) return false;
    if (c.wgmma && !wgmma) return false;
    if (c.k_splits > 1 && !tile_splits_k(c)) return false;
    return team_scratch_limit(0) >= scratch_bytes(c, in);
  };
  // The long-K grouped order of the 128x256 ws tile (matmul_defaults.cpp) is an order, not a tile.
  const MatmulConfig shaped = default_matmul_config("cuda", in, M, N, K, math);
  for (RankedConfig& r : rank_gpu_matmul(candidates, in, out, M, N, K, dev, orders)) {
    if (!runnable(r.config)) continue;
    MatmulConfig& c = r.config;
    if (shaped.bm == c.bm && shaped.bn == c.bn && shaped.bk == c.bk && shaped.ws == c.ws && shaped.wgmma == c.wgmma &&
        shaped.tm == c.tm && shaped.tn == c.tn && c.k_splits == 1)
      c.group_m = shaped.group_m;
    out_list.push_back(std::move(r));
  }
  return out_list;
}

bool model_ranks_thin_shape(DType in, Math math, int64_t M, int64_t N, OperandOrders orders) {
  if (!warpgroup_mma_available() || std::max(M, N) > int64_t(INT32_MAX)) return false;
  const int64_t rows = std::min(M, N);
  // The thin kernel runs 5-16 rows as 16 (its row class): the tensor-core tiles compare the same.
  const bool sixteen_row_class = thin_row_class(rows) == kThinMaxRows;
  const bool long_side_k_major = M <= N ? orders.b_k_major : orders.a_k_major;
  switch (in) {
    case DType::f16:
    case DType::bf16: return rows >= kModelThinMinRows;
    case DType::f64: return sixteen_row_class;
    // TF32 also where the long operand is a B along N and A runs along K: the warp-specialised tiles
    // run that product transposed, the long operand through registers (rank_gpu_matmul).
    case DType::f32:
      return math == Math::tf32 && sixteen_row_class &&
             (long_side_k_major || (M <= N && orders.a_k_major && M <= kTf32ARegistersMaxN));
    default: return false;
  }
}

MatmulConfig model_matmul_config(DType in, DType out, int64_t M, int64_t N, int64_t K, Math math, std::string* why,
                                 OperandOrders orders) {
  int sms = 0;
  const std::vector<RankedConfig> ranked = model_ranked_configs(in, out, M, N, K, math, &sms, orders);
  if (ranked.empty()) {
    if (why) *why = "the model has no candidate this GPU runs for the type; using the shape default";
    return default_matmul_config("cuda", in, M, N, K, math);
  }
  if (why) {
    *why = fmt::format("the model ranks {} candidates for {}x{}x{} on {} SMs: {} ({}, {:.1f} us)", ranked.size(), M, N,
                       K, sms, ranked[0].config.name(), ranked[0].note, ranked[0].seconds * 1e6);
    for (std::size_t j = 1; j < ranked.size() && j < 3; ++j)
      *why += fmt::format("{}{} ({:.1f} us)", j == 1 ? "; then " : ", ", ranked[j].config.name(),
                          ranked[j].seconds * 1e6);
  }
  return ranked[0].config;
}

}  // namespace tuning
}  // namespace tilekit
