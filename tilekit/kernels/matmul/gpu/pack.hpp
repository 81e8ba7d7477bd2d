// tilekit blocked matmul: operands copied into a layout a GPU kernel loads in whole 16-byte vectors,
// before the kernel (CUDA, into the session's packing workspace, tilekit/kernels/core/workspace.hpp).
//   - pack_k_major: op(A) as M rows of K, op(B) as N rows of K, each row at a pitch of whole 16-byte
//     vectors. The warp-specialised tiles need it for TMA (gpu/wgmma_ws_sm90.hpp, launch_wgmma_ws);
//   - pack_for_vector_loads: the cp.async tensor-core kernels (gpu/mma_sm80.hpp,
//     gpu/mma_sm80_f64_tf32_i8.hpp) and the warp-tiled SIMT kernel (gpu/simt_warp.hpp) load an
//     operand in 16-byte vectors only where its contiguous rows start on 16-byte boundaries (and,
//     for the tensor-core kernels, its contiguous extent is whole vectors too); any other operand
//     they load element by element, at a fraction of the speed (f64 4097^3: 0.3x cuBLAS DGEMM; perf
//     notes 48). Such operands are packed K-major first, K padded with zeros to whole vectors where
//     the tensor-core kernels need it.
#pragma once

#include "tilekit/kernels/core/execution_space.hpp"
#include "tilekit/kernels/core/workspace.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tilekit {
namespace detail {

/// Copies an R x L operand (element (i, j) at src[i * rs + j * cs]) into dst[i * pitch + j], rows
/// contiguous along j (K); with zero_pad, columns L .. pitch - 1 of each row are written as zeros
/// (a K padded to whole vectors adds nothing to the product). One team per block of kBlockI rows
/// (128 bytes of a source column) x kBlockJ columns, moved in 16-byte vectors where the addresses
/// allow (vec_src, vec_dst), element by element elsewhere:
///   - a source contiguous along i (a transpose): each column's 128 bytes are read in vectors (two
///     lanes a 32-byte sector), scattered into a padded block in team scratch, and the block's rows
///     written out in vectors along j;
///   - any other source: rows copied along j, vector to vector, with no scratch.
/// Every lane keeps kPerLane vectors in flight before it stores any (docs/perf-notes.md section 51:
/// the 64 x 64 element-wise form moved ~1.7 TB/s for f32 and a quarter of that for i8).
template <class T>
struct PackKMajor {
  using policy_type = Kokkos::TeamPolicy<Kokkos::DefaultExecutionSpace>;
  using member_type = typename policy_type::member_type;
  static constexpr int kVec = 16 / int(sizeof(T));  ///< elements per 16-byte vector
  static constexpr int kBlockI = 8 * kVec;          ///< rows of dst per block: 8 vectors of a source column
  static constexpr int kBlockJ = 128;               ///< columns (K) per block
  static constexpr int kPitch = kBlockJ + kVec;     ///< scratch row: one vector of padding (bank spread)
  static constexpr int kLanes = 256;                ///< the work of a block is dealt to 256 lanes
  static constexpr int kPerLane = kBlockI / kVec * kBlockJ / kLanes;  ///< vectors per lane: 4
  struct alignas(16) Vec {
    T v[kVec];
  };
  static_assert(kPerLane * kLanes * kVec == kBlockI * kBlockJ, "whole vectors per lane");
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return std::size_t(kBlockI) * kPitch * sizeof(T) + 16;  // +16: the base aligned up to 16 bytes
  }

  const T* src = nullptr;
  T* dst = nullptr;
  int64_t R = 0, L = 0, rs = 0, cs = 0, pitch = 0;
  int64_t written = 0;  ///< columns written per row: L, or pitch with zero_pad
  int64_t blocks_j = 1;
  bool transpose = false;  ///< the source is contiguous along i
  bool vec_src = false;    ///< the source's contiguous runs start on 16-byte boundaries
  bool vec_dst = false;    ///< dst and its pitch are whole 16-byte vectors

