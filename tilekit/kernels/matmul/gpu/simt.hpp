// tilekit portable SIMT matmul (GPUs: CUDA and HIP; IEEE arithmetic on the FMA units, no tensor
// cores): the kernel of the menu's TileShape entries. Include only from
// tilekit/kernels/matmul/dispatch.hpp.
//
// Loop nest, outermost first:
//   league  : one team per BM x BN tile of C, in grouped order (GROUP_M tile-rows per group)
//   kt      : K in steps of BK; the team stages A (BM x BK) and B (BK x BN) into level-0 scratch
//   micro   : each thread's TM x TN micro-tile(s) of the team tile
//   k       : the BK depth of the staged tiles, rank-1 updates into TM x TN register accumulators
//
// Each thread owns one micro-tile and keeps its accumulators in registers across the whole K loop
// (threads per team == micro-tiles); stages are double-buffered in level-0 scratch (shared memory).
#pragma once

#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/team.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace tilekit {
namespace detail {

template <class ExecSpace, class Tile>
using MatmulPolicy =
    std::conditional_t<is_gpu_space<ExecSpace>(),
                       Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Tile::micro_tiles, 1>>,
                       Kokkos::TeamPolicy<ExecSpace>>;

template <class ExecSpace, class Tile, class TIn, class TOut>
struct BlockedMatmul {
  using compute = typename TypeTraits<TIn>::compute;
  using policy_type = MatmulPolicy<ExecSpace, Tile>;
  using member_type = typename policy_type::member_type;

  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, TM = Tile::TM, TN = Tile::TN;
  static constexpr int kMicroTiles = Tile::micro_tiles;
  static constexpr int kMicroCols = BN / TN;  // micro-tiles along N
  // Scratch rows are padded by 4 elements: a transposing store (consecutive threads, consecutive k)
  // then hits different shared-memory banks, and rows stay 16-byte aligned for vector reads.
  static constexpr int AS_LD = BM + 4;
  static constexpr int BS_LD = BN + 4;
  static_assert(is_gpu_space<ExecSpace>(), "host backends run the packed kernel (tilekit/kernels/matmul/host/packed.hpp)");
  static constexpr int kScratchLevel = 0;

  MatmulProblem<TIn, TOut> p;
  int group_m;
  int tiles_m, tiles_n;
  int vector_length;

  // One stage: an A tile and a B tile.
  static constexpr int kStageElems = BK * AS_LD + BK * BS_LD;
  // Two stages, double-buffered: compute on one while the next is stored into the other.
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_elems() { return 2 * std::size_t(kStageElems); }
  // +16: the base is aligned up to 16 bytes for vector reads of scratch.
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() { return scratch_elems() * sizeof(compute) + 16; }

  // GPU: each thread's share of one A tile and one B tile, held in registers between the global
  // load and the store into scratch, so the next stage's loads are in flight during the compute.
  static constexpr int kAPer = (BM * BK) / kMicroTiles > 0 ? (BM * BK) / kMicroTiles : 1;
  static constexpr int kBPer = (BK * BN) / kMicroTiles > 0 ? (BK * BN) / kMicroTiles : 1;
  static_assert((BM * BK) % kMicroTiles == 0 && (BK * BN) % kMicroTiles == 0,
                "GPU tiles: every thread stages the same number of A and B elements");

  // Which element of the A tile the q-th load of thread `tid` takes. Consecutive threads take
  // consecutive elements along whichever dimension is contiguous in memory (coalesced loads).
  KOKKOS_INLINE_FUNCTION static void a_index(int e, bool k_contig, int& i, int& k) {
    i = k_contig ? e / BK : e % BM;
    k = k_contig ? e % BK : e / BM;
  }
  KOKKOS_INLINE_FUNCTION static void b_index(int e, bool k_contig, int& k, int& j) {
    k = k_contig ? e % BK : e / BN;
    j = k_contig ? e / BK : e % BN;
  }
  KOKKOS_INLINE_FUNCTION void load_a_regs(compute (&r)[kAPer], int64_t m0, int64_t k0, bool full, bool k_contig,
                                          int tid) const {
    TILEKIT_UNROLL
    for (int q = 0; q < kAPer; ++q) {
      int i, k;
      a_index(tid + q * kMicroTiles, k_contig, i, k);
      const int64_t gi = m0 + i, gk = k0 + k;
      r[q] = (full || (gi < p.M && gk < p.K)) ? convert<compute>(p.a(gi, gk)) : compute(0);
    }
  }
  KOKKOS_INLINE_FUNCTION static void store_a_regs(compute* As, const compute (&r)[kAPer], bool k_contig, int tid) {
    TILEKIT_UNROLL
    for (int q = 0; q < kAPer; ++q) {
      int i, k;
      a_index(tid + q * kMicroTiles, k_contig, i, k);
      As[k * AS_LD + i] = r[q];
    }
  }
  KOKKOS_INLINE_FUNCTION void load_b_regs(compute (&r)[kBPer], int64_t k0, int64_t n0, bool full, bool k_contig,
                                          int tid) const {
    TILEKIT_UNROLL
    for (int q = 0; q < kBPer; ++q) {
      int k, j;
      b_index(tid + q * kMicroTiles, k_contig, k, j);
      const int64_t gk = k0 + k, gj = n0 + j;
      r[q] = (full || (gk < p.K && gj < p.N)) ? convert<compute>(p.b(gk, gj)) : compute(0);
    }
  }
  KOKKOS_INLINE_FUNCTION static void store_b_regs(compute* Bs, const compute (&r)[kBPer], bool k_contig, int tid) {
    TILEKIT_UNROLL
    for (int q = 0; q < kBPer; ++q) {
      int k, j;
      b_index(tid + q * kMicroTiles, k_contig, k, j);
      Bs[k * BS_LD + j] = r[q];
    }
  }

