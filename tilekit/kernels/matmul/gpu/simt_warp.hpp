// tilekit portable SIMT matmul with warp tiling (GPUs: CUDA and HIP; IEEE arithmetic on the FMA
// units, no tensor cores, no inline assembly). Include only from tilekit/kernels/matmul/dispatch.hpp.
//
// Loop nest, outermost first:
//   league : one team per BM x BN tile of C, in grouped order (GROUP_M tile-rows per group)
//   warps  : the team tile is split into WM x WN warp tiles, one per 32 consecutive threads
//   lanes  : a warp's 32 lanes form an 8 x 4 grid (LANES_M x LANES_N); each lane owns a TM x TN
//            micro-tile made of (TM/4) x (TN/4) 4x4 sub-tiles, spread over the warp tile with a
//            stride of 32 rows (8 lanes x 4) and 16 columns (4 lanes x 4)
//   kt     : K in steps of BK; A is staged K-major (As[k][m]) and B as Bs[k][n], double-buffered in
//            level-0 scratch, the next step's global loads held in registers during the compute
//   k      : rank-1 updates of the micro-tile from 16-byte scratch reads
//
// Why the lane grid: at one k, the 8 lanes along M read 8 consecutive 16-byte runs of As (128
// bytes, every bank once) and the 4 lanes along N share theirs (broadcast), so no scratch read of
// the micro-kernel conflicts (the kernel of tilekit/kernels/matmul/dispatch.hpp gives each thread one 8x8 block: its A
// reads were 32 bytes apart and conflicted). 4 scratch reads of 16 bytes feed 64 FMAs (8x8).
//
// Global loads: each thread loads the same number of A and B elements per step, in vectors of up to
// 16 bytes along the operand's contiguous dimension when the operand is unit-stride along it and
// aligned (checked once per launch); otherwise, and for vectors that cross the matrix edge, element
// by element along whichever dimension has the smaller stride (any layout, stride and broadcast).
//
// Split K (kSplitK, MatmulConfig::k_splits > 1; CUDA): where the tiles of C are too few to fill the
// SMs (1024^3: 256 tiles of 64x64 for 132 SMs of 2-4 teams), each tile gets k_splits teams, team s
// over K steps [s * k_per_split, (s + 1) * k_per_split). Every team writes its accumulators to a
// device workspace (coalesced: element e of thread t at e * kThreads + t), fences, and counts itself
// in the tile's counter; the team that counts last adds the tile's partial sums in split order
// 0, 1, ... (the same order whoever is last: bitwise the same result every run), resets the counter
// for the next launch, and runs the epilogue. No second kernel, no atomics on C.
#pragma once

#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/team.hpp"
#include "tilekit/kernels/core/execution_space.hpp"
#include "tilekit/kernels/core/workspace.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tilekit {
namespace detail {

template <class ExecSpace, class Tile, class TIn, class TOut, bool kSplitK = false>
struct SimtWarpMatmul {
  using compute = typename TypeTraits<TIn>::compute;
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Tile::threads, Tile::MIN_TEAMS>>;
  using member_type = typename policy_type::member_type;
  static_assert(is_gpu_space<ExecSpace>(), "the warp-tiled SIMT kernel runs on GPUs");

  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, TM = Tile::TM, TN = Tile::TN;
  static constexpr int LANES_M = Tile::LANES_M, LANES_N = Tile::LANES_N, SUB = Tile::SUB;
  static constexpr int WM = Tile::WM, WN = Tile::WN;
  static constexpr int kWarpsM = BM / WM;
  static constexpr int kThreads = Tile::threads;
  static constexpr int kScratchLevel = 0;
  // Scratch rows padded by 4 elements: the transposing stores of a K-contiguous operand (consecutive
  // threads on consecutive rows, two K groups) then hit different banks; rows stay 16-byte aligned.
  static constexpr int AS_LD = BM + 4;
  static constexpr int BS_LD = BN + 4;
  static constexpr int kStageElems = BK * AS_LD + BK * BS_LD;
  // Two stages; the staged epilogue reuses them and needs the whole tile (kStagedEpilogue, below).
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_elems() {
    const std::size_t stages = 2 * std::size_t(kStageElems), tile = std::size_t(BM) * BN;
    return (kStagedEpilogue || kStagedActivation) && tile > stages ? tile : stages;
  }
  // +16: the base is aligned up to 16 bytes for vector reads of scratch.
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() { return scratch_elems() * sizeof(compute) + 16; }

