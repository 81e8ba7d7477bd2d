// tilekit blocked matmul, the second pass of split K on the tensor-core kernels (CUDA): the
// warp-specialised tiles (gpu/wgmma_ws_sm90.hpp, launch_wgmma_ws_split_k) and the mma.sync tiles of
// f64, TF32 and i8 (gpu/mma_sm80_f64_tf32_i8.hpp, launch_mma_frag_split_k). Their first kernel stores
// each split's sums, as they are, into a partial C of its own; the pass here adds the partial Cs in
// split order and applies the epilogue, so the same inputs and config give the same bits whichever
// team finished first.
#pragma once

#include "tilekit/kernels/core/workspace.hpp"
#include "tilekit/kernels/matmul/config.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/team.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tilekit {
namespace detail {

/// C(i, j) = the epilogue of the sum of the partial sums at (i, j), added in split order, then alpha,
/// beta, the bias and the activation as every kernel applies them (store_c_element). The partial
/// matrices have C's storage order (column-major where C is: both sides coalesced), `stride`
/// elements apart; one thread an element of C.
template <class TIn, class TOut, class TPartial>
struct SplitKSum {
  MatmulProblem<TIn, TOut> p;
  const TPartial* partials = nullptr;
  int splits = 1;
  int64_t stride = 0;
  bool col_major = false;

  KOKKOS_INLINE_FUNCTION void operator()(int64_t e) const {
    const int64_t i = col_major ? e % p.M : e / p.N, j = col_major ? e / p.M : e % p.N;
    const TPartial* part = partials + e;
    TPartial sum = part[0];
    for (int s = 1; s < splits; ++s) sum += part[s * stride];
    store_c_element(p, i, j, typename TypeTraits<TIn>::compute(sum));
  }
};

/// The partial Cs of a split-K launch: `splits` matrices of C's shape and storage order, `stride`
/// elements apart (each on a 256-byte boundary, so that vector stores stay aligned). Held from
/// construction until release() (or destruction) orders the buffer's reuse after the work queued on
/// the stream. The workspaces are locked in one order by every launch (core/workspace.hpp): the
/// warp-specialised launch takes the partial-sum buffer before it packs operands (kPartialSumBuffer);
/// a launch that already holds the packing workspace takes the split-K buffer after it (kSplitKBuffer).
enum class PartialSumBuffer { kPartialSumBuffer, kSplitKBuffer };
template <class TPartial>
struct PartialSums {
  StridedMatrix<TPartial> first;  ///< split 0's partial C; split s at first.data + s * stride
  int64_t stride = 0;
  bool col_major = false;
  void* stream = nullptr;
  PartialSumBuffer buffer;
  bool held = false;

  template <class TIn, class TOut>
  PartialSums(const MatmulProblem<TIn, TOut>& p, int splits, PartialSumBuffer buffer_, void* stream_,
              const std::string& label)
      : stream(stream_), buffer(buffer_) {
    col_major = p.c.rs == 1 && p.c.cs != 1;
    stride = (p.M * p.N + 63) / 64 * 64;
    const std::size_t bytes = std::size_t(splits) * std::size_t(stride) * sizeof(TPartial);
    void* device = nullptr;
    int* no_counters = nullptr;
    const std::string why = buffer == PartialSumBuffer::kPartialSumBuffer
                                ? acquire_partial_sum_workspace(bytes, stream, device)
                                : acquire_split_k_workspace(0, bytes, stream, no_counters, device);
    if (!why.empty()) throw std::runtime_error("tilekit: " + label + ": " + why);
    held = true;
    TPartial* const part = static_cast<TPartial*>(device);
    first = col_major ? StridedMatrix<TPartial>{part, p.M, p.N, 1, p.M} : StridedMatrix<TPartial>{part, p.M, p.N, p.N, 1};
  }
  PartialSums(const PartialSums&) = delete;
  PartialSums& operator=(const PartialSums&) = delete;
  ~PartialSums() { release(); }
  void release() {
    if (!held) return;
    held = false;
    if (buffer == PartialSumBuffer::kPartialSumBuffer)
      release_partial_sum_workspace(stream);
    else
      release_split_k_workspace(stream);
  }

  /// The first pass's functor F (a split-K kernel of Tile whose C is TPartial): p's sizes and
  /// operands, no epilogue (alpha 1, beta 0, no bias, no activation), its C these partial Cs.
  template <class F, class Tile, class TIn, class TOut>
  F first_pass(const MatmulProblem<TIn, TOut>& p, const MatmulConfig& cfg, int splits, int64_t k_per_split) const {
    F f;
    f.p.M = p.M, f.p.N = p.N, f.p.K = p.K;
    f.p.a = p.a, f.p.b = p.b, f.p.math = p.math;
    f.p.c = first;
    f.group_m = cfg.group_m;
    f.tiles_m = static_cast<int>((p.M + Tile::BM - 1) / Tile::BM);
    f.tiles_n = static_cast<int>((p.N + Tile::BN - 1) / Tile::BN);
    f.vector_length = cfg.vector_length;
    f.k_splits = splits;
    f.k_per_split = k_per_split;
    f.c_split_stride = stride;
    return f;
  }

  /// Queues the second pass on `space`: C of p from the `splits` partial Cs.
  template <class TIn, class TOut>
  void sum_into(const MatmulProblem<TIn, TOut>& p, int splits, const std::string& label,
                const Kokkos::DefaultExecutionSpace& space) const {
    using ES = Kokkos::DefaultExecutionSpace;
    SplitKSum<TIn, TOut, TPartial> sum;
    sum.p = p;
    sum.partials = first.data;
    sum.splits = splits;
    sum.stride = stride;
    sum.col_major = col_major;
    Kokkos::parallel_for(label + "_split_k_sum", Kokkos::RangePolicy<ES, Kokkos::IndexType<int64_t>>(space, 0, p.M * p.N),
                         sum);
  }
};

}  // namespace detail
}  // namespace tilekit
