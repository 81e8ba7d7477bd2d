// Compile-time facts about a Kokkos execution space that choose among kernel paths.
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace tilekit {

/// True for execution spaces whose memory the host cannot read (GPUs).
template <class ExecSpace>
constexpr bool is_gpu_space() {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
}

template <class ExecSpace>
constexpr bool is_cuda_space() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<ExecSpace, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

/// The CUDA stream of `space` as a void* (the device workspaces' handle; tilekit/kernels/core/workspace.hpp),
/// null on other backends.
inline void* stream_handle(const Kokkos::DefaultExecutionSpace& space) {
#if defined(KOKKOS_ENABLE_CUDA)
  return space.cuda_stream();
#else
  (void)space;
  return nullptr;
#endif
}

}  // namespace tilekit
