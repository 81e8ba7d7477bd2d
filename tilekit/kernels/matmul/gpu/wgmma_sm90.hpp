// tilekit blocked matmul, Hopper warpgroup-MMA path (sm_90a: H100, H200): f16 and bf16 inputs, f32
// accumulation, `wgmma.mma_async` reading both operands straight from 128-byte-swizzled team
// scratch, fed by a STAGES-deep cp.async pipeline. Same TeamPolicy structure as the other kernels:
// one team per BM x BN tile of C in grouped order, A and B staged in level-0 team scratch, every
// edge masked, the same fused epilogue.
//
//   league    : one team per BM x BN tile of C, grouped order (GROUP_M tile-rows per group)
//   kt        : K in steps of BK = 64 (one 128-byte swizzle row of 2-byte elements); STAGES-1
//               steps in flight (cp.async) while the warpgroups multiply step kt (one barrier per
//               step; a step's MMAs are waited for before the next step)
//   warpgroup : 4 warps (128 threads) own 64 rows x BN columns of C; BM / 64 warpgroups per team
//   k16       : BK in 16-deep slices, one wgmma.m64nBNk16 each (asynchronous; committed per step)
//
// Scratch layouts are the canonical 128-byte-swizzled wgmma layouts, in 1024-byte atoms of 8 rows x
// 64 elements with the 16-byte chunks of row r XOR-ed with r % 8 (swizzled_offset<64>):
//   operand contiguous along K (K-major): [rows][64 k]; a k16 slice starts 32 bytes further
//     (stride between 8-row groups, SBO, 1024 bytes);
//   contiguous along M or N (MN-major, wgmma's transpose bit): [MN / 64 blocks][64 k][64 mn]; a
//     k16 slice starts 16 rows (2048 bytes) further (SBO 1024 bytes between 8-k-row groups, LBO
//     64 x 128 bytes between 64-wide blocks along MN).
// cp.async writes scratch through the generic proxy and wgmma reads it through the async proxy, so
// each thread fences (fence.proxy.async) its landed copies before the step's barrier.
//
// The epilogue works from the accumulator registers (the m16n8 layout of mma.sync per warp and n8
// block): alpha, beta (C read only when beta != 0), bias, activation, conversion, masked store.
#pragma once

#include "tilekit/kernels/matmul/gpu/mma_sm80.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

// wgmma exists only in the sm_90a device pass (architecture-specific features of 9.0).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TILEKIT_SM90A_DEVICE 1
#endif

namespace tilekit {
namespace detail {

#if defined(TILEKIT_SM90A_DEVICE)
#include "tilekit/kernels/matmul/gpu/wgmma_sm90_calls.inc"

/// A wgmma shared-memory matrix descriptor with 128-byte swizzling: start address, leading and
/// stride byte offsets (all in 16-byte units), swizzle mode 1 (128 B) in bits 62-63.
__device__ inline uint64_t wgmma_descriptor(const void* smem, int leading_bytes, int stride_bytes) {
  const uint64_t addr = smem_addr(smem);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t((leading_bytes >> 4) & 0x3FFF) << 16) |
         (uint64_t((stride_bytes >> 4) & 0x3FFF) << 32) | (uint64_t(1) << 62);
}
__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Pins a register the asynchronous MMAs accumulate into: the compiler must not move or redefine it
// while they are in flight (else ptxas serialises the wgmma pipeline, warning C7515).
__device__ inline void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }
/// The same for a register that holds an i32 accumulator's bits (the s8 wgmma binds it as "+r": a
/// "+f" fence in between would add moves between the two views, non-wgmma instructions reading the
/// accumulators, which make ptxas serialise the wgmmas, C7514).
__device__ inline void fence_operand_bits(float& r) { asm volatile("" : "+r"(reinterpret_cast<int&>(r))::"memory"); }
/// The same for a register an asynchronous MMA reads (a TF32 A fragment): kept, unchanged, until the
/// fence after the wait that retires that MMA.
__device__ inline void fence_operand_u32(uint32_t& r) { asm volatile("" : "+r"(r)::"memory"); }
__device__ inline void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
#endif

/// Offset of element (r, c) in a wgmma staging layout whose rows hold C elements along the
/// contiguous dimension: 64-wide blocks of [R rows][64] (C == 64 is a single block), each in
/// 1024-byte swizzle atoms.
template <int R, int C>
struct WgmmaOffset {
  static_assert(C % 64 == 0, "wgmma staging rows are whole 128-byte swizzle rows");
  KOKKOS_INLINE_FUNCTION constexpr int operator()(int r, int c) const {
    return (c >> 6) * (R * 64) + swizzled_offset<64>(r, c & 63);
  }
};

/// Stages an R x C tile (C along the operand's contiguous dimension, `src` 16-byte aligned rows)
/// into the layout WgmmaOffset<R, C> in whole 16-byte cp.async chunks, those past rows_left x
/// cols_left zero-filled; T threads share it. Thread tid copies chunk column tid % 8 of rows
/// tid / 8 + (T / 8) u of every 64-column block, so all its chunks lie at fixed distances from one
/// base in scratch (the swizzle term, r % 8, is the same for all of them) and in global memory:
/// an address add, two compares and the copy per chunk. stage_tile's general loop spent some 25
/// instructions per chunk on index arithmetic, which made the copies, not the MMAs, the bottleneck
/// of a warp-specialised producer (docs/perf-notes.md).
template <int R, int C, int T>
KOKKOS_INLINE_FUNCTION void stage_wgmma_chunks(uint16_t* dst, const uint16_t* src, int64_t row_stride,
                                               int64_t rows_left, int64_t cols_left, int tid) {
#if defined(TILEKIT_SM80_DEVICE)
  constexpr int kRowStep = T / 8;
  static_assert(T % 64 == 0 && R % kRowStep == 0 && C % 64 == 0, "whole 8-row swizzle groups per thread");
  const int r0 = tid / 8, cc = tid % 8;
  uint16_t* d0 = dst + r0 * 64 + ((cc ^ (r0 & 7)) * 8);
  const uint16_t* s0 = src + r0 * row_stride + cc * 8;
  const int64_t step = kRowStep * row_stride;
#pragma unroll
  for (int b = 0; b < C / 64; ++b) {
#pragma unroll
    for (int u = 0; u < R / kRowStep; ++u) {
      const bool valid = r0 + kRowStep * u < rows_left && b * 64 + cc * 8 < cols_left;
      const uint16_t* from = valid ? s0 + u * step + b * 64 : src;  // any valid address when zero-filling
      cp_async16(d0 + b * R * 64 + u * kRowStep * 64, from, valid ? 16 : 0);
    }
  }
#else
  (void)dst, (void)src, (void)row_stride, (void)rows_left, (void)cols_left, (void)tid;
#endif
}