  /// One operand's share of a stage, per thread: kVecs vectors of V elements. V: up to 16 bytes of
  /// inputs, at most a thread's share, dividing both tile sides (so every vector stays in one row or
  /// one column of the tile).
  template <int R>
  struct Share {
    static constexpr int kPer = R * BK / kThreads;
    static constexpr int V0 = int(16 / sizeof(TIn)) < kPer ? int(16 / sizeof(TIn)) : kPer;
    static constexpr int V = (R % V0 == 0 && BK % V0 == 0) ? V0 : 1;
    static constexpr int kVecs = kPer / V;
    static_assert(kPer >= 1 && (R * BK) % kThreads == 0, "every thread stages the same number of elements");
  };
  using AShare = Share<BM>;
  using BShare = Share<BN>;

  /// An operand as an R x K matrix in the staging order: element (r, k) at data[r * sr + k * sk]
  /// (A: r = m; B: r = n, so B is read through its transpose).
  struct Operand {
    const TIn* data;
    int64_t sr, sk, rows;
    bool along_r;  ///< consecutive threads (and vector elements) along r, else along k
    bool vec;      ///< whole-vector loads allowed (unit stride along the loaded dimension, aligned)
  };
  /// How a stage of an operand is loaded, fixed at compile time for each copy of the main loop (the
  /// vector modes keep one pointer per vector live, not one 64-bit offset per element):
  /// general: element by element along the dimension of smaller stride (any stride, run-time
  /// direction); vec_r / vec_k: vectors along r / along k (unit stride there, aligned).
  enum class Mode { general, vec_r, vec_k };

  MatmulProblem<TIn, TOut> p;
  int group_m;
  int tiles_m, tiles_n;
  int vector_length;
  // Split K (kSplitK only): teams per tile, K values per team (a multiple of BK), the workspace of
  // k_splits x tiles partial tiles (BM x BN each) and one arrival counter per tile (zero between
  // launches).
  int k_splits = 1;
  int64_t k_per_split = 0;
  compute* partials = nullptr;
  int* counters = nullptr;

  template <int V>
  struct alignas(V * sizeof(TIn)) InVec {
    TIn v[V];
  };

  /// The launch's staging plan for one operand (the same for every team).
  template <int V>
  KOKKOS_INLINE_FUNCTION static Operand plan(const TIn* data, int64_t sr, int64_t sk, int64_t rows) {
    Operand o{data, sr, sk, rows, true, false};
    o.along_r = sr == 1 ? true : sk == 1 ? false : sr <= sk;
    const int64_t unit = o.along_r ? sr : sk, other = o.along_r ? sk : sr;
    o.vec = V > 1 && unit == 1 && other % V == 0 &&
            reinterpret_cast<uintptr_t>(data) % (V * sizeof(TIn)) == 0;
    return o;
  }

  /// Vector e of a stage: its first element (r, k) in the tile.
  template <int R, int V>
  KOKKOS_INLINE_FUNCTION static void vec_origin(int e, bool along_r, int& r, int& k) {
    if (along_r) {
      r = (e % (R / V)) * V;
      k = e / (R / V);
    } else {
      k = (e % (BK / V)) * V;
      r = e / (BK / V);
    }
  }

  /// One thread's global loads of one operand, K step after K step: the thread's vectors of the
  /// R x BK tile (kVecs of V elements) into registers. ptr is the tile's origin (general mode) or the
  /// thread's first vector (vector modes, where vector q lies q * qstride further: kThreads is a
  /// multiple of the vectors per tile row or column, so the thread's vectors share their r, or their
  /// k); it advances by step per K step. Vector modes read a vector crossing the matrix edge element
  /// by element (unit stride: element v is v past the vector's start).
  template <Mode MODE, int R, class S>
  struct Loader {
    static constexpr int V = S::V;
    static constexpr bool kVector = MODE != Mode::general;
    // Between consecutive vectors of a thread: rows (vec_k) or K values (vec_r).
    static constexpr int QR = MODE == Mode::vec_k ? kThreads * V / BK : 0;
    static constexpr int QK = MODE == Mode::vec_r ? kThreads * V / R : 0;
    static_assert(!kVector || (MODE == Mode::vec_r ? kThreads % (R / V) : kThreads % (BK / V)) == 0,
                  "a thread's vectors share their row or their K offset");
    const TIn* ptr;
    int64_t sr, sk, qstride, step, rows_left;
    int r, k;  // vector modes: the place of the thread's first vector in the tile
    bool along_r;

