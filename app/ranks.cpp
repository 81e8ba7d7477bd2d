#include "app/ranks.hpp"

#include <fmt/format.h>

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#if defined(TILEKIT_HAVE_MPI)
#include <mpi.h>
#endif

namespace tilekit::app {

namespace {
int g_local_rank = 0, g_local_size = 1;
[[maybe_unused]] bool g_mpi_initialized = false;
}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
#if defined(TILEKIT_HAVE_MPI)
  // One thread calls MPI (the main thread); Kokkos' OpenMP threads never do.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  g_mpi_initialized = true;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &g_local_rank);
  MPI_Comm_size(node, &g_local_size);
  MPI_Comm_free(&node);
#else
  (void)argc;
  (void)argv;
#endif
}

MpiSession::~MpiSession() {
#if defined(TILEKIT_HAVE_MPI)
  if (g_mpi_initialized) MPI_Finalize();
#endif
}

bool mpi_built() {
#if defined(TILEKIT_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

int world_size() {
  int size = 1;
#if defined(TILEKIT_HAVE_MPI)
  if (g_mpi_initialized) MPI_Comm_size(MPI_COMM_WORLD, &size);
#endif
  return size;
}

int world_rank() {
  int rank = 0;
#if defined(TILEKIT_HAVE_MPI)
  if (g_mpi_initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
  return rank;
}

int local_rank() { return g_local_rank; }
int local_size() { return g_local_size; }

int abort_all(int status) {
#if defined(TILEKIT_HAVE_MPI)
  if (g_mpi_initialized && world_size() > 1) MPI_Abort(MPI_COMM_WORLD, status);
#endif
  return status;
}

RankGroup RankGroup::by_device(const std::string& device_key) {
  RankGroup g;
#if defined(TILEKIT_HAVE_MPI)
  if (!g_mpi_initialized) return g;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g.world_rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  // Every rank's key (fixed-size slots), then the colour of a key = the first rank holding it.
  constexpr int kSlot = 256;
  char mine[kSlot] = {};
  std::strncpy(mine, device_key.c_str(), kSlot - 1);
  std::vector<char> all(std::size_t(kSlot) * world);
  MPI_Allgather(mine, kSlot, MPI_CHAR, all.data(), kSlot, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> keys;
  for (int r = 0; r < world; ++r) keys.emplace_back(&all[std::size_t(r) * kSlot]);
  std::vector<std::string> distinct;
  for (const auto& k : keys)
    if (std::find(distinct.begin(), distinct.end(), k) == distinct.end()) distinct.push_back(k);
  g.groups_ = int(distinct.size());
  g.group_index_ = int(std::find(distinct.begin(), distinct.end(), keys[g.world_rank_]) - distinct.begin());
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, g.group_index_, g.world_rank_, &comm);
  MPI_Comm_rank(comm, &g.rank_);
  MPI_Comm_size(comm, &g.size_);
  g.comm_ = new MPI_Comm(comm);  // lives until MPI_Finalize
#else
  (void)device_key;
#endif
  return g;
}

std::string RankGroup::broadcast(const std::string& text) const {
#if defined(TILEKIT_HAVE_MPI)
  if (comm_ && size_ > 1) {
    MPI_Comm comm = *static_cast<MPI_Comm*>(comm_);
    long long n = static_cast<long long>(text.size());
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm);
    std::string out = leader() ? text : std::string(static_cast<std::size_t>(n), '\0');
    MPI_Bcast(out.data(), int(n), MPI_CHAR, 0, comm);
    return out;
  }
#endif
  return text;
}

std::vector<std::string> RankGroup::gather(const std::string& text) const {
#if defined(TILEKIT_HAVE_MPI)
  if (comm_ && size_ > 1) {
    MPI_Comm comm = *static_cast<MPI_Comm*>(comm_);
    int n = int(text.size());
    std::vector<int> sizes(leader() ? size_ : 0), offsets(leader() ? size_ : 0);
    MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm);
    std::string all;
    if (leader()) {
      long long total = 0;
      for (int r = 0; r < size_; ++r) offsets[r] = int(total), total += sizes[r];
      all.resize(static_cast<std::size_t>(total));
    }
    MPI_Gatherv(text.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, comm);
    std::vector<std::string> out;
    for (int r = 0; leader() && r < size_; ++r) out.push_back(all.substr(std::size_t(offsets[r]), std::size_t(sizes[r])));
    return out;
  }
#endif
  return {text};
}

namespace {
int g_split_threads = 0;  // threads of this rank's share of the node's cores (rank_device_arguments)
}  // namespace

std::vector<std::string> rank_device_arguments(int argc, char* argv[], int gpus, std::string& note,
                                               const KokkosLimits& limits) {
  std::vector<std::string> extra;
  if (world_size() <= 1) return extra;
  auto given = [&](const char* prefix) {
    for (int i = 1; i < argc; ++i)
      if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0) return true;
    return false;
  };
  if (gpus > 0) {
    if (given("--kokkos-device-id") || given("--kokkos-num-devices")) return extra;
    extra.push_back(fmt::format("--kokkos-device-id={}", local_rank() % gpus));
    if (local_size() > gpus)
      note = fmt::format("{} ranks on this node share {} GPUs: their timings disturb each other", local_size(), gpus);
    return extra;
  }
  const char* omp = std::getenv("OMP_NUM_THREADS");
  if (given("--kokkos-threads") || given("--kokkos-num-threads") || (omp && *omp)) return extra;
  // Cores of this node split evenly between its ranks (never more than the cores mpirun bound us to).
  cpu_set_t mask;
  int bound = 0;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) bound = CPU_COUNT(&mask);
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  int threads = std::max(1, cores / std::max(1, local_size()));
  if (bound > 0) threads = std::min(threads, bound);
  if (limits.openmp) threads = std::min(threads, limits.max_threads);  // Kokkos' OpenMP pool
  extra.push_back(thread_count_option(threads, limits));
  if (local_size() > 1) g_split_threads = threads;
  return extra;
}

int split_threads() { return g_split_threads; }

}  // namespace tilekit::app