/// Stages one operand tile into the wgmma layout: 16-byte chunks when `chunked`, else element by
/// element (stage_tile).
template <int R, int C, int T, class TIn>
KOKKOS_INLINE_FUNCTION void stage_wgmma_tile(uint16_t* dst, const TIn* src, int64_t row_stride, int64_t col_stride,
                                             int64_t rows_left, int64_t cols_left, bool chunked, int tid) {
  if (chunked)
    stage_wgmma_chunks<R, C, T>(dst, reinterpret_cast<const uint16_t*>(src), row_stride, rows_left, cols_left, tid);
  else
    stage_tile<R, C, T>(dst, src, row_stride, col_stride, rows_left, cols_left, false, tid, WgmmaOffset<R, C>{});
}

/// Stages K step k0 of op(A) and op(B) into one stage buffer of the wgmma layouts, T threads:
///   A contiguous along K: [BM][64 k]; along M: [BM / 64][64 k][64 m]
///   B contiguous along N: [BN / 64][64 k][64 n]; along K: [BN][64 k]
template <int BM, int BN, int BK, int T, bool A_K, bool B_N, class TIn, class TOut>
KOKKOS_INLINE_FUNCTION void stage_wgmma_step(uint16_t* As, uint16_t* Bs, const MatmulProblem<TIn, TOut>& p, int64_t m0,
                                             int64_t n0, int64_t k0, bool a_chunked, bool b_chunked, int tid) {
  const auto& a = p.a;
  const auto& b = p.b;
  if constexpr (A_K)
    stage_wgmma_tile<BM, BK, T>(As, a.data + m0 * a.rs + k0 * a.cs, a.rs, a.cs, p.M - m0, p.K - k0, a_chunked, tid);
  else
    stage_wgmma_tile<BK, BM, T>(As, a.data + k0 * a.cs + m0 * a.rs, a.cs, a.rs, p.K - k0, p.M - m0, a_chunked, tid);
  if constexpr (B_N)
    stage_wgmma_tile<BK, BN, T>(Bs, b.data + k0 * b.rs + n0 * b.cs, b.rs, b.cs, p.K - k0, p.N - n0, b_chunked, tid);
  else
    stage_wgmma_tile<BN, BK, T>(Bs, b.data + n0 * b.cs + k0 * b.rs, b.cs, b.rs, p.N - n0, p.K - k0, b_chunked, tid);
}

#if defined(TILEKIT_SM90A_DEVICE)
/// One warpgroup's MMAs of a staged K step, committed as one group (not waited for): BK / 16
/// wgmma.m64nBNk16 on its 64 rows of A (As: rows 64w.. of [BM][64] K-major, or block w of
/// [BM / 64][64][64] M-major: the same offset) and all of B.
template <int BN, int BK, bool BF16, bool A_K, bool B_N>
__device__ inline void wgmma_step(float (&acc)[BN / 2], const uint16_t* As, const uint16_t* Bs) {
  // Descriptor strides (bytes): 8-row groups 1024 apart; MN-major blocks of 64 x 64 elements.
  constexpr int kSBO = 1024, kLBO_MN = 64 * 128;
#pragma unroll
  for (int v = 0; v < BN / 2; ++v) fence_operand(acc[v]);
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < BK / 16; ++ks) {
    // K-major: a k16 slice is 16 elements (32 bytes) along the swizzled row; MN-major: 16 rows.
    const uint64_t da = A_K ? wgmma_descriptor(As + ks * 16, 16, kSBO) : wgmma_descriptor(As + ks * 16 * 64, kLBO_MN, kSBO);
    const uint64_t db = B_N ? wgmma_descriptor(Bs + ks * 16 * 64, kLBO_MN, kSBO) : wgmma_descriptor(Bs + ks * 16, 16, kSBO);
    wgmma_m64k16<BN, BF16, A_K ? 0 : 1, B_N ? 1 : 0>(acc, da, db);
  }
  wgmma_commit();
}

/// The TF32 form of wgmma_step (f32 inputs, the warp-specialised TF32 tile): both operands K-major,
/// rows of 32 four-byte elements in the same 128-byte swizzled layout ([rows][32 k]), so a k8 slice
/// is again 32 bytes along the row: 4 wgmma.m64nBNk8 per K step of BK = 32.
template <int BN>
__device__ inline void wgmma_step_tf32(float (&acc)[BN / 2], const uint16_t* As, const uint16_t* Bs) {
  constexpr int kSBO = 1024;
#pragma unroll
  for (int v = 0; v < BN / 2; ++v) fence_operand(acc[v]);
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < 4; ++ks)  // As, Bs count 2-byte units: 16 of them are one k8 slice of 4-byte elements
    wgmma_m64k8_tf32<BN>(acc, wgmma_descriptor(As + ks * 16, 16, kSBO), wgmma_descriptor(Bs + ks * 16, 16, kSBO));
  wgmma_commit();
}

/// One warpgroup's A fragment of k8 slice ks of a TF32 K step, from an A stored along M (the
/// warp-specialised TF32 tiles with A from registers): As holds its 64 rows as two blocks of
/// [32 k][32 m] (TMA boxes of one 128-byte row per k, 16-byte chunks of row k XOR-ed with k % 8).
/// a[v] is value v in wgmma's register layout (wgmma_m64k8_tf32_rs): warp w, g = lane / 4,
/// t = lane % 4 hold rows 16 w + g (+ 8) and columns t (+ 4). A warp's loads fall on 16 banks
/// (2-way conflicts).
__device__ inline void load_tf32_a_fragment_slice(uint32_t (&a)[4], const uint16_t* As, int ks, int tid_in_wg) {
  const uint32_t* A = reinterpret_cast<const uint32_t*>(As);
  const int w = tid_in_wg / 32, lane = tid_in_wg % 32, g = lane / 4, t = lane % 4;
  const int m = 16 * (w & 1) + g;  // the row in its 32-row block; m + 8 is in the same block
  const uint32_t* slice = A + (w >> 1) * 32 * 32 + ks * 8 * 32;
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // column t + 4h: k % 8 = t + 4h in every slice
    const int k = t + 4 * h;
#pragma unroll
    for (int r = 0; r < 2; ++r)  // row m + 8r
      a[2 * h + r] = slice[k * 32 + ((((m + 8 * r) >> 2) ^ k) << 2) + (g & 3)];
  }
}

