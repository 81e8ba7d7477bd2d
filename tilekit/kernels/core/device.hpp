// Device queries: the backend, team-scratch limits, compute capability, SM counts, and whether this
// CPU runs the build's host code.
#pragma once

#include <cstddef>
#include <string>

namespace tilekit {

/// "serial", "openmp", "cuda" or "hip": the backend of Kokkos::DefaultExecutionSpace.
std::string backend_name();

/// "" when the calling host thread can launch kernels on the default execution space, else why not
/// and what to do. The rule (docs/library.md, "Threads"): Kokkos must be initialized; with Kokkos
/// 3.x's OpenMP backend only the thread that called Kokkos::initialize launches, and not from
/// inside an OpenMP parallel region (Kokkos itself would throw "in parallel or not initialized").
/// Kokkos 4.x's host backends and the GPU backends launch from any host thread.
std::string launch_thread_problem();

/// True where several host threads may launch at the same time, each on its own outputs: GPU
/// backends (each thread on its own execution-space instance, i.e. stream) and Kokkos 4.x's host
/// backends, which serialize the kernels of one instance with a mutex of their own. False on Kokkos
/// 3.x host backends: Serial shares one team-scratch arena among all callers (calls must take
/// turns), OpenMP launches only from the initial thread.
bool concurrent_launches_allowed();

/// Throws InvalidArgument with launch_thread_problem()'s message when it is not "". Every public
/// entry that launches calls it first.
void require_launch_thread();

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
