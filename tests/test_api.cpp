// The library API (tilekit/tilekit.hpp): tilekit::gemm and the automatic tilekit::apply, as a Kokkos
// application calls them, checked against the reference; and the kernel names profilers see.
#include "tilekit/tilekit.hpp"

#include "tilekit/kernels/core/fill.hpp"
#include "tilekit/kernels/matmul/validation.hpp"
#include "tilekit/tuning/cache.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"
#include "tilekit/tuning/matmul_model.hpp"
#include "tilekit/tuning/matmul_tuner.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#elif defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace tilekit;
namespace fs = std::filesystem;

namespace {

using ES = Kokkos::DefaultExecutionSpace;

template <class Layout>
using Matrix = Kokkos::View<float**, Layout>;

template <class Layout>
Matrix<Layout> random_matrix(const char* name, int64_t rows, int64_t cols, uint64_t seed) {
  Matrix<Layout> m(std::string(name), rows, cols);
  fill_random(m.data(), static_cast<int64_t>(m.span()), seed);
  return m;
}

Op op_of(const char* t) { return t[0] == 'N' || t[0] == 'n' ? Op::N : Op::T; }

StridedMatrix<const float> as_const(const StridedMatrix<float>& m) { return {m.data, m.rows, m.cols, m.rs, m.cs}; }

/// Runs tilekit::gemm (on `space`) and returns its relative error against the naive reference of
/// the same problem, computed from C as it was before.
template <class AV, class BV, class CV>
double gemm_error(const ES& space, const char* ta, const char* tb, float alpha, const AV& A, const BV& B, float beta,
                  const CV& C, const GemmOptions<float>& opt = {}) {
  const auto p = matmul_problem(op_of(ta), op_of(tb), alpha, A, B, beta, C, opt.activation, opt.bias);
  const auto before = copy_matrix(as_const(p.c));
  gemm(space, ta, tb, alpha, A, B, beta, C, opt);
  space.fence();
  const RefMatrix ref = reference_naive(p, as_const(as_matrix(before)));
  return relative_error(as_const(p.c), ref);
}

const double kTol = matmul_tolerance(DType::f32, DType::f32, 64);

template <class LA, class LB, class LC>
void check_layouts() {
  const int64_t M = 37, N = 29, K = 23;
  const auto A = random_matrix<LA>("A", M, K, 1);
  const auto B = random_matrix<LB>("B", K, N, 2);
  const auto C = random_matrix<LC>("C", M, N, 3);
  EXPECT_LE(gemm_error(ES(), "N", "N", 1.5f, A, B, 0.5f, C), kTol);
}

TEST(Gemm, EveryLayoutPair) {
  using L = Kokkos::LayoutLeft;
  using R = Kokkos::LayoutRight;
  check_layouts<L, L, L>();
  check_layouts<L, L, R>();
  check_layouts<L, R, L>();
  check_layouts<L, R, R>();
  check_layouts<R, L, L>();
  check_layouts<R, L, R>();
  check_layouts<R, R, L>();
  check_layouts<R, R, R>();
}

TEST(Gemm, StridedSubviews) {
  const auto Abig = random_matrix<Kokkos::LayoutLeft>("A", 50, 40, 4);
  const auto Bbig = random_matrix<Kokkos::LayoutRight>("B", 40, 60, 5);
  const auto Cbig = random_matrix<Kokkos::LayoutRight>("C", 50, 60, 6);
  const auto A = Kokkos::subview(Abig, Kokkos::make_pair(3, 40), Kokkos::make_pair(1, 24));   // 37 x 23
  const auto B = Kokkos::subview(Bbig, Kokkos::make_pair(2, 25), Kokkos::make_pair(10, 39));  // 23 x 29
  const auto C = Kokkos::subview(Cbig, Kokkos::make_pair(5, 42), Kokkos::make_pair(7, 36));   // 37 x 29
  EXPECT_LE(gemm_error(ES(), "N", "N", 1.0f, A, B, 1.0f, C), kTol);
}

TEST(Gemm, Transposes) {
  const int64_t M = 33, N = 19, K = 41;
  for (const char* ta : {"N", "T"})
    for (const char* tb : {"N", "T"}) {
      const bool at = ta[0] == 'T', bt = tb[0] == 'T';
      const auto A = random_matrix<Kokkos::LayoutLeft>("A", at ? K : M, at ? M : K, 7);
      const auto B = random_matrix<Kokkos::LayoutRight>("B", bt ? N : K, bt ? K : N, 8);
      const auto C = random_matrix<Kokkos::LayoutLeft>("C", M, N, 9);
      EXPECT_LE(gemm_error(ES(), ta, tb, 1.0f, A, B, 0.0f, C), kTol) << ta << tb;
    }
  // Lower case and "C" (conjugate transpose: the transpose for real types) as KokkosBlas takes them.
  const auto A = random_matrix<Kokkos::LayoutLeft>("A", 12, 10, 10);
  const auto B = random_matrix<Kokkos::LayoutLeft>("B", 12, 11, 11);
  const auto C = random_matrix<Kokkos::LayoutLeft>("C", 10, 11, 12);
  EXPECT_LE(gemm_error(ES(), "C", "n", 1.0f, A, B, 0.0f, C), kTol);
}

TEST(Gemm, BiasAndActivation) {
  const int64_t M = 40, N = 24, K = 16;
  const auto A = random_matrix<Kokkos::LayoutRight>("A", M, K, 13);
  const auto B = random_matrix<Kokkos::LayoutRight>("B", K, N, 14);
  const auto C = random_matrix<Kokkos::LayoutRight>("C", M, N, 15);
  Kokkos::View<float*> bias("bias", N);
  fill_random(bias.data(), N, 16);
  for (Activation act : {Activation::none, Activation::relu, Activation::leaky_relu, Activation::silu,
                         Activation::gelu}) {
    GemmOptions<float> opt;
    opt.bias = bias;
    opt.activation = act;
    EXPECT_LE(gemm_error(ES(), "N", "N", 1.0f, A, B, 1.0f, C, opt), kTol) << activation_name(act);
  }
}

TEST(Gemm, ExecutionSpaceInstance) {
  const ES space;  // the caller's instance (on GPUs: its stream); only that instance is fenced
  const auto A = random_matrix<Kokkos::LayoutLeft>("A", 64, 48, 17);
  const auto B = random_matrix<Kokkos::LayoutLeft>("B", 56, 48, 18);
  const auto C = random_matrix<Kokkos::LayoutLeft>("C", 64, 56, 19);
  EXPECT_LE(gemm_error(space, "N", "T", 1.0f, A, B, 0.0f, C), kTol);
}

TEST(Gemm, ExplicitConfigAndTf32OptIn) {
  const auto A = random_matrix<Kokkos::LayoutRight>("A", 70, 30, 20);
  const auto B = random_matrix<Kokkos::LayoutRight>("B", 30, 50, 21);
  const auto C = random_matrix<Kokkos::LayoutRight>("C", 70, 50, 22);
  for (const MatmulConfig& cfg : tuning::matmul_search_space(DType::f32)) {
    if (cfg.group_m != 4) continue;  // every tile once, with a non-trivial group
    GemmOptions<float> opt;
    opt.config = cfg;
    EXPECT_LE(gemm_error(ES(), "N", "N", 1.0f, A, B, 0.0f, C, opt), kTol) << cfg.name();
  }
  // TF32 is an opt-in: through gemm() it reaches the kernel (TF32 tiles on CUDA sm_80+, the IEEE
  // default elsewhere), within the TF32 tolerance; a config given with it is checked with it.
  GemmOptions<float> tf32;
  tf32.math = Math::tf32;
  EXPECT_LE(gemm_error(ES(), "N", "N", 1.0f, A, B, 0.0f, C, tf32),
            matmul_tolerance(DType::f32, DType::f32, 30, Math::tf32));
  GemmOptions<double> f64_tf32;
  f64_tf32.math = Math::tf32;
  Kokkos::View<double**> Ad("Ad", 4, 4), Bd("Bd", 4, 4), Cd("Cd", 4, 4);
  try {
    gemm("N", "N", 1.0, Ad, Bd, 0.0, Cd, f64_tf32);
    ADD_FAILURE() << "math tf32 with f64 inputs was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("math tf32 applies to f32 inputs only"), std::string::npos) << e.what();
  }
}

// The automatic config is what `--config auto` picks: here an entry written to a fresh user cache.
TEST(Gemm, AutomaticConfigUsesTheUserTuningCache) {
  const fs::path dir = fs::temp_directory_path() / ("tilekit-test-api-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const char* old = std::getenv("TILEKIT_TUNING_DIR");
  const std::string saved = old ? old : "";
  ::setenv("TILEKIT_TUNING_DIR", dir.string().c_str(), 1);

  const int64_t M = 48, N = 40, K = 32;
  const auto A = random_matrix<Kokkos::LayoutRight>("A", M, K, 23);
  const auto B = random_matrix<Kokkos::LayoutLeft>("B", K, N, 24);
  const auto C = random_matrix<Kokkos::LayoutRight>("C", M, N, 25);
  const auto p = matmul_problem(Op::N, Op::N, 1.0f, A, B, 0.0f, C, Activation::relu, Kokkos::View<const float*>());
  auto valid = [&](const MatmulConfig& c) { return check_matmul(p, c); };
  const MatmulConfig def = tuning::default_matmul_config(backend_name(), DType::f32, M, N, K);
  MatmulConfig tuned = def;
  for (const auto& c : tuning::matmul_search_space(DType::f32))
    if (!(c == def) && valid(c).empty()) tuned = c;
  ASSERT_FALSE(tuned == def) << "the search space has one config only";

  tuning::TuneEntry e;
  e.key = tuning::matmul_key(DType::f32, DType::f32, tuning::MatmulLayouts{false, true, false},
                             Epilogue{false, Activation::relu}, M, N, K);
  e.config = tuned.name();
  e.date = "2026-11-23T00:00:00Z";
  tuning::TuningCache::for_current_device(dir.string()).store(e);

  EXPECT_EQ(detail::auto_matmul_config(DType::f32, DType::f32, false, true, false, Epilogue{false, Activation::relu},
                                       M, N, K, Math::ieee, valid, TILEKIT_SHIPPED_TUNING_DIR),
            tuned);
  // Another shape of the same family takes the nearest tuned one; another family the default (a
  // storage order with no entries, shipped or stored, with or without an epilogue). On CUDA both
  // take the model's pick instead (docs/tuning.md: only an exact entry counts there).
  const bool modelled = backend_name() == std::string("cuda");
  EXPECT_EQ(detail::auto_matmul_config(DType::f32, DType::f32, false, true, false, Epilogue{false, Activation::relu},
                                       M + 1, N, K, Math::ieee, valid, TILEKIT_SHIPPED_TUNING_DIR),
            modelled ? tuning::model_matmul_config(DType::f32, DType::f32, M + 1, N, K, Math::ieee) : tuned);
  EXPECT_EQ(detail::auto_matmul_config(DType::f32, DType::f32, true, false, true, Epilogue{false, Activation::silu},
                                       M, N, K, Math::ieee, valid, TILEKIT_SHIPPED_TUNING_DIR),
            modelled ? tuning::model_matmul_config(DType::f32, DType::f32, M, N, K, Math::ieee) : def);
  GemmOptions<float> opt;
  opt.activation = Activation::relu;
  EXPECT_LE(gemm_error(ES(), "N", "N", 1.0f, A, B, 0.0f, C, opt), kTol);

  if (old) ::setenv("TILEKIT_TUNING_DIR", saved.c_str(), 1);
  else ::unsetenv("TILEKIT_TUNING_DIR");
  fs::remove_all(dir);
}

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(Gemm, BadInputThrowsWithTheMessage) {
  const auto A = random_matrix<Kokkos::LayoutLeft>("A", 8, 6, 26);
  const auto B = random_matrix<Kokkos::LayoutLeft>("B", 7, 5, 27);
  const auto B6 = random_matrix<Kokkos::LayoutLeft>("B6", 6, 5, 27);
  const auto C = random_matrix<Kokkos::LayoutLeft>("C", 8, 5, 28);
  EXPECT_EQ(message_of([&] { gemm("N", "N", 1.0f, A, B, 0.0f, C); }), "op(B) is 7x5, expected KxN = 6x5");
  EXPECT_EQ(message_of([&] { gemm("X", "N", 1.0f, A, B6, 0.0f, C); }),
            "transA must be \"N\" or \"T\" (\"C\" is \"T\" for real types); got \"X\"");
  GemmOptions<float> opt;
  opt.bias = Kokkos::View<float*>("bias", 3);
  EXPECT_EQ(message_of([&] { gemm("N", "N", 1.0f, A, B6, 0.0f, C, opt); }),
            "bias has 3 values; it needs one per column of C (5)");
  // A config the backend cannot run: the message `tilekit matmul --config` prints.
  MatmulConfig bad = tuning::default_matmul_config(backend_name(), DType::f32);
  bad.group_m = 0;
  opt = {};
  opt.config = bad;
  const auto p = matmul_problem(Op::N, Op::N, 1.0f, A, B6, 0.0f, C, Activation::none, Kokkos::View<const float*>());
  EXPECT_EQ(message_of([&] { gemm("N", "N", 1.0f, A, B6, 0.0f, C, opt); }), check_matmul(p, bad));
  EXPECT_NE(check_matmul(p, bad).find("group_m must be in 1..4096"), std::string::npos);
}

TEST(Gemm, AnEmptyBiasMeansNoBias) {
  const auto A = random_matrix<Kokkos::LayoutRight>("A", 9, 7, 40);
  const auto B = random_matrix<Kokkos::LayoutRight>("B", 7, 5, 41);
  const auto C = random_matrix<Kokkos::LayoutRight>("C", 9, 5, 42);
  for (const Kokkos::View<const float*>& empty : {Kokkos::View<const float*>(Kokkos::View<float*>("bias", 0)),
                                                  Kokkos::View<const float*>()}) {
    GemmOptions<float> opt;
    opt.bias = empty;
    EXPECT_LE(gemm_error(ES(), "N", "N", 1.0f, A, B, 0.0f, C, opt), kTol);
  }
}

TEST(Gemm, MessagesNameTheOperandThatIsWrong) {
  const auto A = random_matrix<Kokkos::LayoutLeft>("A", 4, 5, 43);
  const auto B = random_matrix<Kokkos::LayoutLeft>("B", 5, 3, 44);
  Kokkos::View<float**, Kokkos::LayoutLeft> none;
  EXPECT_EQ(message_of([&] { gemm("N", "N", 1.0f, A, B, 0.0f, none); }),
            "C is 0x0 (no data: an empty or default-constructed view), expected rows of op(A) x columns of op(B) = 4x3");
  const auto C43 = random_matrix<Kokkos::LayoutLeft>("C", 4, 3, 45);
  EXPECT_EQ(message_of([&] { gemm("N", "N", 1.0f, none, B, 0.0f, C43); }),
            "op(A) is 0x0 (no data: an empty or default-constructed view), expected rows of C x rows of op(B) = 4x5");
  EXPECT_EQ(message_of([&] { gemm("N", "N", 1.0f, A, none, 0.0f, C43); }),
            "op(B) is 0x0 (no data: an empty or default-constructed view), expected columns of op(A) x columns of "
            "C = 5x3");
}

TEST(Gemm, COverlappingAOrBIsRefused) {
  Kokkos::View<float**, Kokkos::LayoutRight> X("X", 8, 8);
  fill_random(X.data(), 64, 46);
  const auto B = random_matrix<Kokkos::LayoutRight>("B", 8, 8, 47);
  EXPECT_NE(message_of([&] { gemm("N", "N", 1.0f, X, B, 0.0f, X); }).find("C overlaps A"), std::string::npos);
  EXPECT_NE(message_of([&] { gemm("N", "N", 1.0f, B, X, 0.0f, X); }).find("C overlaps B"), std::string::npos);
  // Rows 0..3 as C and rows 2..5 as A: a partial overlap.
  const auto C = Kokkos::subview(X, Kokkos::make_pair(0, 4), Kokkos::ALL);
  const auto A = Kokkos::subview(X, Kokkos::make_pair(2, 6), Kokkos::ALL);
  EXPECT_NE(message_of([&] { gemm("N", "N", 1.0f, A, B, 0.0f, C); }).find("C overlaps A"), std::string::npos);
  // Disjoint rows of one allocation are fine.
  const auto A2 = Kokkos::subview(X, Kokkos::make_pair(4, 8), Kokkos::ALL);
  EXPECT_LE(gemm_error(ES(), "N", "N", 1.0f, A2, B, 0.0f, C), kTol);
}

// Calls from host threads other than the one that initialized Kokkos: run correctly where the
// backend allows it, else throw InvalidArgument saying so (launch_thread_problem(), the rule of
// docs/library.md) instead of Kokkos' own runtime_error.
TEST(Threads, CallsFromOtherHostThreadsRunOrThrowSayingWhy) {
  constexpr int kThreads = 4;
  const auto A = random_matrix<Kokkos::LayoutRight>("A", 33, 21, 48);
  const auto B = random_matrix<Kokkos::LayoutRight>("B", 21, 17, 49);
  std::vector<Matrix<Kokkos::LayoutRight>> C;
  for (int t = 0; t < kThreads; ++t) C.push_back(random_matrix<Kokkos::LayoutRight>("C", 33, 17, 50 + t));
  const auto D = random_matrix<Kokkos::LayoutRight>("D", 33, 17, 60);
  Kokkos::View<float**, Kokkos::LayoutRight> E("E", 33, 17);
  const auto p0 = matmul_problem(Op::N, Op::N, 1.0f, A, B, 0.0f, C[0], Activation::none, Kokkos::View<const float*>());
  const RefMatrix ref = reference_naive(p0, as_const(as_matrix(C[0])));
  std::vector<std::string> problem(kThreads), thrown(kThreads), thrown_apply(kThreads);
  std::mutex turns;  // the threads take turns
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::lock_guard<std::mutex> lock(turns);
      problem[t] = launch_thread_problem();
      try {
        gemm("N", "N", 1.0f, A, B, 0.0f, C[t]);
        ES().fence();
      } catch (const InvalidArgument& e) {
        thrown[t] = e.what();
      }
      if (t == 0) try {
          apply(ops::Add{}, make_inputs(C[0], D), E);
          ES().fence();
        } catch (const InvalidArgument& e) {
          thrown_apply[t] = e.what();
        }
    });
  for (auto& th : threads) th.join();
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  EXPECT_FALSE(problem[0].empty()) << "Kokkos 3's OpenMP backend launches only from the initial thread";
#endif
  for (int t = 0; t < kThreads; ++t) {
    if (problem[t].empty()) {
      EXPECT_EQ(thrown[t], "") << "thread " << t;
      EXPECT_LE(relative_error(as_const(as_matrix(C[t])), ref), kTol) << "thread " << t;
    } else {
      EXPECT_EQ(thrown[t], problem[t]) << "thread " << t;
      EXPECT_NE(thrown[t].find("only the thread that called Kokkos::initialize"), std::string::npos) << thrown[t];
    }
  }
  EXPECT_EQ(thrown_apply[0], problem[0]);
  // The initial thread launches as before.
  EXPECT_EQ(launch_thread_problem(), "");
  EXPECT_LE(gemm_error(ES(), "N", "N", 1.0f, A, B, 0.0f, C[0]), kTol);
}

