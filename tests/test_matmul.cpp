// Matmul properties, each checked for every (input, output) type pair on this build's backend.
#include "tilekit/kernels/core/device.hpp"
#include "tests/matmul_case.hpp"
#include "tilekit/kernels/matmul/gpu/pack.hpp"
#include "tilekit/kernels/matmul/host/packed.hpp"
#include "tilekit/tuning/matmul_tuner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <utility>

using namespace tilekit;
using namespace tilekit::test;

namespace {

template <class P>
struct MatmulTyped : ::testing::Test {
  using TIn = typename P::first_type;
  using TOut = typename P::second_type;
  static constexpr bool integer = std::is_integral<TIn>::value;

  /// Runs c, expects it to match the reference, and returns what the launch ran.
  MatmulLaunchReport expect_matches(const Case& c) {
    SCOPED_TRACE(c.describe());
    const Outcome o = run_case<TIn, TOut>(c);
    EXPECT_LE(o.err, o.tol) << "relative error " << o.err << " over tolerance " << o.tol;
    EXPECT_EQ(o.padding_changed, 0) << "the run wrote outside C";
    return o.launched;
  }
};

struct PairNames {
  template <class P>
  static std::string GetName(int) {
    return std::string(dtype_name(TypeTraits<typename P::first_type>::dtype)) + "_" +
           dtype_name(TypeTraits<typename P::second_type>::dtype);
  }
};

using Pairs = ::testing::Types<std::pair<double, double>, std::pair<float, float>, std::pair<f16, f16>,
                               std::pair<f16, float>, std::pair<bf16, bf16>, std::pair<bf16, float>,
                               std::pair<int8_t, int32_t>>;
TYPED_TEST_SUITE(MatmulTyped, Pairs, PairNames);

// Sizes chosen to break tiling: zeros, ones, primes, non-multiples of every menu dimension,
// one very wide and one very deep problem; 200x1100x517: several tiles along M and N with ragged
// last ones, and K over two packed panels of the host tiles with an odd remainder (a half-filled
// k pair of the bf16 dot-product packing).
const std::vector<std::array<int64_t, 3>> kAwkwardSizes = {
    {0, 0, 0},   {0, 5, 3},    {5, 0, 3},     {4, 5, 0},      {1, 1, 1},   {1, 7, 1},  {7, 1, 1},
    {1, 1, 300}, {2, 3, 5},    {13, 15, 17},  {31, 37, 41},   {65, 67, 129}, {129, 257, 9},
    {179, 15, 211}, {12, 3071, 517}, {3, 5, 2053}, {200, 1100, 517}};

TYPED_TEST(MatmulTyped, MatchesReferenceOnSizesThatBreakTiling) {
  for (const auto& s : kAwkwardSizes) {
    Case c;
    c.M = s[0];
    c.N = s[1];
    c.K = s[2];
    this->expect_matches(c);
  }
}

TYPED_TEST(MatmulTyped, EveryMenuConfigMatchesReference) {
  // 70x130x600: ten or more K steps of every tile, so each stage buffer of a pipelined tile is
  // refilled (and each of its barriers goes through several phases) with ragged M, N and K edges.
  for (const MatmulConfig& cfg : menu_configs()) {
    for (const auto& s : std::vector<std::array<int64_t, 3>>{{179, 15, 211}, {67, 131, 45}, {70, 130, 600}}) {
      Case c;
      c.M = s[0];
      c.N = s[1];
      c.K = s[2];
      c.cfg = cfg;
      // A tile may not fit the backend's scratch for wide types (f64 doubles the staged bytes), and
      // tensor-core tiles (TF32: only with the opt-in) and host packed tiles run the input types
      // they are made for: others must be rejected before launch, saying why.
      const std::string why = check_matmul(MatmulProblem<typename TestFixture::TIn, typename TestFixture::TOut>{}, cfg);
      if (why.find("scratch") != std::string::npos || why.find("tensor cores") != std::string::npos ||
          why.find("for other input types") != std::string::npos) {
        EXPECT_THROW((run_case<typename TestFixture::TIn, typename TestFixture::TOut>(c)), InvalidArgument);
        continue;
      }
      this->expect_matches(c);
    }
  }
}

TYPED_TEST(MatmulTyped, EveryMenuTileInEveryStorageOrderMatchesReference) {
  // Each tile once, in every storage order of A, B and C: with leading dimensions of whole 16-byte
  // vectors (interior tiles take the vector loads, ragged M/N/K edges the masked ones) and with an
  // odd padding (the element-by-element path for contiguous operands).
  for (const MatmulConfig& cfg : runnable_menu_tiles<typename TestFixture::TIn, typename TestFixture::TOut>()) {
    for (int bits = 0; bits < 16; ++bits) {
      Case c;
      c.M = 200;
      c.N = 136;
      c.K = 88;
      c.a_col = bits & 1;
      c.b_col = bits & 2;
      c.c_col = bits & 4;
      if (bits & 8) {
        c.pad_a = c.pad_b = 1;
        c.pad_c = 3;
        c.trans_a = bits & 1;
      }
      c.beta = 0.5;
      c.cfg = cfg;
      this->expect_matches(c);
    }
  }
}

/// The warp-specialised tiles of runnable_menu_tiles (none where the build or GPU lacks sm_90a).
template <class TIn, class TOut>
std::vector<MatmulConfig> runnable_ws_tiles() {
  std::vector<MatmulConfig> ws;
  for (const MatmulConfig& cfg : runnable_menu_tiles<TIn, TOut>())
    if (cfg.ws) ws.push_back(cfg);
  return ws;
}

TYPED_TEST(MatmulTyped, WarpSpecialisedTilesLoadThroughTmaWhereOperandsAllowIt) {
  // The warp-specialised wgmma tiles load with TMA boxes where both operands have a unit stride and
  // 16-byte aligned pitches, else with the cp.async producer. Pitches of whole 16-byte vectors with
  // ragged tile edges (200 = 128 + 72 rows, 264 = 256 + 8 columns, 712 = 11 x 64 + 8: eleven K
  // steps, so every stage buffer and barrier is reused) in every storage order must take TMA and
  // match; an odd padding must pack the operands K-major and load those through TMA, and, where
  // cp.async loads are asked for, take the cp.async producer; both must match.
  using TIn = typename TestFixture::TIn;
  using TOut = typename TestFixture::TOut;
  if (!std::is_same<TIn, f16>::value && !std::is_same<TIn, bf16>::value)
    GTEST_SKIP() << "the warp-specialised tiles take f16 and bf16 inputs";
  const std::vector<MatmulConfig> ws = runnable_ws_tiles<TIn, TOut>();
  if (ws.empty()) GTEST_SKIP() << "no warp-specialised tile runs here (they need sm_90a code on a compute 9.0 GPU)";
  for (const MatmulConfig& cfg : ws) {
    for (int bits = 0; bits < 16; ++bits) {
      Case c;
      c.M = 200;
      c.N = 264;
      c.K = 712;
      c.a_col = bits & 1;
      c.b_col = bits & 2;
      c.c_col = bits & 4;
      const bool odd_pitch = bits & 8;
      if (odd_pitch) c.pad_a = c.pad_b = c.pad_c = 1;
      c.cfg = cfg;
      const std::string how = this->expect_matches(c).ws_loads;
      EXPECT_EQ(how, odd_pitch ? "tma (packed)" : "tma") << c.describe();
      if (odd_pitch) {
        c.launch.ws_cp_async_loads = true;
        const std::string forced = this->expect_matches(c).ws_loads;
        EXPECT_EQ(forced.rfind("cp.async: ", 0), 0u) << c.describe() << ": " << forced;
      }
    }
  }
}

/// Problems for the warp-specialised tiles' persistent grid: 200x520 is 4 x 5 tiles of 64x128 or
/// 2 x 3 of 128x256, ragged on both edges; K of 3 steps (ragged), 1 step, or none; alpha 1, 0.5, -2
/// and 0 (the bias in the accumulators or in the epilogue). The grid cap of each case
/// (MatmulLaunchOptions::ws_team_cap): none (one tile a team at this size), 1 or 3 (teams that loop
/// over several tiles, the next tile loading while the consumers finish the last).
inline std::vector<Case> ws_grid_cases(const MatmulConfig& cfg, bool f32_out) {
  std::vector<Case> cases;
  for (int n = 0; n < 18; ++n) {
    Case c;
    c.M = 200, c.N = 520, c.K = n % 7 == 3 ? 0 : n % 4 == 1 ? 40 : 130;
    c.c_col = n & 1, c.a_col = n & 2, c.b_col = n & 4;
    if (n & 8) c.pad_a = c.pad_b = 1, c.pad_c = f32_out ? 1 : 3;  // odd pitches: cp.async, element stores
    c.beta = n % 3 == 0 ? 0.0 : 0.5;
    c.nan_in_c = c.beta == 0.0;
    c.ep.bias = n % 2 == 0;
    // alpha 1 and -2: the bias starts the accumulators (as bias / alpha; K = 0 too, n = 10); 0.5
    // and 0: it is added in the epilogue (bias_folds_into_accumulators)
    constexpr double kAlphas[9] = {1.0, 0.5, -2.0, 0.0, 1.0, -2.0, 0.5, 1.0, 0.0};
    c.alpha = kAlphas[n / 2];
    c.ep.act = n % 5 == 0 ? Activation::gelu : n % 5 == 1 ? Activation::leaky_relu
             : n % 5 == 2 ? Activation::silu : n % 5 == 3 ? Activation::relu : Activation::none;
    c.cfg = cfg;
    c.launch.ws_team_cap = n % 3 == 0 ? 0 : n % 3 == 1 ? 1 : 3;
    cases.push_back(c);
  }
  return cases;
}

TYPED_TEST(MatmulTyped, WarpSpecialisedTilesMatchReferenceWithOneOrSeveralTilesATeam) {
  // The warp-specialised grid is persistent: where teams loop over several tiles, the consumers
  // finish each tile while the producer loads the next one into the stage buffers and the barrier
  // phases run on across tiles. At test sizes every team has one tile, so the grid is capped here
  // too: every storage order, odd pitches, beta 0 over NaN and 0.5, each activation with and
  // without a bias.
  using TIn = typename TestFixture::TIn;
  using TOut = typename TestFixture::TOut;
  if (!std::is_same<TIn, f16>::value && !std::is_same<TIn, bf16>::value)
    GTEST_SKIP() << "the warp-specialised tiles take f16 and bf16 inputs";
  const std::vector<MatmulConfig> ws = runnable_ws_tiles<TIn, TOut>();
  if (ws.empty()) GTEST_SKIP() << "no warp-specialised tile runs here (they need sm_90a code on a compute 9.0 GPU)";
  for (const MatmulConfig& cfg : ws) {
    for (const Case& c : ws_grid_cases(cfg, std::is_same<TOut, float>::value)) {
      SCOPED_TRACE(fmt::format("grid cap {}", c.launch.ws_team_cap));
      this->expect_matches(c);
    }
  }
}

/// The persistent-grid cases (ws_grid_cases) with beta 0 (over NaN), the padded pitches kept whole
/// 16-byte vectors and 32-bit C made row-major: every one stores C through TMA (16-bit C in both
/// storage orders).
inline std::vector<Case> ws_tma_store_cases(const MatmulConfig& cfg, bool f32_out) {
  std::vector<Case> cases = ws_grid_cases(cfg, f32_out);
  for (Case& c : cases) {
    if (f32_out) c.c_col = false;
    c.beta = 0.0;
    c.nan_in_c = true;
    if (c.pad_c) c.pad_c = f32_out ? 4 : 8;
  }
  return cases;
}

/// Where C takes the stores from registers instead of TMA, and why: C read (beta != 0), a pitch that
/// is not whole 16-byte vectors (in both storage orders), column-major 32-bit C.
inline std::vector<std::pair<Case, std::string>> ws_register_store_cases(const MatmulConfig& cfg, bool f32_out) {
  Case c;
  c.M = 200, c.N = 264, c.K = 712, c.cfg = cfg, c.ep.bias = true, c.ep.act = Activation::relu;
  std::vector<std::pair<Case, std::string>> cases;
  for (bool col : {false, true}) {
    Case read = c, odd = c;
    read.c_col = odd.c_col = col;
    read.beta = 0.5;
    odd.pad_c = 1;
    cases.push_back({read, "registers: beta != 0 (C is read)"});
    cases.push_back({odd, f32_out && col ? "registers: 32-bit C is not row-major"
                                         : "registers: row pitch not a multiple of 16 bytes"});
  }
  return cases;
}

TYPED_TEST(MatmulTyped, WarpSpecialisedTilesStoreCThroughTmaWhereCAllowsIt) {
  // C on 16-byte aligned pitches with beta = 0 (row-major, or column-major 16-bit C as its
  // transpose) leaves the consumers as TMA stores, a 64 x 128-byte box a column chunk, clipped at
  // C's ragged edges (200 x 520: partial boxes on both): every activation with and without a bias,
  // alpha folding the bias into the accumulators or not, one or several tiles a team (the box
  // reused across tiles). The same with the stores from registers asked for, and the cases that
  // need them, match too.
  using TIn = typename TestFixture::TIn;
  using TOut = typename TestFixture::TOut;
  if (!std::is_same<TIn, f16>::value && !std::is_same<TIn, bf16>::value)
    GTEST_SKIP() << "the warp-specialised tiles take f16 and bf16 inputs";
  const std::vector<MatmulConfig> ws = runnable_ws_tiles<TIn, TOut>();
  if (ws.empty()) GTEST_SKIP() << "no warp-specialised tile runs here (they need sm_90a code on a compute 9.0 GPU)";
  for (const MatmulConfig& cfg : ws) {
    for (Case c : ws_tma_store_cases(cfg, std::is_same<TOut, float>::value)) {
      SCOPED_TRACE(fmt::format("grid cap {}", c.launch.ws_team_cap));
      // (K = 0: no operand for a tensor map to describe, so the cp.async producer and register stores)
      const std::string no_k = "registers: cp.async loads";
      EXPECT_EQ(this->expect_matches(c).ws_stores, c.K == 0 ? no_k : "tma") << c.describe();
      c.launch.ws_register_stores = true;
      EXPECT_EQ(this->expect_matches(c).ws_stores, c.K == 0 ? no_k : "registers: asked for") << c.describe();
    }
    for (const auto& [c, why] : ws_register_store_cases(cfg, std::is_same<TOut, float>::value))
      EXPECT_EQ(this->expect_matches(c).ws_stores, why) << c.describe();
  }
}

/// Forces the warp-specialised kernel's drift bound with chunks of one K step, a slack of one and
/// this wait limit.
inline void force_drift_bound(MatmulLaunchOptions& o, long long wait_limit_ns) {
  o.ws_drift_forced = true;
  o.ws_drift_chunk_steps = 1;
  o.ws_drift_slack_steps = 1;
  o.ws_drift_wait_limit_ns = wait_limit_ns;
}

TYPED_TEST(MatmulTyped, WarpSpecialisedDriftBoundKeepsResultsWhereTeamsWaitAndWhereTheyCannot) {
  // The drift bound (tilekit::WsDriftBound) holds every TMA producer of a persistent grid within a
  // slack of the slowest team's K step; by default only from 256 K steps, so here it is forced with
  // chunks of one step and a slack of one, and producers wait at nearly every step:
  // (1) grids capped at 1 and 3 teams, each looping over several tiles (waits that end when the
  //     other teams catch up), every storage order, the epilogue;
  // (2) one team per tile, more teams than fit on the GPU at once: resident teams wait for teams
  //     that cannot start before they finish, until the wait limit (20 us) lets them run free.
  using TIn = typename TestFixture::TIn;
  using TOut = typename TestFixture::TOut;
  if (!std::is_same<TIn, f16>::value && !std::is_same<TIn, bf16>::value)
    GTEST_SKIP() << "the warp-specialised tiles take f16 and bf16 inputs";
  const std::vector<MatmulConfig> ws = runnable_ws_tiles<TIn, TOut>();
  if (ws.empty()) GTEST_SKIP() << "no warp-specialised tile runs here (they need sm_90a code on a compute 9.0 GPU)";
  auto expect_bound = [&](const Case& c, const MatmulLaunchReport& launched, const std::string& chunks) {
    const std::string& how = launched.ws_drift_bound;
    EXPECT_EQ(how.rfind("chunks of 1 K steps, slack 1 steps, " + chunks + " chunks counted", 0), 0u)
        << c.describe() << ": " << how;
  };
  for (const MatmulConfig& cfg : ws) {
    {
      for (int n = 0; n < 8; ++n) {
        Case c;
        c.M = 200, c.N = 520, c.K = 712;  // 12 K steps a tile; 4 x 5 tiles of 64x128, 2 x 3 of 128x256
        c.a_col = n & 1, c.b_col = n & 2, c.c_col = n & 4;
        c.beta = n % 3 == 0 ? 0.0 : 0.5;
        c.nan_in_c = c.beta == 0.0;
        c.ep.bias = true;
        c.ep.act = n % 2 ? Activation::leaky_relu : Activation::gelu;
        c.cfg = cfg;
        force_drift_bound(c.launch, 200000000);  // 0.2 s: not reached
        c.launch.ws_multicast_off = true;  // one team per grid slot (B's rows, 1040 bytes apart, pair them)
        const int teams = n < 4 ? 1 : 3;
        c.launch.ws_team_cap = teams;
        SCOPED_TRACE(fmt::format("grid cap {}", teams));
        const MatmulLaunchReport launched = this->expect_matches(c);
        const int tiles = int((c.M + cfg.bm - 1) / cfg.bm * ((c.N + cfg.bn - 1) / cfg.bn));
        expect_bound(c, launched, std::to_string(tiles / teams * 12));
      }
    }
    {
      Case c;
      force_drift_bound(c.launch, 20000);
      c.launch.ws_one_team_per_tile = true;
      // 648 tiles of 64x128 or 162 of 128x256: more teams than an H100's 132 SMs hold at once.
      c.M = 2304, c.N = 2304, c.K = 200;  // 4 K steps: chunk 2 waits for every team's chunk 0
      c.a_col = true, c.b_col = true, c.c_col = true;
      c.beta = 0.5;
      c.ep.bias = true;
      c.ep.act = Activation::leaky_relu;
      c.kokkos_kernels = true;  // the naive host reference is slow at this size
      c.cfg = cfg;
      const int tiles = int((c.M + cfg.bm - 1) / cfg.bm * ((c.N + cfg.bn - 1) / cfg.bn));
      ASSERT_GT(tiles, cuda_sm_count()) << cfg.name() << ": too few tiles to outnumber the resident teams";
      expect_bound(c, this->expect_matches(c), "4");
    }
  }
}

TYPED_TEST(MatmulTyped, WarpSpecialisedClustersSharingBMatchReference) {
  // The 128x256 ws tile runs as two-team clusters where its tile rows pair up: the teams take the
  // two tiles of a pair stacked in M, each loads its A and half of B and multicasts that half into
  // both (tilekit::kWsMulticast; by default from 256 K steps or where the rows of B are not
  // 32-byte aligned, here from one K step). Every storage order,
  // M/N/K tails, K under one stage, beta = 0 with NaN in C, the epilogue; grids capped at 2, 3 and
  // 4 teams (one or two clusters looping over pairs) and uncapped; the drift bound forced on top in
  // half the cases; and an odd number of tile rows, which runs without clusters.
  using TIn = typename TestFixture::TIn;
  using TOut = typename TestFixture::TOut;
  if (!std::is_same<TIn, f16>::value && !std::is_same<TIn, bf16>::value)
    GTEST_SKIP() << "the warp-specialised tiles take f16 and bf16 inputs";
  std::vector<MatmulConfig> wide;
  for (const MatmulConfig& cfg : runnable_ws_tiles<TIn, TOut>())
    if (cfg.bm == 128 && cfg.bn == 256) wide.push_back(cfg);
  if (wide.empty()) GTEST_SKIP() << "no 128x256 warp-specialised tile runs here (sm_90a code on a compute 9.0 GPU)";
  for (const MatmulConfig& cfg : wide) {
    for (int n = 0; n < 16; ++n) {
      Case c;
      // 456 rows: 4 tile rows (2 pairs), the last 72 rows; 200: one pair; 520 columns: 3 tile
      // columns, the last 8 wide; 712 = 11 K steps and 8; 40: under one step
      c.M = n % 4 == 3 ? 200 : 456, c.N = 520, c.K = n % 5 == 4 ? 40 : 712;
      c.a_col = n & 1, c.b_col = n & 2, c.c_col = n & 4;
      c.beta = n % 3 == 0 ? 0.0 : 0.5;
      c.nan_in_c = c.beta == 0.0;
      c.ep.bias = n % 2 == 0;
      c.ep.act = n % 4 < 2 ? Activation::leaky_relu : Activation::gelu;
      c.cfg = cfg;
      c.launch.ws_multicast_min_k_steps = 1;
      c.launch.ws_team_cap = n % 4 == 0 ? 2 : n % 4 == 1 ? 3 : n % 4 == 2 ? 4 : 0;
      if (n >= 8) force_drift_bound(c.launch, 200000000);
      SCOPED_TRACE(fmt::format("grid cap {}, drift bound {}", c.launch.ws_team_cap, n >= 8 ? "forced" : "default"));
      EXPECT_EQ(this->expect_matches(c).ws_multicast, "clusters of 2 teams, B multicast") << c.describe();
      c.launch.ws_multicast_off = true;  // the same without clusters
      EXPECT_EQ(this->expect_matches(c).ws_multicast, "off: clusters turned off") << c.describe();
      if (n == 0) {
        c.launch.ws_multicast_off = false;
        c.launch.ws_cp_async_loads = true;
        EXPECT_EQ(this->expect_matches(c).ws_multicast, "off: cp.async loads") << c.describe();
      }
    }
    Case odd;
    odd.M = 328, odd.N = 264, odd.K = 712;  // 3 tile rows
    odd.a_col = odd.b_col = odd.c_col = true;
    odd.beta = 0.5;
    odd.cfg = cfg;
    odd.launch.ws_multicast_min_k_steps = 1;
    EXPECT_EQ(this->expect_matches(odd).ws_multicast, "off: an odd number of tile rows (3)") << odd.describe();
    // The default rule on short tiles (12 K steps): clusters where the rows of B are not 32-byte
    // aligned (row-major B with N = 520: 1040 bytes apart), none where they are (N = 528).
    Case unaligned;
    unaligned.M = 456, unaligned.N = 520, unaligned.K = 712;
    unaligned.cfg = cfg;
    EXPECT_EQ(this->expect_matches(unaligned).ws_multicast, "clusters of 2 teams, B multicast") << unaligned.describe();
    Case aligned = unaligned;
    aligned.N = 528;
    EXPECT_EQ(this->expect_matches(aligned).ws_multicast,
              "off: 12 K steps a tile, under 256, and the rows of B 32-byte aligned")
        << aligned.describe();
  }
}

TYPED_TEST(MatmulTyped, OperandsWithARepeatedRowOrColumnMatchReference) {
  // A stride of 0 is allowed for A and B (one row of A, one column of B, repeated): every tile of
  // the menu, with ragged edges and several K steps, must read it as such. On the warp-specialised
  // tiles no TMA map can describe it: the operand is packed K-major and loaded through TMA.
  for (const MatmulConfig& cfg : runnable_menu_tiles<typename TestFixture::TIn, typename TestFixture::TOut>()) {
    for (int which = 0; which < 3; ++which) {  // A's row repeated, B's column repeated, both
      Case c;
      c.M = 200, c.N = 264, c.K = 712;
      c.a_row_repeated = which != 1;
      c.b_col_repeated = which != 0;
      c.b_col = c.c_col = true;
      c.beta = 0.5;
      c.cfg = cfg;
      const MatmulLaunchReport launched = this->expect_matches(c);
      if (cfg.ws) {
        EXPECT_EQ(launched.ws_loads, "tma (packed)") << c.describe();
      }
    }
  }
}

TYPED_TEST(MatmulTyped, EveryLayoutTransposeAndStrideMatchesReference) {
  for (int bits = 0; bits < 32; ++bits) {
    Case c;
    c.M = 37;
    c.N = 29;
    c.K = 71;
    c.a_col = bits & 1;
    c.trans_a = bits & 2;
    c.b_col = bits & 4;
    c.trans_b = bits & 8;
    c.c_col = bits & 16;
    c.pad_a = bits % 3;
    c.pad_b = (bits / 3) % 3;
    c.pad_c = 1 + bits % 2;
    c.beta = 1.0;
    this->expect_matches(c);
  }
}

TYPED_TEST(MatmulTyped, AlignedInteriorTilesWithRaggedEdgesMatchReferenceInEveryStorageOrder) {
  // Leading dimensions that are multiples of 8 elements: interior tiles take the 16-byte copy paths
  // (tensor-core tiles on CUDA), the edges of M, N and K take the masked paths, in one launch.
  for (const auto& s : std::vector<std::array<int64_t, 3>>{{256, 256, 64}, {200, 136, 88}, {136, 264, 40}}) {
    for (int bits = 0; bits < 8; ++bits) {
      Case c;
      c.M = s[0];
      c.N = s[1];
      c.K = s[2];
      c.a_col = bits & 1;
      c.b_col = bits & 2;
      c.c_col = bits & 4;
      c.beta = 0.5;
      this->expect_matches(c);
    }
  }
}

TYPED_TEST(MatmulTyped, EveryMenuTileWithEveryEpilogueMatchesReference) {
  // Each tile's fused epilogue on whole interior blocks and on ragged edges (200 x 264: 128 + 72
  // rows, 256 + 8 columns), C in both orders (row-major C lets 16-bit pairs be stored as one word),
  // with and without bias and beta.
  for (const MatmulConfig& cfg : runnable_menu_tiles<typename TestFixture::TIn, typename TestFixture::TOut>()) {
    int n = 0;
    for (Activation act : {Activation::none, Activation::relu, Activation::leaky_relu, Activation::silu,
                           Activation::gelu}) {
      if (this->integer && act != Activation::none && act != Activation::relu) continue;
      for (bool c_col : {false, true}) {
        Case c;
        c.M = 200, c.N = 264, c.K = 136;
        c.a_col = n % 2, c.b_col = n % 3 == 0, c.c_col = c_col;
        c.ep.bias = n % 2 == 0;
        c.ep.act = act;
        c.beta = n % 4 < 2 ? 0.0 : 0.5;
        c.cfg = cfg;
        ++n;
        this->expect_matches(c);
      }
    }
  }
}

TYPED_TEST(MatmulTyped, EveryEpilogueMatchesReference) {
  for (bool bias : {false, true}) {
    for (Activation act : {Activation::none, Activation::relu, Activation::leaky_relu, Activation::silu,
                           Activation::gelu}) {
      Case c;
      c.M = 45;
      c.N = 70;
      c.K = 33;
      c.beta = 0.5;
      c.ep.bias = bias;
      c.ep.act = act;
      if (this->integer) {
        c.beta = 1.0;
        if (act != Activation::none && act != Activation::relu) {
          EXPECT_THROW((run_case<typename TestFixture::TIn, typename TestFixture::TOut>(c)), InvalidArgument)
              << c.describe();
          continue;
        }
      }
      this->expect_matches(c);
    }
  }
}

TYPED_TEST(MatmulTyped, GeluOverAWideRangeMatchesReference) {
  // alpha scales the products to about +-20 and +-70, so C spans gelu's middle and its saturated
  // ends (x below about -21, where the f64 device form returns x * 0; f32 and 16-bit C from -10).
  if (this->integer) GTEST_SKIP() << "gelu is not an integer epilogue";
  for (double alpha : {6.0, 24.0}) {
    for (bool bias : {false, true}) {
      Case c;
      c.M = 64;
      c.N = 72;
      c.K = 40;
      c.alpha = alpha;
      c.ep.bias = bias;
      c.ep.act = Activation::gelu;
      this->expect_matches(c);
    }
  }
}

TYPED_TEST(MatmulTyped, AlphaBetaCombinationsMatchReference) {
  for (double alpha : {1.0, -2.0, 0.0, 0.5}) {
    for (double beta : {0.0, 1.0, -1.0, 2.5}) {
      if (this->integer && (alpha == 0.5 || beta == 2.5)) continue;  // integer scalars only
      Case c;
      c.M = 33;
      c.N = 65;
      c.K = 19;
      c.alpha = alpha;
      c.beta = beta;
      this->expect_matches(c);
    }
  }
}

TYPED_TEST(MatmulTyped, BetaZeroIgnoresNaNAlreadyInC) {
  // (if constexpr: with a plain if the loop is unreachable for i8, which nvcc warns about)
  if constexpr (TestFixture::integer) {
    GTEST_SKIP() << "integers have no NaN";
  } else {
    for (int64_t k : {0, 1, 50}) {
      Case c;
      c.M = 70;
      c.N = 33;
      c.K = k;
      c.nan_in_c = true;
      c.ep.bias = true;
      this->expect_matches(c);
    }
  }
}

TYPED_TEST(MatmulTyped, AgreesWithKokkosKernelsGemm) {
  Case c;
  c.M = 150;
  c.N = 97;
  c.K = 300;
  c.beta = 1.0;
  c.b_col = true;
  c.kokkos_kernels = true;
  this->expect_matches(c);
}

TYPED_TEST(MatmulTyped, RepeatedRunsAreBitwiseIdentical) {
  // A race (a missing barrier) shows up as results that change between identical runs.
  using TIn = typename TestFixture::TIn;
  using TOut = typename TestFixture::TOut;
  const int64_t M = 200, N = 190, K = 333;
  Kokkos::View<TIn**, Kokkos::LayoutRight> A("A", M, K), B("B", K, N);
  Kokkos::View<TOut**, Kokkos::LayoutRight> C1("C1", M, N), C2("C2", M, N);
  fill_random(A.data(), M * K, 11);
  fill_random(B.data(), K * N, 12);
  matmul(Op::N, Op::N, 1, A, B, 0, C1, default_config<TIn>());
  matmul(Op::N, Op::N, 1, A, B, 0, C2, default_config<TIn>());
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C1);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C2);
  EXPECT_EQ(std::memcmp(h1.data(), h2.data(), sizeof(TOut) * M * N), 0);
}

