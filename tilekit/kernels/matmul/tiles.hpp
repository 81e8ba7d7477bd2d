// The compile-time tile menu of the blocked matmul, per backend class, and the per-backend default
// configurations. This is the only place tile sizes are written down; kernels take them as
// template parameters. Every entry is one more instantiation per type (and nvcc builds each twice,
// sm_80 + sm_90), so the menu is kept short: add an entry only when a sweep shows it wins somewhere.
#pragma once

#include "tilekit/kernels/matmul/config.hpp"
#include "tilekit/kernels/core/cpu.hpp"
#include "tilekit/kernels/core/execution_space.hpp"
#include "tilekit/kernels/core/types.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace tilekit {

/// The kernel a menu entry runs (the choice is made in tilekit/kernels/matmul/dispatch.hpp, MatmulFunctor).
enum class TileKernel { simt, simt_warp, host_packed, mma_sm80, mma_sm80_f64_tf32_i8, wgmma_sm90, wgmma_ws_sm90 };

/// "simt", "simt warp", "host packed", "mma.sync sm80", ...: the name a launch report gives the kernel.
const char* tile_kernel_name(TileKernel k);

/// A team computes a BM x BN tile of C, stepping K by BK (A and B tiles of BM x BK and BK x BN are
/// staged in team scratch); the micro-kernel accumulates a TM x TN block of C in registers.
template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct TileShape {
  static constexpr int BM = BM_;  ///< rows of C per team
  static constexpr int BN = BN_;  ///< columns of C per team
  static constexpr int BK = BK_;  ///< K depth per scratch stage
  static constexpr int TM = TM_;  ///< micro-tile rows (registers)
  static constexpr int TN = TN_;  ///< micro-tile columns (registers)
  static constexpr bool mma = false;
  static constexpr bool wgmma = false;
  static constexpr TileKernel kernel = TileKernel::simt;
  static constexpr bool tf32 = false;
  static constexpr bool runs(DType) { return true; }  ///< every input type
  /// Number of TM x TN micro-tiles in a team tile; on GPUs, also the threads per team.
  static constexpr int micro_tiles = (BM / TM) * (BN / TN);
  /// Threads per team on GPUs (one per micro-tile); on host backends an upper bound of the team size.
  static constexpr int threads = micro_tiles;
  static_assert(BM % TM == 0 && BN % TN == 0, "micro-tile must divide the team tile");

  static MatmulConfig config() {
    MatmulConfig c;
    c.bm = BM; c.bn = BN; c.bk = BK; c.tm = TM; c.tn = TN;
    return c;
  }
};

/// A tile of the warp-tiled SIMT kernel (tilekit/kernels/matmul/gpu/simt_warp.hpp; GPUs; f32 inputs): a team of
/// warps computes a BM x BN tile of C, each warp a WM x WN warp tile whose 32 lanes form an
/// LANES_M x LANES_N grid; each lane owns TM x TN accumulators in SUB x SUB sub-tiles spread over
/// the warp tile (conflict-free 16-byte scratch reads). MIN_TEAMS: teams per SM the compiler must
/// leave registers for (CUDA/HIP launch bounds).
template <int BM_, int BN_, int BK_, int TM_, int TN_, int MIN_TEAMS_>
struct SimtWarpTileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int TM = TM_;  ///< micro-tile rows of one lane (registers)
  static constexpr int TN = TN_;  ///< micro-tile columns of one lane (registers)
  static constexpr int MIN_TEAMS = MIN_TEAMS_;
  static constexpr int LANES_M = 8, LANES_N = 4, SUB = 4;
  static constexpr int WM = TM * LANES_M;  ///< warp tile rows
  static constexpr int WN = TN * LANES_N;  ///< warp tile columns
  static constexpr bool mma = false;
  static constexpr bool wgmma = false;
  static constexpr TileKernel kernel = TileKernel::simt_warp;
  static constexpr bool tf32 = false;
  static constexpr bool runs(DType in) { return in == DType::f32; }
  /// May split K across teams (MatmulConfig::k_splits, CUDA): the tiles made to run several teams
  /// per SM, the ones picked where few tiles of C leave SMs idle.
  static constexpr bool split_k = MIN_TEAMS >= 2;
  static constexpr int threads = (BM / WM) * (BN / WN) * 32;
  /// Threads per team (one micro-tile each).
  static constexpr int micro_tiles = threads;
  static_assert(TM % SUB == 0 && TN % SUB == 0 && BM % WM == 0 && BN % WN == 0,
                "lane micro-tiles of 4x4 sub-tiles; warp tiles divide the team tile");

  static MatmulConfig config() {
    MatmulConfig c;
    c.bm = BM; c.bn = BN; c.bk = BK; c.tm = TM; c.tn = TN;
    return c;
  }
};

