// tilekit elementwise ops: the kernels, the checks and the launch.
// Include from the instantiation units (tilekit/kernels/elementwise/instantiate.cpp.in), or from one translation
// unit of yours to instantiate apply() for your own functor; otherwise include tilekit/kernels/elementwise/elementwise.hpp.
//
// Before a launch the problem is normalized: broadcast inputs become M x N with a stride of 0, and a
// column-major output is transposed together with its inputs, so that the kernels always walk the
// output's contiguous dimension as "columns" (j). Then one of three kernels runs:
//   naive       RangePolicy over M*N elements        work item = one element, any strides
//   vectorized  RangePolicy over M*ceil(N/W) vectors work item = one W-element (16-byte) vector
//   tiled       TeamPolicy over tiles of TR x TC     team = a tile; thread = rows_per_thread rows x
//                                                    vectors_per_thread vectors, threads_n apart
// A vector is moved with one 16-byte load or store per operand when every operand allows it (the
// "vector path", decided once per launch on the host); otherwise, and for the tail vector of each
// row, element by element with predicates.
//
// Why the backends differ: on GPUs a 16-byte access per thread is what keeps enough bytes in flight
// (the notebook's Little's-law argument), consecutive threads take consecutive vectors so a warp's
// accesses coalesce, and a tile's threads sit 64 wide along a row. On CPUs a "team" is one OpenMP
// thread (Kokkos runs vector lanes sequentially there, so vector_length is 1 and team_size is best
// 1). A single W-element vector is too little for host compilers: GCC does not vectorize the f16/bf16
// conversions inside one work item, so naive and vectorized are compute-bound for 16-bit types on
// CPUs. The host tiled config has one thread along a row (threads_n = 1), so a thread's vectors in a
// row are one contiguous run, done as a plain loop (row_segment) that the loop vectorizer turns into
// SIMD at the CPU's own width; its runs of 4 rows x 1 KiB give the prefetcher a few long streams.
#pragma once

#include "tilekit/kernels/elementwise/elementwise.hpp"
#include "tilekit/kernels/core/execution_space.hpp"

#include <Kokkos_Core.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TILEKIT_EW_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)  // not the host pass of nvcc
#define TILEKIT_EW_UNROLL _Pragma("GCC unroll 16")
#else
#define TILEKIT_EW_UNROLL
#endif

// Host blocks of 16-bit values: whole vectors converted at once (F16C / AVX-512 for f16: 16 lanes
// per instruction; integer shifts and masks for bf16 with AVX-512), for row_segment.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__HIPCC__) && defined(__F16C__) && \
    defined(__AVX2__)
#define TILEKIT_EW_HOST_BLOCKS 1
#include <immintrin.h>
#endif

namespace tilekit {
namespace detail {

#if defined(TILEKIT_EW_HOST_BLOCKS)
constexpr int kHostBlock = 16;  ///< values per host block (one AVX-512 register of f32)
// The block buffers are stack arrays, which GCC aligns to 64 bytes and then reads with aligned
// AVX-512 moves; AddressSanitizer's fake stack (detect_stack_use_after_return, the serial-asan
// preset) places them 32-byte aligned only, and the aligned move faults. Under ASan they are
// per-thread statics instead (still checked like any other memory).
#if defined(__SANITIZE_ADDRESS__)
#define TILEKIT_EW_BLOCK_STORAGE static thread_local
#else
#define TILEKIT_EW_BLOCK_STORAGE
#endif

/// 16 f16 or bf16 values as f32, with the same results as their scalar conversions (exact).
template <class T>
inline void host_block_to_float(const T* in, float* out) {
  if constexpr (std::is_same<T, f16>::value) {
#if defined(__AVX512F__)
    _mm512_storeu_ps(out, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in))));
#else
    _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))));
    _mm256_storeu_ps(out + 8, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in) + 1)));
#endif
  } else {
#if defined(__AVX512F__)
    const __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)));
    _mm512_storeu_ps(out, _mm512_castsi512_ps(_mm512_slli_epi32(h, 16)));
#else
    for (int e = 0; e < kHostBlock; ++e) out[e] = float(in[e]);
