// Deterministic random fill on the device: a counter-based generator (splitmix64 of seed + index),
// so every backend produces bit-identical data for the same seed, in parallel, with no state.
#pragma once

#include "tilekit/kernels/core/types.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace tilekit {

KOKKOS_INLINE_FUNCTION uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Element `idx` of the random sequence `seed`: uniform in [-1, 1) for floating-point types
/// (quarter steps of 2^-10 so that f16/bf16 hold them closely), uniform over all values for i8,
/// and in [-1000, 1000] for i32.
template <class T>
KOKKOS_INLINE_FUNCTION T random_value(uint64_t seed, uint64_t idx) {
  const uint64_t r = splitmix64(seed * 0x632be59bd9b4e019ull + idx);
  if constexpr (std::is_same<T, int8_t>::value) {
    return static_cast<int8_t>(static_cast<int>(r >> 56) - 128);
  } else if constexpr (std::is_same<T, int32_t>::value) {
    return static_cast<int32_t>((r >> 33) % 2001) - 1000;
  } else {
    const double u = static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    return convert<T>(2.0 * u - 1.0);
  }
}

/// Fills data[0..n) with random_value<T>(seed, i) on the default execution space.
template <class T>
void fill_random(T* data, int64_t n, uint64_t seed) {
  if (n <= 0) return;
  Kokkos::parallel_for(
      "tilekit::fill_random", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<int64_t>>(0, n),
      KOKKOS_LAMBDA(int64_t i) { data[i] = random_value<T>(seed, static_cast<uint64_t>(i)); });
}

/// Sets data[0..n) to one value (e.g. NaN, to prove a kernel never reads C when beta == 0).
template <class T>
void fill_value(T* data, int64_t n, T value) {
  if (n <= 0) return;
  Kokkos::parallel_for(
      "tilekit::fill_value", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<int64_t>>(0, n),
      KOKKOS_LAMBDA(int64_t i) { data[i] = value; });
}

}  // namespace tilekit