// Calls from the threads of an OpenMP parallel region (OpenMP builds), each on its own output: run
// correctly where the backend allows it, else throw InvalidArgument with the rule.
TEST(Threads, CallsFromAnOpenMPParallelRegionRunOrThrowSayingWhy) {
#if defined(_OPENMP)
  constexpr int kThreads = 2;
  const auto A = random_matrix<Kokkos::LayoutRight>("A", 53, 290, 80);  // K beyond one K block
  const auto B = random_matrix<Kokkos::LayoutRight>("B", 290, 41, 81);
  std::vector<Matrix<Kokkos::LayoutRight>> C;
  for (int t = 0; t < kThreads; ++t) C.emplace_back("C", 53, 41);
  std::vector<std::string> problem(kThreads), thrown(kThreads);
  std::vector<int> ran(kThreads, 0);

#pragma omp parallel num_threads(kThreads)
  {
    const int t = omp_get_thread_num();
    if (t < kThreads) {
      problem[t] = launch_thread_problem();
      try {
        gemm("N", "N", 1.0f, A, B, 0.0f, C[t]);
        ES().fence();
        ran[t] = 1;
      } catch (const InvalidArgument& e) {
        thrown[t] = e.what();
      } catch (const std::exception& e) {
        thrown[t] = std::string("not InvalidArgument: ") + e.what();
      }
    }
  }

  const auto p = matmul_problem(Op::N, Op::N, 1.0f, A, B, 0.0f, C[0], Activation::none, Kokkos::View<const float*>());
  const RefMatrix ref = reference_naive(p, as_const(as_matrix(C[0])));  // beta = 0: C is not read
  int calls = 0, correct = 0;
  for (int t = 0; t < kThreads; ++t) {
    if (problem[t].empty()) {
      EXPECT_EQ(thrown[t], "") << "thread " << t;
      calls += ran[t];
      const double err = relative_error(as_const(as_matrix(C[t])), ref);
      EXPECT_LE(err, kTol) << "thread " << t;
      correct += ran[t] && err <= kTol;
    } else {
      EXPECT_EQ(thrown[t], problem[t]) << "thread " << t;
    }
  }
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  EXPECT_EQ(calls, 0) << "Kokkos 3's OpenMP backend does not launch from inside a parallel region";
#endif
  std::printf("[ threads  ] %s (Kokkos %d.%d.%02d) from an OpenMP parallel region of %d threads: %d calls ran, %d "
              "correct\n",
              backend_name().c_str(), KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100,
              kThreads, calls, correct);
#else
  GTEST_SKIP() << "this build does not compile with OpenMP";
#endif
}

