#include "tilekit/tuning/vendor_blas.hpp"

#if defined(TILEKIT_HAVE_CBLAS)
#include <cblas.h>
#include <string>
#endif

namespace tilekit {
namespace tuning {

#if defined(TILEKIT_HAVE_CBLAS)
bool vendor_blas_available() { return true; }
void vendor_gemm(int M, int N, int K, const float* A, const float* B, float* C) {
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, M, B, K, 0.0f, C, M);
}
void vendor_gemm(int M, int N, int K, const double* A, const double* B, double* C) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, A, M, B, K, 0.0, C, M);
}
const char* vendor_blas_name() {
  static const std::string name = std::string(openblas_get_config()) + ", " +
                                   std::to_string(openblas_get_num_threads()) + " threads";
  return name.c_str();
}
#else
bool vendor_blas_available() { return false; }
void vendor_gemm(int, int, int, const float*, const float*, float*) {}
void vendor_gemm(int, int, int, const double*, const double*, double*) {}
const char* vendor_blas_name() { return ""; }
#endif

}  // namespace tuning
}  // namespace tilekit
