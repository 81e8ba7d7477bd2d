// The oracle of the elementwise ops: a small, separately written host reference of every shipped op,
// and the comparison the tests and `tilekit elementwise --check` make.
//
// Exact ops (all but silu) compute one correctly rounded result in the compute type and round it
// once to the element type, on the host as on every device, so results must match bit for bit (two
// NaNs match whatever their payload). silu goes through exp, whose last bit differs between
// libraries; it must be within
//     |got - ref| <= (2 u_T + 16 u_compute) |ref| + (smallest subnormal of T)
// of a reference computed in double (u the unit roundoff: 2 u_T allows one rounding step of the
// result to land on the other side, 16 u_compute the device's exp and arithmetic).
#pragma once

#include "tilekit/kernels/elementwise/elementwise.hpp"

#include <cstdint>
#include <vector>

namespace tilekit {

/// op applied to the arity values x[0..arity) on the host.
template <class T>
T reference_op(OpKind op, const OpScalars& s, const T* x);

/// The M x N reference output (row-major) of op over host-accessible inputs (each M x N, 1 x N,
/// M x 1 or 1 x 1, any strides).
template <class T>
std::vector<T> reference_elementwise(OpKind op, const OpScalars& s,
                                     const std::vector<StridedMatrix<const T>>& inputs, int64_t M, int64_t N);

/// Relative tolerance of op for type T: 0 for exact ops.
double elementwise_tolerance(OpKind op, DType t);

struct ElementwiseComparison {
  bool exact = true;           ///< compared bit for bit
  double tolerance = 0.0;      ///< relative (when not exact)
  int64_t elements = 0;
  int64_t mismatches = 0;      ///< elements that differ (exact) or are out of tolerance
  double max_rel_error = 0.0;  ///< max |got - ref| / |ref| over elements with ref != 0
  int64_t first_i = -1, first_j = -1;
  double first_got = 0.0, first_ref = 0.0;
  bool pass() const { return mismatches == 0; }
};

/// Compares a host-accessible output with the reference_elementwise() result.
template <class T>
ElementwiseComparison compare_elementwise(OpKind op, const StridedMatrix<const T>& got, const std::vector<T>& ref);

}  // namespace tilekit