/// A tensor-core tile (CUDA, sm_80 and newer; f16 and bf16 inputs): a team of warps computes a
/// BM x BN tile of C, each warp a WM x WN block of 16x16x16 MMA fragments accumulated in f32
/// registers; STAGES K steps of BK are in flight in team scratch (asynchronous copies). MIN_TEAMS:
/// teams per SM the compiler must leave registers for (CUDA launch bounds).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MIN_TEAMS_ = 1>
struct MmaTileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int TM = WM_;  ///< warp tile rows
  static constexpr int TN = WN_;  ///< warp tile columns
  static constexpr int STAGES = STAGES_;
  static constexpr int MIN_TEAMS = MIN_TEAMS_;
  static constexpr bool mma = true;
  static constexpr bool wgmma = false;
  static constexpr TileKernel kernel = TileKernel::mma_sm80;
  static constexpr bool tf32 = false;
  static constexpr bool runs(DType in) { return in == DType::f16 || in == DType::bf16; }
  static constexpr int warps = (BM / TM) * (BN / TN);
  /// The team's threads: one warp per warp tile.
  static constexpr int threads = warps * 32;
  static constexpr int micro_tiles = threads;
  static_assert(BM % TM == 0 && BN % TN == 0 && TM % 16 == 0 && TN % 16 == 0 && BK % 16 == 0,
                "warp tiles must divide the team tile and be made of 16x16x16 fragments");

  static MatmulConfig config() {
    MatmulConfig c;
    c.bm = BM; c.bn = BN; c.bk = BK; c.tm = TM; c.tn = TN; c.mma = true;
    return c;
  }
};

/// Which warp-specialised tiles may split K: those of 128 or more columns, and the TF32 ones of 64,
/// which run the decode shapes' transposed product (16-64 columns of C^T over a few tiles of 64 rows:
/// 32x4096x4096 is 64 of them for 132 SMs).
constexpr bool ws_tile_splits_k(int bn, bool tf32) { return bn >= 128 || tf32; }

/// A Hopper warpgroup-MMA tile (sm_90a builds on compute capability 9.0; f16 and bf16 inputs): a
/// team of BM / 64 warpgroups (4 warps each) computes a BM x BN tile of C, each warpgroup 64 rows
/// x BN columns with wgmma.m64nBNk16 from swizzled scratch; STAGES K steps of BK = 64 in scratch.
/// WS (warp-specialised, tilekit/kernels/matmul/gpu/wgmma_ws_sm90.hpp): one more warpgroup that only copies.
/// TF32 (warp-specialised only): f32 inputs with TF32 math (the opt-in), wgmma.m64nBNk8; BK = 32,
/// since a K step is one 128-byte swizzle row whatever the element size. I8 (warp-specialised only):
/// i8 inputs, i32 accumulators, wgmma.m64nBNk32.s32.s8.s8; BK = 128.
template <int BM_, int BN_, int BK_, int STAGES_, int MIN_TEAMS_ = 1, bool WS_ = false, bool TF32_ = false,
          bool I8_ = false>
struct WgmmaTileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int TM = 64;   ///< warpgroup tile rows
  static constexpr int TN = BN_;  ///< warpgroup tile columns
  static constexpr int STAGES = STAGES_;
  static constexpr int MIN_TEAMS = MIN_TEAMS_;  ///< teams per SM the compiler must leave registers for
  static constexpr bool mma = true;
  static constexpr bool wgmma = true;
  static constexpr bool ws = WS_;
  static constexpr TileKernel kernel = WS_ ? TileKernel::wgmma_ws_sm90 : TileKernel::wgmma_sm90;
  static constexpr bool tf32 = TF32_;
  static constexpr bool i8 = I8_;
  /// May split K (MatmulConfig::k_splits; ws_tile_splits_k): the warp-specialised tiles whose
  /// partial sums (f32; i32 for i8) a second kernel adds (launch_wgmma_ws_split_k), for deep K over
  /// few tiles of C.
  static constexpr bool split_k = WS_ && ws_tile_splits_k(BN_, TF32_);
  static constexpr bool runs(DType in) {
    return I8_ ? in == DType::i8 : TF32_ ? in == DType::f32 : in == DType::f16 || in == DType::bf16;
  }
  static constexpr int warps = (BM / 64 + (WS_ ? 1 : 0)) * 4;
  static constexpr int threads = warps * 32;
  static constexpr int micro_tiles = threads;
  static_assert(BM % 64 == 0 && BK == (TF32_ ? 32 : I8_ ? 128 : 64),
                "64-row warpgroups, K steps of one 128-byte swizzle row (128 1-byte, 64 2-byte or 32 4-byte "
                "elements)");
  static_assert(!(TF32_ || I8_) || WS_, "TF32 and i8 run on the warp-specialised kernel (TMA loads of K-major operands)");
  static_assert(!(TF32_ && I8_), "one input type");

  static MatmulConfig config() {
    MatmulConfig c;
    c.bm = BM; c.bn = BN; c.bk = BK; c.tm = TM; c.tn = TN; c.mma = true; c.wgmma = true; c.ws = WS_;
    return c;
  }
};

