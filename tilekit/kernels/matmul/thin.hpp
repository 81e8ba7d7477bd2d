// tilekit thin matmul: C = alpha op(A) op(B) + beta C (+ bias, activation) when M or N is at most
// kThinMaxRows: matrix-vector products (M = 1 or N = 1), batch-1..16 inference layers, any
// product whose output is a few rows or columns. A blocked tile would compute (and on CPUs stage)
// BM rows for each one that exists; here the cost follows M N K and the big operand is read once.
// Include only from the instantiation units, through tilekit/kernels/matmul/dispatch.hpp.
//
// The product is read as Y (R x L) = X (R x K) W (K x L), R the thin side:
//   M <= N: Y = C,   X = op(A),   W = op(B)
//   M >  N: Y = C^T, X = op(B)^T, W = op(A)^T     (transposes are stride swaps, no copies)
// W is the big operand, streamed once; X is small and reused by every column of Y.
//
// Loop nest, outermost first:
//   league : one team per block of cols x CPT columns of Y (CPT columns per GPU thread, 1 on hosts)
//   kc     : K in chunks; the team stages X(:, chunk) in scratch
//   GPU    : thread (l, g) accumulates CPT columns (l + c cols) over the chunk's k = g, g + G, ...
//            (G = kgroups) in RR x CPT registers; its lanes run along K when W is contiguous along K
//            (each warp reads whole K runs of one column), else along L (consecutive columns), so W
//            loads coalesce; the loads of kThinGpuStepsAhead steps are issued together (DRAM latency)
//   host   : the team's one thread walks its column block: rows of W as contiguous runs when W is
//            contiguous along L (axpy form, the inner loop vectorises over columns), dot products
//            of K-contiguous columns otherwise (partial sums across SIMD lanes)
//   end    : GPU: the G partial sums of each output are added in a fixed order (deterministic: the
//            same config gives bitwise the same C); then alpha/beta, bias, activation, downcast.
//
// Why the backends differ: a GPU team has hundreds of threads and must split both L and K among
// them to keep enough loads in flight; a host team is one thread, which vectorises along whichever
// dimension of W is contiguous.
#pragma once

#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/team.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"

#include "tilekit/kernels/core/device.hpp"

#include <Kokkos_Core.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

// Unrolling pragmas for the device passes only (host compilers warn about unknown pragmas).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TILEKIT_THIN_UNROLL _Pragma("unroll")
#define TILEKIT_THIN_UNROLL4 _Pragma("unroll 4")
#else
#define TILEKIT_THIN_UNROLL
#define TILEKIT_THIN_UNROLL4
#endif

namespace tilekit {
namespace detail {

/// The thin view Y = X W of a problem (see the header comment). Valid when min(M, N) <= kThinMaxRows.
template <class TIn, class TOut>
struct ThinOperands {
  StridedMatrix<const TIn> x, w;  ///< X: rows x K, W: K x L
  StridedMatrix<TOut> y;          ///< rows x L
  int rows = 0;                   ///< the thin side, min(M, N)
  int64_t L = 0, K = 0;
  bool bias_on_rows = false;      ///< Y = C^T: the bias (one value per column of C) follows Y's rows

