// Shared by every kernel family: the exception public entry points throw, and the backend's name.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace tilekit {

/// Thrown by public entry points for invalid input; what() says what is wrong and what is allowed.
struct InvalidArgument : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// "serial", "openmp", "cuda" or "hip": the backend of Kokkos::DefaultExecutionSpace.
std::string backend_name();

/// Bytes of team scratch a TeamPolicy kernel may ask for at `level` (0 or 1) on the default
/// execution space: Kokkos' own limit. With the project's Kokkos 3.4 patch, level 0 on CUDA is the
/// device's opt-in shared memory per block less Kokkos' team-reduction reserve (219 KB on an H100;
/// unpatched Kokkos 3.4 says 40 KB).
std::size_t team_scratch_limit(int level);

/// GPUs: the shared memory one block may use on the current device (CUDA: the opt-in maximum);
/// 0 on host backends.
std::size_t device_shared_memory_per_block();

/// major * 10 + minor of the current CUDA device (90 for an H100); 0 on other backends or without a
/// device. The sm_80+ tensor-core tiles need 80 or more.
int cuda_compute_capability();

/// True when Hopper warpgroup-MMA tiles can run: a CUDA build whose kernels carry sm_90a code, on a
/// GPU that runs it (compute capability 9.0). Probed once with a one-thread kernel.
bool warpgroup_mma_available();

/// Writes into out[0..127] a CUDA tensor map (TMA descriptor, CUtensorMap) of a 2-D array of
/// `elem_bytes`-byte elements (2 or 4): `inner` elements along the contiguous dimension, `outer` rows
/// `pitch` elements apart; boxes of one 128-byte swizzle row (128 / elem_bytes elements) x box_outer
/// rows, 128-byte swizzle, zeros out of bounds. Returns "" on success, else why TMA cannot describe it
/// (base not 16-byte aligned, a pitch not a multiple of 16 bytes, a dimension over 2^31 - 1, no CUDA
/// 12 driver entry point, a non-CUDA build).
std::string encode_tma_2d(void* out128, const void* base, long long inner, long long outer, long long pitch,
                          int box_outer, int elem_bytes);

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
std::string acquire_split_k_workspace(std::size_t counter_bytes, std::size_t partial_bytes, void* stream,
                                      int*& counters, void*& partials);
void release_split_k_workspace(void* stream);

/// Device copies of kernels' TMA descriptors (two 128-byte CUtensorMaps per launch), from a ring of
/// slots allocated once per Kokkos session (freed at Kokkos::finalize). A cudaMallocAsync,
/// cudaMemcpyAsync and cudaFreeAsync per launch instead cost ~100 us each time on the H100 (f16
/// 2048^3: 203 us per call against 105 with the ring; docs/perf-notes.md section 13). A slot is
/// reused only after the event recorded behind its last kernel has completed.
struct TensorMapSlot {
  void* device = nullptr;  ///< 256 bytes of device memory holding the maps, or null: no slot (why says)
  int index = -1;
};
/// A slot holding maps[0..255] for a kernel in `stream` (a cudaStream_t): one that already holds
/// them (copied in this stream, or behind a completed event), else a copy into the next slot in
/// `stream` order; "" or why not.
std::string acquire_tensor_map_slot(const void* maps256, void* stream, TensorMapSlot& slot);
/// Records, behind the kernel just launched in `stream`, that the slot may be reused after it.
void release_tensor_map_slot(const TensorMapSlot& slot, void* stream);

/// How the last warp-specialised wgmma launch loaded its operands: "tma", or "cp.async: <why not TMA>"
/// ("" before any). Set by launch_wgmma_ws; tests read it to know which producer they exercised.
std::string last_ws_loads();
void set_last_ws_loads(std::string how);

/// TILEKIT_WS_LOADS=cp.async makes the warp-specialised kernel keep its cp.async producer even where
/// TMA applies (a diagnostic for comparing the two producers in one build); read once.
bool ws_tma_disabled_by_env();

