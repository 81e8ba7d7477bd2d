// tilekit blocked matmul, tensor-core path for the types whose MMA fragments ldmatrix cannot load
// (CUDA sm_80 and newer: Ampere, Hopper): f64 on the FP64 tensor cores (DMMA, f64 accumulation), f32
// inputs with TF32 math (opt-in: MatmulProblem::math, f32 accumulation) and i8 (IMMA, i32
// accumulation), all through PTX mma.sync on m16n8 blocks, fed by a STAGES-deep cp.async pipeline.
// Same TeamPolicy structure as the other kernels: one team per BM x BN tile of C in grouped order,
// A and B staged in level-0 team scratch, every edge masked, the same fused epilogue.
//
//   league  : one team per BM x BN tile of C, grouped order (GROUP_M tile-rows per group)
//   kt      : K in steps of BK; STAGES-1 steps are in flight (cp.async) while the warps multiply
//             step kt; one barrier per step, inside its last slice
//   warp    : each warp owns a WM x WN block of C: (WM/16) x (WN/8) m16n8 accumulators
//   ks      : BK in atom-deep slices (MmaAtom::K: 8 for f64 and tf32, 32 for i8); per slice each
//             thread issues (WM/16) x (WN/8) MMAs from fragments in registers, and reads the next
//             slice's 4 A and 2 B fragment units per m16 / n8 block behind them
//
// Fragment units: every atom here gives a thread the A units (g + 8 (u % 2), t + 4 (u / 2)), u < 4,
// and the B units (t + 4 u, g), u < 2 (g = lane / 4, t = lane % 4; the second index counts units
// along K), where a unit is one element (f64, tf32) or 4 consecutive K values (i8, packed in 32 bits).
// ldmatrix moves 16-bit elements only, so the units are read with plain shared loads; the rows of
// each staged tile are padded so that the 8 (4-byte units) or 4 (8-byte units, two phases) rows one
// load touches fall in distinct banks (conflict_free_pad).
//
// Staged layouts follow the operands' contiguous dimension, so global reads are 16-byte cp.async
// runs: op(A) contiguous along K is staged [BM][BK + pad], contiguous along M [BK][BM + pad]; B
// likewise. An i8 unit is 4 K values, so an i8 unit of an operand staged along M or N is gathered
// from 4 staged rows (4 byte loads, packed). The epilogue works from the accumulator registers
// (the m16n8 layout: rows g and g + 8, columns 2t and 2t + 1): alpha, beta (C read only when
// beta != 0), bias, activation, conversion, masked store.
//
// Why the atoms differ by architecture: the m16n8k8 f64 MMA exists from sm_90 on; sm_80 runs the
// same block as four m8n8k4 f64 MMAs (two K halves x two M halves), with the same fragments.
#pragma once

#include "tilekit/kernels/core/execution_space.hpp"
#include "tilekit/kernels/matmul/gpu/mma_sm80.hpp"
#include "tilekit/kernels/matmul/gpu/split_k_sum.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

// 0: every double-precision epilogue stays in the registers (an A/B build of one kernel unit).
#ifndef TILEKIT_F64_STAGED_ACTIVATION
#define TILEKIT_F64_STAGED_ACTIVATION 1
#endif
// 0: only gelu and silu take that path; the other epilogues (none, bias, relu, leaky_relu) stay in
// the registers (an A/B build).
#ifndef TILEKIT_F64_STAGED_EVERY_EPILOGUE
#define TILEKIT_F64_STAGED_EVERY_EPILOGUE 1
#endif
// 0: the stage buffers' pointer aligned from Kokkos' generic scratch pointer (an A/B build).
#ifndef TILEKIT_F64_TC_SHARED_SYMBOL
#define TILEKIT_F64_TC_SHARED_SYMBOL 1
#endif

