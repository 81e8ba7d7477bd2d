// Device workspaces of the matmul kernels (CUDA): one buffer per use and Kokkos session, grown on
// demand, ordered across streams by an event behind its last kernels, freed at Kokkos::finalize.
#pragma once

#include <cstddef>
#include <string>

namespace tilekit {

/// Device memory for operands copied into another layout before a kernel (the TF32 warp-specialised
/// tile packs op(A) and op(B) K-major): one buffer per Kokkos session, grown on demand and freed at
/// Kokkos::finalize. acquire locks it (until release), makes it at least `bytes` large and orders
/// `stream` (a cudaStream_t) after its last use; release records that use behind the kernels just
/// launched in `stream`, and unlocks. Returns "" or why not (no device memory: the size is named).
std::string acquire_pack_workspace(std::size_t bytes, void* stream, void*& device);
void release_pack_workspace(void* stream);

/// The same for split K (MatmulConfig::k_splits): one buffer of `counter_bytes` of arrival counters,
/// all zero on entry (kernels leave every counter at zero again), and `partial_bytes` of partial sums
/// after them. The partial sums start after the largest counter region any launch has used, so that
/// a launch with more tiles than an earlier one never counts on its partial sums. CUDA only ("" or
/// why not).
/// The warp-specialised kernel's drift bound takes its per-chunk counters from here too (no partial
/// sums), and zeroes them again in its stream before release_split_k_workspace.
/// The same for the partial sums of split K on the warp-specialised tiles (their own buffer: the
/// launch holds it while it takes the packing workspace, which other launches hold while they take
/// the split-K one, so one order of locks holds for all). "" or why not.
std::string acquire_partial_sum_workspace(std::size_t bytes, void* stream, void*& device);
void release_partial_sum_workspace(void* stream);

std::string acquire_split_k_workspace(std::size_t counter_bytes, std::size_t partial_bytes, void* stream,
                                      int*& counters, void*& partials);
void release_split_k_workspace(void* stream);

}  // namespace tilekit