/// The tiles of runnable_menu_tiles that split K (tilekit::tile_splits_k) and that `which` takes,
/// with 2, 3 and 16 splits.
template <class TIn, class TOut, class Which>
std::vector<MatmulConfig> split_k_tile_configs(Which which) {
  std::vector<MatmulConfig> out;
  for (const MatmulConfig& tile : runnable_menu_tiles<TIn, TOut>()) {
    if (!tilekit::tile_splits_k(tile) || !which(tile)) continue;
    for (int s : {2, 3, 16}) {
      MatmulConfig c = tile;
      c.k_splits = s;
      out.push_back(c);
    }
  }
  return out;
}

/// Case n of the tensor-core split-K tests: 200 x N x K, the storage order, odd pitches, alpha,
/// beta (0 over NaN, 0.5), the bias and the activation (i8: relu or none) cycling with n.
Case split_k_case(int n, const MatmulConfig& cfg, int64_t N, int64_t K, bool i8) {
  Case c;
  c.M = 200, c.N = N, c.K = K;
  c.a_col = n & 1, c.b_col = n & 2, c.c_col = n & 4;
  if (n % 5 == 4) c.pad_a = c.pad_b = c.pad_c = 1;
  c.beta = n % 3 == 0 ? 0.0 : 0.5;
  c.nan_in_c = c.beta == 0.0;
  c.alpha = n % 4 == 1 ? -2.0 : 1.0;
  c.ep.bias = n % 2 == 0;
  c.ep.act = n % 5 == 0 ? Activation::gelu : n % 5 == 1 ? Activation::leaky_relu
           : n % 5 == 2 ? Activation::silu : n % 5 == 3 ? Activation::relu : Activation::none;
  if (i8) c.ep.act = n % 2 ? Activation::relu : Activation::none;  // (i8 takes relu only)
  c.cfg = cfg;
  return c;
}