/// The i8 form of wgmma_step (the warp-specialised i8 tiles): both operands K-major, rows of 128
/// one-byte elements in the same 128-byte swizzled layout ([rows][128 k]), so a k32 slice is again
/// 32 bytes along the row: 4 wgmma.m64nBNk32.s32.s8.s8 per K step of BK = 128. The i32
/// accumulators live in acc's registers bit for bit (read them with __float_as_int).
template <int BN>
__device__ inline void wgmma_step_s8(float (&acc)[BN / 2], const uint16_t* As, const uint16_t* Bs) {
  constexpr int kSBO = 1024;
#pragma unroll
  for (int v = 0; v < BN / 2; ++v) fence_operand_bits(acc[v]);
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < 4; ++ks)  // As, Bs count 2-byte units: 16 of them are one k32 slice of bytes
    wgmma_m64k32_s8<BN>(acc, wgmma_descriptor(As + ks * 16, 16, kSBO), wgmma_descriptor(Bs + ks * 16, 16, kSBO));
  wgmma_commit();
}

/// Whether C's rows take the epilogue's vector stores (store_block_pair_wide): row-major, a base and
/// a pitch of whole 4-element vectors (8 bytes for 16-bit C, 16 for 32-bit).
template <class TOut>
__device__ inline bool wide_store_rows(const StridedMatrix<TOut>& c) {
  return c.cs == 1 && reinterpret_cast<uintptr_t>(c.data) % (4 * sizeof(TOut)) == 0 && c.rs % 4 == 0;
}

/// This thread's lane in its warp.
__device__ inline int lane_in_warp() {
  int lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

/// One row's outputs of the n8 blocks j and j + 1 as one vector store per lane. The four lanes t of
/// a row hold two adjacent outputs of each block (a: block j, b: block j + 1; W 32-bit words: 1 for
/// 16-bit C, 2 for 32-bit C); after one exchange between lanes t and t ^ 1, even lanes hold columns
/// 2t .. 2t + 3 of block j and odd lanes columns 2t - 2 .. 2t + 1 of block j + 1, so that the row's
/// 16 outputs leave in four stores that fill whole 32-byte sectors. Stored as pairs, every sector
/// took two stores of half of it each, and the L2 (at 85% of its throughput) bounded the short-K
/// products (f16 16384^2 x 256; perf notes 51). row_j: the row's column 8j; all 32 lanes take part.
template <int W>
__device__ inline void store_block_pair_wide(void* row_j, int t, const uint32_t (&a)[W], const uint32_t (&b)[W]) {
  const bool odd = t & 1;
  uint32_t lo[W], hi[W];
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const uint32_t keep = odd ? b[w] : a[w];
    const uint32_t other = __shfl_xor_sync(0xffffffffu, odd ? a[w] : b[w], 1);
    lo[w] = odd ? other : keep;
    hi[w] = odd ? keep : other;
  }
  char* const dst = static_cast<char*>(row_j) + (odd ? 2 * t + 6 : 2 * t) * (2 * W);
  if constexpr (W == 1)
    *reinterpret_cast<uint2*>(dst) = make_uint2(lo[0], hi[0]);
  else
    *reinterpret_cast<uint4*>(dst) = make_uint4(lo[0], lo[1], hi[0], hi[1]);
}

/// Epilogue of a warpgroup's 64 x BN i32 accumulators (i8 inputs; acc holds their bits, the layout
/// of store_wgmma_accumulators): C = alpha acc + beta C + bias, relu where asked, in i32 (exact,
/// as the other i8 tiles), each element predicated on lying inside C. row0: the warpgroup's first
/// row of C.
template <int BN, class TIn, class TOut>
__device__ inline void store_wgmma_s32(const MatmulProblem<TIn, TOut>& p, const float (&acc)[BN / 2], int64_t row0,
                                       int64_t n0, int tid_in_wg) {
  using compute = typename MatmulProblem<TIn, TOut>::compute;
  const int lane = tid_in_wg % 32, warp = tid_in_wg / 32, g = lane / 4, t = lane % 4;
  const int64_t r0 = row0 + warp * 16 + g, c0 = n0 + t * 2;
  const int64_t rows_left = p.M - r0, cols_left = p.N - c0;
  const compute alpha = p.alpha, beta = p.beta;
  const bool relu = p.act == Activation::relu;
  auto value = [&](int j, int v, const TOut& out) {
    compute x = alpha * compute(__float_as_int(acc[j * 4 + v]));
    if (beta != compute(0)) x += beta * compute(out);
    if (p.bias) x += p.bias[c0 + j * 8 + v % 2];
    if (relu && x < compute(0)) x = compute(0);
    return TOut(x);
  };
  if constexpr (sizeof(TOut) == 4) {
    if (p.M - row0 >= 64 && p.N - n0 >= BN && wide_store_rows(p.c)) {  // a whole tile: 16-byte stores
#pragma unroll
      for (int j = 0; j < BN / 8; j += 2) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          TOut* const row = &p.c(r0 + h * 8, n0);
          uint32_t a[2], b[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const TOut ya = value(j, 2 * h + e, row[j * 8 + 2 * t + e]);
            const TOut yb = value(j + 1, 2 * h + e, row[(j + 1) * 8 + 2 * t + e]);
            a[e] = reinterpret_cast<const uint32_t&>(ya);
            b[e] = reinterpret_cast<const uint32_t&>(yb);
          }
          store_block_pair_wide<2>(row + j * 8, t, a, b);
        }
      }
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const int row = (v / 2) * 8, col = j * 8 + v % 2;
      if (row < rows_left && col < cols_left) {
        TOut& out = p.c(r0 + row, c0 + col);
        out = value(j, v, out);
      }
    }
  }
}

