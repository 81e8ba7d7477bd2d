// The host CPU's identity, instruction sets and caches, and the host micro-kernel path.
#include "tilekit/kernels/core/cpu.hpp"

#include "tilekit/kernels/core/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__CUDA_ARCH__)
#include <cpuid.h>
#define TILEKIT_CPU_X86 1
#endif

namespace tilekit {

const char* host_isa_name(HostIsa isa) {
  switch (isa) {
    case HostIsa::portable: return "portable";
    case HostIsa::avx2: return "avx2";
    case HostIsa::avx512: return "avx512";
  }
  return "?";
}

namespace {

// Bytes of a cache level from sysfs (index<n>: 0 L1d, 2 L2, 3 L3 on x86 and most aarch64 kernels),
// else sysconf: in some VMs sysconf reports the whole socket's L3 (384 MB here against a core's 32 MB).
std::size_t cache_bytes(int sysconf_name, int sysfs_index) {
  std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(sysfs_index) + "/size");
  long n = 0;
  std::string unit;
  if (f >> n && n > 0) {
    f >> unit;
    return std::size_t(n) * (unit.empty() || unit[0] == 'K' ? 1024 : unit[0] == 'M' ? 1024 * 1024 : 1);
  }
  const long v = sysconf_name >= 0 ? ::sysconf(sysconf_name) : -1;
  return v > 0 ? std::size_t(v) : 0;
}

CpuInfo read_cpu() {
  CpuInfo c;
#if defined(TILEKIT_CPU_X86)
  unsigned a = 0, b = 0, cx = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &cx, &d)) {
    char v[13] = {};
    __builtin_memcpy(v, &b, 4), __builtin_memcpy(v + 4, &d, 4), __builtin_memcpy(v + 8, &cx, 4);
    c.vendor = v;
  }
  if (__get_cpuid(1, &a, &b, &cx, &d)) {
    c.f16c = (cx >> 29) & 1;  // CPUID.1:ECX[29]
    const int base_family = (a >> 8) & 0xf, ext_family = (a >> 20) & 0xff;
    const int base_model = (a >> 4) & 0xf, ext_model = (a >> 16) & 0xf;
    c.family = base_family == 0xf ? base_family + ext_family : base_family;
    c.model = base_family == 0xf || base_family == 0x6 ? (ext_model << 4) + base_model : base_model;
  }
  __builtin_cpu_init();
  c.avx2 = __builtin_cpu_supports("avx2");
  c.fma = __builtin_cpu_supports("fma");
  c.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  c.avx512_bf16 = c.avx512 && __builtin_cpu_supports("avx512bf16");
  c.avx512_vnni = c.avx512 && __builtin_cpu_supports("avx512vnni");
  if (__get_cpuid_count(7, 1, &a, &b, &cx, &d)) c.avx_vnni = (a >> 4) & 1;  // CPUID.(7,1):EAX[4]
#elif defined(__aarch64__)
  // The first core's "CPU implementer" and "CPU part" (its MIDR_EL1 fields, e.g. 0x41 and 0xd0c for
  // an Arm Neoverse N1) as family and model; absent where /proc/cpuinfo is not the target's (qemu-user).
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  auto hex_field = [&](const char* name, int& out) {
    if (out == 0 && line.rfind(name, 0) == 0 && line.find(':') != std::string::npos)
      out = int(std::strtol(line.c_str() + line.find(':') + 1, nullptr, 16));
  };
  while (std::getline(f, line) && (c.family == 0 || c.model == 0)) {
    hex_field("CPU implementer", c.family);
    hex_field("CPU part", c.model);
  }
#endif
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  c.l1d_bytes = cache_bytes(_SC_LEVEL1_DCACHE_SIZE, 0);
  c.l2_bytes = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 2);
  c.l3_bytes = cache_bytes(_SC_LEVEL3_CACHE_SIZE, 3);
#else
  c.l1d_bytes = cache_bytes(-1, 0);
  c.l2_bytes = cache_bytes(-1, 2);
  c.l3_bytes = cache_bytes(-1, 3);
#endif
  return c;
}

}  // namespace

