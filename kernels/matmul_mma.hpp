// tilekit blocked matmul, tensor-core variant (CUDA sm_80 and newer; f16 and bf16 inputs, f32
// accumulation). Same TeamPolicy structure as the SIMT kernel in matmul_impl.hpp: one team per
// BM x BN tile of C in grouped order, A and B tiles staged in level-0 team scratch, every edge
// masked, the same fused epilogue. What differs is the inner level:
//
//   league  : one team per BM x BN tile of C, grouped order (GROUP_M tile-rows per group)
//   kt      : K in steps of BK; STAGES steps in flight: cp.async copies of step kt+STAGES-1 are
//             issued while the warps multiply step kt (one barrier per step)
//   warp    : each warp owns a WM x WN block of C as (WM/16) x (WN/16) f32 accumulator fragments
//   kk      : the BK depth in 16-deep slices; per slice, WM/16 A fragments and WN/16 B fragments
//             are loaded from scratch (wmma::load_matrix_sync) and multiplied (wmma::mma_sync)
//
// Staged layouts follow the operands, so that every copy is a 16-byte run of global memory: op(A)
// contiguous along K is staged [BM][BK+8] and read as a row_major fragment, op(A) contiguous along
// M is staged [BK][BM+8] and read col_major; likewise B. The +8 halves of padding put the 8 rows
// one ldmatrix phase reads in distinct shared-memory banks. Tiles at the edges of C or K, and
// operands whose rows are not 16-byte aligned, are staged element by element with masking instead.
//
// The epilogue goes through scratch: a warp stores one 16x16 accumulator fragment at a time into
// its own 1 KB of scratch (the fragment's register layout is unspecified), then each lane applies
// alpha/beta, bias and the activation to 8 elements and writes them to C, masked.
#pragma once

#include "kernels/matmul.hpp"
#include "kernels/matmul_team.hpp"
#include "tuning/matmul_tiles.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TILEKIT_MMA_DEVICE 1
#endif

namespace tilekit {
namespace detail {

/// The element type wmma fragments use for tilekit's 2-byte storage types (same bits).
template <class T>
struct WmmaElem {
  using type = void;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct WmmaElem<f16> {
  using type = __half;
};
template <>
struct WmmaElem<bf16> {
  using type = __nv_bfloat16;
};
#endif

/// major * 10 + minor of the CUDA device in use; 0 on other backends (where no tensor-core tile is in
/// the menu).
inline int device_compute_capability() {
#if defined(KOKKOS_ENABLE_CUDA)
  static const int cc = [] {
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
      return 0;
    return major * 10 + minor;
  }();
  return cc;
#else
  return 0;
#endif
}

/// Tensor-core tiles run f16 and bf16 inputs (accumulating in f32); check_matmul rejects others.
template <class TIn>
constexpr bool mma_input_supported() {
  return std::is_same<TIn, f16>::value || std::is_same<TIn, bf16>::value;
}

template <class ExecSpace, class Tile, class TIn, class TOut>
struct MmaMatmul {
  using compute = float;
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Tile::threads, Tile::MIN_TEAMS>>;
  using member_type = typename policy_type::member_type;

  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, WM = Tile::TM, WN = Tile::TN;
  static constexpr int STAGES = Tile::STAGES;
  static constexpr int kThreads = Tile::threads;
  static constexpr int kWarpsN = BN / WN;
  static constexpr int FM = WM / 16, FN = WN / 16;  // accumulator fragments per warp
  static constexpr int kPad = 8;                     // halves of padding per staged row (16 bytes)
  static constexpr int kScratchLevel = 0;
  static constexpr bool kSupported = mma_input_supported<TIn>();

  // Elements (2 bytes) of one staged A or B tile, in whichever layout the operand needs.
  static constexpr int kAElemsK = BM * (BK + kPad);  // [BM][BK+8]: op(A) contiguous along K
  static constexpr int kAElemsM = BK * (BM + kPad);  // [BK][BM+8]: op(A) contiguous along M
  static constexpr int kBElemsN = BK * (BN + kPad);  // [BK][BN+8]: op(B) contiguous along N
  static constexpr int kBElemsK = BN * (BK + kPad);  // [BN][BK+8]: op(B) contiguous along K
  static constexpr int kAElems = kAElemsK > kAElemsM ? kAElemsK : kAElemsM;
  static constexpr int kBElems = kBElemsN > kBElemsK ? kBElemsN : kBElemsK;
  static constexpr int kStageElems = kAElems + kBElems;
  static constexpr int kWarps = Tile::warps;
  static_assert((kAElems * 2) % 32 == 0 && (kStageElems * 2) % 32 == 0,
                "wmma loads need 32-byte aligned fragment pointers");
  static_assert(std::size_t(kWarps) * 256 * sizeof(float) <= std::size_t(STAGES) * kStageElems * 2,
                "the epilogue's per-warp 16x16 f32 buffers reuse the stage buffers");

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return std::size_t(STAGES) * kStageElems * 2 + 32;  // +32: the base is aligned up to 32 bytes
  }