#endif
  }
}

/// 16 f32 values to f16 or bf16, rounding to nearest even as the scalar conversions do (bf16: NaN
/// stays a quiet NaN, branch-free so that the loop vectorizes).
template <class T>
inline void host_block_from_float(const float* in, T* out) {
  if constexpr (std::is_same<T, f16>::value) {
#if defined(__AVX512F__)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                        _mm512_cvtps_ph(_mm512_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out) + 1,
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + 8), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  } else {
#if defined(__AVX512F__)
    // bf16::from_float on 16 lanes (integer rounding: vcvtneps2bf16 would flush subnormals)
    const __m512i x = _mm512_castps_si512(_mm512_loadu_ps(in));
    const __m512i hi = _mm512_srli_epi32(x, 16);
    const __m512i rounding = _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(hi, _mm512_set1_epi32(1)));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(x, rounding), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    const __m512i r = _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(r));
#else
    for (int e = 0; e < kHostBlock; ++e) out[e] = T(in[e]);
#endif
  }
}
#endif

/// VB bytes of T moved as one access: 16 bytes = 2 f64, 4 f32/i32, 8 f16/bf16.
template <class T, int VB>
struct alignas(VB) VecOf {
  static_assert(VB % sizeof(T) == 0, "the vector must hold whole elements");
  static constexpr int width = VB / static_cast<int>(sizeof(T));
  T x[width];
};

/// One 16-byte store of a vector. On CUDA as an explicit st.global.v4 (as CUTLASS stores fragments):
/// in the tiled kernel nvcc 11.8 splits the plain aggregate store into four 4-byte stores (seen in
/// its PTX, while the same code in the vectorized kernel gets st.global.v4). dst must be a global
/// address, 16-byte aligned.
template <class Vec>
KOKKOS_FORCEINLINE_FUNCTION void store_vec(Vec* dst, const Vec& r) {
#if defined(__CUDA_ARCH__)
  static_assert(sizeof(Vec) == 16, "16-byte vectors");
  union {
    Vec v;
    unsigned u[4];
  } w{r};
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(w.u[0]), "r"(w.u[1]), "r"(w.u[2]),
               "r"(w.u[3])
               : "memory");
#else
  *dst = r;
#endif
}

/// op(x[0], ..., x[NIn-1]).
template <class Op, class C, int NIn>
KOKKOS_FORCEINLINE_FUNCTION C invoke(const Op& op, const C (&x)[NIn]) {
  if constexpr (NIn == 1) {
    return op(x[0]);
  } else if constexpr (NIn == 2) {
    return op(x[0], x[1]);
  } else if constexpr (NIn == 3) {
    return op(x[0], x[1], x[2]);
  } else {
    return op(x[0], x[1], x[2], x[3]);
  }
}

/// Broadcast inputs as M x N with stride 0; a column-major output transposed (with its inputs) so
/// that the output's contiguous dimension is the column dimension. Host only.
template <class T, int NIn>
ElementwiseProblem<T, NIn> normalized(const ElementwiseProblem<T, NIn>& p) {
  ElementwiseProblem<T, NIn> q = p;
  const int64_t M = p.out.rows, N = p.out.cols;
  for (int k = 0; k < NIn; ++k) {
    auto& a = q.in[k];
    if (a.rows == 1 && M != 1) a.rs = 0;
    if (a.cols == 1 && N != 1) a.cs = 0;
    a.rows = M;
    a.cols = N;
  }
  const bool transpose = q.out.rs < q.out.cs || (q.out.rs == q.out.cs && N == 1 && M > 1);
  if (transpose) {
    q.out = q.out.transposed();
    for (int k = 0; k < NIn; ++k) q.in[k] = q.in[k].transposed();
  }
  return q;
}