/// Each config run twice on the same 200 x N x 1000 product gives the same bits.
template <class TIn, class TOut>
void expect_split_k_repeats_bitwise(const std::vector<MatmulConfig>& cfgs, int64_t N, uint64_t seed) {
  const int64_t M = 200, K = 1000;
  Kokkos::View<TIn**, Kokkos::LayoutRight> A("A", M, K), B("B", K, N);
  Kokkos::View<TOut**, Kokkos::LayoutRight> C1("C1", M, N), C2("C2", M, N);
  fill_random(A.data(), M * K, seed);
  fill_random(B.data(), K * N, seed + 1);
  for (const MatmulConfig& cfg : cfgs) {
    SCOPED_TRACE(cfg.name());
    matmul(Op::N, Op::N, 1, A, B, 0, C1, cfg);
    matmul(Op::N, Op::N, 1, A, B, 0, C2, cfg);
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C1);
    auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C2);
    EXPECT_EQ(std::memcmp(h1.data(), h2.data(), sizeof(TOut) * M * N), 0);
  }
}

TYPED_TEST(MatmulTyped, WarpSpecialisedTilesSplitKMatchReferenceAndRepeatBitwise) {
  // Split K on the wide warp-specialised tiles: each split's work items store partial sums (f32;
  // i32 for i8), a second kernel adds them in split order and applies the epilogue. K = 1000 (16
  // steps of 64: 3 splits of 6, 6 and 4 steps; a ragged last step; i8: 8 steps of 128) and K = 130
  // (3 steps: 16 splits become 3), every
  // storage order, odd pitches (packed operands), beta 0 over NaN and 0.5, a bias with each
  // activation, grids capped to 3 teams (several work items a team); the same run twice gives the
  // same bits.
  using TIn = typename TestFixture::TIn;
  using TOut = typename TestFixture::TOut;
  constexpr bool i8 = std::is_same<TIn, int8_t>::value;
  if (!std::is_same<TIn, f16>::value && !std::is_same<TIn, bf16>::value && !i8)
    GTEST_SKIP() << "the warp-specialised tiles take f16, bf16 and i8 inputs (TF32: MatmulTf32)";
  const std::vector<MatmulConfig> cfgs = split_k_tile_configs<TIn, TOut>([](const MatmulConfig& c) { return c.ws; });
  if (cfgs.empty()) GTEST_SKIP() << "no warp-specialised tile runs here (they need sm_90a code on a compute 9.0 GPU)";
  int n = 0;
  for (const MatmulConfig& cfg : cfgs) {
    for (int i = 0; i < 6; ++i, ++n) {
      Case c = split_k_case(n, cfg, 264, n % 2 ? 1000 : 130, i8);
      c.launch.ws_team_cap = n % 3 == 1 ? 3 : 0;
      const std::string kernel = this->expect_matches(c).kernel;
      EXPECT_NE(kernel.find("split K x"), std::string::npos) << c.describe() << ": " << kernel;
    }
  }
  expect_split_k_repeats_bitwise<TIn, TOut>(cfgs, 264, 13);
}

TYPED_TEST(MatmulTyped, MmaSyncTilesSplitKMatchReferenceAndRepeatBitwise) {
  // Split K on the f64 (DMMA) and i8 (IMMA) mma.sync tiles: each split's teams store partial sums
  // in the accumulator type (f64; i32, exact), a second kernel adds them in split order and applies
  // the epilogue. K = 1000 (f64: 63 steps of 16, 3 splits of 21; i8: 16 steps of 64, 3 splits of 6,
  // 6 and 4; a ragged last step), K = 70 (16 splits become 5 or 2) and K = 333 (operands packed with
  // K padded), ragged M and N, every storage order, odd pitches, beta 0 over NaN and 0.5, a bias with
  // each activation; the same run twice gives the same bits.
  using TIn = typename TestFixture::TIn;
  using TOut = typename TestFixture::TOut;
  constexpr bool i8 = std::is_same<TIn, int8_t>::value;
  if (!std::is_same<TIn, double>::value && !i8) GTEST_SKIP() << "f64 and i8 (TF32: MatmulTf32.Tf32TilesSplitK)";
  const std::vector<MatmulConfig> cfgs =
      split_k_tile_configs<TIn, TOut>([](const MatmulConfig& c) { return c.mma && !c.wgmma; });
  if (cfgs.empty()) GTEST_SKIP() << "no mma.sync tile runs " << dtype_name(TypeTraits<TIn>::dtype) << " here (CUDA sm_80+)";
  int n = 0;
  for (const MatmulConfig& cfg : cfgs) {
    for (int i = 0; i < 6; ++i, ++n) {
      const Case c = split_k_case(n, cfg, 190, n % 3 == 0 ? 1000 : n % 3 == 1 ? 70 : 333, i8);
      const std::string kernel = this->expect_matches(c).kernel;
      EXPECT_NE(kernel.find("split K x"), std::string::npos) << c.describe() << ": " << kernel;
    }
  }
  expect_split_k_repeats_bitwise<TIn, TOut>(cfgs, 190, 15);
}

