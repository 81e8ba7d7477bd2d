// The host matmul's x86-64 micro-kernels: the avx2 path (16 ymm registers, FMA) and the avx512 path
// (32 zmm registers), each compiled under its own target attribute so that every x86-64 build
// carries both and the one this CPU runs is chosen at run time (tilekit/kernels/core/cpu.hpp,
// host_isa). The avx512 path also has bf16 (AVX-512 BF16, vdpbf16ps) and i8 (AVX-512 VNNI,
// vpdpbusd) dot-product kernels, which read operands packed in k groups (packed.hpp, HostPacking).
// noinline: a separate function keeps the accumulators in registers.
#pragma once

#include "tilekit/kernels/matmul/host/microkernel_generic.hpp"

#include <cstdint>

#if defined(TILEKIT_HOST_GCC) && defined(__x86_64__)
#define TILEKIT_HOST_X86 1
#include <immintrin.h>

#define TILEKIT_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#define TILEKIT_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")))
#define TILEKIT_TARGET_AVX512_BF16 \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,avx512bf16")))
#define TILEKIT_TARGET_AVX512_VNNI \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,avx512vnni")))

namespace tilekit {
namespace detail {

template <int MR, int NR, class T>
TILEKIT_TARGET_AVX2 __attribute__((noinline)) void micro_kernel_avx2(int kn, const T* __restrict a,
                                                                     const T* __restrict b, const T* acc_in,
                                                                     T* acc_out) {
  micro_kernel_body<MR, NR, 32>(kn, a, b, acc_in, acc_out);
}

template <int MR, int NR, class T>
TILEKIT_TARGET_AVX512 __attribute__((noinline)) void micro_kernel_avx512(int kn, const T* __restrict a,
                                                                         const T* __restrict b, const T* acc_in,
                                                                         T* acc_out) {
  micro_kernel_body<MR, NR, 64>(kn, a, b, acc_in, acc_out);
}

/// Stores the first W lanes of v at out (W <= 8 floats or 4 doubles) with whole-vector, 16-, 8- and
/// 4-byte stores: a sliver narrower than a multiple of the vector is written without touching the
/// next k's lanes.
template <int W>
TILEKIT_TARGET_AVX2 inline void store_lanes(float* out, __m256 v) {
  if constexpr (W == 8) {
    _mm256_storeu_ps(out, v);
  } else {
    __m128 lo = _mm256_castps256_ps128(v);
    int at = 0;
    if constexpr (W >= 4) {
      _mm_storeu_ps(out, lo);
      lo = _mm256_extractf128_ps(v, 1);
      at = 4;
    }
    if constexpr ((W & 2) != 0) {
      _mm_storel_pi(reinterpret_cast<__m64*>(out + at), lo);
      lo = _mm_movehl_ps(lo, lo);
      at += 2;
    }
    if constexpr ((W & 1) != 0) _mm_store_ss(out + at, lo);
  }
}
template <int W>
TILEKIT_TARGET_AVX2 inline void store_lanes(double* out, __m256d v) {
  if constexpr (W == 4) {
    _mm256_storeu_pd(out, v);
  } else {
    __m128d lo = _mm256_castpd256_pd128(v);
    if constexpr (W >= 2) _mm_storeu_pd(out, lo);
    if constexpr (W == 3) _mm_store_sd(out + 2, _mm256_extractf128_pd(v, 1));
    if constexpr (W == 1) _mm_store_sd(out, lo);
  }
}

/// Rows G0 .. G0 + W - 1 (W <= 8) of a sliver, 8 values of k from k: an 8 x 8 transpose in registers
/// (rows past W read as zeros and never stored).
template <int LANES, int G0, int W>
TILEKIT_TARGET_AVX2 inline void transpose_rows_8(const float* const* rows, int k, float* out) {
  __m256 r[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = i < W ? _mm256_loadu_ps(rows[G0 + i] + k) : _mm256_setzero_ps();
  // Pairs, then quads of rows interleaved; the halves of each 128-bit lane exchanged last.
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  const __m256 c[8] = {_mm256_permute2f128_ps(u0, u4, 0x20), _mm256_permute2f128_ps(u1, u5, 0x20),
                       _mm256_permute2f128_ps(u2, u6, 0x20), _mm256_permute2f128_ps(u3, u7, 0x20),
                       _mm256_permute2f128_ps(u0, u4, 0x31), _mm256_permute2f128_ps(u1, u5, 0x31),
                       _mm256_permute2f128_ps(u2, u6, 0x31), _mm256_permute2f128_ps(u3, u7, 0x31)};
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) store_lanes<W>(out + (k + i) * LANES + G0, c[i]);
}
template <int LANES, int G0, int W>
TILEKIT_TARGET_AVX2 inline void transpose_rows_4(const double* const* rows, int k, double* out) {
  __m256d r[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) r[i] = i < W ? _mm256_loadu_pd(rows[G0 + i] + k) : _mm256_setzero_pd();
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  const __m256d c[4] = {_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_permute2f128_pd(t1, t3, 0x20),
                        _mm256_permute2f128_pd(t0, t2, 0x31), _mm256_permute2f128_pd(t1, t3, 0x31)};
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) store_lanes<W>(out + (k + i) * LANES + G0, c[i]);
}

/// The row groups G0, G0 + V, ... of a sliver at k (V = 8 f32 or 4 f64 rows per transpose).
template <int LANES, int G0, class T>
TILEKIT_TARGET_AVX2 inline void transpose_rows_from(const T* const* rows, int k, T* out) {
  constexpr int V = 32 / sizeof(T), W = LANES - G0 < V ? LANES - G0 : V;
  if constexpr (V == 8) transpose_rows_8<LANES, G0, W>(rows, k, out);
  else transpose_rows_4<LANES, G0, W>(rows, k, out);
  if constexpr (G0 + V < LANES) transpose_rows_from<LANES, G0 + V>(rows, k, out);
}

/// Packs a full sliver whose LANES rows are each contiguous along k (row r at rows[r]):
/// out[k * LANES + r] = rows[r][k] for k < kn, by register transposes of 8 (f32) or 4 (f64) rows by
/// as many k values; the scalar form wrote one value per store at a stride of LANES and took 6% of a
/// 512^3 f32 product (docs/perf-notes.md section 47).
template <int LANES, class T>
TILEKIT_TARGET_AVX2 __attribute__((noinline)) void pack_sliver_transposed_avx2(const T* const* rows, int kn,
                                                                                T* __restrict out) {
  constexpr int V = 32 / sizeof(T);
  int k = 0;
  for (; k + V <= kn; k += V) transpose_rows_from<LANES, 0>(rows, k, out);
  for (; k < kn; ++k)  // the last kn % V values of k
    for (int r = 0; r < LANES; ++r) out[k * LANES + r] = rows[r][k];
}

/// i8 on the avx2 path: operands packed as int16 pairs of consecutive k; per pair, one vpmaddwd per
/// accumulator vector (B: 8 lanes x 2 k values; A: one lane's pair broadcast as 32 bits) sums both
/// products into i32 lanes, exactly (|a b| <= 2^14), twice the lanes of an f32 FMA.
template <int MR, int NR>
TILEKIT_TARGET_AVX2 __attribute__((noinline)) void micro_kernel_avx2_i8(int kn, const int16_t* __restrict a,
                                                                        const int16_t* __restrict b,
                                                                        const int32_t* acc_in, int32_t* acc_out) {
  constexpr int NV = NR / 8;
  __m256i v[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w)
      v[i][w] = acc_in ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc_in + i * NR + w * 8))
                       : _mm256_setzero_si256();
  for (int kp = 0; kp < (kn + 1) / 2; ++kp) {  // pairs of k (an odd kn's last pair is padded with 0)
    __m256i bv[NV];
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) bv[w] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + (kp * NR + w * 8) * 2));
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      int32_t pair;
      __builtin_memcpy(&pair, a + (kp * MR + i) * 2, 4);
      const __m256i av = _mm256_set1_epi32(pair);
