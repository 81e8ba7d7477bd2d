// The host matmul's register micro-kernel in the compiler's vector types, for any vector width: the
// body the avx2 and avx512 paths compile under their target attributes (microkernel_x86.hpp), and
// the portable path itself (16-byte vectors: SSE on x86-64, NEON on aarch64).
//
// acc (MR x NR, row-major) = acc_in (or 0) + A sliver x B sliver over kn steps. Each row of the
// micro-tile is NR / (VB / sizeof(T)) vectors; per k: the B vectors, MR broadcasts of A and
// MR x NV FMAs into accumulators that stay in registers. The menu sizes MR x NV to about 3/4 of the
// path's register file (tiles.hpp, HostMatmulTiles).
#pragma once

#include "tilekit/kernels/matmul/team.hpp"

namespace tilekit {
namespace detail {

#if defined(TILEKIT_HOST_GCC)
/// Inlined into each path's micro-kernel, so that it compiles for that path's instruction set.
template <int MR, int NR, int VB, class T>
__attribute__((always_inline)) inline void micro_kernel_body(int kn, const T* __restrict a, const T* __restrict b,
                                                             const T* acc_in, T* acc_out) {
  static_assert((NR * sizeof(T)) % VB == 0, "NR must be whole vectors");
  constexpr int NV = int(NR * sizeof(T) / VB);
  typedef T simd_t __attribute__((vector_size(VB)));
  typedef T simd_u __attribute__((vector_size(VB), aligned(alignof(T))));
  simd_t v[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) v[i][w] = acc_in ? reinterpret_cast<const simd_u*>(acc_in + i * NR)[w] : simd_t{};
  for (int k = 0; k < kn; ++k) {  // rank-1 updates along the panel's depth
    simd_t bv[NV];
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) bv[w] = reinterpret_cast<const simd_u*>(b + k * NR)[w];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const simd_t av = a[k * MR + i] - simd_t{};  // broadcast (x - 0 == x for every x)
#pragma GCC unroll 8
      for (int w = 0; w < NV; ++w) v[i][w] += av * bv[w];
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int w = 0; w < NV; ++w) reinterpret_cast<simd_u*>(acc_out + i * NR)[w] = v[i][w];
}

/// The portable path. noinline: a separate function keeps the accumulators in registers (inlined
/// into the team loop, GCC spilled them).
template <int MR, int NR, class T>
__attribute__((noinline)) void micro_kernel_portable(int kn, const T* __restrict a, const T* __restrict b,
                                                     const T* acc_in, T* acc_out) {
  micro_kernel_body<MR, NR, 16>(kn, a, b, acc_in, acc_out);
}
#else
/// Other host compilers: plain loops.
template <int MR, int NR, class T>
void micro_kernel_portable(int kn, const T* a, const T* b, const T* acc_in, T* acc_out) {
  T v[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) v[i][j] = acc_in ? acc_in[i * NR + j] : T(0);
  for (int k = 0; k < kn; ++k)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) v[i][j] += a[k * MR + i] * b[k * NR + j];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc_out[i * NR + j] = v[i][j];
}
#endif

}  // namespace detail
}  // namespace tilekit