  // acc += As(:, rows of micro-tile) x Bs(:, cols of micro-tile) over the staged BK depth.
  KOKKOS_INLINE_FUNCTION static void micro_kernel(const compute* As, const compute* Bs, int ty, int tx,
                                                  compute (&acc)[TM][TN]) {
    const compute* a_col = As + ty * TM;
    const compute* b_row = Bs + tx * TN;
    TILEKIT_UNROLL
    for (int k = 0; k < BK; ++k) {  // rank-1 updates along the staged K depth
      compute av[TM], bv[TN];
      read_scratch_run(a_col + k * AS_LD, av);
      read_scratch_run(b_row + k * BS_LD, bv);
      TILEKIT_UNROLL
      for (int i = 0; i < TM; ++i) {
        TILEKIT_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];
      }
    }
  }

  // Epilogue of one micro-tile from its registers (tilekit/kernels/matmul/team.hpp), edges masked.
  KOKKOS_INLINE_FUNCTION void store_c(int64_t m0, int64_t n0, int ty, int tx,
                                      const compute (&acc)[TM][TN]) const {
    store_micro_tile_masked(p, m0 + ty * TM, n0 + tx * TN, acc);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    int64_t m0, n0;
    team_tile_origin<BM, BN>(team.league_rank(), group_m, tiles_m, tiles_n, m0, n0);
    compute* As = team_scratch_aligned<compute>(team, scratch_bytes(), kScratchLevel);
    compute* Bs = As + BK * AS_LD;
    const int tid = team.team_rank() * vector_length + vector_lane();

    const bool full_mn = m0 + BM <= p.M && n0 + BN <= p.N;
    const int64_t ktiles = p.K > 0 ? (p.K + BK - 1) / BK : 1;  // K == 0 still runs the epilogue

    {
      // Consecutive threads take consecutive micro-tiles along C's contiguous dimension, so that
      // the epilogue's stores coalesce (with a thin K they are most of the work); the scratch reads
      // of the micro-kernel are as conflict-free either way (one operand broadcast, the other in
      // consecutive 16-byte runs).
      constexpr int kMicroRows = BM / TM;
      const bool c_col = p.c.rs == 1 && p.c.cs != 1;
      const int ty = c_col ? tid % kMicroRows : tid / kMicroCols;
      const int tx = c_col ? tid / kMicroRows : tid % kMicroCols;
      compute acc[TM][TN];
      TILEKIT_UNROLL
      for (int i = 0; i < TM; ++i) {
        TILEKIT_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] = compute(0);
      }
      const bool a_kc = p.a.cs == 1;                  // op(A) contiguous along K
      const bool b_kc = p.b.rs == 1 && p.b.cs != 1;   // op(B) contiguous along K
      compute ra[kAPer], rb[kBPer];
      // Prologue: stage 0 into buffer 0.
      load_a_regs(ra, m0, 0, full_mn && BK <= p.K, a_kc, tid);
      load_b_regs(rb, 0, n0, full_mn && BK <= p.K, b_kc, tid);
      store_a_regs(As, ra, a_kc, tid);
      store_b_regs(Bs, rb, b_kc, tid);
      team.team_barrier();
      int cur = 0;
      for (int64_t kt = 0; kt < ktiles; ++kt) {  // K steps: load next, compute current, store next
        const bool has_next = kt + 1 < ktiles;
        if (has_next) {  // global loads of stage kt+1 in flight during the compute of stage kt
          const int64_t k0 = (kt + 1) * BK;
          const bool full = full_mn && k0 + BK <= p.K;  // unmasked loads when the tile is interior
          load_a_regs(ra, m0, k0, full, a_kc, tid);
          load_b_regs(rb, k0, n0, full, b_kc, tid);
        }
        const compute* stage = As + cur * kStageElems;
        micro_kernel(stage, stage + BK * AS_LD, ty, tx, acc);
        if (has_next) {
          compute* next = As + (cur ^ 1) * kStageElems;
          store_a_regs(next, ra, a_kc, tid);
          store_b_regs(next + BK * AS_LD, rb, b_kc, tid);
        }
        // One barrier per K step: the next stage is complete, and nobody still reads the buffer
        // that the following step overwrites.
        team.team_barrier();
        cur ^= 1;
      }
      store_c(m0, n0, ty, tx, acc);
    }
  }
};

}  // namespace detail
}  // namespace tilekit
