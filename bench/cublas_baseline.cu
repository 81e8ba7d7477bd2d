// cuBLAS baseline for tilekit's matmul benchmarks: a plain CUDA C++ program (no Kokkos), built on the
// GPU machine with that machine's own CUDA toolkit (Debian's CUDA 11.8 cuBLAS cannot travel there):
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. -o cublas_baseline bench/cublas_baseline.cu -lcublas
//   ./cublas_baseline --shapes=128:4096:128,8192,9728x8192x65536@f16 --out=cublas.json
//
// It runs the same shapes, types, input data and timing method as tilekit_bench_matmul and writes
// Google-Benchmark-style JSON (same names, counters and context keys), so scripts/report.py merges
// both. Series per shape and type:
//   cublas                 C = A B: cublasDgemm (f64), cublasSgemm (f32; default math mode, so no
//                          TF32), cublasGemmEx f16 (bf16) in/out with CUBLAS_COMPUTE_32F (f16, bf16),
//                          cublasGemmEx f32 with CUBLAS_COMPUTE_32F_FAST_TF32 (tf32: TF32 tensor cores),
//                          cublasGemmEx i8 in, i32 out with CUBLAS_COMPUTE_32I (i8)
//   cublas+leaky_relu      the same followed by a separate leaky_relu kernel over C (not for i8)
// Operands are A (MxK), B (KxN), C (MxN) in the storage order --layout names (col: all column-major,
// the default; row: all row-major; kmajor: A row-major, B column-major, C row-major), except that
// i8 always reads K-contiguous A and B (A row-major, B column-major; C in the layout's order): the
// layout cuBLAS's int8 tensor-core kernels want and torch._int_mm uses, the vendor's fastest path,
// which tilekit's i8 series in every layout are judged against. Alpha 1, beta 0, filled on the device with
// tilekit's generator (tilekit/kernels/core/fill.hpp: splitmix64, seeds 1 and 2), so the data are bit-identical to
// tilekit's. Each iteration is timed on the host clock from a synchronized start to a synchronize
// after the work (as tilekit's bench does with fences), and with CUDA events around the same work;
// rates use the median. Every CUDA and cuBLAS return code is checked; 16 entries of C are checked
// against sums in double.
#include "bench/shape_list.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tilekit::bench::Shape;

// ---- error checks --------------------------------------------------------------------------------

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess)
    throw Failure(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                  cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}
void check_cublas(cublasStatus_t s, const char* what, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Failure(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                  cublasGetStatusName(s) + " (" + cublasGetStatusString(s) + ")");
}
#define CK(call) check_cuda((call), #call, __FILE__, __LINE__)
#define CB(call) check_cublas((call), #call, __FILE__, __LINE__)
#define CK_LAUNCH() check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

// ---- options (the --tk_* options of tilekit_bench_matmul, without the prefix) ----------------------

struct Options {
  std::string shapes = "128:4096:128,8192,9728x8192x65536@f16";
  std::vector<std::string> dtypes{"f32", "f64", "f16"};  // also: bf16, tf32, i8
  int warmup = 2, min_reps = 3, max_reps = 50;
  double rep_work = 20.0;  // GFLOP per benchmark the timed iterations aim at
  double deadline_s = 0.0;
  double rotate_bytes = 0.0;  // 0: twice the L2
  std::string out = "cublas_baseline.json";
  std::string git_revision = "unknown";
  std::string note;
  std::string layout = "col";  // col, row, kmajor
  bool activation = true;      // also the cublas+leaky_relu series
};