  static ThinOperands of(const MatmulProblem<TIn, TOut>& p) {
    ThinOperands t;
    t.K = p.K;
    if (p.M <= p.N) {
      t.x = p.a;
      t.w = p.b;
      t.y = p.c;
      t.rows = static_cast<int>(p.M);
      t.L = p.N;
    } else {
      t.x = p.b.transposed();
      t.w = p.a.transposed();
      t.y = p.c.transposed();
      t.rows = static_cast<int>(p.N);
      t.L = p.M;
      t.bias_on_rows = true;
    }
    return t;
  }
};

/// The team shape of a thin config on backend class `gpu`: GPUs run cols x kgroups threads per team
/// as team_size x 32 vector lanes; host teams are one thread.
struct ThinTeamShape {
  int team_size, vector_length;
};
inline ThinTeamShape thin_team_shape(const MatmulConfig& cfg, bool gpu) {
  if (!gpu) return {1, 1};
  const int threads = cfg.thin_cols * cfg.thin_kgroups;
  return {threads / 32, 32};
}

template <class ExecSpace, int RR, class TIn, class TOut>
struct ThinMatmul {
  using compute = typename TypeTraits<TIn>::compute;
  // Teams of up to kThinMaxThreads (the tuner's largest thin config): the compiler keeps the
  // registers within what such a team may use (128 per thread on NVIDIA GPUs).
  static constexpr unsigned kThinMaxThreads = 512;
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<kThinMaxThreads, 1>>;
  using member_type = typename policy_type::member_type;
  static constexpr bool kGpu = is_gpu_space<ExecSpace>();
  static constexpr int kScratchLevel = kGpu ? 0 : 1;
  // GPU: staged X is k-major, RP values per k. With 16 rows the pitch is padded to 20 so that lanes
  // reading consecutive k (lanes along K) hit distinct banks; rows stay 16-byte aligned.
  static constexpr int RP = RR >= 8 ? RR + 4 : RR;
  // K values staged per step: GPU, as many as fill the stage (thin_gpu_stage_k, a power of two);
  // host, kThinHostStageK.
  static constexpr int kStageK = kGpu ? thin_gpu_stage_k(RP, int(sizeof(compute))) : kThinHostStageK;
  /// GPU: columns per thread (1 on host backends, whose team thread walks the whole block).
  static constexpr int CPT = kGpu ? thin_gpu_columns_per_thread(RR, int(sizeof(compute))) : 1;
  // Host dot form: SIMD lanes of partial sums (one 64-byte vector of the compute type).
  static constexpr int kLanes = 64 / int(sizeof(compute)) > 0 ? 64 / int(sizeof(compute)) : 1;

  ThinOperands<TIn, TOut> t;
  compute alpha, beta;
  const compute* bias;
  Activation act;
  int cols, kgroups;
  bool lanes_along_k;  ///< GPU: W contiguous along K
  int vector_length;

  /// Scratch per team: GPU: the staged X chunk, reused for the K-group partial sums at the end;
  /// host: RR x cols running sums and the staged X chunk. +16: the base is aligned up to 16 bytes.
  KOKKOS_INLINE_FUNCTION static std::size_t scratch_bytes(int cols, int kgroups) {
    const std::size_t stage = std::size_t(kStageK) * RP, partial = std::size_t(kgroups) * cols * RR;
    // (GPU: the partial sums reuse the stage's space, one column set at a time)
    const std::size_t elems = kGpu ? (stage > partial ? stage : partial) : std::size_t(RR) * cols + std::size_t(kStageK) * RR;
    return elems * sizeof(compute) + 16;
  }

  KOKKOS_INLINE_FUNCTION void store(int i, int64_t l, compute s) const {
    compute v = alpha * s;
    TOut& out = t.y(i, l);
    if (beta != compute(0)) v += beta * convert<compute>(out);  // beta == 0: C is not read
    if (bias) v += bias[t.bias_on_rows ? int64_t(i) : l];
    out = convert<TOut>(activate(act, v));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int level = kScratchLevel;
    compute* scratch = team_scratch_aligned<compute>(team, scratch_bytes(cols, kgroups), level);
    const int64_t l0 = int64_t(team.league_rank()) * cols * CPT;
    if constexpr (kGpu)
      run_gpu(team, scratch, l0);
    else
      run_host(scratch, l0);
  }