/// How far apart the warp-specialised kernel's persistent teams may drift (gpu/wgmma_ws_sm90.hpp,
/// bound_ws_drift). Teams sharing an A panel of C's grouped order read it from L2 only while they
/// are close in K; left free over the waves of a long-K product they spread apart and the panel
/// comes from DRAM again. With the bound, every producer counts the chunks of chunk_steps K steps
/// it starts in a global counter per chunk, and starts a chunk only once every team has started
/// the one slack_steps earlier (docs/perf-notes.md sections 39 and 40).
struct WsDriftBound {
  int chunk_steps;        ///< K steps per counted chunk (one atomic add and at most one wait each)
  int slack_steps;        ///< how far (in K steps, whole chunks) a team may run ahead of the slowest
  int64_t min_k_steps;    ///< applied only where a tile has at least this many K steps
  int64_t wait_limit_ns;  ///< the longest one wait lasts; after that the team runs free (teams that
                          ///< are not resident at once: concurrent kernels, MPS shares)
};
/// Chunks of 8 steps and a slack of 8 were the fastest under the power cap (section 40); from 256 K
/// steps (K >= 16384 at BK = 64), since below that a tile's few waves gained nothing measured.
constexpr WsDriftBound kWsDriftBound{8, 8, 256, 1000000};

/// The widest warp-specialised TF32 tile that reads an A stored along M through registers (wgmma's
/// register-A form; gpu/wgmma_ws_sm90.hpp): at 128 x 256 the 16 fragment registers beside 128
/// accumulators exceed the 168 registers a thread of its 384 has, and ptxas serialises the MMAs
/// (C7512); that tile packs such an A K-major first.
constexpr int kTf32ARegistersMaxBN = 128;
/// ... and only where the product has at most this many columns: each column of C reads A again,
/// and reading it through registers runs the tile at about 0.8 of its K-major rate, while a K-major
/// copy costs once, 2 M K elements at ~2.6 TB/s. On an H200 at 4096^3 the copy (48 us) costs less
/// than the loss (0.60 against 0.48 ms); at 64-768 columns the copy costs more than the product
/// (docs/perf-notes.md section 67).
constexpr int64_t kTf32ARegistersMaxN = 1024;

/// Two-team clusters for the 128x256 warp-specialised tile (gpu/wgmma_ws_sm90.hpp): the teams of a
/// cluster take the two tiles of C stacked in M over the same columns, each loads its own A and
/// half of B, and TMA multicasts each half into both teams' scratch, so a third fewer bytes come
/// from L2. Used where the tile rows pair up and either a tile has at least min_k_steps K steps or
/// the rows of B that TMA loads are not a whole number of L2 sectors (32 bytes) apart: each such row
/// of a box straddles one more sector, and halving B's reads then gains 20-40% (5000x3000x7000,
/// 3072x5000x2048; rows of A so placed, or rows of B 32- but not 128-byte aligned, gained nothing).
/// With aligned rows and short tiles the pair's lockstep costs more than it saves
/// (docs/perf-notes.md sections 36, 41 and 60).
struct WsMulticast {
  int64_t min_k_steps;          ///< applied from this many K steps a tile...
  int64_t aligned_pitch_bytes;  ///< ...or at any depth where B's pitch is not a multiple of this
};
constexpr WsMulticast kWsMulticast{256, 32};

