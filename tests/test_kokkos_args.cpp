// The app's Kokkos-option rules that need no Kokkos (app/kokkos_args.hpp): the thread count the app
// gives Kokkos' OpenMP backend when the user chose none, with made-up hardware thread counts.
#include "app/kokkos_args.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

using namespace tilekit::app;

namespace {

KokkosLimits openmp_limits(int major) {
  KokkosLimits l;
  l.openmp = true;
  l.max_threads = 512;
  l.kokkos_major = major;
  return l;
}

// A getenv over a fixed set of variables.
struct Env {
  std::map<std::string, std::string> vars;
  const char* operator()(const char* name) const {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  }
};

}  // namespace

TEST(ThreadCap, MoreHardwareThreadsThanThePoolAreCappedAtThePool) {
  const KokkosLimits l = openmp_limits(3);

  EXPECT_EQ(default_thread_cap({}, Env{}, 600, l), 512);
  EXPECT_EQ(default_thread_cap({}, Env{}, 1024, l), 512);
  EXPECT_EQ(default_thread_cap({}, Env{}, 513, l), 512);
  EXPECT_EQ(default_thread_cap({"matmul", "64", "64", "64", "-v"}, Env{}, 4096, l), 512);
}

TEST(ThreadCap, CountsWithinThePoolAreLeftToKokkos) {
  const KokkosLimits l = openmp_limits(3);

  EXPECT_EQ(default_thread_cap({}, Env{}, 64, l), 0);
  EXPECT_EQ(default_thread_cap({}, Env{}, 512, l), 0);
  EXPECT_EQ(default_thread_cap({}, Env{}, 1, l), 0);
}

TEST(ThreadCap, AChosenCountIsNeverOverriddenAndBeyondThePoolIsRefused) {
  const KokkosLimits l = openmp_limits(3);
  const Env none;

  // The user's own count wins (on any machine); check_kokkos_options refuses one beyond the pool.
  EXPECT_EQ(default_thread_cap({"--kokkos-threads=8"}, none, 600, l), 0);
  EXPECT_EQ(default_thread_cap({"--kokkos-threads=600"}, none, 600, l), 0);
  EXPECT_EQ(default_thread_cap({}, Env{{{"OMP_NUM_THREADS", "16"}}}, 600, l), 0);
  EXPECT_EQ(default_thread_cap({}, Env{{{"KOKKOS_NUM_THREADS", "16"}}}, 600, l), 0);
  EXPECT_NE(check_kokkos_options({"--kokkos-threads=600"}, none, l).find("at most 512"), std::string::npos);
  EXPECT_NE(check_kokkos_options({}, Env{{{"OMP_NUM_THREADS", "600"}}}, l).find("at most 512"), std::string::npos);
  const KokkosLimits l4 = openmp_limits(4);
  EXPECT_EQ(default_thread_cap({"--kokkos-num-threads=4"}, none, 600, l4), 0);
  EXPECT_NE(check_kokkos_options({"--kokkos-num-threads=513"}, none, l4).find("at most 512"), std::string::npos);
  // An empty OMP_NUM_THREADS chooses nothing.
  EXPECT_EQ(default_thread_cap({}, Env{{{"OMP_NUM_THREADS", ""}}}, 600, l), 512);
}

TEST(ThreadCap, OnlyTheOpenMPBackendIsCapped) {
  KokkosLimits serial;
  serial.max_threads = 1;

  EXPECT_EQ(default_thread_cap({}, Env{}, 600, serial), 0);
}

TEST(ThreadCap, TheOptionIsTheOneThisKokkosReads) {
  EXPECT_EQ(thread_count_option(512, openmp_limits(3)), "--kokkos-threads=512");
  EXPECT_EQ(thread_count_option(512, openmp_limits(4)), "--kokkos-num-threads=512");
  EXPECT_EQ(check_kokkos_options({thread_count_option(512, openmp_limits(3))}, Env{}, openmp_limits(3)), "");
  EXPECT_EQ(check_kokkos_options({thread_count_option(512, openmp_limits(4))}, Env{}, openmp_limits(4)), "");
}
