#include "tilekit/kernels/matmul/epilogue.hpp"
#include "tilekit/kernels/matmul/config.hpp"
#include "tilekit/kernels/core/types.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace tilekit;

TEST(F16, EveryBitPatternRoundTripsThroughFloat) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const f16 h = f16::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(f16(f)))) << b;
      continue;
    }
    EXPECT_EQ(f16(f).bits, b) << "bits " << b << " -> " << f;
  }
}

namespace {
constexpr int64_t kFloats = int64_t(1) << 20;
// Every 4096th float bit pattern, offset so the low mantissa bits vary: ties, subnormals, overflow
// and NaNs are all among them.
KOKKOS_INLINE_FUNCTION float probe_float(int64_t i) {
  return detail::bits_float(uint32_t(i) * 4096u + uint32_t(i % 4097));
}
// f16 conversions computed on the default execution space (a free function: CUDA lambdas cannot
// live in gtest's private TestBody).
void convert_on_execution_space(Kokkos::View<float*> to, Kokkos::View<uint16_t*> from) {
  Kokkos::parallel_for(
      "tilekit::test::f16_to_float", 65536, KOKKOS_LAMBDA(int b) { to(b) = f16::to_float(uint16_t(b)); });
  Kokkos::parallel_for(
      "tilekit::test::f16_from_float", kFloats, KOKKOS_LAMBDA(int64_t i) { from(i) = f16::from_float(probe_float(i)); });
}
}  // namespace

TEST(F16, ConversionsWhereTheKernelsRunMatchThePortableOnesBitForBit) {
  // The execution space converts with hardware instructions where it has them (PTX cvt on CUDA,
  // F16C on x86 hosts): they must agree with the portable code on every f16 and on floats that
  // exercise every rounding case (ties, subnormals, overflow), NaN only up to its payload.
  Kokkos::View<float*> to("to", 65536);
  Kokkos::View<uint16_t*> from("from", kFloats);
  convert_on_execution_space(to, from);
  auto hto = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), to);
  auto hfrom = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), from);
  for (uint32_t b = 0; b < 65536; ++b) {
    const float want = f16::to_float_portable(uint16_t(b));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(hto(b))) << b;
      continue;
    }
    ASSERT_EQ(detail::float_bits(hto(b)), detail::float_bits(want)) << "bits " << b;
  }
  for (int64_t i = 0; i < kFloats; ++i) {
    const float f = probe_float(i);
    const uint16_t want = f16::from_float_portable(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(f16::to_float_portable(hfrom(i)))) << i;
      continue;
    }
    ASSERT_EQ(hfrom(i), want) << "float " << f;
  }
}

TEST(F16, RoundsToNearestEvenAndSaturatesToInfinity) {
  EXPECT_EQ(static_cast<float>(f16(1.0f + 1.0f / 2048)), 1.0f);              // tie -> even (1.0)
  EXPECT_EQ(static_cast<float>(f16(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);  // tie -> even (up)
  EXPECT_EQ(static_cast<float>(f16(65504.0f)), 65504.0f);
  EXPECT_EQ(static_cast<float>(f16(65519.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(f16(65520.0f))));
  EXPECT_EQ(static_cast<float>(f16(5.9604644775390625e-8f)), 5.9604644775390625e-8f);  // smallest subnormal
  EXPECT_EQ(static_cast<float>(f16(2.98023223876953125e-8f)), 0.0f);                   // tie -> 0 (even)
  EXPECT_EQ(f16(-0.0f).bits, 0x8000);
}

TEST(BF16, EveryBitPatternRoundTripsThroughFloat) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const bf16 h = bf16::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    if (std::isnan(f)) continue;
    EXPECT_EQ(bf16(f).bits, b) << b;
  }
}

TEST(BF16, RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(static_cast<float>(bf16(1.0f + 1.0f / 256)), 1.0f);                 // tie -> even
  EXPECT_EQ(static_cast<float>(bf16(1.0f + 3.0f / 256)), 1.0f + 2.0f / 128);    // tie -> even (up)
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(static_cast<float>(bf16(std::numeric_limits<float>::infinity()))));
}

TEST(Convert, FloatToIntegerRoundsAndSaturates) {
  EXPECT_EQ((convert<int32_t, float>(2.5f)), 3);
  EXPECT_EQ((convert<int32_t, float>(-2.5f)), -3);
  EXPECT_EQ((convert<int8_t, float>(300.0f)), 127);
  EXPECT_EQ((convert<int8_t, float>(-300.0f)), -128);
}