  // ---- GPU ---------------------------------------------------------------------------------------
  // Thread (l, g) owns columns l, l + cols, ..., l + (CPT - 1) cols of the team's block: each staged X
  // value read from scratch serves CPT columns (with 16 rows, scratch reads, not DRAM, bounded the
  // one-column version).
  KOKKOS_INLINE_FUNCTION void run_gpu(const member_type& team, compute* Xs, int64_t l0) const {
    const int nthreads = cols * kgroups;
    const int tid = team.team_rank() * vector_length + vector_lane();
    const int l = lanes_along_k ? tid / kgroups : tid % cols;
    const int g = lanes_along_k ? tid % kgroups : tid / cols;
    const bool x_rows_contig = t.x.rs == 1 && t.x.cs != 1;  // X contiguous along its rows
    compute acc[CPT][RR];
TILEKIT_THIN_UNROLL
    for (int c = 0; c < CPT; ++c)
TILEKIT_THIN_UNROLL
      for (int i = 0; i < RR; ++i) acc[c][i] = compute(0);
    int ncols = 0;  // this thread's columns inside L
TILEKIT_THIN_UNROLL
    for (int c = 0; c < CPT; ++c) ncols += l0 + l + int64_t(c) * cols < t.L ? 1 : 0;

    for (int64_t k0 = 0; k0 < t.K; k0 += kStageK) {  // K chunks: stage X, then every column's share
      const int kn = static_cast<int>(t.K - k0 < kStageK ? t.K - k0 : kStageK);
      stage_x(Xs, k0, kn, tid, nthreads, x_rows_contig);
      team.team_barrier();
      const TIn* wp = t.w.data + k0 * t.w.rs + (l0 + l) * t.w.cs;
      const int64_t ws = t.w.rs, wc = int64_t(cols) * t.w.cs;
      if (ncols == CPT) {
        int k = g;
        // U k steps at a time, their U x CPT loads of W issued before the first multiply: U x CPT
        // loads in flight a thread, not CPT (unrolled, the one-step loop below still waited a DRAM
        // latency on every step: its loop exits sat between the steps).
        constexpr int U = kThinGpuStepsAhead;
        for (; k + (U - 1) * kgroups < kn; k += U * kgroups) {
          compute wv[U][CPT];
TILEKIT_THIN_UNROLL
          for (int j = 0; j < U; ++j) {
            const TIn* wj = wp + int64_t(k + j * kgroups) * ws;
TILEKIT_THIN_UNROLL
            for (int c = 0; c < CPT; ++c) wv[j][c] = convert<compute>(wj[c * wc]);
          }
TILEKIT_THIN_UNROLL
          for (int j = 0; j < U; ++j) {
            compute xv[RR];
            read_x(Xs + (k + j * kgroups) * RP, xv);
TILEKIT_THIN_UNROLL
            for (int c = 0; c < CPT; ++c)
TILEKIT_THIN_UNROLL
              for (int i = 0; i < RR; ++i) acc[c][i] += xv[i] * wv[j][c];
          }
        }
TILEKIT_THIN_UNROLL4
        for (; k < kn; k += kgroups) {
          compute wv[CPT];
TILEKIT_THIN_UNROLL
          for (int c = 0; c < CPT; ++c) wv[c] = convert<compute>(wp[k * ws + c * wc]);
          compute xv[RR];
          read_x(Xs + k * RP, xv);
TILEKIT_THIN_UNROLL
          for (int c = 0; c < CPT; ++c)
TILEKIT_THIN_UNROLL
            for (int i = 0; i < RR; ++i) acc[c][i] += xv[i] * wv[c];
        }
      } else if (ncols > 0) {  // the last block's edge
        for (int k = g; k < kn; k += kgroups) {
          compute xv[RR];
          read_x(Xs + k * RP, xv);
TILEKIT_THIN_UNROLL
          for (int c = 0; c < CPT; ++c) {
            if (c >= ncols) break;
            const compute wv = convert<compute>(wp[k * ws + c * wc]);
TILEKIT_THIN_UNROLL
            for (int i = 0; i < RR; ++i) acc[c][i] += xv[i] * wv;
          }
        }
      }
      team.team_barrier();  // the next chunk overwrites Xs
    }

    // The K groups' partial sums, added in group order, one of the CPT column sets at a time.
    compute* red = Xs;
    const bool rows_fastest = t.y.cs != 1;  // consecutive threads along Y's contiguous dimension
TILEKIT_THIN_UNROLL
    for (int c = 0; c < CPT; ++c) {
TILEKIT_THIN_UNROLL
      for (int i = 0; i < RR; ++i) red[(g * cols + l) * RR + i] = acc[c][i];
      team.team_barrier();
      const int64_t lc = l0 + int64_t(c) * cols;  // first column of this set
      for (int e = tid; e < cols * t.rows; e += nthreads) {
        const int ll = rows_fastest ? e / t.rows : e % cols;
        const int i = rows_fastest ? e % t.rows : e / cols;
        if (lc + ll >= t.L) continue;
        compute s = compute(0);
        for (int gg = 0; gg < kgroups; ++gg) s += red[(gg * cols + ll) * RR + i];
        store(i, lc + ll, s);
      }
      team.team_barrier();  // red is rewritten by the next set
    }
  }