namespace tilekit {
namespace detail {

/// The m16n8 MMA of one input type: unit (a fragment register value), accumulator, K per MMA.
template <class TIn>
struct MmaAtom {  // no tensor-core path of this kernel for TIn (no tile of it runs TIn)
  static constexpr bool kExists = false;
  static constexpr int kElemsPerUnit = 1;
  static constexpr int K = 1;
};
template <>
struct MmaAtom<double> {
  static constexpr bool kExists = true;
  using unit = double;
  using acc = double;
  static constexpr int kElemsPerUnit = 1;
  static constexpr int K = 8;
#if defined(TILEKIT_SM80_DEVICE)
  __device__ static void mma(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // K units t (h = 0) and t + 4 (h = 1)
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                   : "+d"(d[0]), "+d"(d[1])
                   : "d"(a[2 * h]), "d"(b[h]));  // rows g
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                   : "+d"(d[2]), "+d"(d[3])
                   : "d"(a[2 * h + 1]), "d"(b[h]));  // rows g + 8
    }
#endif
  }
#endif
};
template <>
struct MmaAtom<float> {  // f32 inputs, TF32 math
  static constexpr bool kExists = true;
  using unit = uint32_t;
  using acc = float;
  static constexpr int kElemsPerUnit = 1;
  static constexpr int K = 8;
#if defined(TILEKIT_SM80_DEVICE)
  // f32 -> tf32, rounding to nearest (ties away), as cuBLAS does; the MMA alone would truncate.
  __device__ static uint32_t prepare(uint32_t bits) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(bits)));
    return r;
  }
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#endif
};
template <>
struct MmaAtom<int8_t> {
  static constexpr bool kExists = true;
  using unit = uint32_t;  // 4 consecutive K values
  using acc = int32_t;
  static constexpr int kElemsPerUnit = 4;
  static constexpr int K = 32;
#if defined(TILEKIT_SM80_DEVICE)
  __device__ static void mma(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#endif
};

/// Padding (bytes, a multiple of 16 so rows stay cp.async-aligned) of staged rows of `row_bytes`
/// such that `rows` consecutive rows, each read over `seg_bytes` at one offset, fall in distinct
/// 16-byte bank groups of a 128-byte bank line: what one shared load of fragment units touches.
constexpr int conflict_free_pad(int row_bytes, int seg_bytes, int rows) {
  for (int pad = 0; pad < 128; pad += 16) {
    const int pitch = row_bytes + pad;
    bool ok = true;
    for (int r = 0; r < rows && ok; ++r)
      for (int q = 0; q < r && ok; ++q) {
        const int a = (r * pitch) % 128, b = (q * pitch) % 128;
        ok = a / seg_bytes != b / seg_bytes && a % seg_bytes == 0;
      }
    if (ok) return pad;
  }
  return 0;
}

/// Row-major staging with a padded pitch: element (r, c) at r * PITCH + c.
template <int PITCH>
struct PaddedOffset {
  KOKKOS_INLINE_FUNCTION constexpr int operator()(int r, int c) const { return r * PITCH + c; }
};

/// SPLIT_K (launch_mma_frag_split_k): k_splits teams per tile of C, team t over K values
/// [s * k_per_split, (s + 1) * k_per_split) of tile t % tiles with s = t / tiles (k_per_split a
/// multiple of BK); TOut is then the accumulator type and each team stores its sums as they are
/// (no epilogue) into split s's partial C, c_split_stride elements after split 0's (p.c).
template <class ExecSpace, class Tile, class TIn, class TOut, bool SPLIT_K = false>
struct Sm80MmaF64Tf32I8Matmul {
  using Atom = MmaAtom<TIn>;
  using compute = typename TypeTraits<TIn>::compute;
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Tile::threads, Tile::MIN_TEAMS>>;
  using member_type = typename policy_type::member_type;

  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, WM = Tile::TM, WN = Tile::TN;
  static constexpr int STAGES = Tile::STAGES;
  static constexpr int kThreads = Tile::threads;
  static constexpr int kWarpsN = BN / WN;
  static constexpr int MI = WM / 16, NI = WN / 8;  // m16n8 accumulator blocks per warp
  static constexpr int kScratchLevel = 0;
  static constexpr bool kSupported = Atom::kExists;
  static constexpr int kEB = int(sizeof(TIn));
  static constexpr int kUnitBytes = kEB * Atom::kElemsPerUnit;
  /// Operands contiguous along M or N are staged that way ([BK][rows]) by cp.async; an i8 unit of
  /// such an operand is gathered from 4 K rows (4 byte loads, packed).
  static constexpr bool kGatherMN = kUnitBytes != kEB;
  // Pitches (elements). K-major rows: 8 rows x 4 units per load (4-byte units), or 4 rows x 4 units
  // per phase (8-byte units). MN-major rows: 4 K rows x 32 bytes per load or phase; i8: the byte
  // loads of one unit step 4 K rows (4 x pitch) for t = 0..3, 8 bytes each: a 16-byte pad puts
  // them on two bank offsets (a two-way conflict; an 8-byte pad would clear it but breaks the
  // 16-byte rows cp.async needs).
  static constexpr int kPitchK = BK + conflict_free_pad(BK * kEB, 4 * kUnitBytes, 128 / (4 * kUnitBytes)) / kEB;
  static constexpr int kPitchAM = BM + (kGatherMN ? 16 : conflict_free_pad(BM * kEB, 32, 4)) / kEB;
  static constexpr int kPitchBN = BN + (kGatherMN ? 16 : conflict_free_pad(BN * kEB, 32, 4)) / kEB;
  static constexpr int kAElems = (BM * kPitchK > BK * kPitchAM ? BM * kPitchK : BK * kPitchAM);
  static constexpr int kBElems = (BN * kPitchK > BK * kPitchBN ? BN * kPitchK : BK * kPitchBN);
  static constexpr int kStageElems = kAElems + kBElems;
  static_assert(BK % Atom::K == 0 && WM % 16 == 0 && WN % 8 == 0 && STAGES >= 2,
                "K steps of whole MMAs, warp tiles of whole m16n8 blocks");
  static_assert((kAElems * kEB) % 16 == 0 && (kStageElems * kEB) % 16 == 0, "stage buffers on 16-byte chunks");

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return std::size_t(STAGES) * kStageElems * kEB + 128;  // +128: the base is aligned up to 128 bytes
  }