// --- operands packed for vector loads (gpu/pack.hpp): cp.async tensor-core and warp-tiled SIMT tiles -

/// Runs c (the backend's default tile for TIn) and expects it to match and to have packed `packed`
/// ("" nothing) on CUDA, nothing elsewhere.
template <class TIn, class TOut>
void expect_packed(const Case& c, const std::string& packed) {
  SCOPED_TRACE(c.describe());
  const Outcome o = run_case<TIn, TOut>(c);
  EXPECT_LE(o.err, o.tol) << "relative error " << o.err << " over tolerance " << o.tol;
  EXPECT_EQ(o.padding_changed, 0) << "the run wrote outside C";
  EXPECT_EQ(o.launched.packed, backend_name() == std::string("cuda") ? packed : "") << o.launched.kernel;
}

TEST(MatmulPacking, OperandsTheKernelWouldLoadElementByElementArePackedKMajor) {
  // f64 on DMMA (16-byte vectors of 2): K = 333 gives row-major A an odd pitch and no K-major row of
  // whole vectors, so both operands are packed with K padded by a zero; K = 334 with even M and N
  // needs nothing; an odd pitch of B alone packs B alone. i8 on IMMA (vectors of 16): K = 1000 pads
  // to 1008. f32 on the warp-tiled SIMT tile: an odd pitch packs that operand, K is never padded.
  Case c;
  c.M = 130, c.N = 70, c.K = 333, c.beta = 0.5, c.ep.bias = true, c.ep.act = Activation::gelu;
  expect_packed<double, double>(c, "a, b K-major, K padded 333 -> 334");
  c.K = 334;
  expect_packed<double, double>(c, "");
  c.a_col = c.b_col = c.c_col = true;
  expect_packed<double, double>(c, "");
  c.pad_b = 1;
  expect_packed<double, double>(c, "b K-major");
  Case i;
  i.M = 96, i.N = 80, i.K = 1000, i.b_col = true;
  expect_packed<int8_t, int32_t>(i, "a, b K-major, K padded 1000 -> 1008");
  Case f;
  f.M = 200, f.N = 192, f.K = 333, f.pad_a = 1;
  expect_packed<float, float>(f, "a K-major");
}

/// pack_k_major on this backend against a host loop: `rows` x `cols` of a source with strides rs, cs
/// (allocated with `offset` extra elements in front, so that its runs start off 16-byte boundaries),
/// into rows of `pitch`, zero-padded or not; the elements of dst past what the pack writes keep their
/// sentinel.
template <class T>
void expect_pack_k_major(int64_t rows, int64_t cols, bool along_rows, int64_t lead, int64_t offset, int64_t pitch,
                         bool zero_pad) {
  SCOPED_TRACE(fmt::format("{} {}x{} source contiguous along {}, leading dimension {}, offset {}, pitch {}{}",
                           dtype_name(TypeTraits<T>::dtype), rows, cols, along_rows ? "i" : "j", lead, offset, pitch,
                           zero_pad ? ", zero-padded" : ""));
  const int64_t rs = along_rows ? 1 : lead, cs = along_rows ? lead : 1;
  const int64_t src_n = offset + (along_rows ? lead * cols : lead * rows);
  Kokkos::View<T*> src("src", src_n), dst("dst", rows * pitch + 7);
  auto hs = Kokkos::create_mirror_view(src);
  for (int64_t e = 0; e < src_n; ++e) hs(e) = convert<T>(float((e * 37 + 11) % 101) - 50.0f);
  Kokkos::deep_copy(src, hs);
  const T sentinel = convert<T>(99.0f);
  Kokkos::deep_copy(dst, sentinel);
  tilekit::detail::pack_k_major(src.data() + offset, rows, cols, rs, cs, dst.data(), pitch, Kokkos::DefaultExecutionSpace(),
                       zero_pad);
  Kokkos::fence();
  auto hd = Kokkos::create_mirror_view(dst);
  Kokkos::deep_copy(hd, dst);
  int64_t wrong = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < pitch; ++j) {
      const T want = j < cols ? hs(offset + i * rs + j * cs) : zero_pad ? convert<T>(0.0f) : sentinel;
      if (std::memcmp(&hd(i * pitch + j), &want, sizeof(T)) != 0 && ++wrong <= 3)
        ADD_FAILURE() << "element (" << i << ", " << j << ")";
    }
  for (int64_t e = rows * pitch; e < rows * pitch + 7; ++e)
    EXPECT_EQ(std::memcmp(&hd(e), &sentinel, sizeof(T)), 0) << "written past the last row";
  EXPECT_EQ(wrong, 0);
}

template <class T>
void expect_pack_k_major_cases() {
  constexpr int64_t v = 16 / int64_t(sizeof(T));
  // Transposes (source contiguous along i): whole blocks; ragged rows and columns; a leading
  // dimension or a base off 16 bytes (element loads); zero padding to the pitch.
  expect_pack_k_major<T>(16 * v, 256, true, 16 * v, 0, 256, false);
  expect_pack_k_major<T>(8 * v + 3, 130, true, 8 * v + 5, 0, 130 + v, true);
  expect_pack_k_major<T>(37, 45, true, 40, 1, 48, true);
  expect_pack_k_major<T>(5, 300, true, 5, 0, 300, false);
  // Row copies (source contiguous along j): aligned, and a pitch that is not whole vectors.
  expect_pack_k_major<T>(33, 4 * v, false, 4 * v, 0, 4 * v, false);
  expect_pack_k_major<T>(19, 2 * v + 1, false, 2 * v + 3, 0, 3 * v, true);
  expect_pack_k_major<T>(9, 129, false, 131, 2, 129 + v, false);
}

TEST(MatmulPacking, PackKMajorCopiesEveryElementOfEveryLayoutAndPadsWithZeros) {
  expect_pack_k_major_cases<float>();
  expect_pack_k_major_cases<double>();
  expect_pack_k_major_cases<int8_t>();
  expect_pack_k_major_cases<f16>();
}

// --- split K (MatmulConfig::k_splits): f32 SIMT tiles on CUDA ----------------------------------------

/// Every menu tile that splits K, with each split count of the tuning space and two more (3: splits
/// of unequal use; 16: more splits than most test shapes have K steps), that this device runs.
std::vector<MatmulConfig> split_k_configs() {
  std::vector<MatmulConfig> out;
  for (const MatmulConfig& tile : runnable_menu_tiles<float, float>()) {
    if (!tilekit::tile_splits_k(tile)) continue;
    for (int s : {2, 3, 4, 8, 16}) {
      MatmulConfig c = tile;
      c.k_splits = s;
      if (check_matmul(MatmulProblem<float, float>{}, c).empty()) out.push_back(c);
    }
  }
  return out;
}

TEST(MatmulSplitK, EverySplitTileMatchesReferenceInEveryStorageOrderSizeAndEpilogue) {
  const std::vector<MatmulConfig> cfgs = split_k_configs();
  if (cfgs.empty()) GTEST_SKIP() << "no tile splits K on " << backend_name() << " (CUDA SIMT tiles only)";
  // Ragged M, N and K (K steps not a multiple of the splits; fewer K steps than splits; one step;
  // K = 0), every storage order with aligned and odd leading dimensions, beta, bias + activations,
  // and C full of NaN with beta = 0 (only the last team of a tile writes C, and never reads it).
  const std::vector<std::array<int64_t, 3>> sizes = {{200, 136, 600}, {70, 130, 45}, {65, 67, 129},
                                                     {129, 257, 16},  {31, 37, 0},   {300, 100, 1000}};
  int n = 0;
  for (const MatmulConfig& cfg : cfgs) {
    for (const auto& s : sizes) {
      Case c;
      c.M = s[0];
      c.N = s[1];
      c.K = s[2];
      c.cfg = cfg;
      c.a_col = n & 1;
      c.b_col = n & 2;
      c.c_col = n & 4;
      if (n & 8) {
        c.pad_a = c.pad_b = 1;
        c.pad_c = 3;
        c.trans_b = n & 1;
      }
      c.beta = n % 3 == 0 ? 0.0 : 0.5;
      c.nan_in_c = c.beta == 0.0;
      c.ep.bias = n % 2 == 0;
      c.ep.act = n % 5 == 0 ? Activation::gelu : n % 5 == 1 ? Activation::leaky_relu : Activation::none;
      ++n;
      SCOPED_TRACE(c.describe());
      const Outcome o = run_case<float, float>(c);
      EXPECT_LE(o.err, o.tol) << "relative error " << o.err << " over tolerance " << o.tol;
      EXPECT_EQ(o.padding_changed, 0) << "the run wrote outside C";
    }
  }
}

TEST(MatmulSplitK, RunsAreBitwiseIdenticalAndCountersResetBetweenLaunches) {
  // The last team of a tile adds the partial tiles in split order whichever team it is: the same
  // config gives the same bits. Launches with other split counts and sizes in between must leave
  // every arrival counter at zero (a stale count would let a team finish a tile early: wrong C).
  const std::vector<MatmulConfig> cfgs = split_k_configs();
  if (cfgs.empty()) GTEST_SKIP() << "no tile splits K on " << backend_name();
  const int64_t M = 260, N = 190, K = 1500;
  Kokkos::View<float**, Kokkos::LayoutLeft> A("A", M, K), B("B", K, N);
  Kokkos::View<float**, Kokkos::LayoutLeft> C1("C1", M, N), C2("C2", M, N), C3("C3", 40, 40);
  fill_random(A.data(), M * K, 31);
  fill_random(B.data(), K * N, 32);
  for (const MatmulConfig& cfg : cfgs) {
    SCOPED_TRACE(cfg.name());
    matmul(Op::N, Op::N, 1.0f, A, B, 0.0f, C1, cfg);
    MatmulConfig other = cfg;
    other.k_splits = cfg.k_splits == 2 ? 3 : 2;
    auto a_part = Kokkos::subview(A, std::make_pair(0, 40), std::make_pair(0, 700));
    auto b_part = Kokkos::subview(B, std::make_pair(0, 700), std::make_pair(0, 40));
    matmul(Op::N, Op::N, 1.0f, a_part, b_part, 0.0f, C3, other);
    matmul(Op::N, Op::N, 1.0f, A, B, 0.0f, C2, cfg);
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C1);
    auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C2);
    EXPECT_EQ(std::memcmp(h1.data(), h2.data(), sizeof(float) * M * N), 0);
  }
  // ... and they agree with the reference to rounding.
  Case c;
  c.M = M;
  c.N = N;
  c.K = K;
  c.cfg = cfgs.front();
  const Outcome o = run_case<float, float>(c);
  EXPECT_LE(o.err, o.tol);
}

TEST(MatmulSplitK, MoreTilesAfterMoreSplitsFindTheirCountersAtZero) {
  // One workspace holds the arrival counters (one int per tile) and, after them, the partial tiles.
  // A launch with 64 tiles and 16 splits needs 256 bytes of counters and writes partial sums after
  // them; a following launch with 72 tiles and 2 splits fits in the same buffer (no reallocation, so
  // nothing re-zeroed) but needs 288 bytes of counters. Were the partial sums placed right after each
  // launch's own counters, tiles 64..71 would count on the first launch's partial sums (a non-zero
  // count: no team is ever the last, C is never written and stays NaN; this failed with relative
  // error inf before acquire_split_k_workspace kept the largest counter region).
  std::vector<MatmulConfig> tiles;
  for (const MatmulConfig& cfg : split_k_configs())
    if (std::none_of(tiles.begin(), tiles.end(), [&](const MatmulConfig& t) { return t.tile_name() == cfg.tile_name(); }))
      tiles.push_back(cfg);
  if (tiles.empty()) GTEST_SKIP() << "no tile splits K on " << backend_name() << " (CUDA SIMT tiles only)";
  for (MatmulConfig cfg : tiles) {
    SCOPED_TRACE(cfg.name());
    cfg.k_splits = 16;  // 8 x 8 tiles, 16 K steps: 16 partial tiles each
    const int64_t M1 = 8 * cfg.bm, N1 = 8 * cfg.bn, K1 = 16 * cfg.bk;
    Kokkos::View<float**, Kokkos::LayoutLeft> A("A", M1, K1), B("B", K1, N1), C("C", M1, N1);
    fill_random(A.data(), M1 * K1, 41);
    fill_random(B.data(), K1 * N1, 42);
    matmul(Op::N, Op::N, 1.0f, A, B, 0.0f, C, cfg);
    Case c;  // 9 x 8 tiles, 2 splits of 2 K steps
    c.M = 9 * cfg.bm;
    c.N = 8 * cfg.bn;
    c.K = 4 * cfg.bk;
    c.cfg = cfg;
    c.cfg->k_splits = 2;
    c.nan_in_c = true;
    SCOPED_TRACE(c.describe());
    const Outcome o = run_case<float, float>(c);
    EXPECT_LE(o.err, o.tol) << "relative error " << o.err << " over tolerance " << o.tol;
  }
}