/// Whether every operand of a normalized problem allows VB-byte vector accesses along the columns:
/// the output and each input contiguous (column stride 1) with VB-aligned base and row pitch, or an
/// input broadcast along the columns (column stride 0: one value, splat). Host only.
template <int VB, class T, int NIn>
bool vector_path_ok(const ElementwiseProblem<T, NIn>& q) {
  const int64_t M = q.out.rows;
  auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % VB == 0; };
  auto rows_aligned = [&](int64_t rs) { return M == 1 || (rs * int64_t(sizeof(T))) % VB == 0; };
  bool ok = q.out.cs == 1 && aligned(q.out.data) && rows_aligned(q.out.rs);
  for (int k = 0; k < NIn; ++k) {
    const auto& a = q.in[k];
    ok = ok && (a.cs == 0 || (a.cs == 1 && aligned(a.data) && rows_aligned(a.rs)));
  }
  return ok;
}

/// What every variant does to one element, one vector, or a few rows of one vector.
template <class Op, class T, int NIn, int VB>
struct ElementwiseBody {
  using C = typename TypeTraits<T>::compute;
  using Vec = VecOf<T, VB>;
  static constexpr int W = Vec::width;                        ///< elements per vector
  static constexpr int B = kElementwiseRowsInFlight;  ///< rows loaded before any is stored

  Op op;
  ElementwiseProblem<T, NIn> p;  ///< normalized
  int64_t M = 0, N = 0;
  bool vec_ok = false;           ///< every operand allows the vector path (vector_path_ok)
  bool any_splat = false;        ///< some input is broadcast along the row (column stride 0)
  bool rows_contiguous = false;  ///< every operand has column stride 1 (host row-segment loop)

  /// out(i, j) = op(in(i, j)...), any strides.
  KOKKOS_FORCEINLINE_FUNCTION void element(int64_t i, int64_t j) const {
    C x[NIn];
    TILEKIT_EW_UNROLL
    for (int k = 0; k < NIn; ++k) x[k] = convert<C>(p.in[k].data[i * p.in[k].rs + j * p.in[k].cs]);
    p.out.data[i * p.out.rs + j * p.out.cs] = convert<T>(invoke(op, x));
  }

  /// The vectors of every input at (i, j0): one 16-byte load each, or with Splat, one value repeated
  /// for an input broadcast along the row (column stride 0). Whether any input is, is decided once
  /// per launch (any_splat): a per-input choice compiles to both a 16-byte and a scalar load,
  /// predicated, and to results merged lane by lane (seen in nvcc's SASS); the common case should
  /// be the 16-byte loads alone.
  template <bool Splat>
  KOKKOS_FORCEINLINE_FUNCTION void load(int64_t i, int64_t j0, Vec (&v)[NIn]) const {
    TILEKIT_EW_UNROLL
    for (int k = 0; k < NIn; ++k) {
      const auto& a = p.in[k];
      if (Splat && a.cs == 0) {
        const T s = a.data[i * a.rs];
        TILEKIT_EW_UNROLL
        for (int e = 0; e < W; ++e) v[k].x[e] = s;
      } else {
        v[k] = *reinterpret_cast<const Vec*>(a.data + i * a.rs + j0);
      }
    }
  }

  template <bool Splat>
  KOKKOS_FORCEINLINE_FUNCTION void one_vector(int64_t i, int64_t j0) const {
    Vec v[NIn];
    load<Splat>(i, j0, v);
    compute_store(v, i, j0);
  }

  template <bool Splat>
  KOKKOS_FORCEINLINE_FUNCTION void rows_in_flight(int64_t i0, int64_t j0) const {
    Vec v[B][NIn];
    TILEKIT_EW_UNROLL
    for (int b = 0; b < B; ++b) load<Splat>(i0 + b, j0, v[b]);
    TILEKIT_EW_UNROLL
    for (int b = 0; b < B; ++b) compute_store(v[b], i0 + b, j0);
  }

  KOKKOS_FORCEINLINE_FUNCTION void compute_store(const Vec (&v)[NIn], int64_t i, int64_t j0) const {
    Vec r;
    TILEKIT_EW_UNROLL
    for (int e = 0; e < W; ++e) {
      C x[NIn];
      TILEKIT_EW_UNROLL
      for (int k = 0; k < NIn; ++k) x[k] = convert<C>(v[k].x[e]);
      r.x[e] = convert<T>(invoke(op, x));
    }
    store_vec(reinterpret_cast<Vec*>(p.out.data + i * p.out.rs + j0), r);
  }

