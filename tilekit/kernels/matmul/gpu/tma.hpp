// TMA descriptors (CUtensorMap) for the Hopper warp-specialised kernel (wgmma_ws_sm90.hpp): their
// encoding, and a ring of device slots that holds them for launches.
#pragma once

#include <cstddef>
#include <string>

namespace tilekit {

/// Writes into out[0..127] a CUDA tensor map (TMA descriptor, CUtensorMap) of a 2-D array of
/// `elem_bytes`-byte elements (2 or 4): `inner` elements along the contiguous dimension, `outer` rows
/// `pitch` elements apart; boxes of one 128-byte swizzle row (128 / elem_bytes elements) x box_outer
/// rows, 128-byte swizzle, zeros out of bounds. Returns "" on success, else why TMA cannot describe it
/// (base not 16-byte aligned, a pitch not a multiple of 16 bytes, a dimension over 2^31 - 1, no CUDA
/// 12 driver entry point, a non-CUDA build).
std::string encode_tma_2d(void* out128, const void* base, long long inner, long long outer, long long pitch,
                          int box_outer, int elem_bytes);

/// Device copies of kernels' TMA descriptors (three 128-byte CUtensorMaps per launch: A, B and C,
/// zeros where C is not stored through TMA), from a ring of
/// slots allocated once per Kokkos session (freed at Kokkos::finalize). A cudaMallocAsync,
/// cudaMemcpyAsync and cudaFreeAsync per launch instead cost ~100 us each time on the H100 (f16
/// 2048^3: 203 us per call against 105 with the ring; docs/perf-notes.md section 13). A slot is
/// reused only after the event recorded behind its last kernel has completed.
constexpr int kTensorMapSlotBytes = 384;
struct TensorMapSlot {
  void* device = nullptr;  ///< kTensorMapSlotBytes of device memory holding the maps; null: no slot
  int index = -1;
};
/// A slot holding maps[0 .. kTensorMapSlotBytes - 1] for a kernel in `stream` (a cudaStream_t): one
/// that already holds them (copied in this stream, or behind a completed event), else a copy into the
/// next slot in `stream` order; "" or why not.
std::string acquire_tensor_map_slot(const void* maps, void* stream, TensorMapSlot& slot);
/// Records, behind the kernel just launched in `stream`, that the slot may be reused after it.
void release_tensor_map_slot(const TensorMapSlot& slot, void* stream);

}  // namespace tilekit
