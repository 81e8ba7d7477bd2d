// Team-level helpers shared by the SIMT (tilekit/kernels/matmul/dispatch.hpp), host packed (tilekit/kernels/matmul/host/packed.hpp)
// and tensor-core (tilekit/kernels/matmul/gpu/mma_sm80.hpp, ...) matmul kernels.
#pragma once

#include "tilekit/kernels/matmul/epilogue.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

// Full unrolling of the fixed-trip micro-tile loops, so that the TM x TN accumulators are registers
// (a loop the compiler leaves rolled indexes them dynamically and sends them to local memory).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TILEKIT_UNROLL _Pragma("unroll")
// Partial unrolling (a loop whose full unrolling lets the scheduler hoist every iteration's loads,
// more registers than the launch bounds allow); host compilers unroll as they see fit.
#define TILEKIT_UNROLL_PRAGMA(x) _Pragma(#x)
#define TILEKIT_UNROLL_BY(n) TILEKIT_UNROLL_PRAGMA(unroll n)
#elif defined(__GNUC__) && !defined(__clang__) && !defined(__NVCC__) && !defined(__HIPCC__)
#define TILEKIT_HOST_GCC 1
#define TILEKIT_UNROLL _Pragma("GCC unroll 16")
#else
#define TILEKIT_UNROLL
#endif
#ifndef TILEKIT_UNROLL_BY
#define TILEKIT_UNROLL_BY(n)
#endif

namespace tilekit {
namespace detail {

/// The vector lane of the calling thread inside a team. Kokkos maps vector lanes to threadIdx.x on
/// CUDA and HIP; host backends run with vector length 1 (enforced by check_matmul).
KOKKOS_INLINE_FUNCTION int vector_lane() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return static_cast<int>(threadIdx.x);
#else
  return 0;
#endif
}

/// Grouped launch order (the Triton tutorial's GROUP_SIZE_M): consecutive teams walk down GROUP_M
/// tile-rows before moving right, so the B tiles they share stay in L2.
KOKKOS_INLINE_FUNCTION void grouped_tile(int pid, int group_m, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int per_group = group_m * tiles_n;
  const int first_m = (pid / per_group) * group_m;
  const int group_rows = (tiles_m - first_m) < group_m ? (tiles_m - first_m) : group_m;
  tile_m = first_m + (pid % per_group) % group_rows;
  tile_n = (pid % per_group) / group_rows;
}

/// The first row and column of the BM x BN tile of C that team `league_rank` computes, in grouped
/// launch order (grouped_tile: consecutive teams share B tiles in L2).
template <int BM, int BN>
KOKKOS_INLINE_FUNCTION void team_tile_origin(int league_rank, int group_m, int tiles_m, int tiles_n, int64_t& m0,
                                             int64_t& n0) {
  int tile_m, tile_n;
  grouped_tile(league_rank, group_m, tiles_m, tiles_n, tile_m, tile_n);
  m0 = int64_t(tile_m) * BM;
  n0 = int64_t(tile_n) * BN;
}

#if defined(__CUDA_ARCH__)
// The start of CUDA's dynamic shared memory, where Kokkos places level-0 team scratch.
extern __shared__ __align__(16) unsigned char tilekit_dynamic_smem[];
#endif

/// A pointer into CUDA level-0 team scratch (a generic address), rebuilt as an offset from the
/// __shared__ symbol, so that the compiler sees its address space (LDS/STS; why: team_scratch_aligned
/// below). Elsewhere the pointer itself.
template <class T>
KOKKOS_INLINE_FUNCTION T* in_shared_window(T* scratch) {
#if defined(__CUDA_ARCH__)
  return reinterpret_cast<T*>(tilekit_dynamic_smem +
                              (reinterpret_cast<uintptr_t>(scratch) - reinterpret_cast<uintptr_t>(tilekit_dynamic_smem)));
#else
  return scratch;
#endif
}

/// The team's level-`level` scratch of `bytes` (which include ALIGN - 1 bytes of slack), as T
/// aligned up to ALIGN bytes (16 for vector reads; 128 for the tensor-core tiles' stage buffers).
///
/// CUDA, level 0: Kokkos hands the scratch out as a generic pointer, which nvcc reads and writes
/// with generic instructions (LD.E/ST.E: 64-bit addresses, the generic-to-shared window check, a
/// longer latency; Nsight Compute's source view of the f32 SIMT kernel showed its micro-kernel
/// reading scratch so). The same address rebuilt as an offset from a __shared__ symbol lets the
/// compiler see the address space and emit LDS/STS with 32-bit addresses. Level 1 is global memory.
template <class T, int ALIGN = 16, class Member>
KOKKOS_INLINE_FUNCTION T* team_scratch_aligned(const Member& team, std::size_t bytes, int level) {
  static_assert(ALIGN > 0 && (ALIGN & (ALIGN - 1)) == 0, "a power of two");
  char* raw = static_cast<char*>(team.team_scratch(level).get_shmem(bytes));
  T* const aligned = reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(raw) + (ALIGN - 1)) & ~uintptr_t(ALIGN - 1));
  return level == 0 ? in_shared_window(aligned) : aligned;
}