/// Two f32 values rounded to one packed pair of 16-bit floats (TOut f16 or bf16), `lo` in the low
/// half: one cvt.rn.{f16,bf16}x2.f32 (its first source goes to the upper half) for two elements.
template <class TOut>
__device__ inline uint32_t pack_pair_rn(float lo, float hi) {
  uint32_t r;
  if constexpr (std::is_same<TOut, f16>::value)
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

/// Stores one packed pair of 16-bit outputs: as one 4-byte store at p0 where `pair` (row-major C,
/// aligned), else its low half at p0 and its high half `step` bytes further. Predicated in PTX:
/// written as an if/else in C++, nvcc turned each pair's choice into a branch with a convergence
/// barrier (BSSY/BSYNC) in the epilogue without a C read, 61 of them in a 128x256 tile's, and that
/// kernel lost 1.2 us at f16 2048^3 (perf notes 32). The memory clobber keeps later reads behind
/// the store, as a C++ store through C's pointer did.
__device__ inline void store_packed_pair(void* p0, int64_t step, uint32_t y, bool pair) {
  asm volatile(
      "{\n\t.reg .pred p;\n\t.reg .b16 lo, hi;\n\t.reg .b64 a1;\n\tsetp.ne.b32 p, %3, 0;\n\t"
      "mov.b32 {lo, hi}, %2;\n\tadd.s64 a1, %0, %1;\n\t@p st.global.b32 [%0], %2;\n\t"
      "@!p st.global.b16 [%0], lo;\n\t@!p st.global.b16 [a1], hi;\n\t}\n" ::"l"(p0),
      "l"(step), "r"(y), "r"(int(pair))
      : "memory");
}

/// Whether the wgmma epilogue's 16-bit gelu takes its inputs halved (activate_pair): then alpha,
/// beta and the staged bias (stage_wgmma_bias) carry the 1/2.
template <class TOut>
KOKKOS_INLINE_FUNCTION constexpr bool halved_gelu_input(Activation act) {
  return act == Activation::gelu && sizeof(TOut) == 2;
}
template <Activation ACT, class TOut>
constexpr bool kHalvedGeluInput = halved_gelu_input<TOut>(ACT);

/// The activation of two adjacent outputs of a 16-bit C, rounded and packed. gelu takes g = x / 2
/// (kHalvedGeluInput: the caller folds the 1/2 into its multiply-adds) and runs on the packed pair
/// from the conversion on: gelu(x) = 0.5 x (1 + tanh u) = g + g tanh u, u = x (C0 + C1 x^2) =
/// g (2 C0 + 8 C1 g^2): a square, a multiply-add, a multiply, tanh.approx.{f16,bf16}x2 and a
/// multiply-add, 6 instructions a pair with the conversion (the same in f32 up to u took 15 and cost
/// the 64x128 ws tile ~12% at 1024^3, perf notes 23; with x itself, 8: perf notes 32). Its error: u's
/// three 16-bit roundings and the approximate tanh, ~2^-11 of x in f16 and ~2^-8 in bf16, about the
/// output's own rounding. In f16 the conversion saturates (.satfinite): g beyond +-65504 becomes
/// +-65504, so that g stays finite where x / 2 overflows (there gelu is -0: g - g = 0, where an
/// infinite g would give NaN; for positive x, g + g overflows to inf as it should); NaN stays NaN.
/// g^2 and u may overflow to inf, where tanh saturates as it should.
template <Activation ACT, class TOut>
__device__ inline uint32_t activate_pair(float x0, float x1) {
  if constexpr (ACT == Activation::gelu) {
    uint32_t g, s, c, u, t, y;
    if constexpr (std::is_same<TOut, f16>::value) {
      // constants as f16 pairs: 2 C0 = 2 sqrt(2 / pi), 8 C1 = 8 C0 x 0.044715 (C0, C1 scaled by
      // powers of two: the same significands as before the halving)
      asm("cvt.rn.satfinite.f16x2.f32 %0, %1, %2;" : "=r"(g) : "f"(x1), "f"(x0));
      asm("mul.rn.f16x2 %0, %1, %1;" : "=r"(s) : "r"(g));
      asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(c) : "r"(s), "r"(0x34913491u), "r"(0x3e623e62u));
      asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(u) : "r"(g), "r"(c));
      asm("tanh.approx.f16x2 %0, %1;" : "=r"(t) : "r"(u));
      asm("fma.rn.f16x2 %0, %1, %2, %1;" : "=r"(y) : "r"(g), "r"(t));
    } else {
      // bf16 pairs: 2 C0, 8 C1 (mul.bf16x2: sm_90)
      g = pack_pair_rn<TOut>(x0, x1);
      asm("mul.rn.bf16x2 %0, %1, %1;" : "=r"(s) : "r"(g));
      asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(c) : "r"(s), "r"(0x3e923e92u), "r"(0x3fcc3fccu));
      asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(u) : "r"(g), "r"(c));
      asm("tanh.approx.bf16x2 %0, %1;" : "=r"(t) : "r"(u));
      asm("fma.rn.bf16x2 %0, %1, %2, %1;" : "=r"(y) : "r"(g), "r"(t));
    }
    return y;
  } else {
    return pack_pair_rn<TOut>(activate_fixed<ACT>(x0), activate_fixed<ACT>(x1));
  }
}

/// Whether a wgmma kernel starts its accumulators from bias / alpha (load_wgmma_bias) instead of
/// adding the bias in the epilogue: for 1 <= |alpha| < inf, where bias / alpha neither overflows nor
/// divides by zero, and alpha (bias / alpha) = bias up to f32 rounding (exactly for alpha = 1).
KOKKOS_INLINE_FUNCTION bool bias_folds_into_accumulators(float alpha) {
  const float a = alpha < 0.0f ? -alpha : alpha;
  return a >= 1.0f && a <= 3.402823466e38f;
}

/// The accumulators of one warpgroup's 64 x BN tile (the layout of store_wgmma_accumulators) set
/// to scale times the tile's bias as stage_wgmma_bias left it in shared memory (before a barrier;
/// scale = 1 / alpha), so that the MMAs add the product to them and the epilogue has no bias to
/// read: its reads and its barrier cost the 64x128 tile's epilogue ~650 cycles at f16 1024^3 (perf
/// notes 34). tile_bias null: zeros. One definition of each accumulator either way (predicated reads
/// and selects): set in two branches, ptxas serialised every wgmma of the kernel (C7515, 'non
/// wgmma instructions defining accumulator registers'; f16 1024^3 8.7 -> 10.9 us without a bias).
/// (Read straight from global memory instead, 32 scalar loads a thread where the staged copy takes
/// one, the 64x128 bias kernels ran ~0.8 us slower at 1024^3: perf notes 35.)
template <int BN>
__device__ inline void load_wgmma_bias(float (&acc)[BN / 2], const float* tile_bias, float scale, int tid_in_wg) {
  const float* const lb = tile_bias ? in_shared_window(tile_bias) + (tid_in_wg % 4) * (BN / 4) : nullptr;
#pragma unroll
  for (int q = 0; q < BN / 16; ++q) {  // lane t's values of n8 blocks 2q, 2q + 1: one 16-byte read
    const float4 v = lb ? reinterpret_cast<const float4*>(lb)[q] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    acc[8 * q] = acc[8 * q + 2] = scale * v.x;
    acc[8 * q + 1] = acc[8 * q + 3] = scale * v.y;
    acc[8 * q + 4] = acc[8 * q + 6] = scale * v.z;
    acc[8 * q + 5] = acc[8 * q + 7] = scale * v.w;
  }
}

