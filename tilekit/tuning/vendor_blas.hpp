// The vendor BLAS on host backends (OpenBLAS through CBLAS), for baselines. On GPU builds the
// vendor library (cuBLAS) cannot travel with the binaries, so it is measured by a separate program.
#pragma once

namespace tilekit {
namespace tuning {

/// True when this build links a CBLAS and runs on the host.
bool vendor_blas_available();
/// Column-major C = A B (M x K times K x N), host pointers; no-ops when not available.
void vendor_gemm(int M, int N, int K, const float* A, const float* B, float* C);
void vendor_gemm(int M, int N, int K, const double* A, const double* B, double* C);
/// e.g. "OpenBLAS 0.3.21 (pthreads, 2 threads)", or "" when not available.
const char* vendor_blas_name();

}  // namespace tuning
}  // namespace tilekit