/// N consecutive scratch values into registers: 16-byte vector reads on GPUs when N values fill
/// whole vectors (the caller keeps src 16-byte aligned then: scratch base, row pitch and offsets).
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION void read_scratch_run(const T* src, T (&dst)[N]) {
  constexpr int per16 = 16 / int(sizeof(T));
  if constexpr (16 % sizeof(T) == 0 && N % per16 == 0) {
    struct alignas(16) Vec {
      T v[per16];
    };
    TILEKIT_UNROLL
    for (int q = 0; q < N / per16; ++q) {
      const Vec x = reinterpret_cast<const Vec*>(src)[q];
      TILEKIT_UNROLL
      for (int t = 0; t < per16; ++t) dst[q * per16 + t] = x.v[t];
    }
  } else {
    TILEKIT_UNROLL
    for (int n = 0; n < N; ++n) dst[n] = src[n];
  }
}

/// Epilogue of one element: C(gi, gj) = activation(alpha * ab + beta * C(gi, gj) + bias), in the
/// compute type, then the downcast; nothing for (gi, gj) outside C. C is read only when beta != 0.
/// bias_row: the bias is indexed by the row (a kernel that computes C^T of a column-major C).
/// bias_in_ab: ab already holds bias / alpha (a kernel that started its accumulators from it), so
/// the bias is not added again. Every kernel's epilogue ends here (the tensor-core kernels from
/// their fragment registers).
template <class TIn, class TOut>
KOKKOS_FORCEINLINE_FUNCTION void store_c_element(const MatmulProblem<TIn, TOut>& p, int64_t gi, int64_t gj,
                                                 typename TypeTraits<TIn>::compute ab, bool bias_row = false,
                                                 bool bias_in_ab = false) {
  using compute = typename TypeTraits<TIn>::compute;
  if (gi >= p.M || gj >= p.N) return;
  compute v = p.alpha * ab;
  TOut& out = p.c(gi, gj);
  if (p.beta != compute(0)) v += p.beta * convert<compute>(out);
  if (p.bias && !bias_in_ab) v += p.bias[bias_row ? gi : gj];
  out = convert<TOut>(activate(p.act, v));
}

/// Which way C takes whole vectors of SUB elements (checked once per team): 1 along its rows
/// (column-major: unit row stride), 2 along its columns (row-major), 0 neither. The other stride
/// must be a multiple of SUB and the base aligned to a vector, so that every vector starting at a
/// multiple of SUB is aligned.
template <int SUB, class T>
KOKKOS_INLINE_FUNCTION int c_vector_direction(const StridedMatrix<T>& c) {
  if (reinterpret_cast<uintptr_t>(c.data) % (SUB * sizeof(T)) != 0) return 0;
  if (c.rs == 1 && c.cs % SUB == 0) return 1;
  if (c.cs == 1 && c.rs % SUB == 0) return 2;
  return 0;
}