/// Stages the bias of one wgmma tile (columns n0 .. n0 + BN - 1) in team scratch for
/// store_wgmma_accumulators, THREADS threads (tid = 0 .. THREADS - 1) sharing the copy (the kernels
/// call it before their main loop, whose barriers make it visible). dst: BN floats of team scratch,
/// 16-byte aligned.
/// Layout: the four lanes t = lane % 4 that share a row of C hold columns 8j + 2t and 8j + 2t + 1
/// of each n8 block j, so lane t's BN / 4 values are stored contiguously (column q at
/// [(q % 8) / 2][q / 8][q % 2]) and read as 16-byte vectors. Columns past N get 0. Scaled by 1/2
/// where the activation takes halved inputs (halved_gelu_input). Every read is issued before the
/// first store, so their latencies overlap.
template <int BN, int THREADS, class TOut>
__device__ inline void stage_wgmma_bias(float* dst, const float* bias, int64_t n0, int64_t N, Activation act, int tid) {
  constexpr int kPerThread = (BN + THREADS - 1) / THREADS;
  const float scale = halved_gelu_input<TOut>(act) ? 0.5f : 1.0f;
  float v[kPerThread];
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int q = tid + i * THREADS;
    v[i] = q < BN && n0 + q < N ? scale * bias[n0 + q] : 0.0f;
  }
  float* const d = in_shared_window(dst);
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int q = tid + i * THREADS;
    if (q < BN) d[((q % 8) / 2) * (BN / 4) + (q / 8) * 2 + q % 2] = v[i];
  }
}

/// Epilogue of a warpgroup's 64 x BN accumulators that lie wholly inside C, with the activation and
/// whether C is read (BETA) fixed at compile time: per accumulator one multiply-add (alpha times the
/// accumulator plus the bias), one more where beta != 0, the activation, a conversion and a store at
/// an address one add from the last. Why not store_c_element for these: inlined 128 times (BN = 256)
/// with its bounds checks, 64-bit index products and the switch over every activation, that epilogue
/// was ~100 KB of code run once per tile, and Nsight Compute showed 'no instruction' (instruction-
/// cache misses) as the largest stall where tiles are short (f16 4096^3: 8.8 of 18.7 cycles per
/// issued instruction; 0.9 at K = 65536). Why BETA a template argument: with beta a run-time test
/// the compiler predicated the C read, its conversion and its multiply-add off, three issued
/// instructions an element for nothing where beta = 0 (perf notes 32).
/// lane_bias: null (no bias), or this lane's BN / 4 staged bias values (stage_wgmma_bias); BIAS false:
/// no bias, lane_bias not read (the copy store_wgmma_interior_beta takes at BN = 256).
template <int BN, Activation ACT, bool BETA, bool BIAS, class TIn, class TOut>
__device__ inline void store_wgmma_interior(const MatmulProblem<TIn, TOut>& p, const float (&acc)[BN / 2],
                                            int64_t r0, int64_t c0, const float* lane_bias) {
  TOut* const base = &p.c(r0, c0);
  const int64_t rs8 = 8 * p.c.rs, cs = p.c.cs;
  constexpr float kScale = kHalvedGeluInput<ACT, TOut> ? 0.5f : 1.0f;
  const float alpha = kScale * p.alpha, beta = kScale * p.beta;
  // In groups of kGroup n8 blocks, two phases: the group's output values first (C read where beta
  // != 0, bias read, activation), then its stores. Interleaved, each value's C read had to wait for
  // the store before it (the compiler cannot tell that they do not alias), so the epilogue ran one
  // dependency chain after the other; gelu's chain (multiply-adds, conversion, MUFU tanh, packed
  // fma) is ~80 cycles, and where a scheduler has one consumer warp (the 64x128 tile at 1024^3)
  // nothing else hid it. Whole-tile phases let the compiler hoist every load: spills.
  // BN = 256: groups of 1 (the 168-register ws tile spilled 88 bytes with them, 160 with groups of 2,
  // 348 with 4; its two consumer warpgroups give each scheduler two warps to interleave).
  constexpr int kGroup = BN >= 256 ? 1 : 4;
  static_assert((BN / 8) % kGroup == 0, "whole groups of n8 blocks");
  // The group's bias pairs: b[2 jj + e] for column 8 (j0 + jj) + 2t + e (16- or 8-byte reads).
  auto group_bias = [&](int j0, float (&b)[2 * kGroup]) {
    if (BIAS && lane_bias) {
      if constexpr (kGroup % 2 == 0) {
#pragma unroll
        for (int q = 0; q < kGroup / 2; ++q) {
          const float4 v = reinterpret_cast<const float4*>(lane_bias + 2 * j0)[q];
          b[4 * q] = v.x, b[4 * q + 1] = v.y, b[4 * q + 2] = v.z, b[4 * q + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int q = 0; q < kGroup; ++q) {
          const float2 v = reinterpret_cast<const float2*>(lane_bias + 2 * j0)[q];
          b[2 * q] = v.x, b[2 * q + 1] = v.y;
        }
      }
    } else {
#pragma unroll
      for (int q = 0; q < 2 * kGroup; ++q) b[q] = 0.0f;
    }
  };
  // Row-major C on whole vectors: two n8 blocks at a time, each row's outputs in one vector store a
  // lane (store_block_pair_wide).
  if (wide_store_rows(p.c)) {
    const int t = lane_in_warp() % 4;
    TOut* const row0 = base - 2 * t;  // column 0 of the lane's first row (cs = 1)
#pragma unroll
    for (int j = 0; j < BN / 8; j += 2) {
      float b[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) b[q] = BIAS && lane_bias ? lane_bias[2 * j + q] : 0.0f;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        TOut* const row = row0 + h * rs8;
        constexpr int W = sizeof(TOut) == 2 ? 1 : 2;
        uint32_t y[2][W];
#pragma unroll
        for (int jj = 0; jj < 2; ++jj) {
          const TOut* const out = base + (j + jj) * 8 + h * rs8;
          float x0 = fmaf(alpha, acc[(j + jj) * 4 + 2 * h], b[2 * jj]);
          float x1 = fmaf(alpha, acc[(j + jj) * 4 + 2 * h + 1], b[2 * jj + 1]);
          if constexpr (BETA) x0 = fmaf(beta, convert<float>(out[0]), x0), x1 = fmaf(beta, convert<float>(out[1]), x1);
          if constexpr (sizeof(TOut) == 2) {
            y[jj][0] = activate_pair<ACT, TOut>(x0, x1);
          } else {
            const TOut y0 = convert<TOut>(activate_fixed<ACT>(x0)), y1 = convert<TOut>(activate_fixed<ACT>(x1));
            y[jj][0] = reinterpret_cast<const uint32_t&>(y0);
            y[jj][W - 1] = reinterpret_cast<const uint32_t&>(y1);
          }
        }
        store_block_pair_wide<W>(row + j * 8, t, y[0], y[1]);
      }
    }
    return;
  }
  if constexpr (sizeof(TOut) == 2) {
    // 16-bit C: the two adjacent columns a lane holds per row (v = 0, 1 and 2, 3) are finished as one
    // packed pair: one conversion (and one tanh for gelu) per two elements, one 4-byte store where
    // C is row-major (the pair contiguous; c0 is even, so aligned when the base and pitch are).
    const bool pair_store = cs == 1 && (reinterpret_cast<uintptr_t>(base) % 4 == 0) && (p.c.rs % 2 == 0);
    const int64_t cs_bytes = cs * int64_t(sizeof(TOut));
#pragma unroll
    for (int j0 = 0; j0 < BN / 8; j0 += kGroup) {
      float b[2 * kGroup];
      group_bias(j0, b);
      uint32_t y[kGroup][2];
#pragma unroll
      for (int jj = 0; jj < kGroup; ++jj) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int j = j0 + jj;
          const TOut* const out0 = base + j * 8 * cs + h * rs8;
          float x0 = fmaf(alpha, acc[j * 4 + 2 * h], b[2 * jj]), x1 = fmaf(alpha, acc[j * 4 + 2 * h + 1], b[2 * jj + 1]);
          if constexpr (BETA) x0 = fmaf(beta, convert<float>(out0[0]), x0), x1 = fmaf(beta, convert<float>(out0[cs]), x1);
          y[jj][h] = activate_pair<ACT, TOut>(x0, x1);
        }
      }
#pragma unroll
      for (int jj = 0; jj < kGroup; ++jj) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          TOut* const out0 = base + (j0 + jj) * 8 * cs + h * rs8;
          store_packed_pair(out0, cs_bytes, y[jj][h], pair_store);
        }
      }
    }
  } else {
#pragma unroll
    for (int j0 = 0; j0 < BN / 8; j0 += kGroup) {
      float b[2 * kGroup];
      group_bias(j0, b);
      TOut y[kGroup * 4];
#pragma unroll
      for (int i = 0; i < kGroup * 4; ++i) {
        const int j = j0 + i / 4, v = i % 4;
        float x = fmaf(alpha, acc[j * 4 + v], b[2 * (i / 4) + v % 2]);
        if constexpr (BETA) x = fmaf(beta, convert<float>(base[j * 8 * cs + (v / 2) * rs8 + (v % 2) * cs]), x);
        y[i] = convert<TOut>(activate_fixed<ACT>(x));
      }
#pragma unroll
      for (int i = 0; i < kGroup * 4; ++i) {
        const int j = j0 + i / 4, v = i % 4;
        base[j * 8 * cs + (v / 2) * rs8 + (v % 2) * cs] = y[i];
      }
    }
  }
}

