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
/// (a K padded to whole vectors adds nothing to the product). One team per 64 x 64 block, through a
/// padded block in team scratch: the reads run along the source's contiguous dimension and the
/// writes along j, both coalesced (a transpose where the source is contiguous along i).
template <class T>
struct PackKMajor {
  using policy_type = Kokkos::TeamPolicy<Kokkos::DefaultExecutionSpace>;
  using member_type = typename policy_type::member_type;
  // 64: with 32 x 32 blocks a column-major 4096^3 ran 313 TFLOP/s against 377 with K-major operands
  // (~75 us to pack A: ~1.7 TB/s)
  static constexpr int kBlock = 64;
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return std::size_t(kBlock) * (kBlock + 1) * sizeof(T);
  }

  const T* src = nullptr;
  T* dst = nullptr;
  int64_t R = 0, L = 0, rs = 0, cs = 0, pitch = 0;
  int64_t written = 0;  ///< columns written per row: L, or pitch with zero_pad
  int64_t blocks_j = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int64_t i0 = team.league_rank() / blocks_j * kBlock, j0 = team.league_rank() % blocks_j * kBlock;
    T* block = static_cast<T*>(team.team_scratch(0).get_shmem(scratch_bytes()));
    const bool along_i = rs == 1 && cs != 1;  // the source is contiguous along i
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kBlock * kBlock), [&](int e) {
      const int fast = e % kBlock, slow = e / kBlock;
      const int ii = along_i ? fast : slow, jj = along_i ? slow : fast;
      T v = convert<T>(0.0f);
      if (i0 + ii < R && j0 + jj < L) v = src[(i0 + ii) * rs + (j0 + jj) * cs];
      block[ii * (kBlock + 1) + jj] = v;
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kBlock * kBlock), [&](int e) {
      const int jj = e % kBlock, ii = e / kBlock;
      if (i0 + ii < R && j0 + jj < written) dst[(i0 + ii) * pitch + j0 + jj] = block[ii * (kBlock + 1) + jj];
    });
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
  PackKMajor<T> f;
  f.src = src, f.dst = dst, f.R = rows, f.L = cols, f.rs = rs, f.cs = cs, f.pitch = pitch;
  f.written = zero_pad ? pitch : cols;
  f.blocks_j = (f.written + PackKMajor<T>::kBlock - 1) / PackKMajor<T>::kBlock;
  // (a league of up to 2^31 - 1 blocks: over 2^43 elements, beyond any GPU's memory)
  const int64_t league = (rows + PackKMajor<T>::kBlock - 1) / PackKMajor<T>::kBlock * f.blocks_j;
  typename PackKMajor<T>::policy_type policy(space, int(league), 256, 1);
  policy.set_scratch_size(0, Kokkos::PerTeam(PackKMajor<T>::scratch_bytes()));
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