  MatmulProblem<TIn, TOut> p;
  int group_m;
  int tiles_m, tiles_n;
  int vector_length;

  // --- staging -----------------------------------------------------------------------------------

#if defined(TILEKIT_MMA_DEVICE)
  // 16 bytes global -> shared without passing through registers (sm_80 cp.async, L1 bypassed).
  __device__ static void cp_async16(void* smem, const void* gmem) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
  }
  __device__ static void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
  template <int N>
  __device__ static void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
  }
#endif

  static KOKKOS_INLINE_FUNCTION uint16_t bits_of(const TIn& v) {
    uint16_t b;
    memcpy(&b, &v, 2);
    return b;
  }

  // Stage op(A)(m0:m0+BM, k0:k0+BK). A_K: op(A) contiguous along K (layout [BM][BK+8]), else along
  // M ([BK][BM+8]). `fast`: interior tile with 16-byte aligned rows, copied in 16-byte runs.
  template <bool A_K>
  KOKKOS_INLINE_FUNCTION void stage_a(uint16_t* As, int64_t m0, int64_t k0, bool fast, int tid) const {
    const auto& a = p.a;
    constexpr int LD = A_K ? BK + kPad : BM + kPad;
#if defined(TILEKIT_MMA_DEVICE)
    if (fast) {
      constexpr int runs_per_row = (A_K ? BK : BM) / 8;
      constexpr int runs = BM * BK / 8;
      for (int c = tid; c < runs; c += kThreads) {
        const int r = c / runs_per_row, e = (c % runs_per_row) * 8;  // row of the staged layout, first elem
        const TIn* src = A_K ? a.data + (m0 + r) * a.rs + (k0 + e) : a.data + (k0 + r) * a.cs + (m0 + e);
        cp_async16(As + r * LD + e, src);
      }
      return;
    }
#else
    (void)fast;
#endif
    for (int e = tid; e < BM * BK; e += kThreads) {
      // consecutive threads take consecutive elements along the contiguous dimension
      const int i = A_K ? e / BK : e % BM, k = A_K ? e % BK : e / BM;
      const int64_t gi = m0 + i, gk = k0 + k;
      const uint16_t v = (gi < p.M && gk < p.K) ? bits_of(a(gi, gk)) : uint16_t(0);
      As[A_K ? i * LD + k : k * LD + i] = v;
    }
  }

  // Stage op(B)(k0:k0+BK, n0:n0+BN). B_N: op(B) contiguous along N ([BK][BN+8]), else along K
  // ([BN][BK+8]).
  template <bool B_N>
  KOKKOS_INLINE_FUNCTION void stage_b(uint16_t* Bs, int64_t k0, int64_t n0, bool fast, int tid) const {
    const auto& b = p.b;
    constexpr int LD = B_N ? BN + kPad : BK + kPad;
#if defined(TILEKIT_MMA_DEVICE)
    if (fast) {
      constexpr int runs_per_row = (B_N ? BN : BK) / 8;
      constexpr int runs = BK * BN / 8;
      for (int c = tid; c < runs; c += kThreads) {
        const int r = c / runs_per_row, e = (c % runs_per_row) * 8;
        const TIn* src = B_N ? b.data + (k0 + r) * b.rs + (n0 + e) : b.data + (n0 + r) * b.cs + (k0 + e);
        cp_async16(Bs + r * LD + e, src);
      }
      return;
    }
#else
    (void)fast;
#endif
    for (int e = tid; e < BK * BN; e += kThreads) {
      const int j = B_N ? e % BN : e / BK, k = B_N ? e / BN : e % BK;
      const int64_t gk = k0 + k, gj = n0 + j;
      const uint16_t v = (gk < p.K && gj < p.N) ? bits_of(b(gk, gj)) : uint16_t(0);
      Bs[B_N ? k * LD + j : j * LD + k] = v;
    }
  }

  // --- the K loop and the epilogue ----------------------------------------------------------------