  /// The W elements of row i from column j0: one vector access per operand when allowed, else
  /// element by element, masking columns >= N. All loads of a vector precede its store, so an
  /// input that is the output itself (c = a + c) reads the old values.
  KOKKOS_FORCEINLINE_FUNCTION void vector(int64_t i, int64_t j0) const {
    if (vec_ok && j0 + W <= N) {
      if (any_splat)
        one_vector<true>(i, j0);
      else
        one_vector<false>(i, j0);
    } else {
      for (int e = 0; e < W; ++e)
        if (j0 + e < N) element(i, j0 + e);
    }
  }

  /// Host backends: columns [j0, j1) of row i as one plain loop, with every operand contiguous
  /// along the row (rows_contiguous). Host compilers vectorize such a loop at their own width
  /// (and version it at run time for an output that aliases an input); they do not vectorize the
  /// 16-bit conversions of a single W-element vector.
  KOKKOS_FORCEINLINE_FUNCTION void row_segment(int64_t i, int64_t j0, int64_t j1) const {
    const T* in[NIn];
    TILEKIT_EW_UNROLL
    for (int k = 0; k < NIn; ++k) in[k] = p.in[k].data + i * p.in[k].rs;
    T* out = p.out.data + i * p.out.rs;
    int64_t j = j0;
#if defined(TILEKIT_EW_HOST_BLOCKS)
    // f16/bf16: blocks of 16 converted as whole vectors (element by element, the conversions were
    // most of the time: f16 add ran at 0.47x the copy bandwidth on the 2-core EPYC). All loads of a
    // block precede its stores, as an output that is one of the inputs needs.
    if constexpr ((std::is_same<T, f16>::value || std::is_same<T, bf16>::value) && std::is_same<C, float>::value) {
      for (; j + kHostBlock <= j1; j += kHostBlock) {
        TILEKIT_EW_BLOCK_STORAGE float xs[NIn][kHostBlock], r[kHostBlock];
        TILEKIT_EW_UNROLL
        for (int k = 0; k < NIn; ++k) host_block_to_float(in[k] + j, xs[k]);
        for (int e = 0; e < kHostBlock; ++e) {
          C x[NIn];
          TILEKIT_EW_UNROLL
          for (int k = 0; k < NIn; ++k) x[k] = xs[k][e];
          r[e] = invoke(op, x);
        }
        host_block_from_float(r, out + j);
      }
    }
#endif
    for (; j < j1; ++j) {
      C x[NIn];
      TILEKIT_EW_UNROLL
      for (int k = 0; k < NIn; ++k) x[k] = convert<C>(in[k][j]);
      out[j] = convert<T>(invoke(op, x));
    }
  }

  /// The vector at column j0 of rows i0 .. i0+nr-1 (nr <= B). A full group of B rows issues all its
  /// loads before any store (B vectors per operand in flight per thread); a partial group (the last
  /// rows of the output) goes row by row.
  KOKKOS_FORCEINLINE_FUNCTION void vectors_of_rows(int64_t i0, int nr, int64_t j0) const {
    if (nr == B && vec_ok && j0 + W <= N) {
      if (any_splat)
        rows_in_flight<true>(i0, j0);
      else
        rows_in_flight<false>(i0, j0);
    } else {
      for (int b = 0; b < nr; ++b) vector(i0 + b, j0);
    }
  }
};

using Index = Kokkos::IndexType<int64_t>;

/// naive: work item = element (i, j), j fastest, so consecutive work items take consecutive columns.
template <class Body>
struct NaiveKernel {
  Body b;
  KOKKOS_INLINE_FUNCTION void operator()(int64_t idx) const { b.element(idx / b.N, idx % b.N); }
};

/// vectorized: work item = the vector at columns [jv*W, jv*W + W) of row i.
template <class Body>
struct VectorizedKernel {
  Body b;
  int64_t nv = 0;  ///< vectors per row, ceil(N / W)
  KOKKOS_INLINE_FUNCTION void operator()(int64_t idx) const {
    const int64_t i = idx / nv, jv = idx % nv;
    b.vector(i, jv * Body::W);
  }
};

