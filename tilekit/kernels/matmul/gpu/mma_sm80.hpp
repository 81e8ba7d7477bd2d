// tilekit blocked matmul, tensor-core path for CUDA sm_80 and newer (Ampere, Hopper): f16 and bf16
// inputs, f32 accumulation, PTX mma.sync.m16n8k16 fed by ldmatrix from an XOR-swizzled scratch
// layout and a STAGES-deep cp.async pipeline. Same TeamPolicy structure as the SIMT kernel
// (tilekit/kernels/matmul/dispatch.hpp): one team per BM x BN tile of C in grouped order, A and B staged in level-0
// team scratch, every edge masked, the same fused epilogue.
//
//   league  : one team per BM x BN tile of C, grouped order (GROUP_M tile-rows per group)
//   kt      : K in steps of BK; STAGES-1 steps are in flight (cp.async) while the warps multiply
//             step kt; one barrier per step
//   warp    : each warp owns a WM x WN block of C: (WM/16) x (WN/8) m16n8 f32 accumulators
//   kk      : BK in 16-deep slices; per slice, WM/16 ldmatrix.x4 for A, WN/16 for B, then
//             (WM/16) x (WN/8) mma.sync
//
// Staged layouts follow the operands' contiguous dimension, so every global read is a 16-byte run:
// op(A) contiguous along K is staged [BM][BK] and read with ldmatrix, op(A) contiguous along M is
// staged [BK][BM] and read with ldmatrix.trans; B likewise ([BN][BK] plain, [BK][BN] .trans). Rows
// are not padded: the 16-byte chunks of each row are XOR-swizzled (swizzled_offset), so the 8 rows
// one ldmatrix phase reads fall in 8 different bank groups, and the scratch stays dense.
//
// Edges: when an operand's rows are 16-byte aligned and its contiguous extent is a multiple of 8,
// every tile (interior or edge) is staged in 16-byte cp.async copies, those past the matrix
// zero-filled (src-size 0); otherwise element by element. The epilogue works from the accumulator
// registers: alpha, beta (C read only when beta != 0), bias, activation, conversion, masked store.
#pragma once

#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/team.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TILEKIT_SM80_DEVICE 1
#endif

