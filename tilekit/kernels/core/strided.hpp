// A non-owning strided matrix: the operand descriptor shared by every kernel family. Any layout
// (row-major, column-major, padded, every other column, a transposed view) is a (row stride,
// column stride) pair; a stride of 0 repeats a row or a column (broadcasting).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace tilekit {

/// Element (i, j) is data[i * rs + j * cs] (strides in elements).
template <class T>
struct StridedMatrix {
  T* data = nullptr;
  int64_t rows = 0, cols = 0;
  int64_t rs = 0, cs = 0;

  KOKKOS_INLINE_FUNCTION T& operator()(int64_t i, int64_t j) const { return data[i * rs + j * cs]; }
  /// The same matrix transposed (no copy).
  StridedMatrix transposed() const { return {data, cols, rows, cs, rs}; }
};

/// A rank-2 Kokkos view (any layout) as a strided matrix over the same memory.
template <class View>
StridedMatrix<typename View::value_type> as_matrix(const View& v) {
  static_assert(View::rank == 2, "tilekit: matrices are rank-2 views");
  return {v.data(), static_cast<int64_t>(v.extent(0)), static_cast<int64_t>(v.extent(1)),
          static_cast<int64_t>(v.stride(0)), static_cast<int64_t>(v.stride(1))};
}

}  // namespace tilekit