/// The tensor-core tile of the sm_80+ mma.sync kernel for the types ldmatrix cannot feed
/// (tilekit/kernels/matmul/gpu/mma_sm80_f64_tf32_i8.hpp; CUDA, sm_80 and newer): f64 (DMMA), f32 inputs with
/// TF32 math (only when the problem opts in: MatmulProblem::math) and i8 (IMMA); one input type per
/// tile, since BK counts elements and the best shapes differ. A team of warps computes a BM x BN
/// tile of C, each warp WM x WN of m16n8 accumulators; STAGES K steps of BK in scratch.
template <class TIn_, int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MIN_TEAMS_ = 1>
struct MmaFragTileShape {
  using input_type = TIn_;
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int TM = WM_;  ///< warp tile rows
  static constexpr int TN = WN_;  ///< warp tile columns
  static constexpr int STAGES = STAGES_;
  static constexpr int MIN_TEAMS = MIN_TEAMS_;
  static constexpr bool mma = true;
  static constexpr bool wgmma = false;
  static constexpr TileKernel kernel = TileKernel::mma_sm80_f64_tf32_i8;
  static constexpr bool tf32 = std::is_same<TIn_, float>::value;
  static constexpr bool runs(DType in) { return in == TypeTraits<TIn_>::dtype; }
  /// May split K (MatmulConfig::k_splits): partial sums in the accumulator type (f64, f32, i32) that
  /// a second kernel adds (launch_mma_frag_split_k), for products whose tiles leave SMs idle.
  static constexpr bool split_k = true;
  static constexpr int warps = (BM / TM) * (BN / TN);
  static constexpr int threads = warps * 32;
  static constexpr int micro_tiles = threads;
  static_assert(std::is_same<TIn_, double>::value || std::is_same<TIn_, float>::value ||
                    std::is_same<TIn_, int8_t>::value,
                "f64, f32 (TF32 math) or i8 inputs");
  static_assert(BM % TM == 0 && BN % TN == 0 && TM % 16 == 0 && TN % 8 == 0, "warp tiles of m16n8 blocks");

  static MatmulConfig config() {
    MatmulConfig c;
    c.bm = BM; c.bn = BN; c.bk = BK; c.tm = TM; c.tn = TN; c.mma = true;
    return c;
  }
};

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__NVCC__) && !defined(__HIPCC__)
#define TILEKIT_HOST_X86_PATHS 1
#endif

/// How the host micro-kernel of a path reads an input type's packed operands: the compute type
/// (plain), or k groups for the x86 integer and bf16 instructions: bf16 pairs for AVX-512 BF16's
/// vdpbf16ps and i8 quads for AVX-512 VNNI's vpdpbusd (avx512 path; the CPU needs those
/// instructions too), i8 as int16 pairs for vpmaddwd (avx2 path: two products per i32 lane, twice
/// the lanes of an f32 FMA). host/packed.hpp, HostPacking.
enum class HostPackingKind { plain, bf16_pairs, i8_quads, i8_pairs };
constexpr HostPackingKind host_packing(HostIsa isa, DType in) {
#if defined(TILEKIT_HOST_X86_PATHS)
  if (isa == HostIsa::avx512 && in == DType::bf16) return HostPackingKind::bf16_pairs;
  if (isa == HostIsa::avx512 && in == DType::i8) return HostPackingKind::i8_quads;
  if (isa == HostIsa::avx2 && in == DType::i8) return HostPackingKind::i8_pairs;
#endif
  return (void)isa, (void)in, HostPackingKind::plain;
}

/// A tile of the host packed kernel (tilekit/kernels/matmul/host/packed.hpp; Serial, OpenMP): a team (one
/// thread) computes a BM x BN tile of C [BLIS: MC x NC] from operands packed once per call, K in
/// panels of BK [KC]; the micro-kernel holds TM x TN [MR x NR] accumulators in vector registers.
/// COMPUTE_BYTES: the size of the compute type the tile is shaped for (4: f32, f16, bf16, i8 with
/// their f32/i32 accumulation; 8: f64), since TN spans a whole number of vector registers. ISA: the
/// micro-kernel path (tilekit/kernels/core/cpu.hpp), whose register file sizes TM x TN; a tile runs
/// only on CPUs with that path (checked at run time).
template <int BM_, int BN_, int BK_, int TM_, int TN_, int COMPUTE_BYTES, HostIsa ISA_>
struct HostPackedTileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr HostIsa isa = ISA_;
  static constexpr int TM = TM_;  ///< micro-tile rows [MR]
  static constexpr int TN = TN_;  ///< micro-tile columns [NR]
  static constexpr bool mma = false;
  static constexpr bool wgmma = false;
  static constexpr TileKernel kernel = TileKernel::host_packed;
  static constexpr bool tf32 = false;
  static constexpr bool runs(DType in) { return (in == DType::f64) == (COMPUTE_BYTES == 8); }
  /// True if this CPU runs the tile's micro-kernel for `in` inputs (checked at run time).
  static bool runs_here(DType in) {
    return host_isa_runs(isa, host_packing(isa, in) == HostPackingKind::bf16_pairs,
                         host_packing(isa, in) == HostPackingKind::i8_quads);
  }
  static constexpr int micro_tiles = (BM / TM) * (BN / TN);
  /// An upper bound of the team size (team threads split the NR-column slivers).
  static constexpr int threads = BN / TN;
  static_assert(BM % TM == 0 && BN % TN == 0, "micro-tile must divide the team tile");

  static MatmulConfig config() {
    MatmulConfig c;
    c.bm = BM; c.bn = BN; c.bk = BK; c.tm = TM; c.tn = TN;
    return c;
  }
};