/// store_wgmma_interior with beta's test made once: one copy of the epilogue for beta = 0 (no C
/// read), one for the rest.
template <int BN, Activation ACT, class TIn, class TOut>
__device__ inline void store_wgmma_interior_beta(const MatmulProblem<TIn, TOut>& p, const float (&acc)[BN / 2],
                                                 int64_t r0, int64_t c0, const float* lane_bias) {
  // BN = 256 (groups of one n8 block): a copy without bias reads too, picked once where the bias
  // is null: it spills less and ran 1-2% faster (docs/perf-notes.md section 33).
  constexpr bool kBiasCopy = BN >= 256;
  if constexpr (kBiasCopy) {
    if (!lane_bias) {
      if (p.beta != 0.0f)
        store_wgmma_interior<BN, ACT, true, false>(p, acc, r0, c0, lane_bias);
      else
        store_wgmma_interior<BN, ACT, false, false>(p, acc, r0, c0, lane_bias);
      return;
    }
  }
  if (p.beta != 0.0f)
    store_wgmma_interior<BN, ACT, true, true>(p, acc, r0, c0, lane_bias);
  else
    store_wgmma_interior<BN, ACT, false, true>(p, acc, r0, c0, lane_bias);
}

/// The columns of one TMA store box of C: one 128-byte swizzle row (64 16-bit or 32 32-bit outputs).
template <class TOut>
constexpr int kTmaStoreCols = int(128 / sizeof(TOut));

/// Column chunk CH (columns CH * W .. CH * W + W - 1, W = kTmaStoreCols) of a warpgroup's 64 x BN
/// accumulators (the layout of store_wgmma_accumulators), finished as the interior epilogue without
/// a C read finishes them (alpha, the lane's staged bias, the activation, the conversion) into `buf`:
/// the box of a TMA store, 64 rows of 128 bytes in the 128-byte swizzle (16-byte unit u of row r at
/// unit u ^ (r % 8); buf 1024-byte aligned). The eight rows g of a warp's store then fall in eight
/// different units, so that 16-bit outputs (the four lanes of a row 4 bytes apart) store without
/// bank conflicts. Rows and columns past C's edge are written here and clipped by the TMA store.
/// lane_bias: null, or this lane's BN / 4 staged bias values (stage_wgmma_bias).
template <int BN, int CH, Activation ACT, class TOut>
__device__ inline void stage_wgmma_store_chunk(char* buf, const float (&acc)[BN / 2], float alpha,
                                               const float* lane_bias, int tid_in_wg) {
  constexpr int W = kTmaStoreCols<TOut>;
  static_assert(BN % W == 0 && W % 8 == 0, "whole n8 blocks in a chunk, whole chunks in a tile");
  const int lane = tid_in_wg % 32, warp = tid_in_wg / 32, g = lane / 4, t = lane % 4;
  constexpr float kScale = kHalvedGeluInput<ACT, TOut> ? 0.5f : 1.0f;
  const float a = kScale * alpha;
  const unsigned base = smem_addr(buf) + unsigned(warp * 16 + g) * 128u;  // row 16 warp + g; + 8 rows: h
#pragma unroll
  for (int jj = 0; jj < W / 8; ++jj) {
    const int j = CH * (W / 8) + jj;  // the n8 block
    const float b0 = lane_bias ? lane_bias[2 * j] : 0.0f, b1 = lane_bias ? lane_bias[2 * j + 1] : 0.0f;
    const int byte = (jj * 8 + 2 * t) * int(sizeof(TOut));                     // in the row, unswizzled
    const unsigned at = unsigned((((byte >> 4) ^ g) << 4) | (byte & 15));     // r % 8 == g for both rows
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float x0 = fmaf(a, acc[j * 4 + 2 * h], b0), x1 = fmaf(a, acc[j * 4 + 2 * h + 1], b1);
      const unsigned dst = base + unsigned(h) * 8u * 128u + at;
      if constexpr (sizeof(TOut) == 2) {
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(dst), "r"(activate_pair<ACT, TOut>(x0, x1)) : "memory");
      } else {
        const TOut y0 = convert<TOut>(activate_fixed<ACT>(x0)), y1 = convert<TOut>(activate_fixed<ACT>(x1));
        asm volatile("st.shared.v2.b32 [%0], {%1, %2};\n" ::"r"(dst), "r"(reinterpret_cast<const uint32_t&>(y0)),
                     "r"(reinterpret_cast<const uint32_t&>(y1))
                     : "memory");
      }
    }
  }
}

