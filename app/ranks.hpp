// The processes of one run of the app: the MPI ranks when built with -DTILEKIT_ENABLE_MPI=ON and
// started by mpirun, else this process alone (rank 0 of 1). Everything MPI-specific in tilekit is
// behind this interface (app/ranks.cpp); the library never calls MPI.
#pragma once

#include "app/kokkos_args.hpp"

#include <string>
#include <vector>

namespace tilekit::app {

/// MPI_Init at construction (before Kokkos::initialize), MPI_Finalize at destruction (after
/// Kokkos::finalize): declare it before the Kokkos::ScopeGuard. Without MPI it does nothing.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

/// Whether this build can use MPI, and the world's size (1 without MPI or outside mpirun).
bool mpi_built();
int world_size();
int world_rank();
/// Rank among the processes of this node (MPI_COMM_TYPE_SHARED), and how many share the node.
int local_rank();
int local_size();

/// Ends every rank at once (MPI_Abort) after an error that one rank alone met, so that the others
/// do not wait forever in a collective; without MPI, or with one rank, returns `status`.
int abort_all(int status);

/// A group of ranks that take part in one sweep: the ranks with the same device (the same tuning
/// cache file), so that timings of different device models are never mixed.
class RankGroup {
 public:
  /// Splits the world by `device_key` (equal keys, one group). Collective over every rank.
  static RankGroup by_device(const std::string& device_key);
  int rank() const { return rank_; }
  int size() const { return size_; }
  int world_rank() const { return world_rank_; }
  /// How many groups (device models) the world has, and this group's number among them.
  int groups() const { return groups_; }
  int group_index() const { return group_index_; }
  bool leader() const { return rank_ == 0; }
  /// The leader's `text` on every rank of the group.
  std::string broadcast(const std::string& text) const;
  /// On the leader: every rank's `text`, in rank order; elsewhere empty.
  std::vector<std::string> gather(const std::string& text) const;

 private:
  int rank_ = 0, size_ = 1, world_rank_ = 0, groups_ = 1, group_index_ = 0;
  void* comm_ = nullptr;  // MPI_Comm of the group (MPI builds)
};

/// Kokkos arguments that map this rank to its own device: on GPUs `--kokkos-device-id=<local rank
/// mod GPUs>`; on CPUs `--kokkos-threads=<cores / ranks on the node>` (at least 1, at most Kokkos'
/// OpenMP pool; `--kokkos-num-threads` for Kokkos 4, thread_count_option()). Empty with one
/// rank, or when the command line or OMP_NUM_THREADS already chooses. `gpus` is the number of GPUs
/// the node shows (0 on CPU builds).
std::vector<std::string> rank_device_arguments(int argc, char* argv[], int gpus, std::string& note,
                                               const KokkosLimits& limits);

/// The thread count rank_device_arguments gave this rank when several ranks split one node's CPU
/// cores (0 when it did not: one rank per node, GPUs, or a thread count the user chose).
int split_threads();

}  // namespace tilekit::app
