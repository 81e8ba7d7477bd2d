// One matmul test case: storage, run, oracle, and the checks every case makes. Shared by the
// matmul tests so each property test states only what it varies.
#pragma once

#include "tilekit/kernels/core/fill.hpp"
#include "tilekit/kernels/matmul/matmul.hpp"
#include "tilekit/kernels/matmul/validation.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace tilekit::test {

struct Case {
  int64_t M = 0, N = 0, K = 0;
  bool a_col = false, trans_a = false;  // storage of A; A stored K x M when trans_a
  bool b_col = false, trans_b = false;
  bool c_col = false;
  int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // extra elements per leading dimension
  bool a_row_repeated = false;  // A stored as one row of K elements, row stride 0 (layout fields ignored)
  bool b_col_repeated = false;  // B stored as one column of K elements, column stride 0
  double alpha = 1.0, beta = 0.0;
  Epilogue ep;
  Math math = Math::ieee;           // f32 inputs: tf32 lets TF32 tiles run (and loosens the tolerance)
  std::optional<MatmulConfig> cfg;  // default config of the backend when empty
  bool nan_in_c = false;            // C starts as NaN (only meaningful with beta == 0)
  bool kokkos_kernels = false;      // oracle: KokkosBlas::gemm instead of the naive reference
  MatmulLaunchOptions launch;       // overrides of the warp-specialised kernel's launch rules
  uint64_t seed = 7;

  std::string describe() const {
    return fmt::format("{}x{}x{} A:{}{}+{}{} B:{}{}+{}{} C:{}+{} alpha={} beta={} ep={} math={} cfg={}", M, N, K,
                       a_col ? "col" : "row", trans_a ? "T" : "", pad_a, a_row_repeated ? " (rs 0)" : "",
                       b_col ? "col" : "row", trans_b ? "T" : "", pad_b, b_col_repeated ? " (cs 0)" : "",
                       c_col ? "col" : "row", pad_c, alpha, beta, ep.name(), math_name(math),
                       cfg ? cfg->name() : "default");
  }
};

struct Outcome {
  double err = 0.0;
  double tol = 0.0;
  int64_t padding_changed = 0;  // elements of C's storage outside the matrix that the run changed
  MatmulLaunchReport launched;  // what the launch ran
};

struct Layout2D {
  int64_t rows, cols, rs, cs, elems;
};

inline Layout2D layout2d(int64_t rows, int64_t cols, bool col_major, int64_t pad) {
  const int64_t lead = (col_major ? rows : cols) + pad;
  const int64_t outer = col_major ? cols : rows;
  Layout2D l{rows, cols, col_major ? 1 : lead, col_major ? lead : 1, outer * lead};
  if (rows == 0 || cols == 0) l.elems = 0;
  return l;
}

/// The backend's default config for TIn inputs (on CUDA sm_80+, f16, bf16, f64 and i8 take their
/// tensor-core tiles).
template <class TIn = float>
MatmulConfig default_config() {
  return tuning::default_matmul_config(backend_name(), TypeTraits<TIn>::dtype);
}