  // Xs[k][i] = X(i, k0 + k) for the chunk's kn values of k; rows past the thin side are 0.
  // Consecutive threads take the dimension that is contiguous in X, and each thread issues a batch
  // of independent loads before it writes any of them: a chunk costs one L2 latency per batch, not
  // one per value (the chunk is kn x RR values over the team's threads, 32 a thread for the 16-row
  // class's 1024-deep chunks at 512 threads), and no index needs a run-time division.
  KOKKOS_INLINE_FUNCTION void stage_x(compute* Xs, int64_t k0, int kn, int tid, int nthreads,
                                      bool x_rows_contig) const {
    if (x_rows_contig) {
      // Threads along the rows: value e is row e % RR of k = e / RR (RR is a power of two);
      // batches of kThinGpuStageBatch values a thread.
      constexpr unsigned kBatch = kThinGpuStageBatch;
      const unsigned total = unsigned(kn) * RR, step = unsigned(nthreads);
      for (unsigned e0 = unsigned(tid); e0 < total; e0 += kBatch * step) {
        compute v[kBatch];
TILEKIT_THIN_UNROLL
        for (unsigned b = 0; b < kBatch; ++b) {
          const unsigned e = e0 + b * step, i = e % RR, k = e / RR;
          v[b] = e < total && int(i) < t.rows ? convert<compute>(t.x(i, k0 + k)) : compute(0);
        }
TILEKIT_THIN_UNROLL
        for (unsigned b = 0; b < kBatch; ++b) {
          const unsigned e = e0 + b * step;
          if (e < total) Xs[(e / RR) * RP + e % RR] = v[b];
        }
      }
    } else {
      // Threads along K: each thread loads the RR values of its k (one batch) and writes them as
      // one run of its staged row.
      for (int k = tid; k < kn; k += nthreads) {
        compute v[RR];
TILEKIT_THIN_UNROLL
        for (int i = 0; i < RR; ++i) v[i] = i < t.rows ? convert<compute>(t.x(i, k0 + k)) : compute(0);
TILEKIT_THIN_UNROLL
        for (int i = 0; i < RR; ++i) Xs[k * RP + i] = v[i];
      }
    }
  }

  // RR consecutive staged values: 16-byte vector reads where they fill whole vectors and the pitch
  // keeps every staged row 16-byte aligned (the scratch base is).
  KOKKOS_INLINE_FUNCTION static void read_x(const compute* src, compute (&dst)[RR]) {
    constexpr int per16 = 16 / int(sizeof(compute));
    if constexpr (16 % sizeof(compute) == 0 && RP % per16 == 0) {
      read_scratch_run(src, dst);
    } else {
TILEKIT_THIN_UNROLL
      for (int i = 0; i < RR; ++i) dst[i] = src[i];
    }
  }