  /// Vector q (kVec elements along j) of row i: from the source where j < L, zeros beyond.
  KOKKOS_INLINE_FUNCTION Vec load_row_vector(int64_t i, int64_t j) const {
    Vec x;
    if (vec_src && j + kVec <= L) return *reinterpret_cast<const Vec*>(src + i * rs + j);
    for (int e = 0; e < kVec; ++e) x.v[e] = j + e < L ? src[i * rs + (j + e) * cs] : convert<T>(0.0f);
    return x;
  }
  /// kVec elements of column j from row i on (the source contiguous along i); zeros beyond L.
  KOKKOS_INLINE_FUNCTION Vec load_column_vector(int64_t i, int64_t j) const {
    Vec x;
    if (j < L && vec_src && i + kVec <= R) return *reinterpret_cast<const Vec*>(src + i + j * cs);
    for (int e = 0; e < kVec; ++e) x.v[e] = j < L && i + e < R ? src[i + e + j * cs] : convert<T>(0.0f);
    return x;
  }
  KOKKOS_INLINE_FUNCTION void store_row_vector(int64_t i, int64_t j, const Vec& x) const {
    if (vec_dst && j + kVec <= written) {
      *reinterpret_cast<Vec*>(dst + i * pitch + j) = x;
      return;
    }
    for (int e = 0; e < kVec; ++e)
      if (j + e < written) dst[i * pitch + j + e] = x.v[e];
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int64_t i0 = team.league_rank() / blocks_j * kBlockI, j0 = team.league_rank() % blocks_j * kBlockJ;
    constexpr int kRowVectors = kBlockJ / kVec;  // vectors along j in a block row
    if (!transpose) {  // rows along j, vector to vector
      for (int lane = team.team_rank(); lane < kLanes; lane += team.team_size()) {
        Vec x[kPerLane] = {};
        for (int u = 0; u < kPerLane; ++u) {
          const int v = lane + u * kLanes, ii = v / kRowVectors, q = v % kRowVectors;
          if (i0 + ii < R && j0 + q * kVec < written) x[u] = load_row_vector(i0 + ii, j0 + q * kVec);
        }
        for (int u = 0; u < kPerLane; ++u) {
          const int v = lane + u * kLanes, ii = v / kRowVectors, q = v % kRowVectors;
          if (i0 + ii < R && j0 + q * kVec < written) store_row_vector(i0 + ii, j0 + q * kVec, x[u]);
        }
      }
      return;
    }
    char* raw = static_cast<char*>(team.team_scratch(0).get_shmem(scratch_bytes()));
    T* block = reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(raw) + 15) & ~uintptr_t(15));
    // Columns in: lane pairs read the two vectors of a 32-byte sector of column jj; the kPerLane
    // vectors of a lane are kBlockI / kVec / kPerLane = 2 vectors apart along i.
    for (int lane = team.team_rank(); lane < kLanes; lane += team.team_size()) {
      const int warp = lane / 32, l = lane % 32;
      const int jj = warp * 16 + l / 2;
      Vec x[kPerLane];
      for (int u = 0; u < kPerLane; ++u) {
        const int iv = 2 * u + l % 2;
        x[u] = load_column_vector(i0 + iv * kVec, j0 + jj);
      }
      for (int u = 0; u < kPerLane; ++u) {
        const int iv = 2 * u + l % 2;
        for (int e = 0; e < kVec; ++e) block[(iv * kVec + e) * kPitch + jj] = x[u].v[e];
      }
    }
    team.team_barrier();
    // Rows out: consecutive lanes take consecutive vectors of a row.
    for (int lane = team.team_rank(); lane < kLanes; lane += team.team_size()) {
      for (int u = 0; u < kPerLane; ++u) {
        const int v = lane + u * kLanes, ii = v / kRowVectors, q = v % kRowVectors;
        if (i0 + ii < R && j0 + q * kVec < written)
          store_row_vector(i0 + ii, j0 + q * kVec, *reinterpret_cast<const Vec*>(block + ii * kPitch + q * kVec));
      }
    }
  }
};

/// An operand of the TF32 tile as TMA needs it: rows of K contiguous, a 16-byte aligned base and a
/// pitch of whole 16-byte vectors, at least K (a pitch of 0, one row repeated, is packed). True when
/// it already is (no copy).
template <class T>
bool k_major_for_tma(const T* data, int64_t k_stride, int64_t row_pitch, int64_t k) {
  return k_stride == 1 && reinterpret_cast<uintptr_t>(data) % 16 == 0 &&
         (row_pitch * int64_t(sizeof(T))) % 16 == 0 && row_pitch >= k;
}

/// Launches PackKMajor: `rows` x `cols` of src (strides rs, cs) into dst with `pitch`; zero_pad:
/// columns cols .. pitch - 1 written as zeros.
template <class T>
void pack_k_major(const T* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, T* dst, int64_t pitch,
                  const Kokkos::DefaultExecutionSpace& space, bool zero_pad = false) {
  using F = PackKMajor<T>;
  F f;
  f.src = src, f.dst = dst, f.R = rows, f.L = cols, f.rs = rs, f.cs = cs, f.pitch = pitch;
  f.written = zero_pad ? pitch : cols;
  f.blocks_j = (f.written + F::kBlockJ - 1) / F::kBlockJ;
  f.transpose = rs == 1 && cs != 1;
  const auto aligned = [](const void* ptr, int64_t stride) {
    return reinterpret_cast<uintptr_t>(ptr) % 16 == 0 && (stride * int64_t(sizeof(T))) % 16 == 0;
  };
  f.vec_src = f.transpose ? aligned(src, cs) : cs == 1 && aligned(src, rs);
  f.vec_dst = aligned(dst, pitch);
  // (a league of up to 2^31 - 1 blocks: over 2^43 elements, beyond any GPU's memory)
  const int64_t league = (rows + F::kBlockI - 1) / F::kBlockI * f.blocks_j;
  const int team = is_gpu_space<Kokkos::DefaultExecutionSpace>() ? F::kLanes : 1;
  typename F::policy_type policy(space, int(league), team, 1);
  if (f.transpose) policy.set_scratch_size(0, Kokkos::PerTeam(F::scratch_bytes()));
  Kokkos::parallel_for("tilekit::pack_k_major", policy, f);
}