/// TILEKIT_WS_PERSISTENT=0 launches the warp-specialised kernel with one team per tile instead of a
/// persistent grid (a diagnostic, as above); read once.
bool ws_persistent_disabled_by_env();

/// Caps the warp-specialised kernel's grid at `teams` teams (0: no cap), returning the previous cap:
/// a test hook, so that small problems run teams that loop over several tiles (the next tile's
/// loads under the last one's epilogue) as large ones do.
int set_ws_team_cap(int teams);
int ws_team_cap();

/// The warp-specialised kernel's drift bound (tuning::WsDriftBound; matmul_wgmma_ws_sm90.hpp): how
/// the last launch applied it, e.g. "chunks of 16 K steps, slack 64 steps, 1216 chunks counted, 132
/// teams, waits up to 1000000 ns", or "" where it was off (short K, one wave, cp.async loads,
/// TILEKIT_WS_DRIFT=0). Set by launch_wgmma_ws; tests read it to know which producer they exercised.
std::string last_ws_drift_bound();
void set_last_ws_drift_bound(std::string how);

/// TILEKIT_WS_DRIFT: a diagnostic for comparing drift bounds in one build, read once. 0 turns the
/// bound off; a whole number N from 1 to 1048576 sets its slack to N K steps (chunks of
/// min(8, N) steps) in place of tuning::kWsDriftBound's. Returns -1 when unset; throws
/// InvalidArgument naming the value otherwise.
int ws_drift_slack_from_env();
/// True when TILEKIT_WS_DRIFT=0.
bool ws_drift_disabled_by_env();

/// A test hook: while `active`, launches apply the drift bound at any K with these chunk and slack
/// sizes and this wait limit in place of tuning::kWsDriftBound's, and with one_team_a_tile, launch one
/// team per tile (more teams than fit on the GPU at once: resident teams wait for teams that have
/// not started, until the limit frees them). Returns the previous override.
struct WsDriftOverride {
  bool active = false;
  int chunk_steps = 0;
  int slack_steps = 0;
  long long wait_limit_ns = 0;
  bool one_team_a_tile = false;
};
WsDriftOverride set_ws_drift_override(const WsDriftOverride& o);
WsDriftOverride ws_drift_override();

/// The warp-specialised kernel's two-team clusters (tuning::WsMulticast; matmul_wgmma_ws_sm90.hpp):
/// how the last launch ran, "clusters of 2 teams, B multicast" where it did, else why not (e.g. "off:
/// 64 K steps a tile, under 256"), "" before any launch that could. Set by launch_wgmma_ws.
std::string last_ws_multicast();
void set_last_ws_multicast(std::string how);

/// TILEKIT_WS_MULTICAST: a diagnostic, read once. 0 keeps the warp-specialised kernel off clusters,
/// 1 (the default) lets it use them where tuning::kWsMulticast says. Throws InvalidArgument naming
/// any other value.
bool ws_multicast_disabled_by_env();

/// A test hook: launches use the clusters from `min_k_steps` K steps a tile on, in place of
/// tuning::kWsMulticast's (-1: that default again). Returns the previous value.
int set_ws_multicast_min_k_steps(int min_k_steps);
int ws_multicast_min_k_steps_override();

/// Streaming multiprocessors of the current CUDA device, and the shared memory one of them holds in
/// bytes (0 and 0 without CUDA or a device).
int cuda_sm_count();
int cuda_shared_memory_per_sm();

/// Host code is compiled for one CPU (-march, default native): "" when this CPU has every
/// instruction set the build's host code uses among those tilekit's kernels rely on (AVX2, FMA,
/// F16C, AVX-512 F, AVX-512 BF16, AVX-512 VNNI), else a message naming the missing ones and how to
/// rebuild. A binary built on another machine then stops with this message, not an illegal
/// instruction (the app exits with status 3).
std::string host_isa_missing();

/// "" if `bytes` of level-`level` team scratch fit team_scratch_limit(level); else a message naming
/// the request, the limit and (GPUs) the device's own per-block maximum.
std::string check_team_scratch(std::size_t bytes, int level);

}  // namespace tilekit