  // ---- host --------------------------------------------------------------------------------------
#if defined(__GNUC__) && !defined(__clang__) && !defined(__NVCC__) && !defined(__HIPCC__)
  // Register blocks with GCC vector types (as the host micro-kernel in tilekit/kernels/matmul/dispatch.hpp: left to the
  // auto-vectoriser, the per-row loops over a column block paid their loop overhead on every k).
  // Used when W holds the compute type itself (f32, f64); other inputs take the scalar loops.
  static constexpr bool kHostBlocks = std::is_same<TIn, compute>::value;
  static constexpr int VW = 64 / int(sizeof(compute));  // lanes per 64-byte vector
  typedef compute vec_t __attribute__((vector_size(64)));
  typedef compute vec_u __attribute__((vector_size(64), aligned(alignof(compute))));  // unaligned
  // Axpy form: RB rows x NV vectors of columns of Y in registers across the whole K chunk; about 16
  // accumulator vectors whatever the row count (1 row: 16 vectors, 256 f32 columns), so that each
  // k reads a long contiguous run of W's row (2 vectors a row made a GEMV walk W's rows 128 bytes at
  // a time, 8 passes over the same rows for a 256-column block). Narrower blocks (kAxpyVecsNarrow)
  // take column blocks too short for the wide one.
  static constexpr int kAxpyRows = RR < 8 ? RR : 8;
  static constexpr int kAxpyVecs = 16 / kAxpyRows > 2 ? 16 / kAxpyRows : 2;
  static constexpr int kAxpyVecsNarrow = 1;
  // Dot form: RB rows x CB columns of Y, each a vector of partial sums along K.
  static constexpr int kDotRows = RR < 4 ? RR : 4;
  static constexpr int kDotCols = 4;

  /// sums(r0.., c0..) += X(r0.., chunk) W(chunk, c0..) for kAxpyRows rows, NV * VW columns.
  template <int NV>
  __attribute__((noinline)) static void axpy_block(const compute* Xs, const compute* w, int64_t ws, int kn,
                                                   compute* sums, int cols, int rows_left) {
    vec_t acc[kAxpyRows][NV] = {};
    for (int k = 0; k < kn; ++k) {
      vec_t b[NV];
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) b[v] = reinterpret_cast<const vec_u*>(w + k * ws)[v];
#pragma GCC unroll 8
      for (int r = 0; r < kAxpyRows; ++r) {
        const vec_t a = Xs[k * RR + r] - vec_t{};  // broadcast (x - 0 == x)
#pragma GCC unroll 16
        for (int v = 0; v < NV; ++v) acc[r][v] += a * b[v];
      }
    }
    for (int r = 0; r < kAxpyRows && r < rows_left; ++r)
      for (int v = 0; v < NV; ++v) reinterpret_cast<vec_u*>(sums + r * cols)[v] += acc[r][v];
  }
  /// The column blocks of the axpy form from column l of the team's block: wide, then narrow ones.
  int axpy_blocks(const compute* Xs, int64_t l0, int64_t k0, int kn, compute* sums, int cn) const {
    int l = 0;
    const auto run = [&](auto nv) {
      constexpr int CB = decltype(nv)::value * VW;
      for (; l + CB <= cn; l += CB)
        for (int r0 = 0; r0 < t.rows; r0 += kAxpyRows)
          axpy_block<decltype(nv)::value>(Xs + r0, reinterpret_cast<const compute*>(t.w.data) + k0 * t.w.rs + (l0 + l),
                                          t.w.rs, kn, sums + r0 * cols + l, cols, t.rows - r0);
    };
    run(std::integral_constant<int, kAxpyVecs>{});
    run(std::integral_constant<int, kAxpyVecsNarrow>{});
    return l;
  }

  /// sums(r0.., c0..) += X(r0.., chunk) W(chunk, c0..) for kDotRows rows, kDotCols columns, W columns
  /// contiguous along K (stride wcs between columns).
  __attribute__((noinline)) static void dot_block(const compute* Xs, const compute* w, int64_t wcs, int kn,
                                                  compute* sums, int cols, int rows_left) {
    vec_t acc[kDotRows][kDotCols] = {};
    int k = 0;
    for (; k + VW <= kn; k += VW) {
      vec_t b[kDotCols], a[kDotRows];
#pragma GCC unroll 4
      for (int c = 0; c < kDotCols; ++c) b[c] = *reinterpret_cast<const vec_u*>(w + c * wcs + k);
#pragma GCC unroll 4
      for (int r = 0; r < kDotRows; ++r) a[r] = *reinterpret_cast<const vec_u*>(Xs + r * kStageK + k);
#pragma GCC unroll 4
      for (int r = 0; r < kDotRows; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < kDotCols; ++c) acc[r][c] += a[r] * b[c];
    }
    for (int r = 0; r < kDotRows && r < rows_left; ++r)
      for (int c = 0; c < kDotCols; ++c) {
        compute s = compute(0);
        for (int u = 0; u < VW; ++u) s += acc[r][c][u];
        for (int kk = k; kk < kn; ++kk) s += Xs[r * kStageK + kk] * w[c * wcs + kk];
        sums[r * cols + c] += s;
      }
  }
#else
  static constexpr bool kHostBlocks = false;
  static constexpr int VW = 1, kAxpyRows = 1, kAxpyVecs = 1, kDotRows = 1, kDotCols = 1;
  int axpy_blocks(const compute*, int64_t, int64_t, int, compute*, int) const { return 0; }
  static void dot_block(const compute*, const compute*, int64_t, int, compute*, int, int) {}
#endif