  /// Double-precision epilogues go through the stage buffers (run(): every activation, or gelu and
  /// silu only with TILEKIT_F64_STAGED_EVERY_EPILOGUE=0); they hold a lane's values for the whole team.
  static constexpr bool kStagedF64Epilogue =
      TILEKIT_F64_STAGED_ACTIVATION && std::is_same<compute, double>::value &&
      std::size_t(BM) * BN * sizeof(compute) <= std::size_t(STAGES) * kStageElems * kEB;
  /// Values a group of the staged loop: loaded, then activated, then stored together.
  static constexpr int kStagedGroup = 8;

  MatmulProblem<TIn, TOut> p;
  int group_m;
  int tiles_m, tiles_n;
  int vector_length;
  int k_splits = 1;            ///< SPLIT_K: teams per tile of C
  int64_t k_per_split = 0;     ///< SPLIT_K: K values per team (whole K steps)
  int64_t c_split_stride = 0;  ///< SPLIT_K: elements between the partial Cs of consecutive splits

#if defined(TILEKIT_SM80_DEVICE)
  /// The staged epilogue of one lane: value e (block (i, j), element v, as the register epilogue
  /// numbers them) from slots[e * kThreads + tid]; row0 / col0: the lane's first row and column.
  /// A group's values go through three loops: loads, activations, stores. The activations form one
  /// basic block, so the scheduler interleaves the group's dependent chains (gelu in double: ~25
  /// operations a value); with each value's loads, activation and store in turn, every chain was a
  /// block of its own and ran alone, about 7% slower (docs/perf-notes.md section 30).
  /// So that no load waits behind a branch either, values outside C read a clamped element (their
  /// results are never stored).
  template <Activation ACT>
  __device__ void staged_activation(const compute* slots, int64_t row0, int64_t col0, int tid) const {
    constexpr int kValues = MI * NI * 4;
    static_assert(kValues % kStagedGroup == 0, "whole groups");
    const bool with_beta = p.beta != compute(0), with_bias = p.bias != nullptr;
#pragma unroll 1
    for (int e0 = 0; e0 < kValues; e0 += kStagedGroup) {
      compute y[kStagedGroup];
      TOut* dst[kStagedGroup];
      bool inside[kStagedGroup];
#pragma unroll
      for (int k = 0; k < kStagedGroup; ++k) {
        const int e = e0 + k, i = e / (NI * 4), j = (e / 4) % NI, v = e % 4;
        const int64_t gi = row0 + i * 16 + (v / 2) * 8, gj = col0 + j * 8 + v % 2;
        inside[k] = gi < p.M && gj < p.N;
        const int64_t ci = gi < p.M ? gi : p.M - 1, cj = gj < p.N ? gj : p.N - 1;
        dst[k] = &p.c(ci, cj);
        y[k] = p.alpha * slots[e * kThreads + tid];
        if (with_beta) y[k] += p.beta * convert<compute>(*dst[k]);
        if (with_bias) y[k] += p.bias[cj];
      }
#pragma unroll
      for (int k = 0; k < kStagedGroup; ++k) y[k] = activate_fixed<ACT>(y[k]);
#pragma unroll
      for (int k = 0; k < kStagedGroup; ++k)
        if (inside[k]) *dst[k] = convert<TOut>(y[k]);
    }
  }
#endif