// --- TF32 math (f32 inputs, opt-in): the TF32 tensor-core tiles, on CUDA sm_80+ -------------------

/// The TF32 tensor-core configs of this build's menu that this device runs (none off CUDA sm_80+).
std::vector<MatmulConfig> tf32_tile_configs() {
  std::vector<MatmulConfig> out;
  MatmulProblem<float, float> none;  // 0 x 0 x 0: only the config and the device are checked
  none.math = Math::tf32;
  for (const MatmulConfig& c : menu_configs())
    if (c.mma && tilekit::tile_supports(c, DType::f32, Math::tf32) && check_matmul(none, c).empty() &&
        std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  return out;
}

/// Runs c with TF32 math, expects it to match the reference, and returns what the launch ran.
MatmulLaunchReport expect_tf32_matches(Case c) {
  c.math = Math::tf32;
  SCOPED_TRACE(c.describe());
  const Outcome o = run_case<float, float>(c);
  EXPECT_LE(o.err, o.tol) << "relative error " << o.err << " over tolerance " << o.tol;
  EXPECT_EQ(o.padding_changed, 0) << "the run wrote outside C";
  return o.launched;
}

TEST(MatmulTf32, EveryTf32TileMatchesReferenceInEveryLayoutSizeAndEpilogue) {
  const auto tiles = tf32_tile_configs();
  if (tiles.empty()) GTEST_SKIP() << "no TF32 tensor-core tile runs on " << backend_name() << " here";
  for (const MatmulConfig& cfg : tiles) {
    for (int bits = 0; bits < 32; ++bits) {  // storage orders, transposes, odd leading dimensions
      Case c;
      c.M = 37, c.N = 29, c.K = 71;
      c.a_col = bits & 1, c.trans_a = bits & 2, c.b_col = bits & 4, c.trans_b = bits & 8, c.c_col = bits & 16;
      c.pad_a = bits % 3, c.pad_b = (bits / 3) % 3, c.pad_c = 1 + bits % 2;
      c.beta = 1.0;
      c.cfg = cfg;
      expect_tf32_matches(c);
    }
    for (const auto& s : kAwkwardSizes) {  // M, N, K tails; K smaller than one stage
      Case c;
      c.M = s[0], c.N = s[1], c.K = s[2];
      c.cfg = cfg;
      expect_tf32_matches(c);
    }
    for (int bits = 0; bits < 8; ++bits) {  // 16-byte copies inside, masked edges
      Case c;
      c.M = 200, c.N = 136, c.K = 88;
      c.a_col = bits & 1, c.b_col = bits & 2, c.c_col = bits & 4;
      c.beta = 0.5;
      c.cfg = cfg;
      expect_tf32_matches(c);
    }
    for (Activation act : {Activation::leaky_relu, Activation::gelu}) {
      Case c;
      c.M = 45, c.N = 70, c.K = 33;
      c.beta = 0.5;
      c.ep = Epilogue{true, act};
      c.cfg = cfg;
      expect_tf32_matches(c);
    }
    for (int64_t k : {0, 1, 50}) {  // beta = 0 never reads C, even NaN
      Case c;
      c.M = 70, c.N = 33, c.K = k;
      c.nan_in_c = true;
      c.cfg = cfg;
      expect_tf32_matches(c);
    }
  }
}

TEST(MatmulTf32, Tf32TilesRoundTheInputsToTf32) {
  // A = 1 + 2^-20 (below TF32's 10-bit fraction), B = 1, K = 8: TF32 math gives exactly 8, IEEE f32
  // gives 8 + 8 * 2^-20. A tile that silently computed in f32 would fail here.
  const auto tiles = tf32_tile_configs();
  if (tiles.empty()) GTEST_SKIP() << "no TF32 tensor-core tile runs on " << backend_name() << " here";
  const int64_t M = 32, N = 16, K = 8;
  Kokkos::View<float**, Kokkos::LayoutLeft> A("A", M, K), B("B", K, N), C("C", M, N);
  Kokkos::deep_copy(A, 1.0f + std::ldexp(1.0f, -20));
  Kokkos::deep_copy(B, 1.0f);
  for (const MatmulConfig& cfg : tiles) {
    auto p = matmul_problem(Op::N, Op::N, 1.0f, A, B, 0.0f, C, Activation::none, Kokkos::View<const float*>());
    p.math = Math::tf32;
    run_matmul(p, cfg);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
    EXPECT_EQ(h(0, 0), 8.0f) << cfg.name();
    EXPECT_EQ(h(M - 1, N - 1), 8.0f) << cfg.name();
  }
}

TEST(MatmulTf32, WarpSpecialisedTf32TileReadsOperandsInEveryStorageOrder) {
  // wgmma reads 32-bit operands from scratch only K-major. The TF32 warp-specialised tile loads
  // op(A) and op(B) through TMA as they are where they are K-major with 16-byte aligned pitches; an
  // A stored along M likewise, its fragments going to the MMAs from registers; a B stored along N
  // (with A along K, no bias) as the transposed product, whose A it then is; it packs what is left
  // into K-major copies first, and everything that is not K-major when the options ask for that or
  // the tile is wider than kTf32ARegistersMaxBN.
  // Every storage order with ragged edges (200 = 128 + 72 rows, 264 = 256 + 8 columns, 712 = 22 x
  // 32 + 8: 23 K steps, every stage buffer and barrier reused), with whole-vector and odd pitches,
  // must match, and load as described.
  std::vector<MatmulConfig> ws;
  for (const MatmulConfig& c : tf32_tile_configs())
    if (c.ws) ws.push_back(c);
  if (ws.empty()) GTEST_SKIP() << "no warp-specialised TF32 tile runs here (it needs sm_90a code on a compute 9.0 GPU)";
  for (const MatmulConfig& cfg : ws) {
    for (int bits = 0; bits < 64; ++bits) {
      Case c;
      c.M = 200, c.N = 264, c.K = 712;
      c.a_col = bits & 1, c.b_col = bits & 2, c.c_col = bits & 4;
      const bool odd_pitch = bits & 8;
      if (odd_pitch) c.pad_a = c.pad_b = c.pad_c = 1;
      c.launch.ws_pack_mn_major = bits & 16;
      c.ep.bias = bits & 32;  // no transposed product with a bias
      c.beta = 0.5;
      c.cfg = cfg;
      const MatmulLaunchReport launched = expect_tf32_matches(c);
      // (the tiles wider than kTf32ARegistersMaxBN pack every such operand)
      const bool a_k = !c.a_col, b_k = c.b_col, pack = c.launch.ws_pack_mn_major || cfg.bn > kTf32ARegistersMaxBN;
      const bool transposed = !pack && !c.ep.bias && a_k && !b_k;
      // the product the kernel runs: its A along K, and its B along K
      const bool ka = transposed ? b_k : a_k, kb = transposed ? a_k : b_k;
      const bool a_in_registers = !pack && !ka && !odd_pitch;
      // odd pitches: no operand is a TMA map as it is
      const bool packed = odd_pitch || (!ka && !a_in_registers) || !kb;
      std::string expected = packed ? "tma (packed)" : "tma";
      if (a_in_registers) expected += ", A along M in registers";
      if (transposed) expected += ", transposed product";
      EXPECT_EQ(launched.ws_loads, expected) << c.describe();
    }
  }
}

TEST(MatmulTf32, WarpSpecialisedTf32TileMatchesReferenceWithOneOrSeveralTilesATeam) {
  // As WarpSpecialisedTilesMatchReferenceWithOneOrSeveralTilesATeam, for the TF32 tile (f32 C).
  std::vector<MatmulConfig> ws;
  for (const MatmulConfig& c : tf32_tile_configs())
    if (c.ws) ws.push_back(c);
  if (ws.empty()) GTEST_SKIP() << "no warp-specialised TF32 tile runs here (it needs sm_90a code on a compute 9.0 GPU)";
  for (const MatmulConfig& cfg : ws) {
    for (const Case& c : ws_grid_cases(cfg, true)) {
      SCOPED_TRACE(fmt::format("grid cap {}", c.launch.ws_team_cap));
      expect_tf32_matches(c);
    }
  }
}

TEST(MatmulTf32, WarpSpecialisedTf32TileStoresCThroughTmaWhereCAllowsIt) {
  // As WarpSpecialisedTilesStoreCThroughTmaWhereCAllowsIt, for the TF32 tile (f32 C: boxes of 32
  // columns). Row-major B runs as the transposed product on the tiles that read A through
  // registers, whose C (C^T) is column-major: stored from registers; with B packed instead, TMA.
  std::vector<MatmulConfig> ws;
  for (const MatmulConfig& c : tf32_tile_configs())
    if (c.ws) ws.push_back(c);
  if (ws.empty()) GTEST_SKIP() << "no warp-specialised TF32 tile runs here (it needs sm_90a code on a compute 9.0 GPU)";
  for (const MatmulConfig& cfg : ws) {
    for (Case c : ws_tma_store_cases(cfg, true)) {
      SCOPED_TRACE(fmt::format("grid cap {}", c.launch.ws_team_cap));
      const MatmulLaunchReport as_given = expect_tf32_matches(c);
      if (as_given.ws_loads.find("transposed product") != std::string::npos) {
        EXPECT_EQ(as_given.ws_stores, "registers: 32-bit C is not row-major") << c.describe();
        c.launch.ws_pack_mn_major = true;
      }
      EXPECT_EQ(expect_tf32_matches(c).ws_stores, "tma") << c.describe();
      c.launch.ws_register_stores = true;
      EXPECT_EQ(expect_tf32_matches(c).ws_stores, "registers: asked for") << c.describe();
    }
    for (const auto& [c, why] : ws_register_store_cases(cfg, true))
      EXPECT_EQ(expect_tf32_matches(c).ws_stores, why) << c.describe();
  }
}

TEST(MatmulTf32, Tf32TilesSplitK) {
  // Split K on the TF32 tiles that split (the warp-specialised ones and the mma.sync ones; 32-deep
  // steps): K = 1000 (32 steps, 3 splits of 11, 11 and 10; ragged last step) and K = 70 (3 steps, 16
  // splits become 3), operands packed K-major where the ws tiles need it, beta, a bias with an
  // activation.
  int n = 0;
  for (MatmulConfig cfg : tf32_tile_configs()) {
    if (!tilekit::tile_splits_k(cfg)) continue;
    for (int s : {3, 16}) {
      for (int i = 0; i < 4; ++i, ++n) {
        cfg.k_splits = s;
        Case c;
        c.M = 200, c.N = 264, c.K = n % 2 ? 1000 : 70;
        c.a_col = n & 1, c.b_col = n & 2, c.c_col = n & 4;
        c.beta = n % 3 == 0 ? 0.0 : 0.5;
        c.nan_in_c = c.beta == 0.0;
        c.ep.bias = n % 2 == 0;
        c.ep.act = n % 4 == 0 ? Activation::gelu : Activation::none;
        c.cfg = cfg;
        const std::string kernel = expect_tf32_matches(c).kernel;
        EXPECT_NE(kernel.find("split K x"), std::string::npos) << c.describe() << ": " << kernel;
      }
    }
  }
  if (n == 0) GTEST_SKIP() << "no TF32 tile that splits K runs here (CUDA sm_80+)";
}

TEST(MatmulTf32, WarpSpecialisedTf32TilePacksARepeatedRowOrColumn) {
  // A row pitch of 0 (one row of op(A) or one column of op(B) repeated) is no TMA map: packed.
  std::vector<MatmulConfig> ws;
  for (const MatmulConfig& c : tf32_tile_configs())
    if (c.ws) ws.push_back(c);
  if (ws.empty()) GTEST_SKIP() << "no warp-specialised TF32 tile runs here (it needs sm_90a code on a compute 9.0 GPU)";
  for (const MatmulConfig& cfg : ws) {
    for (int which = 0; which < 3; ++which) {
      Case c;
      c.M = 200, c.N = 264, c.K = 712;
      c.a_row_repeated = which != 1;
      c.b_col_repeated = which != 0;
      c.cfg = cfg;
      const std::string loads = expect_tf32_matches(c).ws_loads;
      EXPECT_EQ(loads.rfind("tma (packed)", 0), 0u) << c.describe() << ": " << loads;
    }
  }
}

TEST(MatmulTf32, Tf32TileWithoutTheOptInIsRefused) {
  const auto tiles = tf32_tile_configs();
  if (tiles.empty()) GTEST_SKIP() << "no TF32 tensor-core tile runs on " << backend_name() << " here";
  Case c;
  c.M = c.N = c.K = 32;
  c.cfg = tiles.front();
  try {
    run_case<float, float>(c);  // math ieee
    ADD_FAILURE() << "a TF32 tile ran without math tf32";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("math tf32"), std::string::npos) << e.what();
  }
}