// An execution-space instance of its own for each thread: on GPUs one on a stream of its own (the
// stream outlives the instance), on host backends the default instance.
class OwnInstance {
 public:
  OwnInstance() {
#if defined(KOKKOS_ENABLE_CUDA)
    if (cudaStreamCreate(&stream_) == cudaSuccess) space_ = ES(stream_);
#elif defined(KOKKOS_ENABLE_HIP)
    if (hipStreamCreate(&stream_) == hipSuccess) space_ = ES(stream_);
#endif
  }
  ~OwnInstance() {
    space_ = ES();  // the instance lets go of the stream first
#if defined(KOKKOS_ENABLE_CUDA)
    if (stream_) (void)cudaStreamDestroy(stream_);
#elif defined(KOKKOS_ENABLE_HIP)
    if (stream_) (void)hipStreamDestroy(stream_);
#endif
  }
  OwnInstance(const OwnInstance&) = delete;
  OwnInstance& operator=(const OwnInstance&) = delete;
  const ES& space() const { return space_; }

 private:
  ES space_;
#if defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t stream_ = nullptr;
#elif defined(KOKKOS_ENABLE_HIP)
  hipStream_t stream_ = nullptr;
#endif
};

// Several host threads calling gemm and apply, each on outputs of its own. Where the backend allows
// concurrent launches (concurrent_launches_allowed(): GPUs, each thread on its own instance, i.e.
// stream; Kokkos 4's host backends on the default instance) the threads start together and call at
// the same time; elsewhere (Kokkos 3's Serial) they take turns. Each call writes its own output with
// its own alpha, so a result landing in another call's output is caught. On Kokkos 3's OpenMP
// backend other threads cannot launch: every call is refused with the rule, and nothing is written.
TEST(Threads, ConcurrentCallsOnSeparateOutputsMatchReference) {
  constexpr int kThreads = 4, kCalls = 6;
  const int64_t M = 67, N = 39, K = 300;  // K beyond one K block: partial sums live in team scratch
  const auto A = random_matrix<Kokkos::LayoutRight>("A", M, K, 70);
  const auto B = random_matrix<Kokkos::LayoutLeft>("B", K, N, 71);
  const auto D = random_matrix<Kokkos::LayoutRight>("D", M, N, 72);
  std::vector<Matrix<Kokkos::LayoutRight>> C, E;  // [thread * kCalls + call]
  for (int i = 0; i < kThreads * kCalls; ++i) {
    C.emplace_back("C", M, N);
    E.emplace_back("E", M, N);
  }
  auto alpha = [](int i) { return 0.5f + 0.25f * float(i); };
  std::vector<std::unique_ptr<OwnInstance>> instances;
  for (int t = 0; t < kThreads; ++t) instances.push_back(std::make_unique<OwnInstance>());
  const bool together = concurrent_launches_allowed();
  std::vector<int> ran(kThreads, 0);
  std::vector<std::string> refused(kThreads), problem(kThreads);
  std::atomic<int> ready{0};
  std::mutex turns;

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::unique_lock<std::mutex> lock(turns, std::defer_lock);
      if (together) {
        ++ready;  // all threads start their calls at once
        while (ready.load() < kThreads) std::this_thread::yield();
      } else {
        lock.lock();
      }
      problem[t] = launch_thread_problem();
      const ES& space = instances[t]->space();
      try {
        for (int c = 0; c < kCalls; ++c) {
          const int i = t * kCalls + c;
          gemm(space, "N", "N", alpha(i), A, B, 0.0f, C[i]);
          apply(space, ops::Add{}, make_inputs(C[i], D), E[i]);  // E = C + D, after the gemm on this instance
          ++ran[t];
        }
        space.fence();
      } catch (const InvalidArgument& e) {
        refused[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();

  int calls = 0, correct = 0;
  const auto hd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D);
  for (int t = 0; t < kThreads; ++t) {
    if (!problem[t].empty()) {  // this thread may not launch: each call refused with the rule
      EXPECT_EQ(refused[t], problem[t]) << "thread " << t;
      EXPECT_EQ(ran[t], 0) << "thread " << t;
      continue;
    }
    EXPECT_EQ(refused[t], "") << "thread " << t;
    for (int c = 0; c < ran[t]; ++c) {
      const int i = t * kCalls + c;
      ++calls;
      const auto p = matmul_problem(Op::N, Op::N, alpha(i), A, B, 0.0f, C[i], Activation::none,
                                    Kokkos::View<const float*>());
      const double err = relative_error(as_const(as_matrix(C[i])), reference_naive(p, as_const(as_matrix(C[i]))));
      const auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C[i]);
      const auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), E[i]);
      bool sum_exact = true;
      for (int64_t r = 0; r < M && sum_exact; ++r)
        for (int64_t j = 0; j < N; ++j) sum_exact &= he(r, j) == hc(r, j) + hd(r, j);
      EXPECT_LE(err, kTol) << "thread " << t << ", call " << c;
      EXPECT_TRUE(sum_exact) << "thread " << t << ", call " << c << ": E != C + D";
      correct += err <= kTol && sum_exact;
    }
  }
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  EXPECT_EQ(calls, 0) << "Kokkos 3's OpenMP backend launches only from the initial thread";
#else
  EXPECT_EQ(calls, kThreads * kCalls);