[[noreturn]] void usage_error(const std::string& msg, int status = 2) {
  std::fprintf(status ? stderr : stdout,
               "cublas_baseline: %s\n"
               "usage: cublas_baseline [--shapes=LIST] [--dtypes=f32,f64,f16,bf16,tf32,i8] [--warmup=N] [--min_reps=N]\n"
               "         [--max_reps=N] [--rep_work=GFLOP] [--deadline_s=S] [--rotate_mib=X] [--out=FILE]\n"
               "         [--layout=col|row|kmajor] [--activation=0|1]\n"
               "         [--git_revision=REV] [--note=TEXT]\n"
               "  LIST: n, a:b:s (squares a..b step s) or MxNxK, comma-separated, each optionally @type[+type]\n",
               msg.c_str());
  std::exit(status);
}

int64_t pos_int(const std::string& s) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos)
    usage_error("'" + s + "' is not a positive whole number");
  const int64_t v = std::stoll(s);
  if (v <= 0) usage_error("'" + s + "' is not a positive whole number");
  return v;
}

double nonneg(const std::string& s) {
  try {
    std::size_t pos = 0;
    const double v = std::stod(s, &pos);
    if (pos == s.size() && v >= 0.0) return v;
  } catch (...) {
  }
  usage_error("'" + s + "' is not a non-negative number");
}

std::vector<Shape> shapes_or_exit(const std::string& text) {
  std::vector<Shape> out;
  std::string why;
  if (!tilekit::bench::parse_shapes(text, out, why)) usage_error(why);
  for (const Shape& s : out)
    if (s.K == 0) usage_error("shape '" + s.name() + "' needs three sizes, MxNxK");
  return out;
}

// ---- tilekit's generator (tilekit/kernels/core/fill.hpp), bit for bit ---------------------------------------------

__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__host__ __device__ inline double random_unit(uint64_t seed, uint64_t idx) {  // uniform in [-1, 1)
  const uint64_t r = splitmix64(seed * 0x632be59bd9b4e019ull + idx);
  return 2.0 * (static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
}
template <class T> __host__ __device__ inline T from_double(double d);
template <> __host__ __device__ inline double from_double<double>(double d) { return d; }
template <> __host__ __device__ inline float from_double<float>(double d) { return static_cast<float>(d); }
template <> __host__ __device__ inline __half from_double<__half>(double d) {
  return __float2half_rn(static_cast<float>(d));  // as tilekit::f16(double): via float, nearest even
}
template <> __host__ __device__ inline __nv_bfloat16 from_double<__nv_bfloat16>(double d) {
  return __float2bfloat16_rn(static_cast<float>(d));  // as tilekit::bf16(double)
}
inline double to_double(double v) { return v; }
inline double to_double(float v) { return v; }
inline double to_double(__half v) { return static_cast<double>(__half2float(v)); }
inline double to_double(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }

inline double to_double(int8_t v) { return v; }
inline double to_double(int32_t v) { return v; }
// tilekit's i8 values (tilekit/kernels/core/fill.hpp, random_value<int8_t>): uniform over all 256 values.
__host__ __device__ inline int8_t random_i8(uint64_t seed, uint64_t idx) {
  return static_cast<int8_t>(static_cast<int>(splitmix64(seed * 0x632be59bd9b4e019ull + idx) >> 56) - 128);
}
template <class T>
__host__ __device__ inline T random_element(uint64_t seed, uint64_t idx) {
  if constexpr (std::is_same<T, int8_t>::value) return random_i8(seed, idx);
  else if constexpr (std::is_same<T, int32_t>::value) return 0;  // C: beta = 0, never read
  else return from_double<T>(random_unit(seed, idx));
}

template <class T>
__global__ void fill_kernel(T* p, uint64_t n, uint64_t seed) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    p[i] = random_element<T>(seed, i);
}

// The separate activation pass after the vendor gemm: leaky_relu (slope 0.01) in the accumulation type.
__device__ inline float leaky(float x) { return x > 0.0f ? x : 0.01f * x; }
__device__ inline double leaky(double x) { return x > 0.0 ? x : 0.01 * x; }
template <class T>
__global__ void leaky_relu_kernel(T* c, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    c[i] = leaky(c[i]);
}
template <>
__global__ void leaky_relu_kernel<__half>(__half* c, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    c[i] = __float2half_rn(leaky(__half2float(c[i])));
}
template <>
__global__ void leaky_relu_kernel<__nv_bfloat16>(__nv_bfloat16* c, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    c[i] = __float2bfloat16_rn(leaky(__bfloat162float(c[i])));
}