TEST(MatmulTf32, MathTf32IsRefusedForOtherInputTypes) {
  MatmulProblem<double, double> p;
  p.math = Math::tf32;
  const std::string why = check_matmul(p, default_config<double>());
  EXPECT_NE(why.find("math tf32 applies to f32 inputs only (got f64"), std::string::npos) << why;
}

TEST(MatmulTf32, DefaultConfigWithTf32MathRunsOnEveryBackend) {
  // Where no TF32 tile runs, the default with math tf32 is the IEEE default (tf32 permits, never
  // requires, TF32); on CUDA sm_80+ it is a TF32 tile.
  const MatmulConfig def = tuning::default_matmul_config(backend_name(), DType::f32, Math::tf32);
  EXPECT_EQ(def.mma, !tf32_tile_configs().empty()) << def.name();
  Case c;
  c.M = 150, c.N = 97, c.K = 300;
  c.beta = 1.0;
  expect_tf32_matches(c);
}

// --- the thin kernel: M or N up to tilekit::kThinMaxRows ---------------------------------------------

// Matrix-vector products both ways, every row class (1, 4, 16) and its edges, K = 0, K not a
// multiple of the staged depth, a dot product, and column counts that leave partial team blocks.
const std::vector<std::array<int64_t, 3>> kThinSizes = {
    {1, 300, 77},  {300, 1, 77},  {16, 200, 130}, {200, 16, 300}, {5, 600, 257}, {3, 3, 1000},
    {1, 1, 1},     {7, 1, 0},     {1, 513, 0},    {9, 1000, 3},   {1, 2000, 600}, {4, 129, 1},
    {20000, 1, 3}};  // (host default: 2048-column blocks and a ragged last one)

TYPED_TEST(MatmulTyped, ThinConfigsMatchReferenceInEveryStorageOrder) {
  using TIn = typename TestFixture::TIn;
  std::vector<MatmulConfig> cfgs = tuning::thin_search_space();
  int n = 0;
  for (const auto& s : kThinSizes) {
    cfgs.push_back(tuning::default_matmul_config(backend_name(), TypeTraits<TIn>::dtype, s[0], s[1], s[2]));
    ASSERT_TRUE(cfgs.back().thin) << "the default of a thin shape is a thin config";
    for (const MatmulConfig& cfg : cfgs) {
      Case c;
      c.M = s[0];
      c.N = s[1];
      c.K = s[2];
      c.cfg = cfg;
      // Storage orders, transposes and padding cycle through the configs, so each shape meets W
      // contiguous along K and along L (the two lane mappings) and both output orders.
      c.a_col = n & 1;
      c.trans_a = n & 2;
      c.b_col = n & 4;
      c.trans_b = n & 8;
      c.c_col = n & 16;
      c.pad_a = n % 3;
      c.pad_c = n % 2;
      c.beta = n % 3 ? 0.5 : 0.0;
      c.ep.bias = n % 4 == 0;
      // Every activation the type allows (each one's finishing loops are compiled apart on hosts)
      static constexpr Activation kFloatActs[] = {Activation::relu, Activation::none, Activation::leaky_relu,
                                                  Activation::silu, Activation::gelu};
      c.ep.act = TestFixture::integer ? (n % 5 == 0 ? Activation::relu : Activation::none) : kFloatActs[n % 5];
      ++n;
      this->expect_matches(c);
    }
    cfgs.pop_back();
  }
}

TEST(MatmulDefaults, HalfPrecisionTakesTheWarpSpecialisedTilesWhereTheyFillTheGpu) {
  // 128x256 where K >= 2048 and its tiles fill 7/8 of the SMs (group_m 16 from 256 K steps, else 8);
  // else 64x128 where its tiles fill half of them; else the 64x64 ws tile.
  const std::string backend = backend_name();
  const MatmulConfig square = tuning::default_matmul_config(backend, DType::f16, 2048, 2048, 2048);
  if (!square.wgmma) GTEST_SKIP() << "no warpgroup-MMA default on this backend/device";
  auto big = [](const MatmulConfig& c) { return c.ws && c.bm == 128 && c.bn == 256; };
  auto mid = [](const MatmulConfig& c) { return c.ws && c.bm == 64 && c.bn == 128; };
  auto small = [](const MatmulConfig& c) { return c.ws && c.bm == 64 && c.bn == 64; };
  for (DType t : {DType::f16, DType::bf16}) {
    EXPECT_TRUE(big(tuning::default_matmul_config(backend, t, 2048, 2048, 2048)));
    EXPECT_TRUE(big(tuning::default_matmul_config(backend, t, 4096, 4096, 4096)));
    EXPECT_TRUE(big(tuning::default_matmul_config(backend, t, 9728, 8192, 65536)));
    // Grouped order over 16 tile rows where the K loop is long enough for two-team clusters, else 8
    EXPECT_EQ(tuning::default_matmul_config(backend, t, 9728, 8192, 65536).group_m, 16);
    EXPECT_EQ(tuning::default_matmul_config(backend, t, 8192, 8192, 16384).group_m, 16);
    EXPECT_EQ(tuning::default_matmul_config(backend, t, 8192, 8192, 16320).group_m, 8) << "255 K steps";
    EXPECT_EQ(tuning::default_matmul_config(backend, t, 4096, 4096, 4096).group_m, 8);
    EXPECT_TRUE(mid(tuning::default_matmul_config(backend, t, 8192, 8192, 1024))) << "K under 2048";
    EXPECT_TRUE(mid(tuning::default_matmul_config(backend, t, 1024, 1024, 1024)));
    EXPECT_TRUE(mid(tuning::default_matmul_config(backend, t, 1024, 1024, 8192))) << "64 tiles of 128x256";
    // Deep, but 32 tiles of 64x128 leave most SMs idle: the small tile
    EXPECT_TRUE(small(tuning::default_matmul_config(backend, t, 512, 512, 65536)));
    EXPECT_TRUE(small(tuning::default_matmul_config(backend, t, 512, 512, 512)));
  }
  EXPECT_FALSE(tuning::default_matmul_config(backend, DType::f64, 8192, 8192, 65536).ws);
}

TEST(MatmulDefaults, DoubleTakesTheSmallTensorCoreTileWhereTheLargeOneLeavesSmsIdle) {
  // CUDA sm_80+: the 128x64 DMMA tile where its tiles number at least the SMs, else 64x64 (two teams
  // an SM); on a GPU of 100+ SMs 1024^3 has 128 tiles of 128x64 and takes 64x64, 2048^3 (512) not.
  const std::string backend = backend_name();
  const MatmulConfig big = tuning::default_matmul_config(backend, DType::f64, 2048, 2048, 2048);
  if (!big.mma) GTEST_SKIP() << "no tensor-core f64 default on this backend/device";
  const int64_t sms = Kokkos::DefaultExecutionSpace().concurrency() / 2048;
  EXPECT_EQ(big.bm, 128) << big.name();
  EXPECT_EQ(big.bn, 64) << big.name();
  for (int64_t n : {int64_t(512), int64_t(1024), int64_t(1536)}) {
    const MatmulConfig c = tuning::default_matmul_config(backend, DType::f64, n, n, n);
    const int64_t big_tiles = ((n + 127) / 128) * ((n + 63) / 64);
    EXPECT_TRUE(c.mma) << c.name();
    EXPECT_EQ(c.bm, big_tiles < sms ? 64 : 128) << n << "^3 on " << sms << " SMs: " << c.name();
    EXPECT_EQ(c.bn, 64) << c.name();
  }
}

TEST(MatmulDefaults, HostThinColumnBlocksKeepTheirRunningSumsInL1) {
  // Host backends: a thin team's block of columns holds row class x columns sums of the compute
  // type, at most kThinHostSumsBytes; long products take the largest such block (one f32 row: 4096).
  const std::string backend = backend_name();
  if (tilekit::is_gpu_space<Kokkos::DefaultExecutionSpace>()) GTEST_SKIP() << "host defaults only";
  struct Want {
    DType t;
    int64_t M, N, K, row_class, bytes;
  };
  for (const Want& w : {Want{DType::f32, 1048576, 1, 1, 1, 4}, Want{DType::f64, 1048576, 1, 1, 1, 8},
                        Want{DType::f32, 4, 1048576, 64, 4, 4}, Want{DType::f16, 1048576, 16, 8, 16, 4},
                        Want{DType::i8, 3, 1048576, 8, 4, 4}}) {
    const MatmulConfig c = tuning::default_matmul_config(backend, w.t, w.M, w.N, w.K);
    ASSERT_TRUE(c.thin) << c.name();
    EXPECT_EQ(int64_t(c.thin_cols) * w.row_class * w.bytes, tilekit::kThinHostSumsBytes)
        << dtype_name(w.t) << " " << w.M << "x" << w.N << "x" << w.K << ": " << c.name();
  }
  // A short product keeps kThinHostTeamsPerThread blocks per thread instead
  const MatmulConfig short_one = tuning::default_matmul_config(backend, DType::f32, 1, 512, 64);
  EXPECT_LT(int64_t(short_one.thin_cols) * 4, tilekit::kThinHostSumsBytes) << short_one.name();
}

TEST(MatmulDefaults, F32SplitsKWhereEvenTheSmallTilesLeaveSmsIdle) {
  // CUDA: 512^3 has 64 tiles of 64x64 for 132 SMs: split in 4 (256 teams); 1024^3 (256 tiles) and
  // shallow or one-step K do not split; host backends never do.
  const std::string backend = backend_name();
  const MatmulConfig small = tuning::default_matmul_config(backend, DType::f32, 512, 512, 512);
  EXPECT_EQ(tuning::default_matmul_config(backend, DType::f32, 1024, 1024, 1024).k_splits, 1);
  EXPECT_EQ(tuning::default_matmul_config(backend, DType::f32, 512, 512, 16).k_splits, 1);
  EXPECT_EQ(tuning::default_matmul_config(backend, DType::f64, 512, 512, 512).k_splits, 1);
  if (backend != "cuda" || Kokkos::DefaultExecutionSpace().concurrency() / 2048 < 100) {
    EXPECT_EQ(small.k_splits, 1) << small.name();
    return;
  }
  EXPECT_EQ(small.k_splits, 4) << small.name();
  EXPECT_TRUE(tilekit::tile_splits_k(small)) << small.name();
  EXPECT_EQ(check_matmul(MatmulProblem<float, float>{}, small), "");
}

TEST(MatmulDefaults, Tf32TakesTheWarpSpecialisedTileWhereItFillsTheGpu) {
  const std::string backend = backend_name();
  const MatmulConfig big = tuning::default_matmul_config(backend, DType::f32, 4096, 4096, 4096, Math::tf32);
  if (!tuning::default_matmul_config(backend, DType::f16, 4096, 4096, 4096).wgmma)
    GTEST_SKIP() << "no warpgroup-MMA default on this backend/device";
  EXPECT_TRUE(big.ws && big.bk == 32) << big.name();
  EXPECT_TRUE(tuning::default_matmul_config(backend, DType::f32, 8192, 8192, 8192, Math::tf32).ws);
  EXPECT_TRUE(tuning::default_matmul_config(backend, DType::f32, 2048, 2048, 2048, Math::tf32).ws);
  // Where the 128x256 tiles leave SMs idle, the 64x128 TF32 ws tile (from 1/8 of the SMs)
  auto mid = [](const MatmulConfig& c) { return c.ws && c.bk == 32 && c.bm == 64 && c.bn == 128; };
  EXPECT_TRUE(mid(tuning::default_matmul_config(backend, DType::f32, 1024, 1024, 1024, Math::tf32)));
  EXPECT_TRUE(mid(tuning::default_matmul_config(backend, DType::f32, 256, 1024, 4096, Math::tf32)));
  // 8 tiles of 64x128 on a GPU of 100 SMs or more: the mma.sync tile's 128x128 tiles
  EXPECT_FALSE(tuning::default_matmul_config(backend, DType::f32, 128, 512, 4096, Math::tf32).ws);
  // IEEE f32 never takes a tensor-core tile
  EXPECT_FALSE(tuning::default_matmul_config(backend, DType::f32, 4096, 4096, 4096).mma);
}