  template <bool A_K, bool B_N>
  KOKKOS_INLINE_FUNCTION void run(const member_type& team, uint16_t* smem, int64_t m0, int64_t n0, int tid) const {
#if defined(TILEKIT_MMA_DEVICE)
    using namespace nvcuda;
    using E = typename WmmaElem<TIn>::type;
    using LA = std::conditional_t<A_K, wmma::row_major, wmma::col_major>;
    using LB = std::conditional_t<B_N, wmma::row_major, wmma::col_major>;
    constexpr int LDA = A_K ? BK + kPad : BM + kPad;
    constexpr int LDB = B_N ? BN + kPad : BK + kPad;

    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp / kWarpsN, wn = warp % kWarpsN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    // 16-byte runs need 16-byte aligned rows: the base and the leading stride (in elements) % 8.
    const auto& a = p.a;
    const auto& b = p.b;
    const bool a_aligned = (reinterpret_cast<uintptr_t>(a.data) % 16 == 0) && (A_K ? a.rs : a.cs) % 8 == 0;
    const bool b_aligned = (reinterpret_cast<uintptr_t>(b.data) % 16 == 0) && (B_N ? b.rs : b.cs) % 8 == 0;
    const bool full_mn = m0 + BM <= p.M && n0 + BN <= p.N;
    const int64_t ktiles = (p.K + BK - 1) / BK;

    auto stage = [&](int64_t kt) {
      uint16_t* As = smem + (kt % STAGES) * kStageElems;
      const int64_t k0 = kt * BK;
      const bool full = full_mn && k0 + BK <= p.K;
      stage_a<A_K>(As, m0, k0, full && a_aligned, tid);
      stage_b<B_N>(As + kAElems, k0, n0, full && b_aligned, tid);
    };

    // Prologue: STAGES-1 steps in flight. Every thread commits one group per step, empty or not,
    // so that wait_group<STAGES-2> always means "step kt has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) stage(s);
      cp_async_commit();
    }
    for (int64_t kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<STAGES - 2>();  // this thread's copies of step kt are in scratch
      // Everyone's copies of step kt are in, and everyone is done with step kt-1, whose buffer
      // the next line refills.
      team.team_barrier();
      if (kt + STAGES - 1 < ktiles) stage(kt + STAGES - 1);
      cp_async_commit();

      const E* As = reinterpret_cast<const E*>(smem + (kt % STAGES) * kStageElems);
      const E* Bs = reinterpret_cast<const E*>(smem + (kt % STAGES) * kStageElems + kAElems);
#pragma unroll
      for (int kk = 0; kk < BK; kk += 16) {  // 16-deep slices of the staged step
        wmma::fragment<wmma::matrix_a, 16, 16, 16, E, LA> fa[FM];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, E, LB> fb[FN];
#pragma unroll
        for (int i = 0; i < FM; ++i) {
          const int r = wm * WM + i * 16;
          wmma::load_matrix_sync(fa[i], A_K ? As + r * LDA + kk : As + kk * LDA + r, LDA);
        }
#pragma unroll
        for (int j = 0; j < FN; ++j) {
          const int c = wn * WN + j * 16;
          wmma::load_matrix_sync(fb[j], B_N ? Bs + kk * LDB + c : Bs + c * LDB + kk, LDB);
        }
#pragma unroll
        for (int i = 0; i < FM; ++i)
#pragma unroll
          for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
      }
    }
    cp_async_wait<0>();
    team.team_barrier();  // the stage buffers become the epilogue's per-warp buffers

    // Epilogue, one fragment at a time through this warp's 16x16 f32 buffer. A lane takes 8
    // consecutive elements along whichever dimension of C is contiguous.
    float* buf = reinterpret_cast<float*>(smem) + warp * 256;
    const auto& c = p.c;
    const bool c_col = c.rs == 1 && c.cs != 1;
#pragma unroll
    for (int i = 0; i < FM; ++i) {
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        wmma::store_matrix_sync(buf, acc[i][j], 16, wmma::mem_row_major);
        __syncwarp();
        const int64_t r0 = m0 + wm * WM + i * 16, c0 = n0 + wn * WN + j * 16;
#pragma unroll
        for (int t = 0; t < 8; ++t) {
          const int fr = c_col ? (lane % 2) * 8 + t : lane / 2;  // row in the fragment
          const int fc = c_col ? lane / 2 : (lane % 2) * 8 + t;  // column in the fragment
          const int64_t gi = r0 + fr, gj = c0 + fc;
          if (gi >= p.M || gj >= p.N) continue;
          float v = p.alpha * buf[fr * 16 + fc];
          TOut& out = c(gi, gj);
          if (p.beta != 0.0f) v += p.beta * convert<float>(out);  // beta == 0: C is not read
          if (p.bias) v += p.bias[gj];
          out = convert<TOut>(activate(p.act, v));
        }
        __syncwarp();
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
      uint16_t* smem = reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(raw) + 31) & ~uintptr_t(31));
      const int tid = team.team_rank() * vector_length + vector_lane();
      // The staged layouts (and so the fragment layouts) follow the operands' contiguous dimension.
      const bool a_k = p.a.cs == 1;
      const bool b_n = p.b.cs == 1;
      if (a_k && b_n) run<true, true>(team, smem, m0, n0, tid);
      else if (a_k) run<true, false>(team, smem, m0, n0, tid);
      else if (b_n) run<false, true>(team, smem, m0, n0, tid);
      else run<false, false>(team, smem, m0, n0, tid);
    }
  }
};

}  // namespace detail
}  // namespace tilekit