namespace tilekit {
namespace detail {

/// major * 10 + minor of the CUDA device in use; 0 on other backends (where no tensor-core tile is in
/// the menu).
inline int device_compute_capability() { return cuda_compute_capability(); }

/// Tensor-core tiles run f16 and bf16 inputs (accumulating in f32); check_matmul rejects others.
template <class TIn>
constexpr bool mma_input_supported() {
  return std::is_same<TIn, f16>::value || std::is_same<TIn, bf16>::value;
}

/// Offset (in 2-byte elements) of element (r, c) of a staged tile whose rows hold C elements, with
/// the 16-byte chunks of each row XOR-swizzled so that 8 consecutive rows at one logical chunk land
/// in 8 different 16-byte bank groups (ldmatrix reads 8 rows x 16 bytes per phase). The XOR only
/// permutes chunks inside a row.
template <int C>
KOKKOS_INLINE_FUNCTION constexpr int swizzled_offset(int r, int c) {
  constexpr int P = C / 8;  // 16-byte chunks per row
  static_assert(C % 8 == 0 && (P == 1 || P == 2 || P == 4 || P % 8 == 0), "rows of whole 16-byte chunks");
  const int chunk = c >> 3;
  const int phys = P >= 8 ? chunk ^ (r & 7) : P == 4 ? chunk ^ ((r >> 1) & 3) : P == 2 ? chunk ^ ((r >> 2) & 1) : chunk;
  return r * C + phys * 8 + (c & 7);
}

#if defined(TILEKIT_SM80_DEVICE)
__device__ inline unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
// 16 bytes global -> shared, L1 bypassed; src_bytes = 0 zero-fills (a chunk past the matrix).
__device__ inline void cp_async16(void* smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem), "r"(src_bytes));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
#endif

/// The value an element is staged as: 16-bit floats as their bits (uint16_t scratch), other types as
/// themselves (scratch of the element type).
template <class S, class T>
KOKKOS_INLINE_FUNCTION S staged_value(const T& v) {
  if constexpr (std::is_same<S, T>::value) return v;
  else if constexpr (std::is_same<T, f16>::value || std::is_same<T, bf16>::value) return v.bits;
  else return S(0);  // no tile stages T as S
}

/// Stages one R x C tile (R rows of C elements, the columns along the operand's contiguous
/// dimension, unless `offset` transposes) into scratch at dst[offset(r, c)]. Element (r, c) is
/// src[r * row_stride + c * col_stride]; rows_left and cols_left bound the valid part, the rest is
/// zero. `chunked` (unit column stride, 16-byte aligned rows, cols_left a multiple of a 16-byte
/// chunk or >= C, an offset that keeps each chunk contiguous): whole 16-byte cp.async copies, those
/// past the matrix zero-filled, completed by the caller's cp_async_wait; otherwise element by
/// element with ordinary stores. THREADS threads of the team share the work.
template <int R, int C, int THREADS, class S, class TIn, class Offset>
KOKKOS_INLINE_FUNCTION void stage_tile(S* dst, const TIn* src, int64_t row_stride, int64_t col_stride,
                                       int64_t rows_left, int64_t cols_left, bool chunked, int tid, Offset offset) {
  static_assert(sizeof(S) == sizeof(TIn), "scratch holds the elements' own bytes");
#if defined(TILEKIT_SM80_DEVICE)
  if (chunked) {
    constexpr int kChunkElems = 16 / int(sizeof(S));
    constexpr int kChunksPerRow = C / kChunkElems;
    static_assert(C % kChunkElems == 0, "rows of whole 16-byte chunks");
    if constexpr (THREADS % kChunksPerRow == 0 && (R * kChunksPerRow) % THREADS == 0) {
      // Each thread copies one chunk column c of rows r0, r0 + kRowStep, ...: its chunks lie at
      // compile-time distances from one base in both memories (offset is linear in the row, or, for
      // the XOR swizzles, periodic in 8 rows with kRowStep a multiple of 8), so a chunk costs an
      // address add, a compare and the copy. The general loop below spent some 25 instructions per
      // chunk on index arithmetic: more issue slots than the MMAs of the step (docs/perf-notes.md).
      constexpr int kRowStep = THREADS / kChunksPerRow;
      const int r0 = tid / kChunksPerRow, c = (tid % kChunksPerRow) * kChunkElems;
      const TIn* s0 = src + r0 * row_stride + c;
      const bool col_ok = c < cols_left;
      TILEKIT_UNROLL
      for (int i = 0; i < R * kChunksPerRow / THREADS; ++i) {
        const int r = r0 + i * kRowStep;
        const bool valid = col_ok && r < rows_left;
        cp_async16(dst + offset(r, c), valid ? s0 + i * kRowStep * row_stride : src, valid ? 16 : 0);
      }
    } else {
      for (int q = tid; q < R * kChunksPerRow; q += THREADS) {
        const int r = q / kChunksPerRow, c = (q % kChunksPerRow) * kChunkElems;
        const bool valid = r < rows_left && c < cols_left;
        const TIn* from = valid ? src + r * row_stride + c : src;  // any valid address when zero-filling
        cp_async16(dst + offset(r, c), from, valid ? 16 : 0);
      }
    }
    return;
  }
#else
  (void)chunked;
#endif
  for (int e = tid; e < R * C; e += THREADS) {  // consecutive threads along the contiguous columns
    const int r = e / C, c = e % C;
    dst[offset(r, c)] = (r < rows_left && c < cols_left) ? staged_value<S>(src[r * row_stride + c * col_stride]) : S(0);
  }
}

/// stage_tile's chunked copies for a run of whole steps: each step's tile lies `step` elements after
/// the last one's and the steps never reach the K edge, so the thread's chunk addresses and which of
/// its chunks lie inside the matrix (the M or N edge) are worked out once per tile, and a step costs
/// one address add and the copy a chunk. (stage_tile's per-step index arithmetic and 64-bit selects
/// took about ten instructions a chunk, half the issue slots of an f64 DMMA step: perf notes 70.)
/// kApplies: the thread-to-chunk map of stage_tile's fast branch exists for this R x C tile.
template <int R, int C, int THREADS, class TIn>
struct ChunkStager {
  static constexpr int kChunkElems = 16 / int(sizeof(TIn));
  static constexpr int kChunksPerRow = C / kChunkElems;
  static constexpr bool kApplies =
      C % kChunkElems == 0 && THREADS % kChunksPerRow == 0 && (R * kChunksPerRow) % THREADS == 0;
  static constexpr int kRowStep = kApplies ? THREADS / kChunksPerRow : 1;
  static constexpr int kChunks = kApplies ? R * kChunksPerRow / THREADS : 0;
  static_assert(kChunks <= 32, "one validity bit a chunk");