TEST(MatmulConfigName, RoundTripsThroughParse) {
  MatmulConfig c;
  std::string why;
  ASSERT_TRUE(MatmulConfig::parse("bm128_bn64_bk16_tm8_tn4_g3_t64_v4", c, why)) << why;
  EXPECT_EQ(c.bm, 128);
  EXPECT_EQ(c.bn, 64);
  EXPECT_EQ(c.bk, 16);
  EXPECT_EQ(c.tm, 8);
  EXPECT_EQ(c.tn, 4);
  EXPECT_EQ(c.group_m, 3);
  EXPECT_EQ(c.team_size, 64);
  EXPECT_EQ(c.vector_length, 4);
  MatmulConfig d;
  ASSERT_TRUE(MatmulConfig::parse(c.name(), d, why));
  EXPECT_EQ(c, d);
}

TEST(MatmulConfigName, SplitKFieldRoundTripsAndIsNamedOnlyWhenSplit) {
  MatmulConfig c;
  std::string why;
  ASSERT_TRUE(MatmulConfig::parse("bm64_bn64_bk16_tm8_tn4_s4_g8_t128_v1", c, why)) << why;
  EXPECT_EQ(c.k_splits, 4);
  EXPECT_EQ(c.group_m, 8);
  EXPECT_EQ(c.team_size, 128);
  EXPECT_EQ(c.name(), "bm64_bn64_bk16_tm8_tn4_s4_g8_t128_v1");
  MatmulConfig d;
  ASSERT_TRUE(MatmulConfig::parse(c.name(), d, why));
  EXPECT_EQ(c, d);
  d.k_splits = 2;
  EXPECT_FALSE(c == d) << "the split count is part of a config";
  EXPECT_TRUE(c.same_tile(d)) << "... but not of its tile";
  // No _s: one team per tile (also when parsing over a config that had a split).
  ASSERT_TRUE(MatmulConfig::parse("bm64_bn64_bk16_tm8_tn4_g8_t128_v1", c, why)) << why;
  EXPECT_EQ(c.k_splits, 1);
  EXPECT_EQ(c.name().find("_s"), std::string::npos) << c.name();
  // An out-of-range split still names itself (check_matmul refuses it, saying the range).
  ASSERT_TRUE(MatmulConfig::parse("bm64_bn64_bk16_tm8_tn4_s0_g8_t128_v1", c, why)) << why;
  EXPECT_EQ(c.k_splits, 0);
  ASSERT_TRUE(MatmulConfig::parse(c.name(), d, why)) << why;
  EXPECT_EQ(c, d);
}

TEST(MatmulConfigName, TensorCoreMarkersSelectTheKernelKindAndRoundTrip) {
  // _tc: mma.sync; _wg: warpgroup MMA; _ws: warp-specialised warpgroup MMA (also wgmma and mma).
  struct Want {
    const char* name;
    bool mma, wgmma, ws;
  };
  for (const Want& w : {Want{"bm128_bn128_bk32_tm64_tn64_tc_g8_t4_v32", true, false, false},
                        Want{"bm128_bn128_bk64_tm64_tn128_wg_g8_t8_v32", true, true, false},
                        Want{"bm128_bn256_bk64_tm64_tn256_ws_g8_t12_v32", true, true, true},
                        Want{"bm128_bn128_bk8_tm8_tn8_g8_t256_v1", false, false, false}}) {
    MatmulConfig c;
    std::string why;
    ASSERT_TRUE(MatmulConfig::parse(w.name, c, why)) << w.name << ": " << why;
    EXPECT_EQ(c.mma, w.mma) << w.name;
    EXPECT_EQ(c.wgmma, w.wgmma) << w.name;
    EXPECT_EQ(c.ws, w.ws) << w.name;
    EXPECT_EQ(c.name(), w.name);
  }
  // The same numbers with different markers are different tiles.
  MatmulConfig wg, ws;
  std::string why;
  ASSERT_TRUE(MatmulConfig::parse("bm128_bn256_bk64_tm64_tn256_wg", wg, why)) << why;
  ASSERT_TRUE(MatmulConfig::parse("bm128_bn256_bk64_tm64_tn256_ws", ws, why)) << why;
  EXPECT_FALSE(wg.same_tile(ws));
  EXPECT_FALSE(MatmulConfig::parse("bm128_bn256_bk64_tm64_tn256_wx", ws, why));
}