template <class T> struct TypeInfo;
template <> struct TypeInfo<double> {
  static constexpr const char* name = "f64";
  static constexpr double u_out = 1.1102230246251565e-16, u_acc = 1.1102230246251565e-16;
};
template <> struct TypeInfo<float> {
  static constexpr const char* name = "f32";
  static constexpr double u_out = 5.9604644775390625e-08, u_acc = 5.9604644775390625e-08;
};
template <> struct TypeInfo<__half> {
  static constexpr const char* name = "f16";
  static constexpr double u_out = 4.8828125e-04, u_acc = 5.9604644775390625e-08;  // f32 accumulation
};
template <> struct TypeInfo<__nv_bfloat16> {
  static constexpr const char* name = "bf16";
  static constexpr double u_out = 3.90625e-03, u_acc = 5.9604644775390625e-08;  // f32 accumulation
};
template <> struct TypeInfo<int8_t> {
  static constexpr const char* name = "i8";
  static constexpr double u_out = 0.0, u_acc = 0.0;  // exact
};
/// The output type of an input type: i32 for i8, else the input type.
template <class T>
using out_t = std::conditional_t<std::is_same<T, int8_t>::value, int32_t, T>;

// ---- results in Google Benchmark's JSON shape --------------------------------------------------------

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}

std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

struct Result {
  std::string name, label, error;
  int64_t iterations = 0;
  double mean_ms = 0.0;
  std::vector<std::pair<std::string, double>> counters;
};

struct Report {
  std::vector<std::pair<std::string, std::string>> context;
  std::vector<Result> results;

  void write(const std::string& path) const {  // rewritten after every benchmark: a kill loses little
    std::ofstream f(path + ".tmp");
    f << "{\n  \"context\": {\n";
    for (std::size_t i = 0; i < context.size(); ++i)
      f << "    " << json_str(context[i].first) << ": " << json_str(context[i].second)
        << (i + 1 < context.size() ? ",\n" : "\n");
    f << "  },\n  \"benchmarks\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      const std::string full = r.name + "/iterations:" + std::to_string(r.iterations) + "/manual_time";
      f << "    {\n      \"name\": " << json_str(full) << ",\n      \"run_name\": " << json_str(full)
        << ",\n      \"run_type\": \"iteration\",\n      \"repetitions\": 1,\n      \"repetition_index\": 0,\n"
        << "      \"threads\": 1,\n      \"iterations\": " << r.iterations << ",\n";
      if (!r.error.empty())
        f << "      \"error_occurred\": true,\n      \"error_message\": " << json_str(r.error) << ",\n";
      f << "      \"real_time\": " << json_num(r.mean_ms) << ",\n      \"cpu_time\": " << json_num(r.mean_ms)
        << ",\n      \"time_unit\": \"ms\"";
      for (const auto& c : r.counters) f << ",\n      " << json_str(c.first) << ": " << json_num(c.second);
      if (!r.label.empty()) f << ",\n      \"label\": " << json_str(r.label);
      f << "\n    }" << (i + 1 < results.size() ? ",\n" : "\n");
    }
    f << "  ]\n}\n";
    f.close();
    std::rename((path + ".tmp").c_str(), path.c_str());
  }
};

// ---- timing helpers ----------------------------------------------------------------------------------