/// stage_wgmma_store_chunk for column-major 16-bit C: column chunk CH (64 columns) into the box of a
/// TMA store of C's transpose, 64 columns n of 128 bytes (64 rows m) in the 128-byte swizzle. Each
/// 8 x 8 block of a warp's accumulators (rows 16 warp + 8h, columns 8j) is one matrix of
/// stmatrix.trans, which writes it transposed: 8 columns of 16 bytes (unit 2 warp + h of columns
/// 8j .. 8j + 7, swizzled), four blocks an instruction, lane l giving the address of column l % 8 of
/// block l / 8.
template <int BN, int CH, Activation ACT, class TOut>
__device__ inline void stage_wgmma_store_chunk_transposed(char* buf, const float (&acc)[BN / 2], float alpha,
                                                          const float* lane_bias, int tid_in_wg) {
  static_assert(sizeof(TOut) == 2 && BN % 64 == 0, "16-bit C, whole 64-column chunks");
  const int lane = tid_in_wg % 32, warp = tid_in_wg / 32, q = lane / 8, i = lane % 8;
  constexpr float kScale = kHalvedGeluInput<ACT, TOut> ? 0.5f : 1.0f;
  const float a = kScale * alpha;
  // This lane's address: column 8 (jp + q / 2) + i of the chunk; its unit 2 warp + q % 2 swizzled by i.
  const unsigned at = smem_addr(buf) + unsigned(8 * (q / 2) + i) * 128u + unsigned(((2 * warp + q % 2) ^ i) << 4);
#pragma unroll
  for (int jp = 0; jp < 8; jp += 2) {  // n8 blocks jp, jp + 1 of the chunk, both row halves h
    uint32_t r[4];
#pragma unroll
    for (int m = 0; m < 4; ++m) {  // matrix m: h = m % 2, block jp + m / 2
      const int h = m % 2, j = CH * 8 + jp + m / 2;
      const float b0 = lane_bias ? lane_bias[2 * j] : 0.0f, b1 = lane_bias ? lane_bias[2 * j + 1] : 0.0f;
      r[m] = activate_pair<ACT, TOut>(fmaf(a, acc[j * 4 + 2 * h], b0), fmaf(a, acc[j * 4 + 2 * h + 1], b1));
    }
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                     at + unsigned(jp) * 8u * 128u),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
  }
}

/// Epilogue of a warpgroup's 64 x BN accumulators on C's edge, with the activation fixed at compile
/// time: the element stores of store_c_element (a C read where beta != 0, the bias from p.bias
/// unless it is in the accumulators), each predicated on its row and column lying inside C. Why not
/// store_c_element itself: its switch over every activation, inlined BN / 2 times, made this rarely
/// run code ~100 KB, fetched from a cold instruction cache once per edge tile, so that the teams
/// holding edge tiles ran far behind the others (perf notes 49). r0, c0: the lane's first row and
/// column (row0 + 16 warp + g, n0 + 2t).
template <int BN, Activation ACT, class TIn, class TOut>
__device__ inline void store_wgmma_edge(const MatmulProblem<TIn, TOut>& p, const float (&acc)[BN / 2], int64_t r0,
                                        int64_t c0, bool bias_in_acc) {
  const int64_t rows_left = p.M - r0, cols_left = p.N - c0;
  const float alpha = p.alpha, beta = p.beta;
  const float* const bias = bias_in_acc ? nullptr : p.bias;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const int row = (v / 2) * 8, col = j * 8 + v % 2;
      if (row < rows_left && col < cols_left) {
        TOut& out = p.c(r0 + row, c0 + col);
        float x = alpha * acc[j * 4 + v];
        if (beta != 0.0f) x += beta * convert<float>(out);
        if (bias) x += bias[c0 + col];
        out = convert<TOut>(activate_fixed<ACT>(x));
      }
    }
  }
}

/// Epilogue of one warpgroup's 64 x BN accumulators, rows from row0 (the warpgroup's first row of C):
/// warp w holds rows 16w + g and 16w + g + 8 (g = lane / 4) and columns 8j + 2t, 8j + 2t + 1
/// (t = lane % 4) of each n8 block j, as acc[4j .. 4j + 3]. Blocks wholly inside C take
/// store_wgmma_interior; edge blocks the masked element path (the bias from p.bias there).
/// tile_bias: null (no bias, or the bias already in the accumulators: bias_in_acc, load_wgmma_bias),
/// or the tile's bias as stage_wgmma_bias left it in shared memory (before a barrier).
/// ACT: kActivationAtRunTime (the interior path switches over p.act, one inlined copy per
/// activation), or the one activation (an int of Activation) the kernel was compiled for, p.act
/// being that one.
template <int BN, int ACT = kActivationAtRunTime, class TIn, class TOut>
__device__ inline void store_wgmma_accumulators(const MatmulProblem<TIn, TOut>& p, const float (&acc)[BN / 2],
                                                int64_t row0, int64_t n0, int tid_in_wg, const float* tile_bias,
                                                bool bias_in_acc = false) {
  const int lane = tid_in_wg % 32, warp = tid_in_wg / 32, g = lane / 4, t = lane % 4;
  if (row0 + 64 <= p.M && n0 + BN <= p.N) {
    const int64_t r0 = row0 + warp * 16 + g, c0 = n0 + t * 2;
    // The lane's bias through the __shared__ window (LDS) where registers allow: there ptxas hoists
    // every group's reads to the top (no store to C can alias them). For BN = 256 (168 registers)
    // that left the f16 gelu kernel spilling 308 bytes against 88, and for 32-bit C (TF32, 64x128)
    // relu, leaky_relu and silu 16-40 bytes against none: there the generic pointer, whose reads
    // stay behind the stores of the group before.
    constexpr bool kSharedWindow = BN < 256 && sizeof(TOut) == 2;
    const float* const lb = tile_bias ? (kSharedWindow ? in_shared_window(tile_bias) : tile_bias) + t * (BN / 4) : nullptr;
    if constexpr (ACT != kActivationAtRunTime) {
      store_wgmma_interior_beta<BN, Activation(ACT)>(p, acc, r0, c0, lb);
      return;
    } else {
      switch (p.act) {
        case Activation::none: store_wgmma_interior_beta<BN, Activation::none>(p, acc, r0, c0, lb); return;
        case Activation::relu: store_wgmma_interior_beta<BN, Activation::relu>(p, acc, r0, c0, lb); return;
        case Activation::leaky_relu: store_wgmma_interior_beta<BN, Activation::leaky_relu>(p, acc, r0, c0, lb); return;
        case Activation::silu: store_wgmma_interior_beta<BN, Activation::silu>(p, acc, r0, c0, lb); return;
        case Activation::gelu: store_wgmma_interior_beta<BN, Activation::gelu>(p, acc, r0, c0, lb); return;
        default: break;
      }
    }
  }
  if constexpr (ACT != kActivationAtRunTime) {
    store_wgmma_edge<BN, Activation(ACT)>(p, acc, row0 + warp * 16 + g, n0 + t * 2, bias_in_acc);
  } else {
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
      for (int v = 0; v < 4; ++v)
        store_c_element(p, row0 + warp * 16 + g + (v / 2) * 8, n0 + j * 8 + t * 2 + v % 2, acc[j * 4 + v], false,
                        bias_in_acc);
    }
  }
}
#endif