#pragma GCC unroll 8
      for (int w = 0; w < NV; ++w) v[i][w] = _mm256_add_epi32(v[i][w], _mm256_madd_epi16(av, bv[w]));
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + i * NR + w * 8), v[i][w]);
}

/// bf16 with AVX-512 BF16: per pair of k, one vdpbf16ps per accumulator adds both products of its
/// lane (B vector: 16 lanes x 2 k values; A: one lane's 2 k values broadcast as 32 bits).
template <int MR, int NR>
TILEKIT_TARGET_AVX512_BF16 __attribute__((noinline)) void micro_kernel_avx512_bf16(
    int kn, const uint16_t* __restrict a, const uint16_t* __restrict b, const float* acc_in, float* acc_out) {
  constexpr int NV = NR / 16;
  __m512 v[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) v[i][w] = acc_in ? _mm512_loadu_ps(acc_in + i * NR + w * 16) : _mm512_setzero_ps();
  for (int kp = 0; kp < (kn + 1) / 2; ++kp) {  // pairs of k (an odd kn's last pair is padded with 0)
    __m512bh bv[NV];
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) bv[w] = (__m512bh)_mm512_loadu_si512(b + (kp * NR + w * 16) * 2);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      int32_t pair;
      __builtin_memcpy(&pair, a + (kp * MR + i) * 2, 4);
      const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
#pragma GCC unroll 8
      for (int w = 0; w < NV; ++w) v[i][w] = _mm512_dpbf16_ps(v[i][w], av, bv[w]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) _mm512_storeu_ps(acc_out + i * NR + w * 16, v[i][w]);
}