    KOKKOS_INLINE_FUNCTION Loader(const Operand& o, int64_t r0, int tid)
        : sr(o.sr), sk(o.sk), step(BK * o.sk), rows_left(o.rows - r0),
          along_r(MODE == Mode::general ? o.along_r : MODE == Mode::vec_r) {
      vec_origin<R, V>(tid, along_r, r, k);
      ptr = o.data + r0 * o.sr + (kVector ? r * o.sr + k * o.sk : 0);
      qstride = QR * o.sr + QK * o.sk;
    }
    KOKKOS_INLINE_FUNCTION void advance() { ptr += step; }

    /// The current K step (k_left values of K left from its start); full: no masks. Interior steps
    /// (full) take one branch to straight-line loads; a test per vector cost a branch region per
    /// vector (BSSY/BSYNC in the SASS) in every K step of every team (perf notes 19).
    KOKKOS_INLINE_FUNCTION void load(compute (&reg)[S::kVecs][V], int64_t k_left, bool full, int tid) const {
      if (full) load_step<true>(reg, k_left, tid);
      else load_step<false>(reg, k_left, tid);
    }

    template <bool kFull>
    KOKKOS_INLINE_FUNCTION void load_step(compute (&reg)[S::kVecs][V], int64_t k_left, int tid) const {
      TILEKIT_UNROLL
      for (int q = 0; q < S::kVecs; ++q) {
        if constexpr (!kVector) {
          int r0, k0;
          vec_origin<R, V>(tid + q * kThreads, along_r, r0, k0);
          TILEKIT_UNROLL
          for (int v = 0; v < V; ++v) {
            const int rr = along_r ? r0 + v : r0, kk = along_r ? k0 : k0 + v;
            reg[q][v] = (kFull || (rr < rows_left && kk < k_left)) ? convert<compute>(ptr[rr * sr + kk * sk])
                                                                    : compute(0);
          }
        } else {
          const int rq = r + q * QR, kq = k + q * QK;
          const TIn* src = ptr + q * qstride;
          const bool whole = kFull || (MODE == Mode::vec_r ? (rq + V <= rows_left && kq < k_left)
                                                           : (rq < rows_left && kq + V <= k_left));
          if (whole) {
            const InVec<V> x = *reinterpret_cast<const InVec<V>*>(src);
            TILEKIT_UNROLL
            for (int v = 0; v < V; ++v) reg[q][v] = convert<compute>(x.v[v]);
          } else {
            TILEKIT_UNROLL
            for (int v = 0; v < V; ++v) {
              const bool in = MODE == Mode::vec_r ? (rq + v < rows_left && kq < k_left)
                                                  : (rq < rows_left && kq + v < k_left);
              reg[q][v] = in ? convert<compute>(src[v]) : compute(0);
            }
          }
        }
      }
    }
  };

  /// Registers -> scratch S[k][r] (pitch LD): a vector along r is one aligned run, one along k a
  /// column of V values.
  template <int R, int LD, class S>
  KOKKOS_INLINE_FUNCTION static void store(compute* dst, const compute (&reg)[S::kVecs][S::V], bool along_r,
                                           int tid) {
    constexpr int V = S::V;
    constexpr int per16 = 16 / int(sizeof(compute));
    TILEKIT_UNROLL
    for (int q = 0; q < S::kVecs; ++q) {
      int r, k;
      vec_origin<R, V>(tid + q * kThreads, along_r, r, k);
      if constexpr (16 % sizeof(compute) == 0 && V % per16 == 0) {
        if (along_r) {  // whole 16-byte runs (r is a multiple of V, LD of 4, the base 16-byte aligned)
          struct alignas(16) Vec {
            compute v[per16];
          };
          TILEKIT_UNROLL
          for (int c = 0; c < V / per16; ++c) {
            Vec x;
            TILEKIT_UNROLL
            for (int t = 0; t < per16; ++t) x.v[t] = reg[q][c * per16 + t];
            reinterpret_cast<Vec*>(dst + k * LD + r)[c] = x;
          }
          continue;
        }
      }
      TILEKIT_UNROLL
      for (int v = 0; v < V; ++v) dst[along_r ? k * LD + r + v : (k + v) * LD + r] = reg[q][v];
    }
  }

  // 16-byte accesses of C in the unrolled epilogue: tiles of at most 64 accumulators (the shallow-K
  // tiles, whose cost is the store of C); the 128-accumulator tiles take the staged epilogue below.
  static constexpr bool kVectorEpilogue = TM * TN <= 64;

