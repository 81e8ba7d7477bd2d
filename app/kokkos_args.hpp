// The Kokkos options and environment variables a user can give the app, checked before
// Kokkos::initialize sees them. Kokkos 3.4 throws its own text on a value it cannot convert, takes
// `--kokkos-threads` without a value to std::stoi, ignores an unknown `--kokkos-*` option and
// crashes on more OpenMP threads than its pool holds: here each is a one-line message naming the
// option, the value and what is allowed (the app exits 2). No Kokkos, so that fuzz/ can run it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tilekit::app {

/// What the Kokkos the app was built with accepts.
struct KokkosLimits {
  int max_threads = 512;        ///< threads of the host backend's pool (OpenMP: Kokkos' MAX_THREAD_COUNT)
  bool gpu = false;             ///< a GPU backend (device ids and device counts mean something)
  bool openmp = false;          ///< the OpenMP backend (OMP_NUM_THREADS sizes its pool when no option does)
  int kokkos_major = 3;         ///< 3 or 4: the options added in 4.x exist only there
  /// Whether a tools library can be loaded (dlopen); "" when it can, else why not.
  std::function<std::string(const std::string&)> load_library;
};

/// Checks the `--kokkos-*` arguments of `args` (the command line without the program name) and
/// the KOKKOS_* variables `getenv` returns. "" when Kokkos can take them all; else the message.
std::string check_kokkos_options(const std::vector<std::string>& args,
                                 const std::function<const char*(const char*)>& getenv, const KokkosLimits& limits);

}  // namespace tilekit::app