  /// The split of K a team's work item takes (SPLIT_K): split s = league rank / tiles.
  KOKKOS_INLINE_FUNCTION int split_of(const member_type& team) const {
    return SPLIT_K ? team.league_rank() / (tiles_m * tiles_n) : 0;
  }

  /// The tile at (m0, n0), over all of K or (SPLIT_K) over the K values of the team's split.
  template <bool A_K, bool B_N>
  KOKKOS_INLINE_FUNCTION void run(TIn* smem, int64_t m0, int64_t n0, int tid, const member_type& team) const {
#if defined(TILEKIT_SM80_DEVICE)
    if constexpr (kSupported) {
      using unit = typename Atom::unit;
      using acc_t = typename Atom::acc;
      constexpr int EPU = Atom::kElemsPerUnit;
      // Staged orientation: K-major ([rows][kPitchK]) or MN-major ([BK][pitch]).
      constexpr bool a_kmajor = A_K;
      constexpr bool b_kmajor = !B_N;
      const int warp = tid / 32, lane = tid % 32;
      const int wm = warp / kWarpsN, wn = warp % kWarpsN;
      const int g = lane / 4, t = lane % 4;

      acc_t acc[MI][NI][4];
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
          for (int v = 0; v < 4; ++v) acc[i][j][v] = acc_t(0);

      // 16-byte chunks also need a staged layout in the operand's orientation (it is).
      const auto& a = p.a;
      const auto& b = p.b;
      bool a_chunked, b_chunked;
      operands_chunked<A_K, B_N>(p, a_chunked, b_chunked);
      // The team's K values: [k_first, k_end) with split K, else all of K. Without split K the code
      // below reads p.K where it needs it, as before split K existed: holding K's end in a register
      // over the loop cost the 128x64 f64 tile spills and ~4% (perf notes 54).
      const int split = split_of(team);
      const int64_t k_first = SPLIT_K ? int64_t(split) * k_per_split : 0;
      const int64_t k_end = SPLIT_K && p.K - k_first > k_per_split ? k_first + k_per_split : p.K;
      int64_t ktiles;
      if constexpr (SPLIT_K) ktiles = (k_end - k_first + BK - 1) / BK;
      else ktiles = (p.K + BK - 1) / BK;

      // Whole steps of chunked operands go through a ChunkStager (addresses and M/N-edge masks worked
      // out once); the step that reaches the team's K end, and operands not in 16-byte chunks, through
      // stage_tile.
      using AStager = std::conditional_t<A_K, ChunkStager<BM, BK, kThreads, TIn>, ChunkStager<BK, BM, kThreads, TIn>>;
      using BStager = std::conditional_t<!B_N, ChunkStager<BN, BK, kThreads, TIn>, ChunkStager<BK, BN, kThreads, TIn>>;
      const bool a_fast = AStager::kApplies && a_chunked, b_fast = BStager::kApplies && b_chunked;
      AStager a_st;
      BStager b_st;
      if constexpr (A_K) a_st.init(a.data + m0 * a.rs + k_first * a.cs, a.rs, p.M - m0, BK, tid, PaddedOffset<kPitchK>{});
      else a_st.init(a.data + k_first * a.cs + m0 * a.rs, a.cs, BK, p.M - m0, tid, PaddedOffset<kPitchAM>{});
      if constexpr (!B_N) b_st.init(b.data + n0 * b.cs + k_first * b.rs, b.cs, p.N - n0, BK, tid, PaddedOffset<kPitchK>{});
      else b_st.init(b.data + k_first * b.rs + n0 * b.cs, b.rs, BK, p.N - n0, tid, PaddedOffset<kPitchBN>{});

      auto stage = [&](int64_t kt, int buf) {  // called for kt = 0, 1, 2, ... in turn
        TIn* As = smem + buf * kStageElems;
        TIn* Bs = As + kAElems;
        int64_t k0, k_rest;  // first K value of the step, K values from there to the team's end
        if constexpr (SPLIT_K) k0 = k_first + kt * BK, k_rest = k_end - k0;
        else k0 = kt * BK, k_rest = p.K - k0;
        const bool whole = k_rest >= BK;
        if constexpr (A_K) {  // [BM][kPitchK]
          if (a_fast && whole) a_st.copy_next(As, a.rs, BK * a.cs, PaddedOffset<kPitchK>{});
          else
            stage_tile<BM, BK, kThreads>(As, a.data + m0 * a.rs + k0 * a.cs, a.rs, a.cs, p.M - m0, k_rest,
                                         a_chunked, tid, PaddedOffset<kPitchK>{});
        } else {  // [BK][kPitchAM]
          if (a_fast && whole) a_st.copy_next(As, a.cs, BK * a.cs, PaddedOffset<kPitchAM>{});
          else
            stage_tile<BK, BM, kThreads>(As, a.data + k0 * a.cs + m0 * a.rs, a.cs, a.rs, k_rest, p.M - m0,
                                         a_chunked, tid, PaddedOffset<kPitchAM>{});
        }
        if constexpr (!B_N) {  // [BN][kPitchK]
          if (b_fast && whole) b_st.copy_next(Bs, b.cs, BK * b.rs, PaddedOffset<kPitchK>{});
          else
            stage_tile<BN, BK, kThreads>(Bs, b.data + n0 * b.cs + k0 * b.rs, b.cs, b.rs, p.N - n0, k_rest,
                                         b_chunked, tid, PaddedOffset<kPitchK>{});
        } else {  // [BK][kPitchBN]
          if (b_fast && whole) b_st.copy_next(Bs, b.rs, BK * b.rs, PaddedOffset<kPitchBN>{});
          else
            stage_tile<BK, BN, kThreads>(Bs, b.data + k0 * b.rs + n0 * b.cs, b.rs, b.cs, k_rest, p.N - n0,
                                         b_chunked, tid, PaddedOffset<kPitchBN>{});
        }
      };

      // Unit (row r, K unit ku) of a staged operand: one load, or (i8 staged along M or N) the bytes
      // of K rows 4 ku .. 4 ku + 3 packed low to high.
      auto mn_unit = [&](const TIn* at, int pitch) -> unit {
        if constexpr (kGatherMN) {
          const uint8_t* b8 = reinterpret_cast<const uint8_t*>(at);
          return uint32_t(b8[0]) | uint32_t(b8[pitch]) << 8 | uint32_t(b8[2 * pitch]) << 16 |
                 uint32_t(b8[3 * pitch]) << 24;
        } else {
          (void)pitch;
          return *reinterpret_cast<const unit*>(at);
        }
      };
      // The fragments of m16 block i (A) or n8 block j (B) for slice ks of the step in buffer bf.
      auto load_a = [&](unit (&f)[4], int bf, int ks, int i) {
        const TIn* As = smem + bf * kStageElems;
        const int ku0 = ks * (Atom::K / EPU);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int r = wm * WM + i * 16 + g + 8 * (u % 2), ku = ku0 + t + 4 * (u / 2);
          if constexpr (a_kmajor) f[u] = *reinterpret_cast<const unit*>(As + r * kPitchK + ku * EPU);
          else f[u] = mn_unit(As + ku * EPU * kPitchAM + r, kPitchAM);
          if constexpr (std::is_same<TIn, float>::value) f[u] = Atom::prepare(f[u]);  // round to tf32
        }
      };
      auto load_b = [&](unit (&f)[2], int bf, int ks, int j) {
        const TIn* Bs = smem + bf * kStageElems + kAElems;
        const int ku0 = ks * (Atom::K / EPU);
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          const int c = wn * WN + j * 8 + g, ku = ku0 + t + 4 * u;
          if constexpr (b_kmajor) f[u] = *reinterpret_cast<const unit*>(Bs + c * kPitchK + ku * EPU);
          else f[u] = mn_unit(Bs + ku * EPU * kPitchBN + c, kPitchBN);
          if constexpr (std::is_same<TIn, float>::value) f[u] = Atom::prepare(f[u]);
        }
      };