/// tiled: team = a tile of tile_rows x tile_cols elements. Thread (tr, tc) of the team (tc fastest)
/// covers rows tr*R .. tr*R+R-1 of the tile and, in each, the vectors tc, tc+threads_n, ... (so that
/// consecutive threads take consecutive 16-byte vectors of a row): the notebook's thread-value
/// layout, thread layout (threads_m, threads_n) x value layout (R rows, vectors_per_thread x W).
template <class ExecSpace, class Body>
struct TiledKernel {
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Index>;
  using member_type = typename policy_type::member_type;
  static constexpr bool kHost = !is_gpu_space<ExecSpace>();

  Body b;
  int rows_per_thread = 1, vectors_per_thread = 1, threads_n = 1;
  int64_t tile_rows = 0, tile_cols = 0;  ///< elements
  int64_t tiles_m = 0, tiles_n = 0;
  bool remap = true;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    // Team order: with remap, consecutive teams walk along a row of tiles (contiguous memory), as in
    // the notebook's remapped block index; without, down a column of tiles.
    const int64_t t = team.league_rank();
    const int64_t tm = remap ? t / tiles_n : t % tiles_m;
    const int64_t tn = remap ? t % tiles_n : t / tiles_m;
    const int tid = team.team_rank();
    const int tc = tid % threads_n, tr = tid / threads_n;
    const int64_t row0 = tm * tile_rows + int64_t(tr) * rows_per_thread;  // this thread's first row
    const int64_t col0 = tn * tile_cols;
    const int64_t rows_left = b.M - row0;
    const int rows = rows_left < rows_per_thread ? static_cast<int>(rows_left) : rows_per_thread;
    if constexpr (kHost) {
      // Host, one thread along a row: its vectors are one contiguous run of the row, done as a plain
      // loop per row (row_segment) that the compiler vectorizes; the tail needs no predicate.
      if (threads_n == 1 && b.rows_contiguous) {
        const int64_t j1 = col0 + int64_t(vectors_per_thread) * Body::W;
        for (int r = 0; r < rows; ++r) b.row_segment(row0 + r, col0, j1 < b.N ? j1 : b.N);
        return;
      }
    }
    for (int r = 0; r < rows; r += Body::B) {  // this thread's rows, B at a time
      const int nr = rows - r < Body::B ? rows - r : Body::B;
      for (int c = 0; c < vectors_per_thread; ++c) {  // this thread's vectors along the row
        const int64_t j0 = col0 + (int64_t(c) * threads_n + tc) * Body::W;
        if (j0 >= b.N) break;
        b.vectors_of_rows(row0 + r, nr, j0);
      }
    }
  }
};

template <class Op, class = void>
struct has_check : std::false_type {};
template <class Op>
struct has_check<Op, std::void_t<decltype(std::declval<const Op&>().check(DType::f32))>> : std::true_type {};

}  // namespace detail

