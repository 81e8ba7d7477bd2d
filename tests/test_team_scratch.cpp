// Level-0 team scratch up to the build's limit. On CUDA with the project's Kokkos 3.4 patch that
// limit is the device's opt-in shared memory per block (less Kokkos' reserve): 219 KB on an H100,
// where unpatched Kokkos 3.4 stops at 40 KB. Every byte a team writes into its scratch must come
// back, from another thread of the team, for every team.
#include "tilekit/kernels/core/device.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace tilekit;

namespace {

KOKKOS_INLINE_FUNCTION uint32_t scratch_pattern(uint32_t team, uint32_t word) {
  uint32_t x = team * 0x9E3779B9u ^ (word * 0x85EBCA6Bu + 0x27D4EB2Fu);
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  return x ^ (x >> 13);
}

// Each team fills `bytes` of level-0 scratch with a pattern of its own (thread t writes words t,
// t + team_size, ...), then, after a barrier, each thread copies the words written by another
// thread (word w is read by thread (w + 1) % team_size's share) to global memory. Returns the number
// of 4-byte words that came back wrong.
int64_t scratch_round_trip(std::size_t bytes, int league) {
  using ES = Kokkos::DefaultExecutionSpace;
  using Policy = Kokkos::TeamPolicy<ES>;
  using ScratchWords = Kokkos::View<uint32_t*, ES::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int64_t words = static_cast<int64_t>(bytes / sizeof(uint32_t));
  Kokkos::View<uint32_t**, Kokkos::LayoutRight> out("tilekit::test::scratch_out", league, words);
  Policy probe(league, Kokkos::AUTO);
  probe.set_scratch_size(0, Kokkos::PerTeam(bytes));
  const int team_size = std::min(128, probe.team_size_max(
                                          KOKKOS_LAMBDA(const Policy::member_type&){}, Kokkos::ParallelForTag()));
  Policy policy(league, team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(
      "tilekit::test::team_scratch_round_trip", policy, KOKKOS_LAMBDA(const Policy::member_type& team) {
        ScratchWords s(team.team_scratch(0), words);
        const uint32_t t = static_cast<uint32_t>(team.league_rank());
        const int nt = team.team_size(), me = team.team_rank();
        for (int64_t w = me; w < words; w += nt) s(w) = scratch_pattern(t, static_cast<uint32_t>(w));
        team.team_barrier();
        // Read the words another thread wrote: shift by one thread's share.
        for (int64_t i = me; i < words; i += nt) {
          const int64_t w = (i + 1) % words;
          out(t, w) = s(w);
        }
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  int64_t wrong = 0;
  for (int t = 0; t < league; ++t)
    for (int64_t w = 0; w < words; ++w)
      wrong += h(t, w) != scratch_pattern(static_cast<uint32_t>(t), static_cast<uint32_t>(w));
  return wrong;
}

}  // namespace

TEST(TeamScratch, EveryByteOfLevel0ScratchRoundTripsUpToTheLimit) {
  const std::size_t limit = team_scratch_limit(0);
  std::vector<std::size_t> sizes;
  for (std::size_t kb : {1, 16, 40, 48, 64, 100, 160, 200})
    if (kb * 1024 <= limit) sizes.push_back(kb * 1024);
  sizes.push_back(limit / 4 * 4);  // the largest request the build allows, to the word

  for (std::size_t bytes : sizes) {
    const int64_t wrong = scratch_round_trip(bytes, 264);  // 2 teams per SM of an H100

    EXPECT_EQ(wrong, 0) << bytes << " bytes of level-0 scratch per team";
  }
}

TEST(TeamScratch, PatchedKokkosOffersTheDevicesOptInSharedMemory) {
  const std::size_t device = device_shared_memory_per_block();
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_IMPL_TILEKIT_OPTIN_SCRATCH)
  // Every reserve Kokkos keeps (team reductions: (1024 + 2) doubles) fits in 9 KB.
  EXPECT_GE(team_scratch_limit(0) + 9 * 1024, device);
  if (device >= 227 * 1024) EXPECT_GE(team_scratch_limit(0), std::size_t(160) * 1024);  // sm_90
#else
  GTEST_SKIP() << "not a CUDA build with the project's Kokkos patch (level-0 limit "
               << team_scratch_limit(0) << " bytes, device per block " << device << ")";
#endif
}

TEST(TeamScratch, RequestOverTheLimitNamesBothNumbers) {
  const std::size_t limit = team_scratch_limit(0);

  const std::string msg = check_team_scratch(limit + 1, 0);

  EXPECT_NE(msg.find(std::to_string(limit + 1)), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(limit)), std::string::npos) << msg;
  EXPECT_EQ(check_team_scratch(limit, 0), "");
}