  void run_host(compute* scratch, int64_t l0) const {
    const int cn = static_cast<int>(t.L - l0 < cols ? t.L - l0 : cols);
    const int rows = t.rows;
    compute* sums = scratch;            // rows x cols running sums
    compute* Xs = scratch + RR * cols;  // the staged X chunk, rows past the thin side zero
    for (int e = 0; e < RR * cols; ++e) sums[e] = compute(0);
    const bool axpy = t.w.cs == 1;               // W rows contiguous along L
    const bool dot = !axpy && t.w.rs == 1;       // W columns contiguous along K
    for (int64_t k0 = 0; k0 < t.K; k0 += kStageK) {
      const int kn = static_cast<int>(t.K - k0 < kStageK ? t.K - k0 : kStageK);
      if (dot) {
        // Xs[i][k]: each row of the chunk contiguous, to meet W's contiguous columns.
        for (int i = 0; i < RR; ++i)
          for (int k = 0; k < kn; ++k) Xs[i * kStageK + k] = i < rows ? convert<compute>(t.x(i, k0 + k)) : compute(0);
        int l = 0;
        if constexpr (kHostBlocks) {  // register blocks of kDotCols columns x kDotRows rows
          for (; l + kDotCols <= cn; l += kDotCols)
            for (int r0 = 0; r0 < rows; r0 += kDotRows)
              dot_block(Xs + r0 * kStageK, reinterpret_cast<const compute*>(t.w.data) + k0 + (l0 + l) * t.w.cs,
                        t.w.cs, kn, sums + r0 * cols + l, cols, rows - r0);
        }
        for (; l < cn; ++l) {  // the rest, one column at a time
          const TIn* wcol = t.w.data + k0 + (l0 + l) * t.w.cs;
          for (int i = 0; i < rows; ++i) {
            const compute* xr = Xs + i * kStageK;
            compute part[kLanes] = {};  // independent partial sums: the loop vectorises along K
            int k = 0;
            for (; k + kLanes <= kn; k += kLanes)
              for (int u = 0; u < kLanes; ++u) part[u] += xr[k + u] * convert<compute>(wcol[k + u]);
            compute s = compute(0);
            for (int u = 0; u < kLanes; ++u) s += part[u];
            for (; k < kn; ++k) s += xr[k] * convert<compute>(wcol[k]);
            sums[i * cols + l] += s;
          }
        }
      } else {
        // Xs[k][i]; each row of W's chunk is streamed once and used for every row of Y.
        for (int k = 0; k < kn; ++k)
          for (int i = 0; i < RR; ++i) Xs[k * RR + i] = i < rows ? convert<compute>(t.x(i, k0 + k)) : compute(0);
        int l = 0;
        if constexpr (kHostBlocks) {  // register blocks of vectors of columns x kAxpyRows rows
          if (axpy) l = axpy_blocks(Xs, l0, k0, kn, sums, cn);
        }
        const int lb = l;  // the columns past the register blocks (or all, for other strides)
        for (int k = 0; k < kn; ++k) {
          const TIn* wrow = t.w.data + (k0 + k) * t.w.rs + l0 * t.w.cs;
          for (int i = 0; i < rows; ++i) {
            const compute x = Xs[k * RR + i];
            compute* s = sums + i * cols;
            for (int c = lb; c < cn; ++c) s[c] += x * convert<compute>(wrow[c * t.w.cs]);
          }
        }
      }
    }
    switch (act) {  // the activation fixed at compile time for the finishing loops
      case Activation::relu: finish_host<Activation::relu>(sums, l0, cn); break;
      case Activation::leaky_relu: finish_host<Activation::leaky_relu>(sums, l0, cn); break;
      case Activation::silu: finish_host<Activation::silu>(sums, l0, cn); break;
      case Activation::gelu: finish_host<Activation::gelu>(sums, l0, cn); break;
      default: finish_host<Activation::none>(sums, l0, cn); break;
    }
  }