const auto g_start = std::chrono::steady_clock::now();
double since_start() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Bench {
  Options opt;
  cublasHandle_t handle = nullptr;
  cudaDeviceProp prop{};
  std::map<std::string, double> rates;  // FLOP/s per series key, for the deadline
  Report report;

  int reps_for(double flops) const {
    const double want = std::ceil(opt.rep_work * 1e9 / flops);
    return static_cast<int>(std::max<double>(opt.min_reps, std::min<double>(opt.max_reps, want)));
  }
  int rotation_count(double set_bytes) const {
    const double target = opt.rotate_bytes > 0 ? opt.rotate_bytes : 2.0 * prop.l2CacheSize;
    if (target <= set_bytes) return 1;
    return static_cast<int>(std::min(4096.0, std::ceil(target / set_bytes)));
  }
  std::string over_budget(const std::string& key, double flops, int runs) const {
    if (opt.deadline_s <= 0.0) return "";
    const double now = since_start();
    std::ostringstream m;
    if (now >= opt.deadline_s) {
      m << "skipped: the --deadline_s budget of " << opt.deadline_s << " s is spent (" << now << " s elapsed)";
      return m.str();
    }
    const auto it = rates.find(key);
    if (it == rates.end() || it->second <= 0.0) return "";
    const double est = runs * flops / it->second;
    if (now + est <= opt.deadline_s) return "";
    m.precision(3);
    m << "skipped: " << runs << " runs at this series' rate on its previous shape would take about " << est
      << " s, past the --deadline_s budget of " << opt.deadline_s << " s (" << now << " s elapsed)";
    return m.str();
  }

  /// Storage of the operands: column-major (true) or row-major, for A, B and C.
  struct Storage {
    bool a_col, b_col, c_col;
  };
  template <class T>
  Storage storage_for() const {
    const bool c_col = opt.layout == "col";
    if (std::is_same<T, int8_t>::value) return {false, true, c_col};  // K-contiguous A and B
    if (opt.layout == "row") return {false, false, false};
    if (opt.layout == "kmajor") return {false, true, false};
    return {true, true, true};
  }
  static int64_t at(bool col, int64_t r, int64_t c, int64_t rows, int64_t cols) {
    return col ? r + c * rows : r * cols + c;
  }

  /// C = A B in cuBLAS's column-major terms: a row-major C is computed as C^T = B^T A^T.
  template <class T>
  void gemm(const T* A, const T* B, out_t<T>* C, int m, int n, int k, bool tf32) {
    const Storage st = storage_for<T>();
    // Each operand as cuBLAS sees it: a column-major X (r x c) is itself (op N, ld r); a row-major
    // one is the column-major c x r matrix X^T (op T, ld c).
    const void *first = A, *second = B;
    cublasOperation_t op1 = st.a_col ? CUBLAS_OP_N : CUBLAS_OP_T, op2 = st.b_col ? CUBLAS_OP_N : CUBLAS_OP_T;
    int ld1 = st.a_col ? m : k, ld2 = st.b_col ? k : n, rows = m, cols = n, ldc = m;
    if (!st.c_col) {  // C^T (n x m) = B^T A^T
      first = B, second = A;
      op1 = st.b_col ? CUBLAS_OP_T : CUBLAS_OP_N, op2 = st.a_col ? CUBLAS_OP_T : CUBLAS_OP_N;
      ld1 = st.b_col ? k : n, ld2 = st.a_col ? m : k, rows = n, cols = m, ldc = n;
    }
    if constexpr (std::is_same<T, int8_t>::value) {
      const int32_t one = 1, zero = 0;  // i32 scalars with CUBLAS_COMPUTE_32I
      CB(cublasGemmEx(handle, op1, op2, rows, cols, k, &one, first, CUDA_R_8I, ld1, second, CUDA_R_8I, ld2, &zero, C,
                      CUDA_R_32I, ldc, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
    } else if constexpr (std::is_same<T, float>::value) {
      const float one = 1.0f, zero = 0.0f;
      if (tf32)
        CB(cublasGemmEx(handle, op1, op2, rows, cols, k, &one, first, CUDA_R_32F, ld1, second, CUDA_R_32F, ld2, &zero,
                        C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
      else
        CB(cublasSgemm(handle, op1, op2, rows, cols, k, &one, static_cast<const float*>(first), ld1,
                       static_cast<const float*>(second), ld2, &zero, C, ldc));
    } else if constexpr (std::is_same<T, double>::value) {
      const double one = 1.0, zero = 0.0;
      CB(cublasDgemm(handle, op1, op2, rows, cols, k, &one, static_cast<const double*>(first), ld1,
                     static_cast<const double*>(second), ld2, &zero, C, ldc));
    } else {
      const float one = 1.0f, zero = 0.0f;  // f32 scalars with CUBLAS_COMPUTE_32F
      const cudaDataType_t t = std::is_same<T, __half>::value ? CUDA_R_16F : CUDA_R_16BF;
      CB(cublasGemmEx(handle, op1, op2, rows, cols, k, &one, first, t, ld1, second, t, ld2, &zero, C, t, ldc,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
  }

  static const char* gemm_label(double, bool) { return "cublasDgemm"; }
  static const char* gemm_label(float, bool tf32) {
    return tf32 ? "cublasGemmEx f32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32" : "cublasSgemm (CUBLAS_DEFAULT_MATH: no TF32)";
  }
  static const char* gemm_label(int8_t, bool) { return "cublasGemmEx i8 in, i32 out, CUBLAS_COMPUTE_32I"; }
  static const char* gemm_label(__half, bool) { return "cublasGemmEx f16 in/out, CUBLAS_COMPUTE_32F"; }
  static const char* gemm_label(__nv_bfloat16, bool) { return "cublasGemmEx bf16 in/out, CUBLAS_COMPUTE_32F"; }

  template <class T>
  void run_one(const Shape& sh, bool act, bool tf32 = false) {
    using TOut = out_t<T>;
    const std::string dt = tf32 ? "tf32" : TypeInfo<T>::name;
    const std::string series = act ? "cublas+leaky_relu" : "cublas";
    const std::string key = "matmul/" + dt + "/" + series;
    Result r;
    r.name = key + "/" + sh.name();
    const double flops = 2.0 * double(sh.M) * double(sh.N) * double(sh.K);
    const int reps = reps_for(flops);
    r.iterations = reps;
    r.error = over_budget(key, flops, opt.warmup + reps);
    T *a = nullptr, *b = nullptr;
    TOut* c = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    try {
      if (!r.error.empty()) throw Failure(r.error);
      const uint64_t mk = sh.M * sh.K, kn = sh.K * sh.N, mn = sh.M * sh.N;
      const int sets = rotation_count(double(mk + kn) * sizeof(T) + double(mn) * sizeof(TOut));
      CK(cudaMalloc(&a, sets * mk * sizeof(T)));
      CK(cudaMalloc(&b, sets * kn * sizeof(T)));
      CK(cudaMalloc(&c, sets * mn * sizeof(TOut)));
      fill_kernel<T><<<1024, 256>>>(a, sets * mk, 1);
      CK_LAUNCH();
      fill_kernel<T><<<1024, 256>>>(b, sets * kn, 2);
      CK_LAUNCH();
      fill_kernel<TOut><<<1024, 256>>>(c, sets * mn, 3);  // beta = 0: never read
      CK_LAUNCH();
      CK(cudaDeviceSynchronize());
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      const int m = static_cast<int>(sh.M), n = static_cast<int>(sh.N), k = static_cast<int>(sh.K);
      int last = 0;
      auto run = [&](int64_t i) {
        last = static_cast<int>(i % sets);
        gemm<T>(a + last * mk, b + last * kn, c + last * mn, m, n, k, tf32);
        if constexpr (!std::is_same<T, int8_t>::value) {
          if (act) {
            leaky_relu_kernel<T><<<std::min<uint64_t>((mn + 255) / 256, 8192), 256>>>(c + last * mn, mn);
            CK_LAUNCH();
          }
        }
      };
      int64_t i = 0;
      // --warmup, and at least one pass over the sets: no timed run is the first on its set (the
      // suite's rule, harness.hpp warmup_runs)
      const int warmup = std::max(opt.warmup, sets);
      for (int w = 0; w < warmup; ++w) run(i++);
      CK(cudaDeviceSynchronize());
      std::vector<double> host, dev, submit;
      for (int it = 0; it < reps; ++it) {
        const auto t0 = std::chrono::steady_clock::now();
        CK(cudaEventRecord(e0));
        run(i++);
        submit.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        CK(cudaEventRecord(e1));
        CK(cudaDeviceSynchronize());  // the clock stops only once the device is done
        host.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        float ms = 0.0f;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        dev.push_back(ms * 1e-3);
      }
      double sum = 0.0;
      for (double s : host) sum += s;
      r.mean_ms = sum / host.size() * 1e3;
      const double med = median(host), dmed = median(dev);
      rates[key] = flops / med;
      r.counters = {{"M", double(sh.M)},
                    {"N", double(sh.N)},
                    {"K", double(sh.K)},
                    {"TFLOPS", flops / med * 1e-12},
                    {"TFLOPS_events", flops / dmed * 1e-12},
                    {"median_ms", med * 1e3},
                    {"median_ms_events", dmed * 1e3},
                    {"min_ms", *std::min_element(host.begin(), host.end()) * 1e3},
                    {"max_ms", *std::max_element(host.begin(), host.end()) * 1e3},
                    {"submit_us", median(submit) * 1e6},
                    {"buffers", double(sets)},
                    {"warmup", double(warmup)}};
      const Storage st = storage_for<T>();
      const auto order = [](bool col) { return col ? "col" : "row"; };
      r.label = std::string(gemm_label(T(), tf32)) + ", A " + order(st.a_col) + ", B " + order(st.b_col) + ", C " +
                order(st.c_col) + (act ? " + leaky_relu kernel" : "");

      // Check 16 entries of the last C against sums in double of the generator's values.
      const int P = 16;
      double d2 = 0.0, r2 = 0.0;
      bool finite = true;
      for (int p = 0; p < P; ++p) {
        const uint64_t rr = splitmix64(0xc0ffee + p);
        int64_t ii = static_cast<int64_t>(rr % uint64_t(sh.M)), jj = static_cast<int64_t>((rr >> 32) % uint64_t(sh.N));
        if (p == 0) ii = jj = 0;
        if (p == 1) ii = sh.M - 1, jj = sh.N - 1;
        TOut got;
        CK(cudaMemcpy(&got, c + last * mn + at(st.c_col, ii, jj, sh.M, sh.N), sizeof(TOut), cudaMemcpyDeviceToHost));
        double ref = 0.0;
        const uint64_t oa = uint64_t(last) * mk, ob = uint64_t(last) * kn;
        for (int64_t kk = 0; kk < sh.K; ++kk)
          ref += to_double(random_element<T>(1, oa + at(st.a_col, ii, kk, sh.M, sh.K))) *
                 to_double(random_element<T>(2, ob + at(st.b_col, kk, jj, sh.K, sh.N)));
        if (act) ref = ref > 0.0 ? ref : 0.01 * ref;
        const double v = to_double(got);
        if (!std::isfinite(v)) finite = false;
        d2 += (v - ref) * (v - ref);
        r2 += ref * ref;
      }
      const double err = finite && r2 > 0.0 ? std::sqrt(d2 / r2) : INFINITY;
      // TF32 rounds the inputs to 11-bit significands (tilekit's matmul_tolerance does the same).
      const double tol = 8.0 * TypeInfo<T>::u_out + (tf32 ? 8.0 * 4.8828125e-04 : 0.0) +
                         2.0 * double(sh.K) * TypeInfo<T>::u_acc;
      r.counters.push_back({"check_rel_error", err});
      if (!(err <= tol))
        r.error = "wrong result: relative error " + json_num(err) + " over 16 sampled entries exceeds " + json_num(tol);
    } catch (const Failure& f) {
      if (r.error.empty()) r.error = f.what();
    }
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    if (!r.error.empty() && r.error.rfind("skipped", 0) != 0) cudaGetLastError();  // clear a non-sticky error
    double tf = 0.0, tf_events = 0.0;
    for (const auto& cc : r.counters) {
      if (cc.first == "TFLOPS") tf = cc.second;
      if (cc.first == "TFLOPS_events") tf_events = cc.second;
    }
    if (r.error.empty())
      std::printf("%-48s %4lld it  %9.3f TFLOP/s (events)  %9.3f TFLOP/s (host clock)\n", r.name.c_str(),
                  static_cast<long long>(r.iterations), tf_events, tf);
    else
      std::printf("%-48s ERROR %s\n", r.name.c_str(), r.error.c_str());
    std::fflush(stdout);
    report.results.push_back(r);
    report.write(opt.out);
  }
};

std::string now_iso8601() {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  std::string s = buf;  // +0000 -> +00:00, as Google Benchmark writes it
  if (s.size() > 2) s.insert(s.size() - 2, ":");
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Bench bench;
  Options& o = bench.opt;
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    if (a == "--help" || a == "-h") usage_error("the cuBLAS baseline of tilekit's matmul benchmarks", 0);
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) usage_error("unknown argument '" + a + "'");
    const std::string k = a.substr(2, eq - 2), v = a.substr(eq + 1);
    if (k == "shapes") o.shapes = v;
    else if (k == "dtypes") o.dtypes = tilekit::bench::split_list(v, ',');
    else if (k == "warmup") o.warmup = static_cast<int>(nonneg(v));
    else if (k == "min_reps") o.min_reps = static_cast<int>(pos_int(v));
    else if (k == "max_reps") o.max_reps = static_cast<int>(pos_int(v));
    else if (k == "rep_work") o.rep_work = nonneg(v);
    else if (k == "deadline_s") o.deadline_s = nonneg(v);
    else if (k == "rotate_mib") o.rotate_bytes = nonneg(v) * 1048576.0;
    else if (k == "out") o.out = v;
    else if (k == "git_revision") o.git_revision = v;
    else if (k == "note") o.note = v;
    else if (k == "activation") {
      if (v != "0" && v != "1") usage_error("--activation '" + v + "' is not 0 or 1");
      o.activation = v == "1";
    } else if (k == "layout") {
      if (v != "col" && v != "row" && v != "kmajor") usage_error("--layout '" + v + "' is not col, row or kmajor");
      o.layout = v;
    }
    else usage_error("unknown option --" + k);
  }
  if (o.min_reps > o.max_reps) usage_error("--min_reps is larger than --max_reps");
  for (const auto& t : o.dtypes)
    if (t != "f32" && t != "f64" && t != "f16" && t != "bf16" && t != "tf32" && t != "i8")
      usage_error("unknown dtype '" + t + "' (allowed: f32, f64, f16, bf16, tf32, i8)");
  const std::vector<Shape> shapes = shapes_or_exit(o.shapes);

  try {
    int dev = 0, rt = 0, drv = 0, cublas_ver = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&bench.prop, dev));
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    CB(cublasCreate(&bench.handle));
    CB(cublasSetMathMode(bench.handle, CUBLAS_DEFAULT_MATH));  // no TF32 for f32
    CB(cublasGetVersion(bench.handle, &cublas_ver));
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
    std::ostringstream policy;
    policy << "warmup " << o.warmup << " (and one run on each rotated input set); timed iterations = " << o.rep_work
           << " GFLOP / work per run, clamped to [" << o.min_reps << ", " << o.max_reps
           << "]; median of the iterations; inputs rotated through "
           << (o.rotate_bytes > 0 ? std::to_string(o.rotate_bytes / 1048576.0) + " MiB"
                                  : std::string("2 x last-level cache"))
           << "; deadline " << (o.deadline_s > 0 ? std::to_string(o.deadline_s) + " s" : std::string("none"));
    std::string dl;
    for (const auto& t : o.dtypes) dl += (dl.empty() ? "" : ",") + t;
    bench.report.context = {
        {"date", now_iso8601()},
        {"host_name", host},
        {"executable", argv[0]},
        {"num_cpus", std::to_string(sysconf(_SC_NPROCESSORS_ONLN))},
        {"library_build_type", "release"},
        {"tilekit_backend", "cuda"},
        {"baseline", "cublas"},
        {"device", bench.prop.name},
        {"architecture", "sm_" + std::to_string(bench.prop.major) + std::to_string(bench.prop.minor)},
        {"compute_units", std::to_string(bench.prop.multiProcessorCount)},
        {"last_level_cache_bytes", std::to_string(bench.prop.l2CacheSize)},
        {"cublas_version", std::to_string(cublas_ver)},
        {"cuda_runtime", std::to_string(rt)},
        {"cuda_driver", std::to_string(drv)},
        {"compiler", "nvcc " + std::to_string(__CUDACC_VER_MAJOR__) + "." + std::to_string(__CUDACC_VER_MINOR__)},
        {"git_revision", o.git_revision},
        {"command_line", command_line},
        {"env_NVIDIA_TF32_OVERRIDE", tf32 ? tf32 : "(unset)"},
        {"timing_policy", policy.str()},
        {"matmul_shapes", o.shapes},
        {"matmul_dtypes", dl},
        {"matmul_layout", o.layout},
        {"matmul_operands",
         std::string(o.layout == "row"      ? "row-major A (MxK), B (KxN), C (MxN)"
                     : o.layout == "kmajor" ? "row-major A (MxK), column-major B (KxN), row-major C (MxN)"
                                            : "column-major A (MxK), B (KxN), C (MxN)") +
             "; i8: row-major A, column-major B (K-contiguous, cuBLAS int8's fast layout), C as the others; "
             "alpha 1, beta 0; uniform random in [-1, 1) from tilekit's generator (seeds 1, 2); f16 accumulates "
             "in f32"},
        {"matmul_activation", "leaky_relu (slope 0.01): a separate CUDA kernel over C after the cuBLAS call"},
    };
    if (!o.note.empty()) bench.report.context.push_back({"note", o.note});
    bench.report.write(o.out);
    std::printf("cuBLAS %d on %s (%s), CUDA runtime %d, driver %d\n", cublas_ver, bench.prop.name,
                ("sm_" + std::to_string(bench.prop.major) + std::to_string(bench.prop.minor)).c_str(), rt, drv);
  } catch (const Failure& f) {
    std::fprintf(stderr, "cublas_baseline: %s\n", f.what());
    return 1;
  }

  for (const Shape& sh : shapes)
    for (const auto& t : o.dtypes) {
      if (!sh.wants(t)) continue;
      for (bool act : {false, true}) {
        if (act && !o.activation) continue;
        if (t == "f64") bench.run_one<double>(sh, act);
        if (t == "f32") bench.run_one<float>(sh, act);
        if (t == "f16") bench.run_one<__half>(sh, act);
        if (t == "bf16") bench.run_one<__nv_bfloat16>(sh, act);
        if (t == "tf32") bench.run_one<float>(sh, act, true);
        if (t == "i8" && !act) bench.run_one<int8_t>(sh, false);
      }
    }
  cublasDestroy(bench.handle);
  int errors = 0;
  for (const auto& r : bench.report.results)
    if (!r.error.empty() && r.error.rfind("skipped", 0) != 0) ++errors;
  std::printf("wrote %s: %zu benchmarks, %d failed\n", o.out.c_str(), bench.report.results.size(), errors);
  return errors ? 1 : 0;
}