template <class TIn, class TOut>
Outcome run_case(const Case& c) {
  using compute = typename TypeTraits<TIn>::compute;
  // A repeated row (B repeated column): K elements, a stride of 0 between rows (columns).
  const Layout2D la = c.a_row_repeated ? Layout2D{c.M, c.K, 0, 1, c.K}
                                       : layout2d(c.trans_a ? c.K : c.M, c.trans_a ? c.M : c.K, c.a_col, c.pad_a);
  const Layout2D lb = c.b_col_repeated ? Layout2D{c.K, c.N, 1, 0, c.K}
                                       : layout2d(c.trans_b ? c.N : c.K, c.trans_b ? c.K : c.N, c.b_col, c.pad_b);
  const Layout2D lc = layout2d(c.M, c.N, c.c_col, c.pad_c);

  Kokkos::View<TIn*> A("A", la.elems), B("B", lb.elems);
  Kokkos::View<TOut*> C("C", lc.elems), C0("C0", lc.elems);
  Kokkos::View<compute*> bias("bias", c.ep.bias ? c.N : 0);
  fill_random(A.data(), la.elems, c.seed);
  fill_random(B.data(), lb.elems, c.seed + 1);
  fill_random(C.data(), lc.elems, c.seed + 2);
  fill_random(bias.data(), static_cast<int64_t>(bias.extent(0)), c.seed + 3);
  if (c.nan_in_c) fill_value(C.data(), lc.elems, convert<TOut>(std::numeric_limits<float>::quiet_NaN()));
  Kokkos::deep_copy(C0, C);

  MatmulProblem<TIn, TOut> p;
  p.M = c.M;
  p.N = c.N;
  p.K = c.K;
  StridedMatrix<const TIn> a{A.data(), la.rows, la.cols, la.rs, la.cs};
  StridedMatrix<const TIn> b{B.data(), lb.rows, lb.cols, lb.rs, lb.cs};
  p.a = c.trans_a && !c.a_row_repeated ? a.transposed() : a;
  p.b = c.trans_b && !c.b_col_repeated ? b.transposed() : b;
  p.c = {C.data(), lc.rows, lc.cols, lc.rs, lc.cs};
  p.alpha = static_cast<compute>(c.alpha);
  p.beta = static_cast<compute>(c.beta);
  p.bias = c.ep.bias ? bias.data() : nullptr;
  p.act = c.ep.act;
  p.math = c.math;

  const MatmulLaunchReport launched =
      run_matmul(p, c.cfg ? *c.cfg : tuning::default_matmul_config(backend_name(), TypeTraits<TIn>::dtype, c.math),
                 Kokkos::DefaultExecutionSpace(), c.launch);

  const StridedMatrix<const TOut> before{C0.data(), lc.rows, lc.cols, lc.rs, lc.cs};
  const RefMatrix ref = c.kokkos_kernels ? reference_kokkos_kernels(p, before) : reference_naive(p, before);
  Outcome o;
  o.launched = launched;
  o.err = relative_error(StridedMatrix<const TOut>{C.data(), lc.rows, lc.cols, lc.rs, lc.cs}, ref);
  o.tol = matmul_tolerance(TypeTraits<TIn>::dtype, TypeTraits<TOut>::dtype, c.K, c.math);

  // Storage outside the logical matrix (the padding of each leading dimension) must be untouched.
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C0);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  const int64_t lead = c.c_col ? lc.cs : lc.rs, inner = c.c_col ? c.M : c.N;
  for (int64_t e = 0; e < lc.elems; ++e) {
    if (e % lead < inner) continue;
    if (std::memcmp(&h0(e), &h1(e), sizeof(TOut)) != 0) ++o.padding_changed;
  }
  return o;
}

/// Every tile of this backend's menu, each with the team shapes the backend allows.
inline std::vector<MatmulConfig> menu_configs();

namespace detail {
template <class... Tiles>
void collect(tilekit::TileList<Tiles...>, std::vector<MatmulConfig>& out) {
  using ES = Kokkos::DefaultExecutionSpace;
  auto add = [&](MatmulConfig base, int micro_tiles) {
    for (int g : {1, 4}) {
      base.group_m = g;
      if (tilekit::is_gpu_space<ES>()) {
        for (int v : {1, 32}) {  // threads per team fixed; split between team and vector lanes
          base.vector_length = v;
          base.team_size = micro_tiles / v;
          out.push_back(base);
        }
      } else {
        const int tmax = std::min(2, ES().concurrency());
        for (int t = 1; t <= tmax; ++t) {
          base.team_size = t;
          base.vector_length = 1;
          out.push_back(base);
        }
      }
    }
  };
  (add(Tiles::config(), Tiles::micro_tiles), ...);
}
}  // namespace detail

inline std::vector<MatmulConfig> menu_configs() {
  std::vector<MatmulConfig> out;
  detail::collect(tilekit::MatmulTiles<Kokkos::DefaultExecutionSpace>{}, out);
  return out;
}

/// One config per tile of the menu (its first team shape) that check_matmul accepts for TIn -> TOut:
/// the tests that run every tile once. Tiles refused for the type are left out here
/// (EveryMenuConfigMatchesReference checks the refusal).
template <class TIn, class TOut>
std::vector<MatmulConfig> runnable_menu_tiles() {
  std::vector<MatmulConfig> out;
  std::vector<std::string> seen;
  for (const MatmulConfig& cfg : menu_configs()) {
    if (std::find(seen.begin(), seen.end(), cfg.tile_name()) != seen.end()) continue;
    seen.push_back(cfg.tile_name());
    if (check_matmul(MatmulProblem<TIn, TOut>{}, cfg).empty()) out.push_back(cfg);
  }
  return out;
}

}  // namespace tilekit::test