  // A lane's N values of one scratch row: runs of SUB (one 16-byte read for f32), SPREAD apart.
  template <int SPREAD, int N>
  KOKKOS_INLINE_FUNCTION static void read_lane_values(const compute* row, compute (&dst)[N]) {
    TILEKIT_UNROLL
    for (int s = 0; s < N / SUB; ++s) {
      compute run[SUB];
      read_scratch_run(row + s * SPREAD, run);
      TILEKIT_UNROLL
      for (int i = 0; i < SUB; ++i) dst[s * SUB + i] = run[i];
    }
  }

  /// A lane's operands of one k: TM values of A, TN of B.
  struct Fragment {
    compute a[TM], b[TN];
  };
  KOKKOS_INLINE_FUNCTION static void read_fragment(const compute* As, const compute* Bs, int k, Fragment& f) {
    read_lane_values<LANES_M * SUB>(As + k * AS_LD, f.a);
    read_lane_values<LANES_N * SUB>(Bs + k * BS_LD, f.b);
  }
  KOKKOS_INLINE_FUNCTION static void rank1_update(const Fragment& f, compute (&acc)[TM][TN]) {
    TILEKIT_UNROLL
    for (int i = 0; i < TM; ++i) {
      TILEKIT_UNROLL
      for (int j = 0; j < TN; ++j) acc[i][j] += f.a[i] * f.b[j];
    }
  }

  // acc += As(:, the thread's rows) x Bs(:, its columns) over the staged BK depth, k in pairs with
  // the fragments double-buffered: the reads of k + 1 are issued before the FMAs of k, and those of
  // k + 2 before the FMAs of k + 1, so the loop's back edge carries the next pair's first fragment
  // (without that, every pair began with its reads and the first FMA waited for them: ncu put 13%
  // of the kernel's stall samples on that FMA, perf notes 19). The last pair reads k = 0 again (in
  // bounds, unused) instead of a branch. The pair loop is not unrolled further: fully unrolled, the
  // scheduler hoists the reads of every k and the 128-accumulator tiles exceed their registers.
  // The reads go through two pointers stepped once per pair (k + 1 is an immediate offset from
  // them): with reads indexed by k, ptxas recomputed the stage's base and each row's offset in the
  // loop (12 instructions per pair besides the FMAs and reads, 7 now; 3-7% faster, perf notes 21).
  static_assert(BK % 2 == 0, "the micro-kernel walks k in pairs");
  KOKKOS_INLINE_FUNCTION static void micro_kernel(const compute* As, const compute* Bs, compute (&acc)[TM][TN]) {
    Fragment f0, f1;
    read_fragment(As, Bs, 0, f0);
    const compute* a = As;
    const compute* b = Bs;
    TILEKIT_UNROLL_BY(1)
    for (int k = 0; k < BK; k += 2) {
      read_fragment(a, b, 1, f1);
      rank1_update(f0, acc);
      const int step = k + 2 < BK ? 2 : 2 - BK;
      a += step * AS_LD;
      b += step * BS_LD;
      read_fragment(a, b, 0, f0);
      rank1_update(f1, acc);
    }
  }