template <class... Tiles>
struct TileList {};

/// GPU menu (CUDA, HIP). Each thread owns exactly one micro-tile, kept in registers for the whole
/// K loop, so threads per team = micro_tiles (256 for every entry: 8 warps / 4 wavefronts).
using GpuMatmulTiles = TileList<TileShape<128, 128, 8, 8, 8>,   // large problems: 64 FMAs per 16 loads
                                TileShape<128, 64, 16, 8, 4>,   // tall tiles, deeper K stage
                                TileShape<64, 64, 16, 4, 4>,    // mid sizes: 4x more teams than 128x128
                                TileShape<32, 32, 32, 2, 2>,    // small problems: fill the SMs
                                // warp-tiled SIMT (f32): 8 warps of 64x32 (1 team/SM: ~170 registers
                                // for 64 accumulators); 4 warps of 64x32, 2 teams/SM; 4 warps of 64x16,
                                // 4 teams/SM
                                SimtWarpTileShape<128, 128, 16, 8, 8, 1>, SimtWarpTileShape<128, 64, 16, 8, 8, 2>,
                                SimtWarpTileShape<64, 64, 16, 8, 4, 4>>;

/// CUDA adds tensor-core tiles (used for f16 and bf16 inputs; other types take the SIMT tiles), run by
/// the sm_80+ mma.sync kernel (tilekit/kernels/matmul/gpu/mma_sm80.hpp). 128x128x32 stages 4 K steps (64 KB of
/// scratch): above the 40 KB unpatched Kokkos 3.4 allows, within the opt-in maximum the project's
/// Kokkos patch opens (227 KB per block on the H100); the 128x128x16 and 64x64 tiles fit in 40 KB.
/// Every entry costs compile time (4 layout variants x 4 type pairs x 2 architectures): 128x256,
/// 256x128 (64x64 warps) and 128x64 mma.sync tiles lost to these at 4096^3 and 8192^3 and were
/// dropped (docs/perf-notes.md). The warpgroup-MMA tiles
/// (tilekit/kernels/matmul/gpu/wgmma_sm90.hpp) run only where the build has sm_90a code and the GPU is a
/// Hopper (warpgroup_mma_available()).
using CudaMatmulTiles = TileList<TileShape<128, 128, 8, 8, 8>, TileShape<128, 64, 16, 8, 4>,
                                 TileShape<64, 64, 16, 4, 4>, TileShape<32, 32, 32, 2, 2>,
                                 SimtWarpTileShape<128, 128, 16, 8, 8, 1>, SimtWarpTileShape<128, 64, 16, 8, 8, 2>,
                                 SimtWarpTileShape<64, 64, 16, 8, 4, 4>, SimtWarpTileShape<128, 128, 16, 8, 16, 2>,
                                 SimtWarpTileShape<128, 256, 16, 8, 16, 1>, SimtWarpTileShape<256, 128, 16, 16, 8, 1>,
                                 // 4 warps of 32x32, 4 teams/SM: products of 17-32 rows (a 64-row tile
                                 // computes as many padding rows as real ones)
                                 SimtWarpTileShape<32, 128, 16, 4, 8, 4>,
                                 MmaTileShape<128, 128, 32, 64, 64, 4, 1>,  // 4 warps, 2 x 2, 64 KB
                                 MmaTileShape<128, 128, 16, 64, 32, 3, 2>,  // 8 warps, 2 x 4, 24 KB
                                 MmaTileShape<64, 64, 32, 32, 32, 3, 2>,    // 4 warps, 2 x 2, 24 KB
                                 WgmmaTileShape<128, 256, 64, 4>,           // 2 warpgroups, 193 KB (sm_90a)
                                 WgmmaTileShape<128, 128, 64, 3, 2>,        // 2 warpgroups, 97 KB, 2 teams/SM
                                 WgmmaTileShape<256, 128, 64, 4, 1>,        // 4 warpgroups, 193 KB
                                 // warp-specialised: 1 producer + 2 consumer warpgroups, 193 KB (a 256x128
                                 // one with 4 consumers spilled at 640 threads and never won)
                                 WgmmaTileShape<128, 256, 64, 4, 1, true>,
                                 // ... and a 128x192 one (160 KB of stages): where 128x256 tiles leave a
                                 // partial last wave (3072^3: 288 tiles are 2.2 waves of 132, 384 of
                                 // 128x192 are 2.9)
                                 WgmmaTileShape<128, 192, 64, 4, 1, true>,
                                 // ... and a 64x128 one (1 consumer warpgroup, 97 KB, 2 teams/SM) for
                                 // sizes whose 128-wide tiles leave SMs idle (1024^3: 128 tiles)
                                 WgmmaTileShape<64, 128, 64, 4, 2, true>,
                                 // ... and a 64x64 one (65 KB, up to 3 teams/SM) for the small sizes
                                 // whose 64x128 tiles leave most SMs idle (512^3: 32 tiles for 132 SMs)
                                 WgmmaTileShape<64, 64, 64, 4, 2, true>,
                                 // f32 with TF32 math on the same kernel: BK = 32, 193 KB; operands
                                 // that are not K-major are packed first (launch_wgmma_ws)
                                 WgmmaTileShape<128, 256, 32, 4, 1, true, true>,
                                 // ... and at 64x128 (one consumer warpgroup, 97 KB, 2 teams/SM) for sizes
                                 // whose 128x256 tiles leave SMs idle
                                 WgmmaTileShape<64, 128, 32, 4, 2, true, true>,
                                 // ... and at 64x64 (64 KB; 128 registers a thread: 2 teams/SM) for the decode
                                 // shapes run as the transposed product (16-64 columns of C^T: half the
                                 // 64x128 tile idle)
                                 WgmmaTileShape<64, 64, 32, 4, 2, true, true>,
                                 // i8 on s8 warpgroup MMA (i32 accumulators), the same kernel: BK = 128,
                                 // 193 KB and 97 KB; operands that are not K-major are packed first
                                 WgmmaTileShape<128, 256, 128, 4, 1, true, false, true>,
                                 WgmmaTileShape<64, 128, 128, 4, 2, true, false, true>,
                                 // f64 on DMMA: 4 warps; 80 KB (2 teams/SM) and 90 KB (8-warp 128x64 and
                                 // 128x128 tiles lost or tied on the H100: docs/perf-notes.md section 7);
                                 // the 64x64 tile 32 deep (108 KB, 2 teams/SM), 8% ahead of the 16-deep one,
                                 // and a 64x128 one (92 KB, 2 teams/SM) for the model's small-M shapes
                                 // (section 65; the 16-deep 64x64 tile stays for tuned results that name it);
                                 // a 16-row one (4 warps of 16 x 32, 4 stages of 19 KB, 2 teams/SM) for the
                                 // decode shapes, where a 64-row tile multiplies three rows of zeros for each
                                 // row of A (section 70)
                                 MmaFragTileShape<double, 64, 64, 16, 32, 32, 4, 2>,
                                 MmaFragTileShape<double, 16, 128, 16, 16, 32, 4, 2>,
                                 MmaFragTileShape<double, 128, 64, 16, 64, 32, 3, 1>,
                                 MmaFragTileShape<double, 64, 64, 32, 32, 32, 3, 2>,
                                 MmaFragTileShape<double, 64, 128, 16, 32, 64, 3, 2>,
                                 // f32 with TF32 math: 4 warps of 64 x 64, 108 KB; 8 warps of 64 x 32
                                 MmaFragTileShape<float, 128, 128, 32, 64, 64, 3, 1>,
                                 MmaFragTileShape<float, 128, 128, 32, 64, 32, 3, 1>,
                                 // i8 on IMMA: 4 warps of 64 x 64, 8 warps of 64 x 32; 80 KB
                                 MmaFragTileShape<int8_t, 128, 128, 64, 64, 64, 4, 1>,
                                 MmaFragTileShape<int8_t, 128, 128, 64, 64, 32, 4, 1>>;