      // Prologue: STAGES-1 steps in flight; every thread commits one group per step, empty or not,
      // so that wait_group<STAGES-2> always means "the next step has landed". Then the first slice's
      // fragments, and the last free buffer filled.
#pragma unroll
      for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) stage(s, s);
        cp_async_commit();
      }
      cp_async_wait<STAGES - 2>();  // this thread's copies of step 0
      team.team_barrier();          // everyone's
      if (STAGES - 1 < ktiles) stage(STAGES - 1, STAGES - 1);
      cp_async_commit();
      unit fa[MI][4], fb[NI][2];
      if (ktiles > 0) {
#pragma unroll
        for (int i = 0; i < MI; ++i) load_a(fa[i], 0, 0, i);
#pragma unroll
        for (int j = 0; j < NI; ++j) load_b(fb[j], 0, 0, j);
      }

      // The main loop, software-pipelined in the registers (the order cuBLAS's DGEMM kernel has on
      // sm_90, perf notes 70): m16 block i's A fragments for the next slice are read as soon as
      // block i's MMAs of this slice are issued, and B's during the last block's MMAs, so the reads'
      // latency hides behind MMAs of the same warp. The step's one barrier comes in its last slice
      // after block 0's MMAs (those keep the pipe busy while the warp waits): past it, step kt + 1
      // has landed for everyone, and everyone is done reading step kt, whose buffer is refilled with
      // step kt + STAGES.
      constexpr int KS = BK / Atom::K;  // atom-deep slices a step
      int buf = 0;  // stage buffer of step kt
      for (int64_t kt = 0; kt < ktiles; ++kt) {
        const int next_buf = buf + 1 == STAGES ? 0 : buf + 1;
        const bool more = kt + 1 < ktiles;
#pragma unroll
        for (int ks = 0; ks < KS; ++ks) {
          const bool last = ks == KS - 1;
          const int nb = last ? next_buf : buf, nks = last ? 0 : ks + 1;  // the next slice
#pragma unroll
          for (int i = 0; i < MI; ++i) {
#pragma unroll
            for (int j = 0; j < NI; ++j) {
              Atom::mma(acc[i][j], fa[i], fb[j]);
              // (with one block, the last slice's B reads wait for the barrier below)
              if (i == MI - 1 && !(last && MI == 1) && (!last || more)) load_b(fb[j], nb, nks, j);
            }
            if (last && i == 0) {
              cp_async_wait<STAGES - 2>();  // this thread's copies of step kt + 1
              team.team_barrier();
              if (kt + STAGES < ktiles) stage(kt + STAGES, buf);
              cp_async_commit();
              if (MI == 1 && more)
#pragma unroll
                for (int j = 0; j < NI; ++j) load_b(fb[j], nb, nks, j);
            }
            if (!last || more) load_a(fa[i], nb, nks, i);
          }
        }
        buf = next_buf;
      }
      cp_async_wait<0>();

      // Split K: the sums as they are into this split's partial C (SplitKSum adds them).
      if constexpr (SPLIT_K) {
        TOut* const part = p.c.data + int64_t(split) * c_split_stride;
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
          for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int v = 0; v < 4; ++v) {
              const int64_t gi = m0 + wm * WM + i * 16 + g + (v / 2) * 8;
              const int64_t gj = n0 + wn * WN + j * 8 + t * 2 + v % 2;
              if (gi < p.M && gj < p.N) part[gi * p.c.rs + gj * p.c.cs] = TOut(acc[i][j][v]);
            }
        return;
      }
      // gelu and silu in double: from the registers they are latency-bound (one warp a scheduler at
      // 254 registers, ~30 dependent double operations a value and no registers left to interleave
      // values: +30 us a tile wave at 1024^3, perf notes 28). Parked in the stage buffers (free once
      // every warp is past the last K step), the values go through a loop that has every register.
      // The same path for every other epilogue of these tiles (TILEKIT_F64_STAGED_EVERY_EPILOGUE):
      // the register epilogue below, store_c_element per value with its run-time switch, costs ~18 us
      // at 1024^3 where the staged gelu costs less than no activation from the registers.
      if constexpr (kStagedF64Epilogue && !SPLIT_K) {
        if (TILEKIT_F64_STAGED_EVERY_EPILOGUE || p.act == Activation::gelu || p.act == Activation::silu) {
          team.team_barrier();  // every warp is done reading the stage buffers
          compute* const slots = reinterpret_cast<compute*>(smem);
#pragma unroll
          for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
              for (int v = 0; v < 4; ++v) slots[((i * NI + j) * 4 + v) * kThreads + tid] = compute(acc[i][j][v]);
          // (each thread reads back only its own slots: no barrier between)
          const int64_t row0 = m0 + wm * WM + g, col0 = n0 + wn * WN + t * 2;
          switch (p.act) {
            case Activation::gelu: staged_activation<Activation::gelu>(slots, row0, col0, tid); break;
            case Activation::silu: staged_activation<Activation::silu>(slots, row0, col0, tid); break;
#if TILEKIT_F64_STAGED_EVERY_EPILOGUE
            case Activation::relu: staged_activation<Activation::relu>(slots, row0, col0, tid); break;
            case Activation::leaky_relu: staged_activation<Activation::leaky_relu>(slots, row0, col0, tid); break;
            default: staged_activation<Activation::none>(slots, row0, col0, tid); break;
#else
            default: break;
#endif
          }
          return;
        }
      }

      // Epilogue from the registers: a lane holds rows g and g + 8 and columns 2t, 2t + 1 of each
      // m16n8 block. (Not compiled where the staged path above takes every epilogue.)
      if constexpr (!SPLIT_K && !(kStagedF64Epilogue && TILEKIT_F64_STAGED_EVERY_EPILOGUE)) {
#pragma unroll
        for (int i = 0; i < MI; ++i) {
#pragma unroll
          for (int j = 0; j < NI; ++j) {
#pragma unroll
            for (int v = 0; v < 4; ++v) {
              const int64_t gi = m0 + wm * WM + i * 16 + g + (v / 2) * 8;
              const int64_t gj = n0 + wn * WN + j * 8 + t * 2 + v % 2;
              store_c_element(p, gi, gj, compute(acc[i][j][v]));
            }
          }
        }
      }
    }