  /// The K loop of one team with A and B staged in modes MA and MB: double-buffered stages, the next
  /// step's global loads in registers during the compute of the current one.
  template <Mode MA, Mode MB>
  KOKKOS_INLINE_FUNCTION void k_loop(const member_type& team, compute* As, const Operand& a, const Operand& b,
                                     int64_t m0, int64_t n0, int64_t K, int row0, int col0, int tid,
                                     compute (&acc)[TM][TN]) const {
    const bool full_mn = m0 + BM <= p.M && n0 + BN <= p.N;
    compute ra[AShare::kVecs][AShare::V], rb[BShare::kVecs][BShare::V];
    Loader<MA, BM, AShare> la(a, m0, tid);
    Loader<MB, BN, BShare> lb(b, n0, tid);
    // Prologue: step 0 into buffer 0.
    la.load(ra, K, full_mn && BK <= K, tid);
    lb.load(rb, K, full_mn && BK <= K, tid);
    store<BM, AS_LD, AShare>(As, ra, la.along_r, tid);
    store<BN, BS_LD, BShare>(As + BK * AS_LD, rb, lb.along_r, tid);
    team.team_barrier();
    int cur = 0;
    // K == 0 still runs one step, for the epilogue. The loop's control differs between the two
    // copies, each as ptxas allocates it best (-Xptxas -v, sm_90a): the split-K copy counts the K
    // values left (one 64-bit induction variable; a step count beside its run-time K spilled
    // 108-136 bytes in the K loop), the other counts steps against p.K, a kernel parameter
    // (counting K down cost the 128-accumulator tiles 4-6 registers and the 64x64 tile a spill).
    if constexpr (kSplitK) {
      // One K step: load the next step's operands (next_left K values from its start), compute the
      // current stage, store the next one.
      auto step = [&](bool has_next, int64_t next_left) {
        if (has_next) {
          const bool full = full_mn && next_left >= BK;
          la.advance();
          lb.advance();
          la.load(ra, next_left, full, tid);
          lb.load(rb, next_left, full, tid);
        }
        const compute* stage = As + cur * kStageElems;
        micro_kernel(stage + row0, stage + BK * AS_LD + col0, acc);
        if (has_next) {
          compute* next = As + (cur ^ 1) * kStageElems;
          store<BM, AS_LD, AShare>(next, ra, la.along_r, tid);
          store<BN, BS_LD, BShare>(next + BK * AS_LD, rb, lb.along_r, tid);
        }
        // One barrier per K step: the next stage is complete, and nobody still reads the buffer that
        // the following step overwrites.
        team.team_barrier();
        cur ^= 1;
      };
      for (int64_t k_left = K;; k_left -= BK) {
        const bool has_next = k_left > BK;
        step(has_next, k_left - BK);
        if (!has_next) break;
      }
    } else {  // the same step written out: through the lambda, ptxas gave 128x64 and 128x256 more registers
      const int64_t ktiles = K > 0 ? (K + BK - 1) / BK : 1;
      for (int64_t kt = 0; kt < ktiles; ++kt) {
        const bool has_next = kt + 1 < ktiles;
        if (has_next) {
          const int64_t k_left = K - (kt + 1) * BK;
          const bool full = full_mn && k_left >= BK;
          la.advance();
          lb.advance();
          la.load(ra, k_left, full, tid);
          lb.load(rb, k_left, full, tid);
        }
        const compute* stage = As + cur * kStageElems;
        micro_kernel(stage + row0, stage + BK * AS_LD + col0, acc);
        if (has_next) {
          compute* next = As + (cur ^ 1) * kStageElems;
          store<BM, AS_LD, AShare>(next, ra, la.along_r, tid);
          store<BN, BS_LD, BShare>(next + BK * AS_LD, rb, lb.along_r, tid);
        }
        team.team_barrier();
        cur ^= 1;
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    // The team's tile and, with split K, its part of K: league rank = tile * k_splits + split, so
    // that the teams of one tile start together.
    const int tile = kSplitK ? team.league_rank() / k_splits : team.league_rank();
    const int split = kSplitK ? team.league_rank() % k_splits : 0;
    const int64_t k0 = kSplitK ? split * k_per_split : 0;
    const int64_t K = kSplitK ? (p.K - k0 < k_per_split ? p.K - k0 : k_per_split) : p.K;
    int64_t m0, n0;
    team_tile_origin<BM, BN>(tile, group_m, tiles_m, tiles_n, m0, n0);
    compute* As = team_scratch_aligned<compute>(team, scratch_bytes(), kScratchLevel);
    const int tid = team.team_rank() * vector_length + vector_lane();

    // The thread's place: warp tile (warp_m, warp_n), lane (lane_m, lane_n) in the 8 x 4 grid.
    const int warp = tid / 32, lane = tid % 32;
    const int row0 = (warp % kWarpsM) * WM + (lane % LANES_M) * SUB;  // first row of its first sub-tile
    const int col0 = (warp / kWarpsM) * WN + (lane / LANES_M) * SUB;

    compute acc[TM][TN];
    TILEKIT_UNROLL
    for (int i = 0; i < TM; ++i) {
      TILEKIT_UNROLL
      for (int j = 0; j < TN; ++j) acc[i][j] = compute(0);
    }
    // One copy of the K loop per pair of vector modes (uniform over the launch), one for the rest.
    // (With split K the operands start at the team's first K value; a vector mode also needs that
    // start aligned, which k_per_split, a multiple of BK, keeps wherever the whole matrix is.)
    const Operand a = plan<AShare::V>(p.a.data + k0 * p.a.cs, p.a.rs, p.a.cs, p.M);
    const Operand b = plan<BShare::V>(p.b.data + k0 * p.b.rs, p.b.cs, p.b.rs, p.N);
    if (a.vec && b.vec) {
      if (a.along_r && b.along_r) k_loop<Mode::vec_r, Mode::vec_r>(team, As, a, b, m0, n0, K, row0, col0, tid, acc);
      else if (a.along_r) k_loop<Mode::vec_r, Mode::vec_k>(team, As, a, b, m0, n0, K, row0, col0, tid, acc);
      else if (b.along_r) k_loop<Mode::vec_k, Mode::vec_r>(team, As, a, b, m0, n0, K, row0, col0, tid, acc);
      else k_loop<Mode::vec_k, Mode::vec_k>(team, As, a, b, m0, n0, K, row0, col0, tid, acc);
    } else {
      k_loop<Mode::general, Mode::general>(team, As, a, b, m0, n0, K, row0, col0, tid, acc);
    }
    if constexpr (kSplitK) {
      if (!sum_splits(team, tile, split, tid, acc)) return;  // another team of the tile finishes it
    }

    // The epilogue; without an activation, a copy free of its per-element switch (unrolled, only for
    // tiles of at most 64 accumulators: with 128, a second unrolled copy slowed the K loop of 256x128
    // from 37 to 24 TFLOP/s, docs/perf-notes.md section 11; staged, one rolled copy each).
    if constexpr (kStagedEpilogue) {
      if (p.act == Activation::none) staged_epilogue<false>(As, tid, m0, n0, row0, col0, acc);
      else staged_epilogue<true>(As, tid, m0, n0, row0, col0, acc);
    } else if constexpr (kStagedActivation) {
      if (p.act == Activation::none) epilogue<false>(m0, n0, row0, col0, acc);
      else staged_epilogue<true>(As, tid, m0, n0, row0, col0, acc);
    } else {
      if (kVectorEpilogue && p.act == Activation::none) epilogue<false>(m0, n0, row0, col0, acc);
      else epilogue<true>(m0, n0, row0, col0, acc);
    }
  }

  /// Split K: stores this team's partial tile, counts the team in, and if it is the tile's last,
  /// replaces acc by the sum of all partial tiles in split order and returns true. Accumulator e of
  /// thread t is element e * kThreads + t of a partial tile (a warp's accesses are contiguous).
  /// ptxas allocates this form of the sum without spills in the K loop (sm_90a, -Xptxas -v): a
  /// select per value in one loop over the splits spilled 108 bytes there, 16-byte __ldcg reads 88,
  /// a sum per band of 4 rows with the accumulators dead 2.9 KB.
  KOKKOS_INLINE_FUNCTION bool sum_splits(const member_type& team, int tile, int split, int tid,
                                         compute (&acc)[TM][TN]) const {
    constexpr int64_t kTileElems = int64_t(BM) * BN;
    compute* mine = partials + (int64_t(split) * (tiles_m * tiles_n) + tile) * kTileElems;
    TILEKIT_UNROLL
    for (int i = 0; i < TM; ++i) {
      TILEKIT_UNROLL
      for (int j = 0; j < TN; ++j) mine[(i * TN + j) * kThreads + tid] = acc[i][j];
    }
    // The team's stores come before the barrier; one thread's device-wide fence after it makes them
    // visible before the count (the release pattern of CUTLASS's split-K semaphore; a fence in every
    // thread, as first written, showed as membar stalls in Nsight Compute but timed the same), and
    // its fence after the count orders the reads of the others' partial tiles after it.
    team.team_barrier();
    int arrived = 0;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](int& n) {
          Kokkos::memory_fence();
          n = Kokkos::atomic_fetch_add(&counters[tile], 1);
          Kokkos::memory_fence();
        },
        arrived);
    if (arrived != k_splits - 1) return false;
    // Every partial tile in split order, this team's own included (read back, not taken from the
    // registers: the order and so the rounding stay the same whichever team is last): split 0 into
    // acc, the others added. Volatile reads: other SMs' stores must come from L2, not a stale L1 line.
    const volatile compute* part = partials + int64_t(tile) * kTileElems + tid;
    const int64_t split_stride = int64_t(tiles_m) * tiles_n * kTileElems;
    TILEKIT_UNROLL
    for (int i = 0; i < TM; ++i) {
      TILEKIT_UNROLL
      for (int j = 0; j < TN; ++j) acc[i][j] = part[(i * TN + j) * kThreads];
    }
    for (int s = 1; s < k_splits; ++s) {
      part += split_stride;
      TILEKIT_UNROLL
      for (int i = 0; i < TM; ++i) {
        TILEKIT_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] += part[(i * TN + j) * kThreads];
      }
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { counters[tile] = 0; });  // every team has counted in
    return true;
  }