/// Host menu (Serial, OpenMP): the packed kernel's tiles (tilekit/kernels/matmul/host/packed.hpp),
/// per micro-kernel path. Each micro-tile fills about 3/4 of its path's vector registers with
/// accumulators (enough independent FMAs to cover the FMA latency on two pipes): avx512 12 rows x 2
/// zmm (24 of 32), avx2 6 x 2 ymm (12 of 16; BLIS's Haswell/Zen shape), portable 8 x 3 vectors of 16
/// bytes (24 of NEON's 32). BK x TN of B stays in L1, BM x BK of A and the BM x BN running sums in
/// L2 (docs/perf-notes.md sections 9 and 43). Per compute size: 4 bytes (f32, f16, bf16, i8), 8 (f64).
/// The small tiles: more teams than threads for problems of a few hundred. The x86 paths exist in
/// x86-64 GCC builds; every host build has the portable one.
using HostMatmulTiles = TileList<
#if defined(TILEKIT_HOST_X86_PATHS)
    HostPackedTileShape<96, 512, 256, 12, 32, 4, HostIsa::avx512>,  // default f32 / f16 / bf16 / i8
    HostPackedTileShape<48, 128, 256, 12, 32, 4, HostIsa::avx512>,  // small problems
    HostPackedTileShape<96, 256, 256, 12, 16, 8, HostIsa::avx512>,  // default f64
    HostPackedTileShape<48, 64, 256, 12, 16, 8, HostIsa::avx512>,   // small problems, f64
    HostPackedTileShape<96, 256, 256, 6, 16, 4, HostIsa::avx2>,
    HostPackedTileShape<48, 128, 256, 6, 16, 4, HostIsa::avx2>,
    HostPackedTileShape<96, 128, 256, 6, 8, 8, HostIsa::avx2>,
    HostPackedTileShape<48, 64, 256, 6, 8, 8, HostIsa::avx2>,
    HostPackedTileShape<24, 64, 256, 6, 16, 4, HostIsa::avx2>,  // f32 near 128^3: 4+ teams a thread