TYPED_TEST(MatmulTyped, ThinRunsAreBitwiseIdentical) {
  // K split across a team's threads is reduced in a fixed order: the same config gives the same bits.
  using TIn = typename TestFixture::TIn;
  using TOut = typename TestFixture::TOut;
  const int64_t M = 8, N = 3000, K = 2500;
  const MatmulConfig cfg = tuning::default_matmul_config(backend_name(), TypeTraits<TIn>::dtype, M, N, K);
  Kokkos::View<TIn**, Kokkos::LayoutLeft> A("A", M, K), B("B", K, N);
  Kokkos::View<TOut**, Kokkos::LayoutLeft> C1("C1", M, N), C2("C2", M, N);
  fill_random(A.data(), M * K, 21);
  fill_random(B.data(), K * N, 22);
  matmul(Op::N, Op::N, 1, A, B, 0, C1, cfg);
  matmul(Op::N, Op::N, 1, A, B, 0, C2, cfg);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C1);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C2);
  EXPECT_EQ(std::memcmp(h1.data(), h2.data(), sizeof(TOut) * M * N), 0);
}

// --- the View API, wider accumulation, and rejection of bad input -------------------------------

TEST(MatmulViews, LayoutLeftRightAndStrideSubviewsGiveTheSameProduct) {
  const int64_t M = 40, N = 50, K = 30;
  Kokkos::View<float**, Kokkos::LayoutRight> A("A", M, K);
  Kokkos::View<float**, Kokkos::LayoutLeft> B("B", K, N);
  Kokkos::View<float**, Kokkos::LayoutRight> C1("C1", M, N);
  Kokkos::View<float**, Kokkos::LayoutLeft> big("big", M + 7, N + 9);
  fill_random(A.data(), M * K, 1);
  fill_random(B.data(), K * N, 2);
  auto C2 = Kokkos::subview(big, std::make_pair<int64_t, int64_t>(3, 3 + M), std::make_pair<int64_t, int64_t>(5, 5 + N));
  static_assert(std::is_same<decltype(C2)::array_layout, Kokkos::LayoutStride>::value ||
                    std::is_same<decltype(C2)::array_layout, Kokkos::LayoutLeft>::value,
                "subview layout");
  matmul(Op::N, Op::N, 1.0f, A, B, 0.0f, C1, default_config());
  matmul(Op::N, Op::N, 1.0f, A, B, 0.0f, C2, default_config());
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C1);
  auto hbig = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), big);
  for (int64_t i = 0; i < M + 7; ++i)
    for (int64_t j = 0; j < N + 9; ++j) {
      const bool inside = i >= 3 && i < 3 + M && j >= 5 && j < 5 + N;
      if (inside)
        ASSERT_EQ(hbig(i, j), h1(i - 3, j - 5)) << i << "," << j;
      else
        ASSERT_EQ(hbig(i, j), 0.0f) << "wrote outside the subview at " << i << "," << j;
    }
}

// dst = src^T on the device (a free function: nvcc rejects device lambdas inside TEST bodies).
template <class V>
void transpose_into(const V& src, const V& dst) {
  Kokkos::parallel_for(
      "transpose", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {int64_t(src.extent(0)), int64_t(src.extent(1))}),
      KOKKOS_LAMBDA(int64_t i, int64_t j) { dst(j, i) = src(i, j); });
}

TEST(MatmulViews, TransposedViewsComputeTheTransposedProduct) {
  // C^T = B^T A^T: computing with op = T on the stored transposes must give the same C.
  const int64_t M = 23, N = 31, K = 17;
  Kokkos::View<double**, Kokkos::LayoutRight> A("A", M, K), B("B", K, N), At("At", K, M), Bt("Bt", N, K);
  Kokkos::View<double**, Kokkos::LayoutRight> C1("C1", M, N), C2("C2", M, N);
  fill_random(A.data(), M * K, 3);
  fill_random(B.data(), K * N, 4);
  transpose_into(A, At);
  transpose_into(B, Bt);
  matmul(Op::N, Op::N, 1.0, A, B, 0.0, C1, default_config<double>());
  matmul(Op::T, Op::T, 1.0, At, Bt, 0.0, C2, default_config<double>());
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C1);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C2);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) ASSERT_EQ(h1(i, j), h2(i, j));
}

TEST(MatmulAccumulation, F16InputsAccumulateInF32) {
  // 4097 products of 1 x 1: an f16 accumulator would stick at 2048 (2049 is not representable).
  const int64_t M = 3, N = 5, K = 4097;
  Kokkos::View<f16**, Kokkos::LayoutRight> A("A", M, K), B("B", K, N);
  Kokkos::View<float**, Kokkos::LayoutRight> C("C", M, N);
  fill_value(A.data(), M * K, f16(1.0f));
  fill_value(B.data(), K * N, f16(1.0f));
  matmul(Op::N, Op::N, 1.0f, A, B, 0.0f, C, default_config<f16>());
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) EXPECT_EQ(h(i, j), 4097.0f);
}

TEST(MatmulAccumulation, I8InputsAccumulateInI32Exactly) {
  const int64_t M = 4, N = 4, K = 1000;
  Kokkos::View<int8_t**, Kokkos::LayoutRight> A("A", M, K), B("B", K, N);
  Kokkos::View<int32_t**, Kokkos::LayoutRight> C("C", M, N);
  fill_value(A.data(), M * K, int8_t(-128));
  fill_value(B.data(), K * N, int8_t(127));
  matmul(Op::N, Op::N, 1, A, B, 0, C, default_config<int8_t>(), Activation::none);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  EXPECT_EQ(h(3, 2), -128 * 127 * 1000);
}

std::string rejection(const MatmulConfig& cfg, int64_t M = 8, int64_t N = 8, int64_t K = 8) {
  Kokkos::View<float**> A("A", M, K), B("B", K, N), C("C", M, N);
  try {
    matmul(Op::N, Op::N, 1.0f, A, B, 0.0f, C, cfg);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(MatmulRejects, TileOutsideTheMenuNamingTheAllowedTiles) {
  MatmulConfig cfg = default_config();
  cfg.bm = 48;
  const std::string why = rejection(cfg);
  EXPECT_NE(why.find("not in the"), std::string::npos) << why;
  EXPECT_NE(why.find(tilekit::menu_names()), std::string::npos) << why;
}

TEST(MatmulRejects, TeamShapesTheBackendCannotRun) {
  MatmulConfig cfg = default_config();
  cfg.vector_length = 3;
  EXPECT_NE(rejection(cfg).find("vector_length"), std::string::npos);
  cfg = default_config();
  cfg.team_size = 100000;
  EXPECT_NE(rejection(cfg).find("team_size"), std::string::npos);
  cfg = default_config();
  cfg.group_m = 0;
  EXPECT_NE(rejection(cfg).find("group_m"), std::string::npos);
}

TEST(MatmulRejects, SplitKOutsideItsTilesAndBackendAndOutOfRange) {
  MatmulConfig cfg = default_config();
  cfg.k_splits = 0;
  EXPECT_NE(rejection(cfg).find("k_splits (_s) must be in 1..16"), std::string::npos) << rejection(cfg);
  cfg.k_splits = 17;
  EXPECT_NE(rejection(cfg).find("(got 17)"), std::string::npos) << rejection(cfg);
  // The default tile of every backend does not split K (CUDA's is the one-team 256x128 or 128x128
  // tile; host backends have no split tile): refused, naming the tiles that may.
  cfg.k_splits = 2;
  const std::string why = rejection(cfg);
  EXPECT_NE(why.find("split K (_s2) runs on CUDA with the SIMT tiles"), std::string::npos) << why;
  if (backend_name() != "cuda") {
    EXPECT_NE(why.find("this build's backend is " + backend_name()), std::string::npos) << why;
  }
}

TEST(MatmulRejects, ThinConfigsOutsideThinShapesAndTeamShapesTheBackendCannotRun) {
  MatmulConfig cfg;
  std::string why;
  ASSERT_TRUE(MatmulConfig::parse("thin_l64_k4", cfg, why)) << why;
  const std::string wide = rejection(cfg, 17, 17, 8);
  EXPECT_NE(wide.find("M or N at most 16"), std::string::npos) << wide;
  EXPECT_NE(wide.find("M=17, N=17"), std::string::npos) << wide;
  ASSERT_TRUE(MatmulConfig::parse("thin_l5_k3", cfg, why)) << why;
  const std::string shape = rejection(cfg, 1, 64, 64);
  if (tilekit::is_gpu_space<Kokkos::DefaultExecutionSpace>())
    EXPECT_NE(shape.find("multiple of 32"), std::string::npos) << shape;
  else
    EXPECT_NE(shape.find("kgroups must be 1"), std::string::npos) << shape;
  EXPECT_FALSE(MatmulConfig::parse("thin_l64", cfg, why));
  EXPECT_NE(why.find("thin_l<int>_k<int>"), std::string::npos) << why;
}

TEST(MatmulRejects, MismatchedShapesAndBias) {
  Kokkos::View<float**> A("A", 4, 5), B("B", 6, 7), C("C", 4, 7);
  EXPECT_THROW(matmul(Op::N, Op::N, 1.0f, A, B, 0.0f, C, default_config()), InvalidArgument);
  Kokkos::View<float**> B2("B2", 5, 7);
  Kokkos::View<float*> bias("bias", 6);
  try {
    matmul(Op::N, Op::N, 1.0f, A, B2, 0.0f, C, default_config(), Activation::none, bias);
    FAIL() << "a bias of 6 values for 7 columns was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("one per column"), std::string::npos) << e.what();
  }
}

TEST(MatmulRejects, OverlappingOutputStrides) {
  Kokkos::View<float*> buf("buf", 64);
  MatmulProblem<float, float> p;
  p.M = p.N = 4;
  p.K = 0;
  p.a = {buf.data(), 4, 0, 1, 1};
  p.b = {buf.data(), 0, 4, 1, 1};
  p.c = {buf.data(), 4, 4, 2, 1};  // rows overlap: row stride 2 < 4 columns
  EXPECT_NE(check_matmul(p, default_config()).find("overlap"), std::string::npos);
}

TEST(MatmulRejects, NonReluActivationsForIntegerAccumulators) {
  Kokkos::View<int8_t**> A("A", 4, 4), B("B", 4, 4);
  Kokkos::View<int32_t**> C("C", 4, 4);
  try {
    matmul(Op::N, Op::N, 1, A, B, 0, C, default_config<int8_t>(), Activation::gelu);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("allowed activations: none, relu, each with or without a bias (epilogues none, bias, relu, bias+relu)"), std::string::npos) << e.what();
  }
}

TEST(MatmulRejects, AnActivationOutsideTheEnum) {
  // A library caller can cast any int to Activation; the kernels (one per activation on the
  // warp-specialised tiles) are only compiled for the five.
  Kokkos::View<float**> A("A", 4, 4), B("B", 4, 4), C("C", 4, 4);
  try {
    matmul(Op::N, Op::N, 1, A, B, 0, C, default_config<float>(), static_cast<Activation>(7));
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("activation 7 (as an int) is not an Activation"), std::string::npos)
        << e.what();
  }
}

}  // namespace