#else
    (void)smem, (void)m0, (void)n0, (void)tid, (void)team;
#endif
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    if constexpr (kSupported) {
      // Split K deals out every tile once per split, split by split: teams running at once share
      // the operands' panels of one K range.
      int tile_m, tile_n;
      if constexpr (SPLIT_K)
        grouped_tile(team.league_rank() - split_of(team) * (tiles_m * tiles_n), group_m, tiles_m, tiles_n, tile_m, tile_n);
      else
        grouped_tile(team.league_rank(), group_m, tiles_m, tiles_n, tile_m, tile_n);
      const int64_t m0 = int64_t(tile_m) * BM, n0 = int64_t(tile_n) * BN;
#if TILEKIT_F64_TC_SHARED_SYMBOL
      // From the __shared__ symbol (team_scratch_aligned), so that the fragment reads and the staged
      // epilogue's slots are LDS/STS with 32-bit addresses, not generic LD.E/ST.E (perf notes 30).
      TIn* smem = team_scratch_aligned<TIn, 128>(team, scratch_bytes(), kScratchLevel);
#else
      char* raw = static_cast<char*>(team.team_scratch(0).get_shmem(scratch_bytes()));
      TIn* smem = reinterpret_cast<TIn*>((reinterpret_cast<uintptr_t>(raw) + 127) & ~uintptr_t(127));
#endif
      const int tid = team.team_rank() * vector_length + vector_lane();
      // The staged layouts follow the operands' contiguous dimension.
      with_operand_orders(p, [&](auto a_k, auto b_n) { run<a_k.value, b_n.value>(smem, m0, n0, tid, team); });
    }
  }
};