#endif
    HostPackedTileShape<96, 192, 256, 8, 12, 4, HostIsa::portable>,
    HostPackedTileShape<96, 96, 256, 8, 6, 8, HostIsa::portable>>;

/// The thin kernel (tilekit/kernels/matmul/thin.hpp), for M or N up to kThinMaxRows: the thin side of C
/// (its "rows") is held whole in each thread's registers, rounded up to one of kThinRowClasses
/// (one instantiation per class and type pair: 1 for matrix-vector products, 4, 16).
constexpr int kThinMaxRows = 16;
/// True for products the thin kernel runs by default (M or N in 1..kThinMaxRows).
inline bool is_thin_shape(int64_t M, int64_t N) {
  const int64_t t = M < N ? M : N;
  return t >= 1 && t <= kThinMaxRows;
}
/// Shape classes for `auto`: a tuned shape stands in for another only within its class, since the
/// best config of one says little about the others: thin (M or N up to kThinMaxRows), shallow (K up
/// to kShallowK: the store of C dominates), and the rest.
constexpr int64_t kShallowK = 256;
enum class ShapeClass { thin, shallow, general };
inline ShapeClass shape_class(int64_t M, int64_t N, int64_t K) {
  return is_thin_shape(M, N) ? ShapeClass::thin : K <= kShallowK ? ShapeClass::shallow : ShapeClass::general;
}
template <int... R>
struct ThinRowList {};
using ThinRowClasses = ThinRowList<1, 4, 16>;
/// The smallest row class holding `rows` (1..kThinMaxRows): the RR the thin kernel is instantiated
/// with for them (tilekit/kernels/matmul/thin.hpp, dispatch_thin_rows).
template <int... R>
constexpr int64_t thin_row_class(ThinRowList<R...>, int64_t rows) {
  int64_t c = 0;
  ((c = c == 0 && rows <= R ? R : c), ...);
  return c == 0 ? kThinMaxRows : c;
}
constexpr int64_t thin_row_class(int64_t rows) { return thin_row_class(ThinRowClasses{}, rows); }
static_assert(thin_row_class(1) == 1 && thin_row_class(3) == 4 && thin_row_class(16) == 16, "row classes");
/// The thin side staged in team scratch per step: GPUs, a chunk of about kThinGpuStageElems values
/// (one shared copy per team, read by every thread: the deeper, the fewer barriers; 32 KB of f32);
/// host, kThinHostStageK values of K (a chunk of the thin operand kept in L1 while a column block
/// streams by).
constexpr int kThinGpuStageElems = 8192;
/// The 16-row class (pitch 20) stages 4x deeper chunks on CUDA: at 8192 values a chunk is 256 deep,
/// 8 k per thread of a 32-group team between a barrier pair and a restaging, and at K = 8192 the 32
/// chunks' barriers and restagings were a visible part of the time (4x deeper: 16x8192x8192 +5%,
/// 8192x16x8192 +8% with thin_l16_k32 on the H100, perf notes 22). Counted in bytes of 4-byte values
/// (80 KB at pitch 20): two teams of 256 threads share an SM; f64 stages half as deep, as 160 KB held
/// one team per SM and halved the loads in flight (perf notes 57). (HIP: 64 KB of LDS a workgroup.)
#if defined(KOKKOS_ENABLE_HIP)
constexpr int kThinGpuStageBytesWide = kThinGpuStageElems * 4;  // the elements' count, as 4-byte values
#else
constexpr int kThinGpuStageBytesWide = 4 * kThinGpuStageElems * 4;  // 4x the elements, as 4-byte values
#endif
/// K values per GPU stage for a staged pitch of `pitch` values of `bytes` each: a power of two.
constexpr int thin_gpu_stage_k(int pitch, int bytes) {
  const int elems = pitch >= 16 ? kThinGpuStageBytesWide / bytes : kThinGpuStageElems;
  int k = 1;
  while (2 * k * pitch <= elems) k *= 2;
  return k;
}
static_assert(thin_gpu_stage_k(20, 4) == thin_gpu_stage_k(20, 8) * 2, "f64 stages half the f32 depth");
/// Loads each GPU thread issues before writing them to the X stage (one L2 latency per batch).
constexpr int kThinGpuStageBatch = 8;
/// K steps whose loads of W each GPU thread issues together (CPT loads a step) before multiplying.
constexpr int kThinGpuStepsAhead = 4;
constexpr int kThinHostStageK = 256;
/// Host packed kernel (host/packed.hpp, packs_in_loop): operands are packed block by block inside the
/// team loop where their packed bytes exceed this many times one core's L2 (a pass over larger ones
/// left them in memory, read back from there: perf notes 53); smaller ones in two passes before it.
constexpr double kHostPackInLoopMinL2 = 2.0;
/// Host: the most bytes of running sums (row class x columns of the compute type) a thin team's
/// column block keeps, so that they stay in L1 while W streams by; the default's column count
/// follows from it (4096 columns of one f32 row, 256 of sixteen).
constexpr int64_t kThinHostSumsBytes = 16 * 1024;
/// GPU columns per thread for a row class: each staged value read from scratch serves that many
/// columns (with 16 rows, one column per thread was bound by scratch reads, not by DRAM).
/// Accumulators stay at most 64 four-byte registers (rows x columns x size): 8-byte types take half.
constexpr int thin_gpu_columns_per_thread(int rows, int bytes) {
  const int cpt = rows >= 16 ? 4 : rows >= 4 ? 2 : 1;
  return bytes > 4 && cpt > 1 ? cpt / 2 : cpt;
}