namespace {

/// C = op(A) op(B) + 0.5 C + bias, then `act`, 200 x 264 x K (three K panels, ragged edges),
/// row-major (Layout: LayoutRight) or column-major (LayoutLeft), with `cfg`; C copied to the host.
template <class T, class Layout = Kokkos::LayoutRight>
std::vector<T> host_path_product(const MatmulConfig& cfg, Activation act, int64_t K = 712, int64_t M = 200,
                                 int64_t N = 264) {
  Kokkos::View<T**, Layout> A("A", M, K), B("B", K, N), C("C", M, N);
  Kokkos::View<T*> bias("bias", N);
  fill_random(A.data(), M * K, 11);
  fill_random(B.data(), K * N, 12);
  fill_random(C.data(), M * N, 13);
  fill_random(bias.data(), N, 14);
  matmul(Op::N, Op::N, T(1), A, B, T(0.5), C, cfg, act, bias);
  Kokkos::fence();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  return std::vector<T>(h.data(), h.data() + M * N);
}

/// The operand whose rows run along K (A of a row-major product, B of a column-major one, which the
/// host kernel computes transposed) is packed by register transposes on the x86 paths and a value at
/// a time on the portable one; with K = 715 the last panel's depth (203) leaves a tail of k values
/// that no whole transpose covers. Every path's product must match bit for bit (with FMAs in the
/// baseline).
template <class T, class Layout>
void expect_transposed_packing_agrees() {
  std::vector<MatmulConfig> tiles;
  for (const MatmulConfig& cfg : runnable_menu_tiles<T, T>())
    if (!cfg.thin && cfg.team_size == 1) tiles.push_back(cfg);
  if (tiles.size() < 2) GTEST_SKIP() << "one host path here";
  const std::vector<T> first = host_path_product<T, Layout>(tiles.front(), Activation::none, 715);
  for (std::size_t i = 1; i < tiles.size(); ++i) {
    const std::vector<T> other = host_path_product<T, Layout>(tiles[i], Activation::none, 715);
    int64_t differ = 0;
    double worst = 0;
    for (std::size_t e = 0; e < first.size(); ++e) {
      if (std::memcmp(&first[e], &other[e], sizeof(T)) != 0) ++differ;
      worst = std::max(worst, std::abs(double(first[e]) - double(other[e])) / std::max(1.0, std::abs(double(first[e]))));
    }
#if defined(__FMA__) || defined(__aarch64__)
    EXPECT_EQ(differ, 0) << tiles.front().name() << " against " << tiles[i].name() << " (worst " << worst << ")";
#endif
    const double limit = std::is_same<T, float>::value ? 1e-5 : 1e-12;
    EXPECT_LE(worst, limit) << tiles.front().name() << " against " << tiles[i].name();
  }
}

/// Sets the host packing mode (host/packed.hpp, HostPackMode) for a scope, then restores it.
struct HostPackModeScope {
  int saved;
  explicit HostPackModeScope(tilekit::detail::HostPackMode mode) : saved(tilekit::detail::host_pack_mode().exchange(int(mode))) {}
  ~HostPackModeScope() { tilekit::detail::host_pack_mode().store(saved); }
};

/// The operands packed block by block inside the team loop (teams splitting a block's slivers) and
/// in two passes before it give the same bits, on every host path: 203 x 261 x 715 (ragged tiles,
/// a k tail in the last panel), both storage orders, with alpha, beta and a bias.
template <class T, class Layout>
void expect_packing_modes_agree() {
  std::vector<MatmulConfig> tiles;
  for (const MatmulConfig& cfg : runnable_menu_tiles<T, T>())
    if (!cfg.thin && cfg.team_size == 1) tiles.push_back(cfg);
  if (tiles.empty()) GTEST_SKIP() << "no host packed tile here";
  std::vector<T> first;
  {
    HostPackModeScope mode(tilekit::detail::HostPackMode::passes);
    first = host_path_product<T, Layout>(tiles.front(), Activation::none, 715, 203, 261);
  }
  for (const MatmulConfig& cfg : tiles) {
    for (tilekit::detail::HostPackMode m : {tilekit::detail::HostPackMode::in_loop, tilekit::detail::HostPackMode::passes}) {
      HostPackModeScope mode(m);
      const std::vector<T> other = host_path_product<T, Layout>(cfg, Activation::none, 715, 203, 261);
      int64_t differ = 0;
      double worst = 0;
      for (std::size_t e = 0; e < first.size(); ++e) {
        if (std::memcmp(&first[e], &other[e], sizeof(T)) != 0) ++differ;
        worst = std::max(worst, std::abs(double(first[e]) - double(other[e])) / std::max(1.0, std::abs(double(first[e]))));
      }
      const char* how = m == tilekit::detail::HostPackMode::in_loop ? "packed in the team loop" : "packed in passes";
#if defined(__FMA__) || defined(__aarch64__)
      EXPECT_EQ(differ, 0) << tiles.front().name() << " against " << cfg.name() << " " << how << " (worst " << worst
                           << ")";
#endif
      const double limit = std::is_same<T, float>::value ? 1e-5 : 1e-12;
      EXPECT_LE(worst, limit) << tiles.front().name() << " against " << cfg.name() << " " << how;
    }
  }
}

template <class T>
void expect_host_paths_agree() {
  // Every host micro-kernel path this CPU runs (avx512, avx2, portable) accumulates each element
  // over k in the same order, with fused multiply-adds where the build's baseline has them, so their
  // products (with alpha, beta and the bias) match bit for bit; without FMA in the baseline the
  // portable path rounds each product and only the tolerance holds. The f32 activations are
  // polynomials the compiler vectorizes per micro-tile width, so after gelu only the tolerance holds.
  std::vector<MatmulConfig> tiles;
  for (const MatmulConfig& cfg : runnable_menu_tiles<T, T>())
    if (!cfg.thin && cfg.team_size == 1) tiles.push_back(cfg);
  if (tiles.size() < 2) GTEST_SKIP() << "one host path here";
  for (Activation act : {Activation::none, Activation::gelu}) {
  const bool bitwise = act == Activation::none || std::is_same<T, double>::value;
  const std::vector<T> first = host_path_product<T>(tiles.front(), act);
  for (std::size_t i = 1; i < tiles.size(); ++i) {
    const std::vector<T> other = host_path_product<T>(tiles[i], act);
    int64_t differ = 0;
    double worst = 0;
    for (std::size_t e = 0; e < first.size(); ++e) {
      if (std::memcmp(&first[e], &other[e], sizeof(T)) != 0) ++differ;
      worst = std::max(worst, std::abs(double(first[e]) - double(other[e])) / std::max(1.0, std::abs(double(first[e]))));
    }
#if defined(__FMA__) || defined(__aarch64__)
    if (bitwise) {
      EXPECT_EQ(differ, 0) << tiles.front().name() << " against " << tiles[i].name() << ", " << activation_name(act)
                           << " (worst " << worst << ")";
    }
#endif
    const double limit = std::is_same<T, float>::value ? 1e-5 : 1e-12;
    EXPECT_LE(worst, limit)
        << tiles.front().name() << " against " << tiles[i].name() << ", " << activation_name(act);
  }
  }
}

}  // namespace

TEST(MatmulHostPaths, EveryHostPathGivesTheSameBitsF32) {
  if (is_gpu_space<Kokkos::DefaultExecutionSpace>()) GTEST_SKIP() << "host backends only";
  expect_host_paths_agree<float>();
}

TEST(MatmulHostPaths, EveryHostPathGivesTheSameBitsF64) {
  if (is_gpu_space<Kokkos::DefaultExecutionSpace>()) GTEST_SKIP() << "host backends only";
  expect_host_paths_agree<double>();
}

TEST(MatmulHostPaths, TransposedPackingGivesTheSameBitsOnEveryPathRowMajor) {
  if (is_gpu_space<Kokkos::DefaultExecutionSpace>()) GTEST_SKIP() << "host backends only";
  expect_transposed_packing_agrees<float, Kokkos::LayoutRight>();
  expect_transposed_packing_agrees<double, Kokkos::LayoutRight>();
}

TEST(MatmulHostPaths, TransposedPackingGivesTheSameBitsOnEveryPathColumnMajor) {
  if (is_gpu_space<Kokkos::DefaultExecutionSpace>()) GTEST_SKIP() << "host backends only";
  expect_transposed_packing_agrees<float, Kokkos::LayoutLeft>();
  expect_transposed_packing_agrees<double, Kokkos::LayoutLeft>();
}

TEST(MatmulHostPaths, PackingInTheTeamLoopGivesTheSameBitsAsPassesRowMajor) {
  if (is_gpu_space<Kokkos::DefaultExecutionSpace>()) GTEST_SKIP() << "host backends only";
  expect_packing_modes_agree<float, Kokkos::LayoutRight>();
  expect_packing_modes_agree<double, Kokkos::LayoutRight>();
}

TEST(MatmulHostPaths, PackingInTheTeamLoopGivesTheSameBitsAsPassesColumnMajor) {
  if (is_gpu_space<Kokkos::DefaultExecutionSpace>()) GTEST_SKIP() << "host backends only";
  expect_packing_modes_agree<float, Kokkos::LayoutLeft>();
  expect_packing_modes_agree<double, Kokkos::LayoutLeft>();
}

namespace {

/// The host_path_product of the default config of this process's host path, recorded in `dir` by
/// the first binary that runs with it, else compared with the recorded one (bitwise where the
/// accumulation order is the same, as in expect_host_paths_agree; after f32 gelu, the tolerance).
template <class T>
void record_or_compare_host_product(const std::string& dir, Activation act) {
  const MatmulConfig cfg = default_config<T>();
  const std::vector<T> mine = host_path_product<T>(cfg, act);
  const std::string stem = dir + "/host_product_" + (std::is_same<T, float>::value ? "f32_" : "f64_") +
                           activation_name(act);
  const std::string who = std::string(host_isa_name(host_isa())) + " path, " + cfg.name() + ", " +
                          cpu_info().architecture();
  std::ifstream in(stem + ".bin", std::ios::binary);
  if (!in) {
    std::ofstream(stem + ".txt.tmp") << who << "\n";
    std::ofstream(stem + ".bin.tmp", std::ios::binary)
        .write(reinterpret_cast<const char*>(mine.data()), std::streamsize(mine.size() * sizeof(T)));
    ASSERT_EQ(std::rename((stem + ".txt.tmp").c_str(), (stem + ".txt").c_str()), 0) << stem;
    ASSERT_EQ(std::rename((stem + ".bin.tmp").c_str(), (stem + ".bin").c_str()), 0) << stem;
    std::printf("recorded %s (%s)\n", (stem + ".bin").c_str(), who.c_str());
    return;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), mine.size() * sizeof(T)) << stem << ".bin";
  std::vector<T> recorded(mine.size());
  std::memcpy(recorded.data(), bytes.data(), bytes.size());
  std::string recorder;
  std::getline(std::ifstream(stem + ".txt"), recorder);
  int64_t differ = 0;
  double worst = 0;
  for (std::size_t e = 0; e < mine.size(); ++e) {
    if (std::memcmp(&mine[e], &recorded[e], sizeof(T)) != 0) ++differ;
    worst = std::max(worst, std::abs(double(mine[e]) - double(recorded[e])) / std::max(1.0, std::abs(double(recorded[e]))));
  }
  const bool bitwise = act == Activation::none || std::is_same<T, double>::value;
  if (bitwise) {
    EXPECT_EQ(differ, 0) << who << " against " << recorder << ", " << activation_name(act) << " (worst " << worst << ")";
  }
  const double limit = std::is_same<T, float>::value ? 1e-5 : 1e-12;
  EXPECT_LE(worst, limit)
      << who << " against " << recorder << ", " << activation_name(act);
  std::printf("%s: %s against %s: %lld of %zu elements differ (worst %g)\n", (stem + ".bin").c_str(), who.c_str(),
              recorder.c_str(), static_cast<long long>(differ), mine.size(), worst);
}

}  // namespace

TEST(MatmulHostPaths, ProductsMatchThoseOfAnotherBinary) {
  // Across binaries and machines: with TILEKIT_TEST_HOST_PRODUCTS naming a folder, the first run
  // records its products there and later runs compare theirs (CI: the x86-64 build on the CPU's
  // widest path records; the same build with TILEKIT_HOST_ISA=portable and the aarch64 build under
  // qemu compare).
  if (is_gpu_space<Kokkos::DefaultExecutionSpace>()) GTEST_SKIP() << "host backends only";
  const char* dir = std::getenv("TILEKIT_TEST_HOST_PRODUCTS");
  if (dir == nullptr || *dir == '\0') GTEST_SKIP() << "TILEKIT_TEST_HOST_PRODUCTS is not set";
  for (Activation act : {Activation::none, Activation::gelu}) {
    record_or_compare_host_product<float>(dir, act);
    record_or_compare_host_product<double>(dir, act);
  }
}