  // The 128-accumulator tiles' sub-tiles pass through scratch so that one copy of the store code
  // serves them all in a rolled loop. Unrolled over the sub-tiles (epilogue() below), their epilogue
  // was 12.7k instructions (~200 KB of SASS: every sub-tile's element stores with masks and the
  // run-time switch over every activation) run once per team from a cold instruction cache: a fixed
  // cost per team of ~95 us at 256x128 (fitted from the 2048^3-8192^3 timings); staged, 256x128 ran
  // 13% faster at 2048^3, 5% at 4096^3 (perf notes 22). The tiles of at most 64 accumulators keep the
  // unrolled vector epilogue: staged, 128x128 8x8 ran 1.5% slower and the 64x64 tile 5% slower at
  // 8192x8192x16, where the store of C is the work.
  // Each thread copies all its accumulators to its own slots in scratch (row i of sub-tile s at
  // ((s * SUB + i) * kThreads + tid) * SUB: 16-byte accesses without bank conflicts), so they die
  // there and then (kept live through a rolled loop, the K loop of 256x128 spilled), and reads them
  // back one sub-tile per iteration: no barrier (a thread reads only its own slots; the K loop's
  // last barrier freed the stage buffers they overlap). The whole tile must fit the scratch one team
  // may have: up to 160 KB on CUDA (sm_80 allows 163 KB a block, sm_90 227 KB), 64 KB of LDS on HIP;
  // a larger tile keeps the unrolled epilogue.
  static constexpr int kSubTiles = (TM / SUB) * (TN / SUB);
#if defined(KOKKOS_ENABLE_HIP)
  static constexpr std::size_t kMaxStagedTileBytes = 64 * 1024;
#else
  static constexpr std::size_t kMaxStagedTileBytes = 160 * 1024;
#endif
  static constexpr bool kStagedEpilogue =
      TM * TN > 64 && std::size_t(BM) * BN * sizeof(compute) <= kMaxStagedTileBytes;
  // With an activation, the tiles of at most 64 accumulators that run several teams per SM stage too
  // (their unrolled epilogue with the activation is ~3k instructions a sub-tile): on the H100,
  // bias+gelu 128x64 split in 2 at 1024^3 +12%, 64x64 at 8192x8192x16 +20%, without an activation
  // the same (perf notes 22). Not 128x128 8x8 (one team per SM): staged there, its activation-free
  // K loop ran 2% slower (193 -> 245 registers).
  static constexpr bool kStagedActivation = kVectorEpilogue && Tile::MIN_TEAMS >= 2 &&
                                            std::size_t(BM) * BN * sizeof(compute) <= kMaxStagedTileBytes;