TEST(MatmulConfigName, OptionalFieldsKeepDefaultsAndGarbageIsRejectedWithAnExample) {
  MatmulConfig c;
  c.group_m = 5;
  std::string why;
  ASSERT_TRUE(MatmulConfig::parse("bm32_bn32_bk32_tm2_tn2", c, why));
  EXPECT_EQ(c.group_m, 5);
  EXPECT_FALSE(MatmulConfig::parse("bm32_bn32", c, why));
  EXPECT_NE(why.find("expected bm<int>"), std::string::npos) << why;
  EXPECT_FALSE(MatmulConfig::parse("bm-1_bn32_bk32_tm2_tn2", c, why));
}

TEST(EpilogueName, EveryAllowedNameParsesAndRoundTrips) {
  for (const char* s : {"none", "bias", "relu", "leaky_relu", "silu", "gelu", "bias+relu", "bias+leaky_relu",
                        "bias+silu", "bias+gelu"}) {
    Epilogue e;
    std::string why;
    ASSERT_TRUE(Epilogue::parse(s, e, why)) << s << ": " << why;
    EXPECT_EQ(e.name(), s);
  }
  Epilogue e;
  std::string why;
  EXPECT_FALSE(Epilogue::parse("tanh", e, why));
  EXPECT_NE(why.find("allowed"), std::string::npos);
  EXPECT_FALSE(Epilogue::parse("bias+none", e, why));
  EXPECT_FALSE(Epilogue::parse("biasrelu", e, why));
}

TEST(Activation, SiluAndGeluStayFiniteForHugeInputs) {
  for (float x : {-1e30f, -1e4f, -100.0f, 100.0f, 1e4f, 1e30f}) {
    EXPECT_TRUE(std::isfinite(activate(Activation::silu, x))) << x;
    EXPECT_TRUE(std::isfinite(activate(Activation::gelu, x))) << x;
  }
  EXPECT_FLOAT_EQ(activate(Activation::silu, 100.0f), 100.0f);
  EXPECT_FLOAT_EQ(activate(Activation::silu, -100.0f), -100.0f * std::exp(-100.0f));
  EXPECT_FLOAT_EQ(activate(Activation::gelu, 1e4f), 1e4f);
  EXPECT_EQ(activate(Activation::gelu, -1e4f), -0.0f);
}

TEST(Activation, MatchesTheTextbookFormulas) {
  for (double x : {-3.0, -0.5, 0.0, 0.25, 2.0}) {
    EXPECT_DOUBLE_EQ(activate(Activation::relu, x), x > 0 ? x : 0.0);
    EXPECT_DOUBLE_EQ(activate(Activation::leaky_relu, x), x > 0 ? x : 0.01 * x);
    EXPECT_NEAR(activate(Activation::silu, x), x / (1 + std::exp(-x)), 1e-15);
    EXPECT_NEAR(activate(Activation::gelu, x),
                0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))), 1e-15);
  }
}

namespace {
/// activate_fixed<ACT> on the host (x / (1 + 2^w), 2^w from a polynomial, round(w) by the 1.5 * 2^23
/// trick: the form the vectorized host epilogue runs) against `exact` in double: a dense sweep over
/// [-range, range] within 1e-6 + 2e-7 |f| absolute, x itself from `big` up, 0 from -big down, 0 at 0,
/// NaN kept.
template <Activation ACT, class Exact>
void expect_host_form_matches(Exact exact, int range, float big) {
  double worst = 0.0;
  for (int i = -range * 10000; i <= range * 10000; ++i) {
    const float x = float(i) * 1e-4f;
    const double ref = exact(double(x));
    const double got = double(activate_fixed<ACT>(x));
    worst = std::max(worst, std::abs(got - ref) / (1e-6 + 2e-7 * std::abs(ref)));
  }
  EXPECT_LE(worst, 1.0);
  for (float x : {big, 1e4f, 3e38f}) EXPECT_EQ(activate_fixed<ACT>(x), x) << x;
  for (float x : {-big, -1e4f, -3e38f}) EXPECT_LE(std::abs(activate_fixed<ACT>(x)), 1e-30f) << x;
  EXPECT_EQ(activate_fixed<ACT>(0.0f), 0.0f);
  EXPECT_TRUE(std::isnan(activate_fixed<ACT>(std::numeric_limits<float>::quiet_NaN())));
}
}  // namespace

TEST(Gelu, HostF32FormMatchesTheTanhFormulaEverywhere) {
  expect_host_form_matches<Activation::gelu>(
      [](double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }, 30, 60.0f);
}

TEST(Silu, HostF32FormMatchesTheFormulaEverywhere) {
  expect_host_form_matches<Activation::silu>([](double x) { return x / (1.0 + std::exp(-x)); }, 100, 100.0f);
}
