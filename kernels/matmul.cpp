#include "kernels/matmul.hpp"

namespace tilekit {

const char* supported_type_pairs() {
  return "f64->f64, f32->f32, f16->f16, f16->f32, bf16->bf16, bf16->f32, i8->i32";
}

}  // namespace tilekit