/// Split K on an mma.sync tile of f64, TF32 or i8 (MatmulConfig::k_splits): where the tiles of C are
/// too few to fill the GPU (decode shapes, deep K over a few hundred rows), `splits` teams per tile,
/// each over k_per_split values of K (whole K steps), store their sums in the accumulator type (f64,
/// f32, or i32: exact) into one partial C per split, and a second kernel adds them in split order and
/// applies the epilogue (SplitKSum): the same inputs and config give the same bits.
template <class Tile, class TIn, class TOut>
void launch_mma_frag_split_k(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg, int splits, int64_t k_per_split,
                             const Kokkos::DefaultExecutionSpace& space, const std::string& label) {
  using ES = Kokkos::DefaultExecutionSpace;
  using TPartial = typename MmaAtom<TIn>::acc;
  using F = Sm80MmaF64Tf32I8Matmul<ES, Tile, TIn, TPartial, true>;
  // The caller holds the packing workspace: the partial sums come from the split-K buffer.
  PartialSums<TPartial> partials(p, splits, PartialSumBuffer::kSplitKBuffer, stream_handle(space), label);
  const F f = partials.template first_pass<F, Tile>(p, cfg, splits, k_per_split);
  const int league = f.tiles_m * f.tiles_n * splits;
  typename F::policy_type policy(space, league, cfg.team_size, cfg.vector_length);
  policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(F::scratch_bytes()));
  Kokkos::parallel_for(label, policy, f);
  partials.sum_into(p, splits, label, space);
}

}  // namespace detail
}  // namespace tilekit