/// i8 with AVX-512 VNNI: per group of 4 k, one vpdpbusd per accumulator (B vector: 16 lanes x 4 k
/// values; A: one lane's 4 offset bytes broadcast as 32 bits); the sliver's column-sum trailer
/// (after the padded depth) removes the offset.
template <int MR, int NR>
TILEKIT_TARGET_AVX512_VNNI __attribute__((noinline)) void micro_kernel_avx512_i8(
    int kn, const int8_t* __restrict a, const int8_t* __restrict b, const int32_t* acc_in, int32_t* acc_out) {
  constexpr int NV = NR / 16;
  const int kq = (kn + 3) / 4;  // groups of 4 k (the last one zero-padded)
  __m512i v[MR][NV];
  __m512i corr[NV];
#pragma GCC unroll 8
  for (int w = 0; w < NV; ++w)  // (K == 0: no panel, no sums)
    corr[w] = kn > 0 ? _mm512_loadu_si512(b + int64_t(kq) * 4 * NR + w * 64) : _mm512_setzero_si512();
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w)
      v[i][w] = _mm512_sub_epi32(acc_in ? _mm512_loadu_si512(acc_in + i * NR + w * 16) : _mm512_setzero_si512(),
                                 corr[w]);
  for (int q = 0; q < kq; ++q) {
    __m512i bv[NV];
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) bv[w] = _mm512_loadu_si512(b + (q * NR + w * 16) * 4);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      int32_t quad;
      __builtin_memcpy(&quad, a + (q * MR + i) * 4, 4);
      const __m512i av = _mm512_set1_epi32(quad);
#pragma GCC unroll 8
      for (int w = 0; w < NV; ++w) v[i][w] = _mm512_dpbusd_epi32(v[i][w], av, bv[w]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) _mm512_storeu_si512(acc_out + i * NR + w * 16, v[i][w]);
}

}  // namespace detail
}  // namespace tilekit
#endif