/// Epilogue of one SUB x SUB sub-tile inside C, at a row and column that are multiples of SUB, with
/// one vector load (beta != 0) and one vector store per column (direction 1) or per row (direction
/// 2) instead of SUB x SUB element accesses: with a shallow K the store of C is most of the work.
/// kActivate: false when the problem has no activation (the caller branches once per kernel: the
/// run-time switch of activate() cost some 20 instructions per element).
template <bool kActivate, int SUB, class TIn, class TOut, class Acc>
KOKKOS_INLINE_FUNCTION void store_sub_tile_vector(const MatmulProblem<TIn, TOut>& p, int64_t mi, int64_t nj,
                                                  const Acc (&acc)[SUB][SUB], int direction) {
  using compute = typename TypeTraits<TIn>::compute;
  struct alignas(SUB * sizeof(TOut)) Vec {
    TOut v[SUB];
  };
  const bool read_c = p.beta != compute(0);
  // The direction picks one of two copies: acc indexed by a run-time direction sent the sub-tile to
  // local memory (a 64-byte stack frame, STL/LDL in every team's epilogue); on the H100 the copies
  // ran the 64x64 SIMT tile 22% faster at 8192x8192x16 and 128x64 split in 2 15% faster at 1024^3
  // (perf notes 22).
  auto lines = [&](auto along_columns) {
    constexpr bool kCol = decltype(along_columns)::value;
    TILEKIT_UNROLL
    for (int line = 0; line < SUB; ++line) {  // a column of the sub-tile (direction 1) or a row
      Vec* dst = reinterpret_cast<Vec*>(kCol ? &p.c(mi, nj + line) : &p.c(mi + line, nj));
      Vec old;
      if (read_c) old = *dst;
      Vec out;
      TILEKIT_UNROLL
      for (int e = 0; e < SUB; ++e) {
        const int i = kCol ? e : line, j = kCol ? line : e;
        compute v = p.alpha * acc[i][j];
        if (read_c) v += p.beta * convert<compute>(old.v[e]);
        if (p.bias) v += p.bias[nj + j];
        out.v[e] = convert<TOut>(kActivate ? activate(p.act, v) : v);
      }
      *dst = out;
    }
  };
  if (direction == 1) lines(std::true_type{});
  else lines(std::false_type{});
}

/// Epilogue of one TM x TN micro-tile at C(mi.., nj..), rows and columns outside C masked.
/// bias_rows: as store_c_element's bias_row.
template <int TM, int TN, class TIn, class TOut, class Acc>
KOKKOS_INLINE_FUNCTION void store_micro_tile_masked(const MatmulProblem<TIn, TOut>& p, int64_t mi, int64_t nj,
                                                    const Acc (&acc)[TM][TN], bool bias_rows = false) {
  TILEKIT_UNROLL
  for (int i = 0; i < TM; ++i) {
    TILEKIT_UNROLL
    for (int j = 0; j < TN; ++j) store_c_element(p, mi + i, nj + j, acc[i][j], bias_rows);
  }
}