template <class Op, class T, int NIn>
std::string check_elementwise(const Op& op, const ElementwiseProblem<T, NIn>& p, const ElementwiseConfig& cfg_in) {
  using ES = Kokkos::DefaultExecutionSpace;
  constexpr bool gpu = is_gpu_space<ES>();
  static_assert(NIn == Op::arity, "the number of inputs must be the op's arity");
  static_assert(!op_floating_only<Op>::value || !std::is_integral<typename TypeTraits<T>::compute>::value,
                "this op needs a floating-point type");
  const char* tname = dtype_name(TypeTraits<T>::dtype);
  const std::string backend = backend_name();
  if constexpr (detail::has_check<Op>::value) {
    const std::string why = op.check(TypeTraits<T>::dtype);
    if (!why.empty()) return why;
  }

  // --- shapes: the output, then each input (equal or broadcast)
  const int64_t M = p.out.rows, N = p.out.cols;
  if (M < 0 || N < 0) return fmt::format("sizes must be >= 0 (got an output of {}x{})", M, N);
  constexpr int64_t kMaxElems = int64_t(1) << 40;
  if (M > kMaxElems || N > kMaxElems || (M > 0 && N > kMaxElems / M))
    return fmt::format("an output of {}x{} is too large (limit 2^40 elements)", M, N);
  for (int k = 0; k < NIn; ++k) {
    const auto& a = p.in[k];
    const bool rows_ok = a.rows == M || a.rows == 1;
    const bool cols_ok = a.cols == N || a.cols == 1;
    if (!rows_ok || !cols_ok)
      return fmt::format("shape mismatch: input {} of '{}' is {}x{}, which does not broadcast to the {}x{} "
                         "output (allowed: {}x{}, 1x{}, {}x1, 1x1)",
                         k, Op::name, a.rows, a.cols, M, N, M, N, N, M);
  }
  if (M == 0 || N == 0) return "";  // a valid no-op: nothing is read or written

  // --- data and strides
  if (!p.out.data) return "the output has no data";
  if (p.out.rs < 1 || p.out.cs < 1)
    return fmt::format("output strides must be >= 1 (got row stride {}, column stride {})", p.out.rs, p.out.cs);
  const bool row_major_ok = p.out.rs >= N * p.out.cs || M == 1;
  const bool col_major_ok = p.out.cs >= M * p.out.rs || N == 1;
  if (!row_major_ok && !col_major_ok)
    return fmt::format("output strides (row {}, column {}) make distinct elements of a {}x{} output overlap",
                       p.out.rs, p.out.cs, M, N);
  for (int k = 0; k < NIn; ++k) {
    if (!p.in[k].data) return fmt::format("input {} has no data", k);
    if (p.in[k].rs < 0 || p.in[k].cs < 0)
      return fmt::format("input {} strides must be >= 0 (0 repeats a row or column; got row stride {}, "
                         "column stride {})",
                         k, p.in[k].rs, p.in[k].cs);
  }

  // --- aliasing: an input may be the output itself, nothing else may overlap it
  const ElementwiseProblem<T, NIn> q = detail::normalized(p);
  auto span = [](const auto& m, std::uintptr_t& lo, std::uintptr_t& hi) {
    lo = reinterpret_cast<std::uintptr_t>(m.data);
    hi = lo + static_cast<std::uintptr_t>(((m.rows - 1) * m.rs + (m.cols - 1) * m.cs + 1) * int64_t(sizeof(T)));
  };
  std::uintptr_t olo, ohi;
  span(q.out, olo, ohi);
  for (int k = 0; k < NIn; ++k) {
    std::uintptr_t lo, hi;
    span(q.in[k], lo, hi);
    const bool overlap = lo < ohi && olo < hi;
    // The same matrix: same base, and the same stride along every dimension longer than 1.
    const bool same = static_cast<const void*>(q.in[k].data) == static_cast<const void*>(q.out.data) &&
                      (q.out.rows == 1 || q.in[k].rs == q.out.rs) && (q.out.cols == 1 || q.in[k].cs == q.out.cs);
    if (overlap && !same)
      return fmt::format("input {} overlaps the output without being the output itself (allowed: an input "
                         "that is exactly the output, as in c = a + c, or no overlap)",
                         k);
  }

  // --- config
  const ElementwiseConfig cfg = resolve_elementwise_config(cfg_in, TypeTraits<T>::dtype);
  if (cfg.variant == ElementwiseVariant::automatic)
    return fmt::format("no default elementwise config for backend '{}'", backend);
  if (cfg.variant == ElementwiseVariant::naive) return "";
  if (cfg.vector_bytes != kElementwiseVectorBytes)
    return fmt::format("config '{}': vector_bytes must be {} (the widest access every backend has; got {})",
                       cfg.name(), kElementwiseVectorBytes, cfg.vector_bytes);
  if (cfg.variant == ElementwiseVariant::vectorized) return "";
  constexpr int kMaxPerThread = 1 << 16;
  if (cfg.rows_per_thread < 1 || cfg.rows_per_thread > kMaxPerThread)
    return fmt::format("config '{}': rows_per_thread must be in 1..{} (got {})", cfg.name(), kMaxPerThread,
                       cfg.rows_per_thread);
  if (cfg.vectors_per_thread < 1 || cfg.vectors_per_thread > kMaxPerThread)
    return fmt::format("config '{}': vectors_per_thread must be in 1..{} (got {})", cfg.name(), kMaxPerThread,
                       cfg.vectors_per_thread);
  if (cfg.team_size < 1)
    return fmt::format("config '{}': team_size must be >= 1 (got {})", cfg.name(), cfg.team_size);
  if (cfg.threads_n < 1 || cfg.team_size % cfg.threads_n != 0)
    return fmt::format("config '{}': threads_n must divide team_size (got threads_n {}, team_size {})", cfg.name(),
                       cfg.threads_n, cfg.team_size);
  using Body = detail::ElementwiseBody<Op, T, NIn, kElementwiseVectorBytes>;
  using F = detail::TiledKernel<ES, Body>;
  F f;
  typename F::policy_type policy(1, 1, 1);
  const int team_max = policy.team_size_max(f, Kokkos::ParallelForTag());
  if (cfg.team_size > team_max)
    return fmt::format("config '{}': team_size {} exceeds the {} maximum of {} for this kernel{}", cfg.name(),
                       cfg.team_size, backend, team_max,
                       gpu ? "" : " (on host backends a team of 1 is the useful size: one OpenMP thread per tile)");
  const int64_t tile_rows = cfg.tile_rows(), tile_cols = cfg.tile_cols(sizeof(T));
  const int64_t teams = ((q.out.rows + tile_rows - 1) / tile_rows) * ((q.out.cols + tile_cols - 1) / tile_cols);
  if (teams > int64_t(INT32_MAX))
    return fmt::format("config '{}': {}x{} {} needs {} tiles of {}x{}, over the 2^31-1 teams a launch can have",
                       cfg.name(), M, N, tname, teams, tile_rows, tile_cols);
  return "";
}