#endif
  std::printf("[ threads  ] %s (Kokkos %d.%d.%02d): %d threads %s, %d calls (gemm + apply) ran, %d correct, %d "
              "threads refused\n",
              backend_name().c_str(), KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100,
              kThreads, together ? "at once" : "taking turns", calls, correct,
              int(std::count_if(problem.begin(), problem.end(), [](const std::string& s) { return !s.empty(); })));
}

TEST(Apply, AutomaticConfigAndInstance) {
  const int64_t M = 45, N = 70;
  const auto A = random_matrix<Kokkos::LayoutRight>("A", M, N, 29);
  const auto B = random_matrix<Kokkos::LayoutLeft>("B", M, N, 30);
  Kokkos::View<float**, Kokkos::LayoutRight> bias("bias", 1, N);
  fill_random(bias.data(), N, 31);
  Kokkos::View<float**, Kokkos::LayoutRight> C("C", M, N), D("D", M, N);
  const ES space;
  apply(ops::Add{}, make_inputs(A, B), C);                // C = A + B
  apply(space, ops::Mul{}, make_inputs(C, bias), D);      // D = C * bias (broadcast down the rows)
  apply(space, ops::Fma{}, make_inputs(A, B, D), D);      // D = A * B + D, in place
  space.fence();
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  auto hbias = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bias);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  auto hd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const float c = ha(i, j) + hb(i, j);
      ASSERT_EQ(hc(i, j), c) << i << "," << j;
      ASSERT_EQ(hd(i, j), std::fma(ha(i, j), hb(i, j), c * hbias(0, j))) << i << "," << j;
    }
  EXPECT_EQ(message_of([&] { apply(ops::Add{}, make_inputs(A, Kokkos::subview(B, Kokkos::make_pair(0, 2), Kokkos::ALL)), C); }),
            message_of([&] {
              apply(ops::Add{}, make_inputs(A, Kokkos::subview(B, Kokkos::make_pair(0, 2), Kokkos::ALL)), C,
                    ElementwiseConfig());
            }));
}