/// Host epilogue of a micro-tile inside C with the activation fixed at compile time. relu and
/// leaky_relu pick their result with a bit mask (select_bits), not a branch: the stores through C's
/// pointer keep GCC from vectorizing these loops (and vectorizing them across a column of the
/// micro-tile would gather), so `x > 0 ? x : 0` became a branch per element, mispredicted half the
/// time on random signs: relu cost 5x the whole product at K = 16.
template <Activation ACT, int TM, int TN, class TIn, class TOut, class Acc>
KOKKOS_INLINE_FUNCTION void store_micro_tile_interior(const MatmulProblem<TIn, TOut>& p, int64_t mi, int64_t nj,
                                                      const Acc (&acc)[TM][TN], bool bias_rows) {
  using compute = typename TypeTraits<TIn>::compute;
  const auto& c = p.c;
  const compute alpha = p.alpha, beta = p.beta;
  const bool read_c = beta != compute(0);  // beta == 0: C is not read
  auto value = [&](compute ab, compute bj, const TOut& old) {
    compute v = alpha * ab;
    if (read_c) v += beta * convert<compute>(old);
    v += bj;
    if constexpr (ACT == Activation::relu) return convert<TOut>(select_bits(v > compute(0), v, compute(0)));
    else if constexpr (ACT == Activation::leaky_relu && std::is_floating_point<compute>::value)
      // (v times a selected factor: selecting between v and slope * v, GCC branched again)
      return convert<TOut>(v * select_bits(v > compute(0), compute(1), compute(kLeakyReluSlope)));
    else return convert<TOut>(activate_fixed<ACT>(v));
  };
  if constexpr (std::is_floating_point<compute>::value) {
    if (c.cs == 1) {
      // Rows contiguous (a row-major C, or the transposed product the host kernel computes for a
      // column-major one): each row's values in a local array first, in separate loops, then the
      // stores. GCC vectorizes these (f32 gelu's and silu's loops 16 lanes wide, relu and leaky_relu
      // as a compare and a blend); interleaved with the stores through C's pointer (possible
      // aliases) the loop stayed scalar: gelu ran ~30 cycles an element, and leaky_relu with
      // select_bits cost 8192x8192x16 13 ms over the product's 12.6 (bias+gelu here: 5 ms). Without
      // an activation too: the scalar form took 5% of a 512^3 product (docs/perf-notes.md section 47).
      for (int i = 0; i < TM; ++i) {
        TOut* const row = c.data + (mi + i) * c.rs + nj;
        alignas(64) compute v[TN];
        for (int j = 0; j < TN; ++j) v[j] = alpha * acc[i][j];
        if (read_c)
          for (int j = 0; j < TN; ++j) v[j] += beta * convert<compute>(row[j]);
        if (p.bias && bias_rows) {
          const compute bi = p.bias[mi + i];
          for (int j = 0; j < TN; ++j) v[j] += bi;
        } else if (p.bias) {
          const compute* const b = p.bias + nj;
          for (int j = 0; j < TN; ++j) v[j] += b[j];
        }
        for (int j = 0; j < TN; ++j) v[j] = activate_fixed<ACT>(v[j]);
        for (int j = 0; j < TN; ++j) row[j] = convert<TOut>(v[j]);
      }
      return;
    }
  }
  if (c.rs == 1) {  // column-major C: TM contiguous values per column
    for (int j = 0; j < TN; ++j) {
      TOut* col = c.data + mi + (nj + j) * c.cs;
      const compute bj = p.bias && !bias_rows ? p.bias[nj + j] : compute(0);
      TILEKIT_UNROLL
      for (int i = 0; i < TM; ++i)
        col[i] = value(acc[i][j], p.bias && bias_rows ? p.bias[mi + i] : bj, col[i]);
    }
  } else {
    for (int i = 0; i < TM; ++i) {
      TOut* row = c.data + (mi + i) * c.rs + nj * c.cs;
      const compute bi = p.bias && bias_rows ? p.bias[mi + i] : compute(0);
      TILEKIT_UNROLL
      for (int j = 0; j < TN; ++j)
        row[j * c.cs] = value(acc[i][j], p.bias && !bias_rows ? p.bias[nj + j] : bi, row[j * c.cs]);
    }
  }
}

/// Host epilogue of one micro-tile: inside C, no masks, and the epilogue's choices (beta, bias,
/// activation) made once per micro-tile, outside the element loops, so each loop is one
/// straight-line form the compiler vectorizes (with a thin K this store is most of the work);
/// micro-tiles on C's edges take the masked form.
template <int TM, int TN, class TIn, class TOut, class Acc>
KOKKOS_INLINE_FUNCTION void store_micro_tile_host(const MatmulProblem<TIn, TOut>& p, int64_t mi, int64_t nj,
                                                  const Acc (&acc)[TM][TN], bool bias_rows = false) {
  if (mi + TM <= p.M && nj + TN <= p.N) {
    switch (p.act) {
      case Activation::none: store_micro_tile_interior<Activation::none>(p, mi, nj, acc, bias_rows); return;
      case Activation::relu: store_micro_tile_interior<Activation::relu>(p, mi, nj, acc, bias_rows); return;
      case Activation::leaky_relu:
        store_micro_tile_interior<Activation::leaky_relu>(p, mi, nj, acc, bias_rows);
        return;
      case Activation::silu: store_micro_tile_interior<Activation::silu>(p, mi, nj, acc, bias_rows); return;
      case Activation::gelu: store_micro_tile_interior<Activation::gelu>(p, mi, nj, acc, bias_rows); return;
    }
  }
  store_micro_tile_masked(p, mi, nj, acc, bias_rows);
}

}  // namespace detail
}  // namespace tilekit