template <class Op, class T, int NIn>
void launch_elementwise(const Op& op, const ElementwiseProblem<T, NIn>& p, const ElementwiseConfig& cfg_in,
                        const Kokkos::DefaultExecutionSpace& space) {
  using ES = Kokkos::DefaultExecutionSpace;
  constexpr int VB = kElementwiseVectorBytes;
  using Body = detail::ElementwiseBody<Op, T, NIn, VB>;
  if (p.out.rows == 0 || p.out.cols == 0) return;  // nothing to read or write

  const ElementwiseConfig cfg = resolve_elementwise_config(cfg_in, TypeTraits<T>::dtype);
  Body b;
  b.op = op;
  b.p = detail::normalized(p);
  b.M = b.p.out.rows;
  b.N = b.p.out.cols;
  b.vec_ok = detail::vector_path_ok<VB>(b.p);
  b.rows_contiguous = b.p.out.cs == 1;
  for (int k = 0; k < NIn; ++k) b.any_splat = b.any_splat || b.p.in[k].cs == 0;
  for (int k = 0; k < NIn; ++k) b.rows_contiguous = b.rows_contiguous && b.p.in[k].cs == 1;
  const std::string label =
      fmt::format("tilekit::elementwise_{}_{}_{}", variant_name(cfg.variant), Op::name, dtype_name(TypeTraits<T>::dtype));

  switch (cfg.variant) {
    case ElementwiseVariant::naive: {
      Kokkos::parallel_for(label, Kokkos::RangePolicy<ES, detail::Index>(space, 0, b.M * b.N),
                           detail::NaiveKernel<Body>{b});
      break;
    }
    case ElementwiseVariant::vectorized: {
      const int64_t nv = (b.N + Body::W - 1) / Body::W;
      Kokkos::parallel_for(label, Kokkos::RangePolicy<ES, detail::Index>(space, 0, b.M * nv),
                           detail::VectorizedKernel<Body>{b, nv});
      break;
    }
    case ElementwiseVariant::tiled:
    default: {
      detail::TiledKernel<ES, Body> f;
      f.b = b;
      f.rows_per_thread = cfg.rows_per_thread;
      f.vectors_per_thread = cfg.vectors_per_thread;
      f.threads_n = cfg.threads_n;
      f.tile_rows = cfg.tile_rows();
      f.tile_cols = cfg.tile_cols(sizeof(T));
      f.tiles_m = (b.M + f.tile_rows - 1) / f.tile_rows;
      f.tiles_n = (b.N + f.tile_cols - 1) / f.tile_cols;
      f.remap = cfg.remap_teams;
      // (check_elementwise keeps the tile count within int, the league size Kokkos takes)
      typename detail::TiledKernel<ES, Body>::policy_type policy(space, static_cast<int>(f.tiles_m * f.tiles_n),
                                                                 cfg.team_size, 1);
      Kokkos::parallel_for(label, policy, f);
      break;
    }
  }
}