// Kokkos Tools: every kernel the library launches is named "tilekit::...", so profilers show it.
std::vector<std::string>* g_kernels = nullptr;
void record_kernel(const char* name, const uint32_t, uint64_t* id) {
  if (g_kernels) g_kernels->push_back(name);
  *id = 0;
}
void end_kernel(uint64_t) {}

/// Kokkos Tools' begin/end callbacks of parallel_for, parallel_reduce and parallel_scan (null: off).
void set_kernel_callbacks(void (*begin)(const char*, const uint32_t, uint64_t*), void (*end)(uint64_t)) {
  namespace KTE = Kokkos::Tools::Experimental;
  KTE::set_begin_parallel_for_callback(begin);
  KTE::set_begin_parallel_reduce_callback(begin);
  KTE::set_begin_parallel_scan_callback(begin);
  KTE::set_end_parallel_for_callback(end);
  KTE::set_end_parallel_reduce_callback(end);
  KTE::set_end_parallel_scan_callback(end);
}

TEST(KokkosTools, EveryLibraryKernelHasATilekitLabel) {
  const auto A = random_matrix<Kokkos::LayoutRight>("A", 30, 20, 32);
  const auto B = random_matrix<Kokkos::LayoutLeft>("B", 20, 25, 33);
  const auto C = random_matrix<Kokkos::LayoutRight>("C", 30, 25, 34);
  Kokkos::View<float*> bias("bias", 25);
  Kokkos::View<float**, Kokkos::LayoutRight> D("D", 30, 20), At("At", 20, 30);
  Kokkos::View<float**, Kokkos::LayoutLeft> Bt("Bt", 25, 20);
  Kokkos::fence();

  std::vector<std::string> names;
  set_kernel_callbacks(record_kernel, end_kernel);
  g_kernels = &names;  // only library calls inside the window
  GemmOptions<float> opt;
  opt.bias = bias;
  opt.activation = Activation::gelu;
  gemm("T", "N", 1.0f, At, B, 1.0f, C, opt);
  gemm(ES(), "N", "T", 1.0f, A, Bt, 0.0f, C);
  for (ElementwiseVariant v : {ElementwiseVariant::naive, ElementwiseVariant::vectorized, ElementwiseVariant::tiled}) {
    ElementwiseConfig cfg;
    cfg.variant = v;
    apply(ops::Add{}, make_inputs(A, A), D, cfg);
  }
  apply(ops::Silu{}, make_inputs(A), D);
  Kokkos::fence();
  g_kernels = nullptr;
  set_kernel_callbacks(nullptr, nullptr);

  EXPECT_GE(names.size(), 6u);
  for (const auto& n : names) EXPECT_EQ(n.rfind("tilekit::", 0), 0u) << "unlabelled kernel: " << n;
}

}  // namespace

TEST(Runtime, HostInstructionSetCheckPassesWhereTheBuildRuns) {
  // Tests run on the machine that built them: every instruction set the host code was compiled for
  // is there (a misspelt feature name in the check would report it missing here).
  EXPECT_EQ(host_isa_missing(), "");
}