  const TIn* next = nullptr;  ///< the thread's first chunk in the next step
  int dst0 = 0;               ///< its place in the stage buffer
  uint32_t inside = 0;        ///< bit i: chunk i lies inside the matrix

  /// src: the tile of the first step (its element (0, 0)); rows_left / cols_left: the valid extent
  /// of every step (along K, a whole step's own extent). offset: the staged layout, linear in the row.
  template <class Offset>
  KOKKOS_INLINE_FUNCTION void init(const TIn* src, int64_t row_stride, int64_t rows_left, int64_t cols_left,
                                   int tid, Offset offset) {
    if constexpr (kApplies) {
      const int r0 = tid / kChunksPerRow, c = (tid % kChunksPerRow) * kChunkElems;
      next = src + r0 * row_stride + c;
      dst0 = offset(r0, c);
      inside = 0;
      for (int i = 0; i < kChunks; ++i)
        if (c < cols_left && r0 + i * kRowStep < rows_left) inside |= 1u << i;
    } else {
      (void)src, (void)row_stride, (void)rows_left, (void)cols_left, (void)tid, (void)offset;
    }
  }

#if defined(TILEKIT_SM80_DEVICE)
  /// The next step's tile into dst (chunks outside the matrix zero-filled, no bytes read); the one
  /// after it lies `step` elements further on.
  template <class S, class Offset>
  __device__ void copy_next(S* dst, int64_t row_stride, int64_t step, Offset offset) {
    TILEKIT_UNROLL
    for (int i = 0; i < kChunks; ++i)
      cp_async16(dst + dst0 + offset(i * kRowStep, 0), next + i * kRowStep * row_stride, (inside >> i) & 1 ? 16 : 0);
    next += step;
  }
#endif
};

/// swizzled_offset<C> as a callable, for stage_tile.
template <int C>
struct SwizzledOffset {
  KOKKOS_INLINE_FUNCTION constexpr int operator()(int r, int c) const { return swizzled_offset<C>(r, c); }
};

/// Whether op(A) and op(B) can be staged in whole 16-byte chunks (cp.async): unit stride along the
/// staged rows (along K for A when A_K, along N for B when B_N, else along M / K), a 16-byte
/// aligned base, a leading dimension and a contiguous extent of whole chunks.
template <bool A_K, bool B_N, class TIn, class TOut>
KOKKOS_INLINE_FUNCTION void operands_chunked(const MatmulProblem<TIn, TOut>& p, bool& a_chunked, bool& b_chunked) {
  constexpr int64_t kChunk = 16 / int64_t(sizeof(TIn));
  const auto& a = p.a;
  const auto& b = p.b;
  a_chunked = (A_K ? a.cs : a.rs) == 1 && reinterpret_cast<uintptr_t>(a.data) % 16 == 0 &&
              (A_K ? a.rs : a.cs) % kChunk == 0 && (A_K ? p.K : p.M) % kChunk == 0;
  b_chunked = (B_N ? b.cs : b.rs) == 1 && reinterpret_cast<uintptr_t>(b.data) % 16 == 0 &&
              (B_N ? b.rs : b.cs) % kChunk == 0 && (B_N ? p.N : p.K) % kChunk == 0;
}

/// Calls run(std::bool_constant<A_K>{}, std::bool_constant<B_N>{}) for the storage order of p's
/// operands (A_K: op(A) contiguous along K; B_N: op(B) contiguous along N): the tensor-core kernels
/// stage each operand along its contiguous dimension, one instantiation per order.
template <class TIn, class TOut, class Run>
KOKKOS_INLINE_FUNCTION void with_operand_orders(const MatmulProblem<TIn, TOut>& p, Run&& run) {
  const bool a_k = p.a.cs == 1;
  const bool b_n = p.b.cs == 1;
  if (a_k && b_n) run(std::true_type{}, std::true_type{});
  else if (a_k) run(std::true_type{}, std::false_type{});
  else if (b_n) run(std::false_type{}, std::true_type{});
  else run(std::false_type{}, std::false_type{});
}

template <class ExecSpace, class Tile, class TIn, class TOut>
struct Sm80MmaMatmul {
  using compute = float;
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Tile::threads, Tile::MIN_TEAMS>>;
  using member_type = typename policy_type::member_type;

  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, WM = Tile::TM, WN = Tile::TN;
  static constexpr int STAGES = Tile::STAGES;
  static constexpr int kThreads = Tile::threads;
  static constexpr int kWarpsN = BN / WN;
  static constexpr int MI = WM / 16, NI = WN / 8;  // m16n8 accumulator blocks per warp
  static constexpr int kScratchLevel = 0;
  static constexpr bool kSupported = mma_input_supported<TIn>();
  static constexpr int kAElems = BM * BK, kBElems = BK * BN;  // one staged A / B tile (2-byte elements)
  static constexpr int kStageElems = kAElems + kBElems;
  static_assert(WN % 16 == 0 && STAGES >= 2, "B fragments are loaded in pairs of n8 blocks");

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return std::size_t(STAGES) * kStageElems * 2 + 128;  // +128: the base is aligned up to 128 bytes
  }