// --- shipped ops chosen at run time ---------------------------------------------------------------

namespace detail {

/// Calls f(op functor, std::integral_constant<int, arity>) for a shipped op.
template <class T, class F>
auto with_op(OpKind kind, const OpScalars& s, F&& f) {
  using IC1 = std::integral_constant<int, 1>;
  using IC2 = std::integral_constant<int, 2>;
  using IC3 = std::integral_constant<int, 3>;
  switch (kind) {
    case OpKind::add: return f(ops::Add{}, IC2{});
    case OpKind::sub: return f(ops::Sub{}, IC2{});
    case OpKind::mul: return f(ops::Mul{}, IC2{});
    case OpKind::div: return f(ops::Div{}, IC2{});
    case OpKind::max: return f(ops::Max{}, IC2{});
    case OpKind::min: return f(ops::Min{}, IC2{});
    case OpKind::mul_relu: return f(ops::MulRelu{}, IC2{});
    case OpKind::fma: return f(ops::Fma{}, IC3{});
    case OpKind::axpby: {
      ops::Axpby op;
      op.alpha = s.alpha;
      op.beta = s.beta;
      return f(op, IC2{});
    }
    case OpKind::relu: return f(ops::Relu{}, IC1{});
    case OpKind::silu:
    default:
      if constexpr (std::is_floating_point<typename TypeTraits<T>::compute>::value) {
        return f(ops::Silu{}, IC1{});
      } else {
        return f(ops::Relu{}, IC1{});  // unreachable: check_op rejects silu for integer types
      }
  }
}

template <class T, int NIn>
ElementwiseProblem<T, NIn> make_problem(const std::vector<StridedMatrix<const T>>& inputs, const StridedMatrix<T>& out) {
  ElementwiseProblem<T, NIn> p;
  for (int k = 0; k < NIn; ++k) p.in[k] = inputs[k];
  p.out = out;
  return p;
}

}  // namespace detail

template <class T>
std::string check_op(OpKind kind, const OpScalars& s, const std::vector<StridedMatrix<const T>>& inputs,
                     const StridedMatrix<T>& out, const ElementwiseConfig& cfg) {
  const OpInfo& info = op_info(kind);
  if (static_cast<int>(inputs.size()) != info.arity)
    return fmt::format("op '{}' ({}) takes {} input{} (got {})", info.name, info.formula, info.arity,
                       info.arity == 1 ? "" : "s", inputs.size());
  if (info.floating_only && std::is_integral<typename TypeTraits<T>::compute>::value)
    return fmt::format("op '{}' needs a floating-point type (got {}; allowed: f64, f32, f16, bf16)", info.name,
                       dtype_name(TypeTraits<T>::dtype));
  return detail::with_op<T>(kind, s, [&](const auto& op, auto nin) {
    return check_elementwise(op, detail::make_problem<T, decltype(nin)::value>(inputs, out), cfg);
  });
}

template <class T>
void launch_op(OpKind kind, const OpScalars& s, const std::vector<StridedMatrix<const T>>& inputs,
               const StridedMatrix<T>& out, const ElementwiseConfig& cfg) {
  detail::with_op<T>(kind, s, [&](const auto& op, auto nin) {
    launch_elementwise(op, detail::make_problem<T, decltype(nin)::value>(inputs, out), cfg);
  });
}

}  // namespace tilekit

/// Explicit instantiation of every shipped op and the run-time dispatch for one element type.
#define TILEKIT_INSTANTIATE_ELEMENTWISE(T, SILU) TILEKIT_ELEMENTWISE_ENTRIES(, T, SILU)
