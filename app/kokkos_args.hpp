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
  int kokkos_minor = 4;         ///< 4.3 dropped --kokkos-threads, --kokkos-num-devices and their variables
  /// Whether a tools library can be loaded (dlopen); "" when it can, else why not.
  std::function<std::string(const std::string&)> load_library;
};

/// Checks the `--kokkos-*` arguments of `args` (the command line without the program name) and
/// the KOKKOS_* variables `getenv` returns. "" when Kokkos can take them all; else the message.
std::string check_kokkos_options(const std::vector<std::string>& args,
                                 const std::function<const char*(const char*)>& getenv, const KokkosLimits& limits);

/// The thread count the app gives Kokkos itself when the user chose none: Kokkos' OpenMP backend
/// takes OpenMP's default (omp_get_max_threads(), the hardware threads this process may run on),
/// and with more than its pool holds (limits.max_threads, 512) it crashes. `available` is that
/// default. Returns limits.max_threads when the backend is OpenMP, no thread count was chosen
/// (--kokkos-threads / --kokkos-num-threads in `args`, KOKKOS_NUM_THREADS or OMP_NUM_THREADS from
/// `getenv`; a chosen count beyond the pool is refused by check_kokkos_options) and `available`
/// exceeds the pool; else 0: nothing to add.
int default_thread_cap(const std::vector<std::string>& args, const std::function<const char*(const char*)>& getenv,
                       int available, const KokkosLimits& limits);

/// The option that gives Kokkos `threads` threads: --kokkos-threads=N for Kokkos 3.x, which has no
/// other, --kokkos-num-threads=N for 4.x (4.3 and later no longer read --kokkos-threads).
std::string thread_count_option(int threads, const KokkosLimits& limits);

}  // namespace tilekit::app
