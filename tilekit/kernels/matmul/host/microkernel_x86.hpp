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