std::string CpuInfo::architecture() const {
#if defined(TILEKIT_CPU_X86)
  const HostIsa isa = avx512 ? HostIsa::avx512 : avx2 && fma ? HostIsa::avx2 : HostIsa::portable;
  return std::string("x86_64-") + host_isa_name(isa) + "-f" + std::to_string(family) + "m" + std::to_string(model) +
         "-l2_" + std::to_string(l2_bytes / 1024) + "k";
#elif defined(__aarch64__)
  char midr[32] = "";
  if (family != 0) std::snprintf(midr, sizeof midr, "i%02xp%03x-", unsigned(family), unsigned(model));
  return std::string("aarch64-") + midr + "l2_" + std::to_string(l2_bytes / 1024) + "k";
#else
  return "host-l2_" + std::to_string(l2_bytes / 1024) + "k";
#endif
}

const CpuInfo& cpu_info() {
  static const CpuInfo c = read_cpu();
  return c;
}

HostIsa host_isa_detected() {
#if defined(TILEKIT_CPU_X86)
  const CpuInfo& c = cpu_info();
  if (c.avx512 && c.fma) return HostIsa::avx512;
  if (c.avx2 && c.fma) return HostIsa::avx2;
#endif
  return HostIsa::portable;
}

namespace {
// The forced path, or -1 (unset); read and checked once.
int forced_isa() {
  static const int forced = [] {
    const char* v = std::getenv("TILEKIT_HOST_ISA");
    if (v == nullptr || *v == '\0') return -1;
    const std::string s = v;
    for (HostIsa isa : {HostIsa::portable, HostIsa::avx2, HostIsa::avx512})
      if (s == host_isa_name(isa)) return int(isa);
    return -2;
  }();
  return forced;
}
}  // namespace

HostIsa host_isa() {
  const int forced = forced_isa();
  const HostIsa detected = host_isa_detected();
  if (forced == -1) return detected;
#if defined(TILEKIT_CPU_X86)
  const std::string allowed = std::string("portable, avx2, avx512, at most this CPU's ") + host_isa_name(detected);
  const std::string allowed_here = std::string("portable up to ") + host_isa_name(detected);
#else
  const std::string allowed = "portable: the only path off x86-64", allowed_here = allowed;
#endif
  if (forced == -2)
    throw InvalidArgument(std::string("TILEKIT_HOST_ISA='") + std::getenv("TILEKIT_HOST_ISA") +
                          "' is not a host path (allowed: " + allowed + ")");
  if (forced > int(detected))
    throw InvalidArgument(std::string("TILEKIT_HOST_ISA=") + host_isa_name(HostIsa(forced)) +
                          " needs instructions this CPU lacks (allowed: " + allowed_here + ")");
  return HostIsa(forced);
}

std::string host_isa_reason() {
  const CpuInfo& c = cpu_info();
  std::string features;
  auto add = [&](bool has, const char* name) {
    if (has) features += std::string(features.empty() ? "" : " ") + name;
  };
  add(c.avx2, "avx2"), add(c.fma, "fma"), add(c.f16c, "f16c"), add(c.avx512, "avx512f/bw/dq/vl");
  add(c.avx512_bf16, "avx512bf16"), add(c.avx512_vnni, "avx512vnni"), add(c.avx_vnni, "avx-vnni");
#if defined(TILEKIT_CPU_X86)
  const std::string cpu = c.vendor.empty() ? std::string("this CPU")
                                           : c.vendor + " family " + std::to_string(c.family) + " model " +
                                                 std::to_string(c.model);
  std::string why = std::string(host_isa_name(host_isa())) + " (" + cpu + ": " +
                    (features.empty() ? std::string("no AVX2") : features) + ")";
#else
  std::string why = std::string(host_isa_name(host_isa())) + " (" + c.architecture() +
                    ": the only path off x86-64; 16-byte vectors)";
#endif
  if (forced_isa() >= 0) why += "; chosen by TILEKIT_HOST_ISA";
  return why;
}

bool host_isa_runs(HostIsa isa, bool bf16_dot, bool i8_dot) {
  if (int(isa) > int(host_isa())) return false;
  const CpuInfo& c = cpu_info();
  if (bf16_dot && !c.avx512_bf16) return false;
  if (i8_dot && !c.avx512_vnni) return false;
  return true;
}

}  // namespace tilekit