template <class ExecSpace>
using MatmulTiles =
    std::conditional_t<is_cuda_space<ExecSpace>(), CudaMatmulTiles,
                       std::conditional_t<is_gpu_space<ExecSpace>(), GpuMatmulTiles, HostMatmulTiles>>;

/// True if a tile of this build's menu with c's tile part runs `input` with `math`: SIMT tiles run
/// every type; tensor-core tiles run the types they were made for (f16/bf16; f64; i8; f32 only with
/// Math::tf32, the opt-in). Tiles of different types may share a name: the input type picks.
bool tile_supports(const MatmulConfig& c, DType input, Math math = Math::ieee);

/// Whether a tile of the menu may split K across teams (the tiles with split_k = true: SIMT tiles
/// that run several teams per SM, the wide warp-specialised tiles and the f64 / TF32 / i8 mma.sync
/// tiles).
template <class Tile, class = void>
struct TileSplitsK : std::false_type {};
template <class Tile>
struct TileSplitsK<Tile, std::void_t<decltype(Tile::split_k)>> : std::integral_constant<bool, Tile::split_k> {};
/// True if c's tile part is a menu tile of this build that may split K (on any input type).
bool tile_splits_k(const MatmulConfig& c);

/// The tile names of the menu compiled for the default execution space, comma-separated.
std::string menu_names();
/// The same, only the tiles that run `input` with `math` (tile_supports).
std::string menu_names(DType input, Math math = Math::ieee);

}  // namespace tilekit