  MatmulProblem<TIn, TOut> p;
  int group_m;
  int tiles_m, tiles_n;
  int vector_length;

#if defined(TILEKIT_SM80_DEVICE)
  __device__ static void ldmatrix_x4(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
  }
  __device__ static void ldmatrix_x4_trans(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
  }
  // d += a * b for one m16n8k16 block (a: 4 registers of 2 elements, b: 2, d: 4 f32).
  __device__ static void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    if constexpr (std::is_same<TIn, bf16>::value) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
          "{%0, %1, %2, %3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
          "{%0, %1, %2, %3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
  }
#endif

  // --- the K loop and the epilogue ----------------------------------------------------------------

  template <bool A_K, bool B_N>
  KOKKOS_INLINE_FUNCTION void run(const member_type& team, uint16_t* smem, int64_t m0, int64_t n0, int tid) const {
#if defined(TILEKIT_SM80_DEVICE)
    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp / kWarpsN, wn = warp % kWarpsN;

    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.0f;

    const auto& a = p.a;
    const auto& b = p.b;
    bool a_chunked, b_chunked;
    operands_chunked<A_K, B_N>(p, a_chunked, b_chunked);
    const int64_t ktiles = (p.K + BK - 1) / BK;

    auto stage = [&](int64_t kt, int buf) {
      uint16_t* As = smem + buf * kStageElems;
      uint16_t* Bs = As + kAElems;
      const int64_t k0 = kt * BK;
      if constexpr (A_K)  // [BM][BK]: rows along M, columns along K
        stage_tile<BM, BK, kThreads>(As, a.data + m0 * a.rs + k0 * a.cs, a.rs, a.cs, p.M - m0, p.K - k0, a_chunked, tid,
                                    SwizzledOffset<BK>{});
      else  // [BK][BM]
        stage_tile<BK, BM, kThreads>(As, a.data + k0 * a.cs + m0 * a.rs, a.cs, a.rs, p.K - k0, p.M - m0, a_chunked, tid,
                                    SwizzledOffset<BM>{});
      if constexpr (B_N)  // [BK][BN]
        stage_tile<BK, BN, kThreads>(Bs, b.data + k0 * b.rs + n0 * b.cs, b.rs, b.cs, p.K - k0, p.N - n0, b_chunked, tid,
                                    SwizzledOffset<BN>{});
      else  // [BN][BK]
        stage_tile<BN, BK, kThreads>(Bs, b.data + n0 * b.cs + k0 * b.rs, b.cs, b.rs, p.N - n0, p.K - k0, b_chunked, tid,
                                    SwizzledOffset<BK>{});
    };

    // Prologue: STAGES-1 steps in flight. Every thread commits one group per step, empty or not,
    // so that wait_group<STAGES-2> always means "step kt has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) stage(s, s);
      cp_async_commit();
    }
    int buf = 0;                  // stage buffer of step kt
    int fill = STAGES - 1;        // stage buffer of step kt + STAGES - 1
    for (int64_t kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<STAGES - 2>();  // this thread's copies of step kt are in scratch
      // Everyone's copies of step kt are in, and everyone is done with step kt-1, whose buffer
      // the next line refills.
      team.team_barrier();
      if (kt + STAGES - 1 < ktiles) stage(kt + STAGES - 1, fill);
      cp_async_commit();

      const uint16_t* As = smem + buf * kStageElems;
      const uint16_t* Bs = As + kAElems;
#pragma unroll
      for (int kk = 0; kk < BK; kk += 16) {  // 16-deep slices of the staged step
        unsigned fa[MI][4], fb[NI][2];
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          const int m = wm * WM + i * 16;
          if constexpr (A_K)  // lanes 0-15: rows m..m+15 at k; lanes 16-31: the same rows at k + 8
            ldmatrix_x4(fa[i], As + swizzled_offset<BK>(m + lane % 16, kk + (lane / 16) * 8));
          else  // transposed 8x8 blocks: (k, m), (k, m+8), (k+8, m), (k+8, m+8)
            ldmatrix_x4_trans(fa[i], As + swizzled_offset<BM>(kk + lane % 8 + (lane / 16) * 8, m + ((lane / 8) % 2) * 8));
        }
#pragma unroll
        for (int j = 0; j < NI; j += 2) {  // two n8 blocks per ldmatrix.x4
          const int n = wn * WN + j * 8;
          unsigned r[4];
          if constexpr (B_N)  // transposed 8x8 blocks: (k, n), (k+8, n), (k, n+8), (k+8, n+8)
            ldmatrix_x4_trans(r, Bs + swizzled_offset<BN>(kk + lane % 8 + ((lane / 8) % 2) * 8, n + (lane / 16) * 8));
          else  // blocks (n, k), (n, k+8), (n+8, k), (n+8, k+8)
            ldmatrix_x4(r, Bs + swizzled_offset<BK>(n + lane % 8 + (lane / 16) * 8, kk + ((lane / 8) % 2) * 8));
          fb[j][0] = r[0], fb[j][1] = r[1], fb[j + 1][0] = r[2], fb[j + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
          for (int j = 0; j < NI; ++j) mma_m16n8k16(acc[i][j], fa[i], fb[j][0], fb[j][1]);
      }
      buf = buf + 1 == STAGES ? 0 : buf + 1;
      fill = fill + 1 == STAGES ? 0 : fill + 1;
    }
    cp_async_wait<0>();

    // Epilogue from the registers: a lane holds rows g and g+8 (g = lane / 4) and columns 2t, 2t+1
    // (t = lane % 4) of each m16n8 block.
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
      for (int j = 0; j < NI; ++j) {
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int64_t gi = m0 + wm * WM + i * 16 + g + (v / 2) * 8;
          const int64_t gj = n0 + wn * WN + j * 8 + t * 2 + v % 2;
          store_c_element(p, gi, gj, acc[i][j][v]);
        }
      }
    }
#else
    (void)team, (void)smem, (void)m0, (void)n0, (void)tid;
#endif
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    if constexpr (kSupported) {
      int tile_m, tile_n;
      grouped_tile(team.league_rank(), group_m, tiles_m, tiles_n, tile_m, tile_n);
      const int64_t m0 = int64_t(tile_m) * BM, n0 = int64_t(tile_n) * BN;
      char* raw = static_cast<char*>(team.team_scratch(0).get_shmem(scratch_bytes()));
      uint16_t* smem = reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(raw) + 127) & ~uintptr_t(127));
      const int tid = team.team_rank() * vector_length + vector_lane();
      // The staged layouts (and the ldmatrix forms) follow the operands' contiguous dimension.
      with_operand_orders(p, [&](auto a_k, auto b_n) { run<a_k.value, b_n.value>(team, smem, m0, n0, tid); });
    }
  }
};

}  // namespace detail
}  // namespace tilekit