  template <bool kActivate>
  KOKKOS_INLINE_FUNCTION void staged_epilogue(compute* slots, int tid, int64_t m0, int64_t n0, int row0, int col0,
                                              const compute (&acc)[TM][TN]) const {
    constexpr int per16 = 16 / int(sizeof(compute));
    struct alignas(16) Vec {
      compute v[per16];
    };
    static_assert(SUB % per16 == 0, "a sub-tile row is whole 16-byte vectors");
    TILEKIT_UNROLL
    for (int s = 0; s < kSubTiles; ++s) {
      const int sm = s / (TN / SUB), sn = s % (TN / SUB);
      TILEKIT_UNROLL
      for (int i = 0; i < SUB; ++i) {
        Vec* dst = reinterpret_cast<Vec*>(slots + (std::size_t(s * SUB + i) * kThreads + tid) * SUB);
        TILEKIT_UNROLL
        for (int c = 0; c < SUB / per16; ++c) {
          Vec x;
          TILEKIT_UNROLL
          for (int t = 0; t < per16; ++t) x.v[t] = acc[sm * SUB + i][sn * SUB + c * per16 + t];
          dst[c] = x;
        }
      }
    }
    const int c_vec = c_vector_direction<SUB>(p.c);
    TILEKIT_UNROLL_BY(1)
    for (int s = 0; s < kSubTiles; ++s) {
      const int sm = s / (TN / SUB), sn = s % (TN / SUB);
      compute sub[SUB][SUB];
      TILEKIT_UNROLL
      for (int i = 0; i < SUB; ++i) read_scratch_run(slots + (std::size_t(s * SUB + i) * kThreads + tid) * SUB, sub[i]);
      const int64_t mi = m0 + row0 + sm * (LANES_M * SUB), nj = n0 + col0 + sn * (LANES_N * SUB);
      if (c_vec != 0 && mi + SUB <= p.M && nj + SUB <= p.N)
        store_sub_tile_vector<kActivate, SUB>(p, mi, nj, sub, c_vec);
      else
        store_micro_tile_masked(p, mi, nj, sub);
    }
  }