  /// Host: Y(i, l0 + l) from the running sums (alpha, beta, bias, activation, conversion), a row at a
  /// time in place, each step its own loop over the row so that the compiler vectorizes it. Through
  /// store() (the switch over activations and the beta and bias tests per element) a K = 1 product
  /// was bound by its stores: 1048576x1x1 0.62 ms, 4.3 with leaky_relu and 9.6 with bias+gelu.
  template <Activation ACT>
  void finish_host(compute* sums, int64_t l0, int cn) const {
    for (int i = 0; i < t.rows; ++i) {
      compute* const v = sums + i * cols;
      for (int l = 0; l < cn; ++l) v[l] *= alpha;
      if (beta != compute(0))  // beta == 0: C is not read
        for (int l = 0; l < cn; ++l) v[l] += beta * convert<compute>(t.y(i, l0 + l));
      if (bias && t.bias_on_rows) {
        const compute b = bias[i];
        for (int l = 0; l < cn; ++l) v[l] += b;
      } else if (bias) {
        const compute* const b = bias + l0;
        for (int l = 0; l < cn; ++l) v[l] += b[l];
      }
      if constexpr (ACT != Activation::none)
        for (int l = 0; l < cn; ++l) v[l] = activate_fixed<ACT>(v[l]);
      if (t.y.cs == 1) {
        TOut* const row = &t.y(i, l0);
        for (int l = 0; l < cn; ++l) row[l] = convert<TOut>(v[l]);
      } else {
        for (int l = 0; l < cn; ++l) t.y(i, l0 + l) = convert<TOut>(v[l]);
      }
    }
  }
};

/// Calls f(std::integral_constant<int, RR>{}) for the smallest row class holding `rows`.
template <class F, int... R>
void dispatch_thin_rows(ThinRowList<R...>, int rows, F&& f) {
  bool found = false;
  auto try_one = [&](auto rr) {
    if (!found && rows <= decltype(rr)::value) {
      found = true;
      f(rr);
    }
  };
  (try_one(std::integral_constant<int, R>{}), ...);
}

template <class TIn, class TOut, class F>
F make_thin_functor(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg) {
  F f;
  f.t = ThinOperands<TIn, TOut>::of(p);
  f.alpha = p.alpha;
  f.beta = p.beta;
  f.bias = p.bias;
  f.act = p.act;
  f.cols = cfg.thin_cols;
  f.kgroups = cfg.thin_kgroups;
  f.lanes_along_k = f.t.w.rs == 1 && f.t.w.cs != 1;
  f.vector_length = thin_team_shape(cfg, F::kGpu).vector_length;
  return f;
}

/// Calls f(ThinMatmul<...>{} type tag) for the thin kernel that runs problem p (its row class).
template <class TIn, class TOut, class G>
void with_thin_kernel(const MatmulProblem<TIn, TOut>& p, G&& g) {
  using ES = Kokkos::DefaultExecutionSpace;
  const int64_t rows = std::min(p.M, p.N);
  dispatch_thin_rows(ThinRowClasses{}, static_cast<int>(std::min<int64_t>(rows, kThinMaxRows)),
                     [&](auto rr) { g(TypeTag<ThinMatmul<ES, decltype(rr)::value, TIn, TOut>>{}); });
}

/// The checks of a thin config (check_matmul has checked shapes, strides and types).
template <class TIn, class TOut>
std::string check_thin(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg) {
  using ES = Kokkos::DefaultExecutionSpace;
  constexpr bool gpu = is_gpu_space<ES>();
  const std::string backend = backend_name();
  if (std::min(p.M, p.N) > kThinMaxRows)
    return fmt::format("config '{}': thin configs run products with M or N at most {} (got M={}, N={}); use "
                       "a tile config (allowed tiles: {})",
                       cfg.name(), kThinMaxRows, p.M, p.N, menu_names(TypeTraits<TIn>::dtype));
  if (cfg.thin_cols < 1 || cfg.thin_cols > 4096 || cfg.thin_kgroups < 1)
    return fmt::format("config '{}': thin_l<cols>_k<kgroups> needs cols in 1..4096 and kgroups >= 1 (got {}, {})",
                       cfg.name(), cfg.thin_cols, cfg.thin_kgroups);
  const int64_t threads = int64_t(cfg.thin_cols) * cfg.thin_kgroups;
  if (gpu && (threads % 32 != 0 || threads > 1024))
    return fmt::format("config '{}': on {} a thin team runs cols x kgroups threads, which must be a multiple "
                       "of 32 and at most 1024 (got {} x {} = {})",
                       cfg.name(), backend, cfg.thin_cols, cfg.thin_kgroups, threads);
  if (!gpu && cfg.thin_kgroups != 1)
    return fmt::format("config '{}': on {} a thin team is one thread, so kgroups must be 1 (got {})", cfg.name(),
                       backend, cfg.thin_kgroups);
  const int64_t L = std::max(p.M, p.N);
  if ((L + cfg.thin_cols - 1) / cfg.thin_cols > int64_t(INT32_MAX))
    return fmt::format("config '{}': {} columns in blocks of {} need more than 2^31-1 teams", cfg.name(), L,
                       cfg.thin_cols);
  std::string why;
  with_thin_kernel(p, [&](auto tag) {
    using F = typename decltype(tag)::type;
    const std::size_t scratch = F::scratch_bytes(cfg.thin_cols, cfg.thin_kgroups);
    why = check_team_scratch(scratch, F::kScratchLevel);
    if (!why.empty()) {
      why = fmt::format("config '{}' with {} inputs on {}: {}", cfg.name(), dtype_name(TypeTraits<TIn>::dtype),
                        backend, why);
      return;
    }
    const ThinTeamShape shape = thin_team_shape(cfg, gpu);
    const F f = make_thin_functor<TIn, TOut, F>(p, cfg);
    typename F::policy_type policy(1, 1, shape.vector_length);
    policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(scratch));
    const int team_max = policy.team_size_max(f, Kokkos::ParallelForTag());
    if (shape.team_size > team_max)
      why = fmt::format("config '{}': {} threads per team exceed the {} maximum of {} for this kernel", cfg.name(),
                        threads, backend, team_max * shape.vector_length);
  });
  return why;
}

template <class TIn, class TOut>
void launch_thin(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg, const Kokkos::DefaultExecutionSpace& space) {
  with_thin_kernel(p, [&](auto tag) {
    using F = typename decltype(tag)::type;
    const F f = make_thin_functor<TIn, TOut, F>(p, cfg);
    const ThinTeamShape shape = thin_team_shape(cfg, F::kGpu);
    const int64_t block = int64_t(cfg.thin_cols) * F::CPT;  // columns of Y per team
    const int league = static_cast<int>((f.t.L + block - 1) / block);
    typename F::policy_type policy(space, league, shape.team_size, shape.vector_length);
    policy.set_scratch_size(F::kScratchLevel, Kokkos::PerTeam(F::scratch_bytes(cfg.thin_cols, cfg.thin_kgroups)));
    Kokkos::parallel_for(fmt::format("tilekit::matmul_{}_{}_{}", dtype_name(TypeTraits<TIn>::dtype),
                                     dtype_name(TypeTraits<TOut>::dtype), cfg.tile_name()),
                         policy, f);
  });
}

}  // namespace detail
}  // namespace tilekit
