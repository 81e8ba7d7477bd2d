// The host CPU: what it is (vendor, family, model, caches), which instruction sets it has, and which
// path of the host matmul's micro-kernels runs on it. The paths are compiled into every x86-64
// build (each micro-kernel carries its own target attribute), and one is chosen when tilekit starts,
// so a build made on one CPU runs at that CPU's speed on another (docs/architecture.md).
#pragma once

#include <cstddef>
#include <string>

namespace tilekit {

/// The host micro-kernel paths, narrowest first. portable: the compiler's 16-byte vector types
/// (SSE on x86-64, NEON on aarch64); avx2: 32-byte vectors with FMA (16 registers); avx512:
/// 64-byte vectors (32 registers), with AVX-512 BF16 and VNNI dot products where the CPU has them.
enum class HostIsa { portable = 0, avx2 = 1, avx512 = 2 };

/// "portable", "avx2", "avx512".
const char* host_isa_name(HostIsa isa);

struct CpuInfo {
  std::string vendor;  ///< "AuthenticAMD", "GenuineIntel", ... ("" off x86)
  int family = 0, model = 0;
  bool avx2 = false, fma = false, f16c = false;
  bool avx512 = false;  ///< F, BW, DQ and VL: what the avx512 micro-kernels use
  bool avx512_bf16 = false, avx512_vnni = false, avx_vnni = false;
  std::size_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;  ///< per core (L1d, L2) and the whole L3; 0: unknown
  /// e.g. "x86_64-avx512-f26m2-l2_1024k": the instruction-set level, family and model and L2 size,
  /// so that tuning results of one CPU never count as an exact match on another.
  std::string architecture() const;
};

/// This CPU (read once).
const CpuInfo& cpu_info();

/// The widest path this CPU runs.
HostIsa host_isa_detected();

/// The path host matmuls take: host_isa_detected(), or the narrower one named by the environment
/// variable TILEKIT_HOST_ISA (portable, avx2, avx512; for tests and comparisons). Throws
/// InvalidArgument naming the value when it is unknown or wider than this CPU runs.
HostIsa host_isa();

/// One line for `tilekit info`: the path, and why (the CPU's features, or the variable).
std::string host_isa_reason();

/// True if this CPU runs the `isa` micro-kernel for inputs of `bf16_dot` (AVX-512 BF16) or
/// `i8_dot` (AVX-512 VNNI) packing: the avx512 path's bf16 and i8 kernels need those too.
bool host_isa_runs(HostIsa isa, bool bf16_dot = false, bool i8_dot = false);

}  // namespace tilekit