  // Epilogue, one 4x4 sub-tile at a time from the registers (tilekit/kernels/matmul/team.hpp): 16-byte accesses of
  // C inside it where C is contiguous along one side (a sub-tile's 4 rows or 4 columns are one
  // aligned vector), element by element with masks on its edges and for other strides.
  template <bool kActivate>
  KOKKOS_INLINE_FUNCTION void epilogue(int64_t m0, int64_t n0, int row0, int col0, const compute (&acc)[TM][TN]) const {
    const int c_vec = c_vector_direction<SUB>(p.c);
    TILEKIT_UNROLL
    for (int sm = 0; sm < TM / SUB; ++sm) {
      TILEKIT_UNROLL
      for (int sn = 0; sn < TN / SUB; ++sn) {
        compute sub[SUB][SUB];
        TILEKIT_UNROLL
        for (int i = 0; i < SUB; ++i) {
          TILEKIT_UNROLL
          for (int j = 0; j < SUB; ++j) sub[i][j] = acc[sm * SUB + i][sn * SUB + j];
        }
        const int64_t mi = m0 + row0 + sm * (LANES_M * SUB), nj = n0 + col0 + sn * (LANES_N * SUB);
        if (kVectorEpilogue && c_vec != 0 && mi + SUB <= p.M && nj + SUB <= p.N)
          store_sub_tile_vector<kActivate, SUB>(p, mi, nj, sub, c_vec);
        else
          store_micro_tile_masked(p, mi, nj, sub);
      }
    }
  }
};

/// Split K as launched: teams per tile (no team without K) and K values per team (whole K steps).
struct SplitKPlan {
  int splits = 1;
  int64_t k_per_split = 0;
};
inline SplitKPlan split_k_plan(int64_t K, int bk, int k_splits) {
  SplitKPlan plan;
  const int64_t steps = (K + bk - 1) / bk;
  if (k_splits < 2 || steps < 2) return plan;
  plan.k_per_split = (steps + k_splits - 1) / k_splits * bk;
  plan.splits = static_cast<int>((K + plan.k_per_split - 1) / plan.k_per_split);
  return plan;
}

/// Bytes of the split-K workspace's partial sums: splits x tiles partial tiles of BM x BN
/// accumulators (and one counter per tile before them).
template <class Tile, class Compute>
std::size_t split_k_partial_bytes(int64_t tiles, int splits) {
  return std::size_t(splits) * std::size_t(tiles) * Tile::BM * Tile::BN * sizeof(Compute);
}

/// Launches the split-K copy of the SIMT warp kernel (plan.splits >= 2 teams per tile) with its
/// workspace held from before the launch until an event behind it is recorded.
template <class Tile, class TIn, class TOut>
void launch_simt_split_k(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg, const SplitKPlan& plan,
                         const Kokkos::DefaultExecutionSpace& space, const std::string& label) {
  using ES = Kokkos::DefaultExecutionSpace;
  using F = SimtWarpMatmul<ES, Tile, TIn, TOut, true>;
  F f;
  f.p = p;
  f.group_m = cfg.group_m;
  f.tiles_m = static_cast<int>((p.M + Tile::BM - 1) / Tile::BM);
  f.tiles_n = static_cast<int>((p.N + Tile::BN - 1) / Tile::BN);
  f.vector_length = cfg.vector_length;
  f.k_splits = plan.splits;
  f.k_per_split = plan.k_per_split;
  const int64_t tiles = int64_t(f.tiles_m) * f.tiles_n;
  typename F::policy_type policy(space, static_cast<int>(tiles * plan.splits), cfg.team_size, cfg.vector_length);
  policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(F::scratch_bytes()));
  void* stream = stream_handle(space);
  void* partials = nullptr;
  const std::string why = acquire_split_k_workspace(
      std::size_t(tiles) * sizeof(int), split_k_partial_bytes<Tile, typename F::compute>(tiles, plan.splits), stream,
      f.counters, partials);
  if (!why.empty()) throw std::runtime_error("tilekit: " + label + ": " + why);
  f.partials = static_cast<typename F::compute*>(partials);
  Kokkos::parallel_for(label, policy, f);
  release_split_k_workspace(stream);
}

}  // namespace detail
}  // namespace tilekit