template <class ExecSpace, class Tile, class TIn, class TOut>
struct Sm90WgmmaMatmul {
  using compute = float;
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Tile::threads, Tile::MIN_TEAMS>>;
  using member_type = typename policy_type::member_type;

  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK;
  static constexpr int STAGES = Tile::STAGES;
  static constexpr int kThreads = Tile::threads;
  static constexpr int kScratchLevel = 0;
  static constexpr bool kSupported = mma_input_supported<TIn>();
  static constexpr int kAElems = BM * BK, kBElems = BK * BN;
  static constexpr int kStageElems = kAElems + kBElems;
  static_assert(BK == 64 && BM % 64 == 0 && (BN == 128 || BN == 256) && STAGES >= 2,
                "wgmma tiles: BK = 64 (one swizzle row), 64-row warpgroups, N = 128 or 256, >= 2 stages");
  static_assert((kAElems * 2) % 1024 == 0 && (kStageElems * 2) % 1024 == 0, "stage buffers on swizzle atoms");

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    // +1024: the base is aligned up to an atom; then the tile's bias (BN floats, stage_wgmma_bias)
    return std::size_t(STAGES) * kStageElems * 2 + 1024 + BN * sizeof(float);
  }

  MatmulProblem<TIn, TOut> p;
  int group_m;
  int tiles_m, tiles_n;
  int vector_length;

  /// The main loop for one storage order of A and B, into acc (zeroed by the caller). The epilogue
  /// is the caller's, outside the storage-order dispatch, so that it is compiled once, not once per
  /// order.
  template <bool A_K, bool B_N>
  KOKKOS_INLINE_FUNCTION void run(const member_type& team, uint16_t* smem, int64_t m0, int64_t n0, int tid,
                                  float (&acc)[BN / 2]) const {
#if defined(TILEKIT_SM90A_DEVICE)
    const int wg = tid / 128;

    bool a_chunked, b_chunked;
    operands_chunked<A_K, B_N>(p, a_chunked, b_chunked);
    const int64_t ktiles = (p.K + BK - 1) / BK;

    auto stage = [&](int64_t kt, int buf) {
      uint16_t* As = smem + buf * kStageElems;
      stage_wgmma_step<BM, BN, BK, kThreads, A_K, B_N>(As, As + kAElems, p, m0, n0, kt * BK, a_chunked, b_chunked, tid);
    };

    constexpr int kLead = STAGES - 1;  // steps staged ahead of the one being multiplied
#pragma unroll
    for (int s = 0; s < kLead; ++s) {
      if (s < ktiles) stage(s, s);
      cp_async_commit();
    }
    int buf = 0;      // stage buffer of step kt
    int fill = kLead;  // stage buffer of step kt + kLead (that of step kt - 1, whose MMAs are done)
    for (int64_t kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<kLead - 1>();  // this thread's copies of step kt are in scratch
      fence_proxy_async_shared();  // ... and visible to the async proxy (wgmma)
      // Everyone's copies of step kt are in; every warpgroup has finished the MMAs of step kt - 1
      // (wgmma_wait<0> below), whose buffer the next line refills.
      team.team_barrier();

      // This warpgroup's 64 rows of A: rows wg*64.. of [BM][64] (K-major), or block wg of
      // [BM / 64][64][64] (M-major): the same offset.
      const uint16_t* As = smem + buf * kStageElems + wg * 64 * BK;
      const uint16_t* Bs = smem + buf * kStageElems + kAElems;
      wgmma_step<BN, BK, std::is_same<TIn, bf16>::value, A_K, B_N>(acc, As, Bs);
      // While the tensor cores work on step kt, the same threads issue the copies of step
      // kt + kLead into the buffer of step kt - 1 (its MMAs were waited for before this barrier).
      if (kt + kLead < ktiles) stage(kt + kLead, fill);
      cp_async_commit();
      // The step's MMAs are waited for before the next barrier, so nothing else touches the
      // accumulators while they are in flight. (Keeping one step in flight across the loop's back
      // edge, wait_group 1, made ptxas serialise every wgmma: C7515.)
      wgmma_wait<0>();
#pragma unroll
      for (int v = 0; v < BN / 2; ++v) fence_operand(acc[v]);
      buf = buf + 1 == STAGES ? 0 : buf + 1;
      fill = fill + 1 == STAGES ? 0 : fill + 1;
    }
    cp_async_wait<0>();
#else
    (void)team, (void)smem, (void)m0, (void)n0, (void)tid, (void)acc;
#endif
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    if constexpr (kSupported) {
      int tile_m, tile_n;
      grouped_tile(team.league_rank(), group_m, tiles_m, tiles_n, tile_m, tile_n);
      const int64_t m0 = int64_t(tile_m) * BM, n0 = int64_t(tile_n) * BN;
      char* raw = static_cast<char*>(team.team_scratch(0).get_shmem(scratch_bytes()));
      uint16_t* smem = reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
      const int tid = team.team_rank() * vector_length + vector_lane();
      float acc[BN / 2];
      TILEKIT_UNROLL  // (host passes compile this too: a plain #pragma unroll warned there)
      for (int v = 0; v < BN / 2; ++v) acc[v] = 0.0f;
#if defined(TILEKIT_SM90A_DEVICE)
      // The bias is staged before the main loop, whose barriers cover it (K = 0: this one). (Held
      // in registers across the loop it cost these tiles 8 bytes of spills.)
      float* const tile_bias = reinterpret_cast<float*>(smem + STAGES * kStageElems);
      if (p.bias) {
        stage_wgmma_bias<BN, kThreads, TOut>(tile_bias, p.bias, n0, p.N, p.act, tid);
        if (p.K <= 0) team.team_barrier();
      }
#endif
      with_operand_orders(p, [&](auto a_k, auto b_n) { run<a_k.value, b_n.value>(team, smem, m0, n0, tid, acc); });
#if defined(TILEKIT_SM90A_DEVICE)
      store_wgmma_accumulators<BN>(p, acc, m0 + (tid / 128) * 64, n0, tid % 128, p.bias ? tile_bias : nullptr);
#endif
    }
  }
};

}  // namespace detail
}  // namespace tilekit