/// Whether kernel KERNEL loads an operand in 16-byte vectors: `rows` x `cols` with element (i, j)
/// at data[i * rs + j * cs]. Both kernel families need unit stride along one side and the other
/// stride a whole number of vectors from an aligned base; the tensor-core kernels also the extent
/// along the unit stride (operands_chunked, gpu/mma_sm80.hpp; the SIMT kernel loads a vector that
/// crosses the edge element by element: SimtWarpMatmul::plan).
template <TileKernel KERNEL, class T>
bool vector_loadable(const T* data, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  constexpr int64_t kVec = 16 / int64_t(sizeof(T));
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) return false;
  const bool tensor_core = KERNEL != TileKernel::simt_warp;
  if (cs == 1 && rs % kVec == 0) return !tensor_core || cols % kVec == 0;
  if (rs == 1 && cs % kVec == 0) return !tensor_core || rows % kVec == 0;
  return false;
}

/// Releases the packing workspace at the end of a scope where `held` (the launch after
/// pack_for_vector_loads, an exception included).
struct PackWorkspaceHold {
  void* stream = nullptr;
  bool held = false;
  ~PackWorkspaceHold() {
    if (held) release_pack_workspace(stream);
  }
};

/// The kernels whose operands pack_for_vector_loads may pack.
constexpr bool packs_for_vector_loads(TileKernel k) {
  return k == TileKernel::mma_sm80 || k == TileKernel::mma_sm80_f64_tf32_i8 || k == TileKernel::simt_warp;
}

/// Packs the operands of p that kernel KERNEL would load element by element (vector_loadable) into
/// K-major copies in the packing workspace and points p at them; on CUDA only (elsewhere, or where
/// the workspace cannot grow, p stays as it is and the kernel loads element by element). The
/// tensor-core kernels also need K in whole vectors along a K-major row: where it is not, both
/// operands are packed with K padded by zeros and p.K raised to match. Returns what it did
/// ("" nothing; the caller then holds no workspace), e.g. "a, b K-major, K padded 4097 -> 4098";
/// the caller releases the workspace (release_pack_workspace) once the kernel is launched.
template <TileKernel KERNEL, class TIn, class TOut>
std::string pack_for_vector_loads(MatmulProblem<TIn, TOut>& p, const Kokkos::DefaultExecutionSpace& space) {
  if (!is_cuda_space<Kokkos::DefaultExecutionSpace>() || p.K == 0) return {};
  using T = TIn;
  constexpr int64_t kVec = 16 / int64_t(sizeof(T));
  const bool a_ok = vector_loadable<KERNEL>(p.a.data, p.M, p.K, p.a.rs, p.a.cs);
  const bool b_ok = vector_loadable<KERNEL>(p.b.data, p.K, p.N, p.b.rs, p.b.cs);
  if (a_ok && b_ok) return {};
  const bool tensor_core = KERNEL != TileKernel::simt_warp;
  const int64_t pitch = (p.K + kVec - 1) / kVec * kVec;
  // A K-major row of K values is whole vectors only where pitch == K; the tensor-core kernels then
  // read K rounded up, so both operands must hold zeros there.
  const bool pad = tensor_core && pitch != p.K;
  const bool pack_a = !a_ok || pad, pack_b = !b_ok || pad;
  const std::size_t a_bytes = pack_a ? (std::size_t(p.M) * pitch * sizeof(T) + 255) / 256 * 256 : 0;
  const std::size_t b_bytes = pack_b ? std::size_t(p.N) * pitch * sizeof(T) : 0;
  void* stream = stream_handle(space);
  void* ws = nullptr;
  if (!acquire_pack_workspace(a_bytes + b_bytes, stream, ws).empty()) return {};
  if (pack_a) {
    T* dst = static_cast<T*>(ws);
    pack_k_major(p.a.data, p.M, p.K, p.a.rs, p.a.cs, dst, pitch, space, pad);
    p.a = {dst, p.M, pad ? pitch : p.K, pitch, 1};
  }
  if (pack_b) {  // op(B) is K x N: its rows along K are columns n
    T* dst = reinterpret_cast<T*>(static_cast<char*>(ws) + a_bytes);
    pack_k_major(p.b.data, p.N, p.K, p.b.cs, p.b.rs, dst, pitch, space, pad);
    p.b = {dst, pad ? pitch : p.K, p.N, 1, pitch};
  }
  std::string what = std::string(pack_a && pack_b ? "a, b" : pack_a ? "a" : "b") + " K-major";
  if (pad) {
    what += ", K padded " + std::to_string(p.K) + " -> " + std::to_string(pitch);
    p.K = pitch;
  }
  return what;
}

}  // namespace detail
}  // namespace tilekit
