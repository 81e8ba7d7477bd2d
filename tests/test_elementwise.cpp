// Elementwise properties, each checked for every type (f64, f32, f16, bf16, i32), every shipped op
// and every variant on this build's backend, against the host reference (kernels/elementwise_check):
// bit for bit for the exact ops, within the stated tolerance for silu.
#include "tilekit/kernels/elementwise/elementwise.hpp"
#include "tilekit/kernels/elementwise/validation.hpp"
#include "tilekit/kernels/elementwise/launch.hpp"  // for the custom 4-input functor and the vector-path test
#include "tilekit/kernels/core/fill.hpp"
#include "tilekit/tuning/elementwise_defaults.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace tilekit;

namespace {

using ES = Kokkos::DefaultExecutionSpace;

enum class Broadcast { none, row, col, scalar };  // of the last input: 1 x N, M x 1, 1 x 1

const char* broadcast_name(Broadcast b) {
  switch (b) {
    case Broadcast::none: return "none";
    case Broadcast::row: return "row";
    case Broadcast::col: return "col";
    case Broadcast::scalar: return "scalar";
  }
  return "?";
}

struct Case {
  int64_t M = 0, N = 0;
  OpKind op = OpKind::add;
  ElementwiseConfig cfg;
  bool out_col = false, in_col = false;  // column-major output / inputs
  int64_t pad = 0;                       // extra elements per leading dimension, every operand
  int64_t step = 1;                      // inputs: element stride along the contiguous dimension
  int64_t offset = 0;                    // elements before the first one, every operand (misaligns)
  bool aligned_pitch = false;            // leading dimensions padded to whole 16-byte vectors
  Broadcast last = Broadcast::none;
  bool broadcast_by_stride = false;  // the broadcast input as M x N with a stride of 0, not 1 x N
  int alias = -1;                    // the output is input `alias` itself (c = a + c)
  OpScalars scalars{1.5, -0.75};     // axpby (whole numbers for i32: set in run_case)
  uint64_t seed = 5;

  std::string describe() const {
    return fmt::format("{}x{} op={} cfg={} out:{} in:{} pad={}{} step={} offset={} broadcast={}{} alias={}", M, N,
                       op_info(op).name, cfg.name(), out_col ? "col" : "row", in_col ? "col" : "row", pad,
                       aligned_pitch ? "+align" : "", step, offset, broadcast_name(last),
                       broadcast_by_stride ? "(stride 0)" : "", alias);
  }
};

/// One operand's storage: `elems` elements, the matrix at `offset` with strides (rs, cs).
struct Operand {
  int64_t rows = 0, cols = 0, rs = 0, cs = 0, offset = 0, elems = 0;
};

/// align: round the leading dimension up to a multiple of this many elements (1: no rounding).
Operand make_operand(int64_t rows, int64_t cols, bool col_major, int64_t pad, int64_t step, int64_t offset,
                     int64_t align = 1) {
  Operand o{rows, cols, 0, 0, offset, 0};
  int64_t lead = (col_major ? rows : cols) * step + pad;
  lead = (lead + align - 1) / align * align;
  o.rs = col_major ? step : std::max<int64_t>(lead, 1);
  o.cs = col_major ? std::max<int64_t>(lead, 1) : step;
  if (rows > 0 && cols > 0) o.elems = offset + (rows - 1) * o.rs + (cols - 1) * o.cs + 1;
  return o;
}

template <class T>
StridedMatrix<T> matrix_at(T* base, const Operand& o) {
  return {base ? base + o.offset : nullptr, o.rows, o.cols, o.rs, o.cs};
}

template <class T>
typename Kokkos::View<T*>::HostMirror snapshot(const Kokkos::View<T*>& v) {
  auto h = Kokkos::create_mirror(Kokkos::HostSpace(), v);
  Kokkos::deep_copy(h, v);
  return h;
}

struct Outcome {
  ElementwiseComparison cmp;
  int64_t outside_changed = 0;  // elements of the output's storage outside the matrix that changed
};

template <class T>
Outcome run_case(const Case& c) {
  const int nin = op_info(c.op).arity;
  const int64_t align = c.aligned_pitch ? tilekit::kElementwiseVectorBytes / int64_t(sizeof(T)) : 1;
  OpScalars scalars = c.scalars;
  if (std::is_integral<T>::value) scalars = {3.0, -2.0};

  // Arrange: storage and descriptors of every input, then of the output (or the aliased input)
  std::vector<Operand> ops;
  std::vector<StridedMatrix<const T>> desc;  // as given to the kernel (broadcast as 1 x N or stride 0)
  for (int k = 0; k < nin; ++k) {
    int64_t rows = c.M, cols = c.N;
    const bool last = k == nin - 1;
    if (last && (c.last == Broadcast::row || c.last == Broadcast::scalar)) rows = 1;
    if (last && (c.last == Broadcast::col || c.last == Broadcast::scalar)) cols = 1;
    ops.push_back(make_operand(rows, cols, c.in_col, c.pad, c.step, c.offset, align));
  }
  const bool aliased = c.alias >= 0;
  const Operand out_op = aliased ? ops[c.alias] : make_operand(c.M, c.N, c.out_col, c.pad, 1, c.offset, align);

  std::vector<Kokkos::View<T*>> store;
  for (int k = 0; k < nin; ++k) {
    store.emplace_back("in", ops[k].elems);
    fill_random(store[k].data(), ops[k].elems, c.seed + k);
  }
  Kokkos::View<T*> out_store = aliased ? store[c.alias] : Kokkos::View<T*>("out", out_op.elems);
  if (!aliased) fill_random(out_store.data(), out_op.elems, c.seed + 10);
  for (int k = 0; k < nin; ++k) {
    StridedMatrix<const T> m = matrix_at<const T>(store[k].data(), ops[k]);
    if (c.broadcast_by_stride && k == nin - 1 && c.last != Broadcast::none) {
      if (m.rows == 1) m.rs = 0, m.rows = c.M;
      if (m.cols == 1) m.cs = 0, m.cols = c.N;
    }
    desc.push_back(m);
  }
  const StridedMatrix<T> out = matrix_at<T>(out_store.data(), out_op);

  // Snapshots (real copies: on host backends a mirror *view* would be the device view itself).
  std::vector<typename Kokkos::View<T*>::HostMirror> host_in;
  std::vector<StridedMatrix<const T>> host_desc;
  for (int k = 0; k < nin; ++k) {
    host_in.push_back(snapshot(store[k]));
    host_desc.push_back(matrix_at<const T>(host_in.back().data(), ops[k]));
  }
  const auto out_before = snapshot(out_store);

  // Act
  apply_op<T>(c.op, scalars, desc, out, c.cfg);
  ES().fence();

  // Assert: the matrix against the reference, and nothing else of the storage changed
  const auto out_after = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out_store);
  const std::vector<T> ref = reference_elementwise<T>(c.op, scalars, host_desc, c.M, c.N);
  Outcome o;
  o.cmp = compare_elementwise<T>(c.op, matrix_at<const T>(out_after.data(), out_op), ref);
  std::vector<char> inside(static_cast<std::size_t>(out_op.elems), 0);
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) inside[static_cast<std::size_t>(out_op.offset + i * out_op.rs + j * out_op.cs)] = 1;
  for (int64_t e = 0; e < out_op.elems; ++e)
    if (!inside[static_cast<std::size_t>(e)] && std::memcmp(&out_before(e), &out_after(e), sizeof(T)) != 0)
      ++o.outside_changed;
  return o;
}

/// Every variant, and tiled configs that exercise partial row groups, several vectors per thread,
/// both team orders and (where the backend allows) several threads per team.
std::vector<ElementwiseConfig> configs() {
  const std::string backend = backend_name();
  std::vector<ElementwiseConfig> out;
  for (auto v : {ElementwiseVariant::naive, ElementwiseVariant::vectorized, ElementwiseVariant::tiled,
                 ElementwiseVariant::automatic})
    out.push_back(tuning::default_elementwise_config(backend, DType::f32, v));
  ElementwiseConfig t = tuning::default_elementwise_config(backend, DType::f32, ElementwiseVariant::tiled);
  t.rows_per_thread = tilekit::kElementwiseRowsInFlight + 1;
  t.vectors_per_thread = 3;
  t.remap_teams = false;
  if (tilekit::is_gpu_space<ES>()) {
    t.team_size = 128;
    t.threads_n = 32;
  }
  out.push_back(t);
  const int threads = tilekit::is_gpu_space<ES>() ? 64 : std::min(2, ES().concurrency());
  if (threads >= 2) {
    t.team_size = threads;
    t.threads_n = threads;
    t.rows_per_thread = 2;
    t.vectors_per_thread = 1;
    t.remap_teams = true;
    out.push_back(t);
  }
  return out;
}

template <class T>
struct ElementwiseTyped : ::testing::Test {
  static constexpr int W = tilekit::kElementwiseVectorBytes / static_cast<int>(sizeof(T));  // vector width

  static std::vector<OpKind> ops() {
    std::vector<OpKind> out;
    for (const auto& i : op_table())
      if (!(i.floating_only && std::is_integral<T>::value)) out.push_back(i.kind);
    return out;
  }

  void expect_matches(const Case& c) {
    SCOPED_TRACE(c.describe());
    const Outcome o = run_case<T>(c);
    EXPECT_TRUE(o.cmp.pass()) << o.cmp.mismatches << " of " << o.cmp.elements << " elements differ from the reference"
                              << (o.cmp.exact ? " (bit-exact op)" : "") << "; first at (" << o.cmp.first_i << ", "
                              << o.cmp.first_j << "): got " << o.cmp.first_got << ", expected " << o.cmp.first_ref;
    EXPECT_EQ(o.outside_changed, 0) << "the run wrote outside the output matrix";
  }

  /// expect_matches for every op and config on one case shape.
  void for_every_op_and_config(Case c) {
    for (OpKind op : ops())
      for (const ElementwiseConfig& cfg : configs()) {
        c.op = op;
        c.cfg = cfg;
        expect_matches(c);
      }
  }
};

struct TypeNames {
  template <class T>
  static std::string GetName(int) {
    return dtype_name(TypeTraits<T>::dtype);
  }
};

using Types = ::testing::Types<double, float, f16, bf16, int32_t>;
TYPED_TEST_SUITE(ElementwiseTyped, Types, TypeNames);

TYPED_TEST(ElementwiseTyped, EveryOpAndVariantMatchesReferenceOnAwkwardShapes) {
  // 1x1, a row, a column, primes, and shapes that break vectors and tiles along either dimension.
  const std::vector<std::array<int64_t, 2>> shapes = {{1, 1},  {1, 37},  {1, 1031}, {41, 1},  {7, 3},
                                                      {31, 37}, {67, 131}, {3, 1000}, {130, 67}};
  for (const auto& s : shapes) {
    Case c;
    c.M = s[0];
    c.N = s[1];
    this->for_every_op_and_config(c);
  }
}

TYPED_TEST(ElementwiseTyped, TailsOfEveryLengthMatchReference) {
  // Column tails 0..W-1 after 0, 2 and (tile width / W) whole vectors; then row tails around the
  // rows a thread loads at once and the rows of a tile. Each with tight rows (a row pitch that is
  // not whole vectors takes the scalar path) and with rows padded to whole vectors (the vector path,
  // with a masked tail vector at the end of every row).
  const int W = TestFixture::W;
  const ElementwiseConfig tiled = tuning::default_elementwise_config(backend_name(), DType::f32, ElementwiseVariant::tiled);
  const int64_t tile_cols = tiled.tile_cols(sizeof(TypeParam)), tile_rows = tiled.tile_rows();
  for (int64_t base : {int64_t(0), int64_t(2 * W), tile_cols})
    for (int t = 0; t < W; ++t) {
      if (base + t == 0) continue;
      for (bool aligned : {false, true}) {
        Case c;
        c.M = 3;
        c.N = base + t;
        c.aligned_pitch = aligned;
        this->for_every_op_and_config(c);
      }
    }
  const int B = tilekit::kElementwiseRowsInFlight;
  for (int64_t m : {int64_t(B - 1), int64_t(B + 1), int64_t(2 * B + 3), tile_rows - 1, tile_rows + 1}) {
    if (m < 1) continue;
    for (bool aligned : {false, true}) {
      Case c;
      c.M = m;
      c.N = 2 * W + 1;
      c.aligned_pitch = aligned;
      this->for_every_op_and_config(c);
    }
  }
}

TYPED_TEST(ElementwiseTyped, StridedColumnMajorPaddedAndMisalignedOperandsMatchReference) {
  for (int bits = 1; bits < 32; ++bits) {
    Case c;
    c.M = 29;
    c.N = 37;
    c.out_col = bits & 1;
    c.in_col = bits & 2;
    c.pad = (bits & 4) ? 3 : 0;
    c.step = (bits & 8) ? 2 : 1;
    c.offset = (bits & 16) ? 1 : 0;
    this->for_every_op_and_config(c);
  }
}

TYPED_TEST(ElementwiseTyped, BroadcastRowAndColumnVectorsMatchReference) {
  for (Broadcast b : {Broadcast::row, Broadcast::col, Broadcast::scalar})
    for (bool by_stride : {false, true})
      for (bool out_col : {false, true}) {
        Case c;
        c.M = 19;
        c.N = 4 * TestFixture::W + 3;
        c.last = b;
        c.broadcast_by_stride = by_stride;
        c.out_col = out_col;
        c.in_col = out_col;
        this->for_every_op_and_config(c);
      }
}

TYPED_TEST(ElementwiseTyped, OutputAliasingAnInputMatchesReference) {
  // c = a + c and c = c + b (and relu(c) in place): each element is read, then written.
  for (const auto& s : std::vector<std::array<int64_t, 2>>{{1, 1}, {17, 33}, {64, 128}})
    for (int layout = 0; layout < 3; ++layout)
      for (OpKind op : TestFixture::ops())
        for (int alias : {0, op_info(op).arity - 1})
          for (const ElementwiseConfig& cfg : configs()) {
            Case c;
            c.M = s[0];
            c.N = s[1];
            c.op = op;
            c.cfg = cfg;
            c.alias = alias;
            c.in_col = layout == 1;
            c.pad = layout == 2 ? 5 : 0;
            this->expect_matches(c);
          }
}

TYPED_TEST(ElementwiseTyped, ZeroSizedTensorsAreANoOp) {
  for (const auto& s : std::vector<std::array<int64_t, 2>>{{0, 0}, {0, 7}, {7, 0}}) {
    Case c;
    c.M = s[0];
    c.N = s[1];
    this->for_every_op_and_config(c);
    // Null pointers too: nothing is read or written.
    for (OpKind op : TestFixture::ops()) {
      std::vector<StridedMatrix<const TypeParam>> in(static_cast<std::size_t>(op_info(op).arity),
                                                     StridedMatrix<const TypeParam>{nullptr, s[0], s[1], 0, 0});
      EXPECT_NO_THROW(apply_op<TypeParam>(op, OpScalars{}, in, StridedMatrix<TypeParam>{nullptr, s[0], s[1], 1, 1},
                                          ElementwiseConfig{}));
    }
  }
}

// --- the generic N-ary apply with a functor of one's own, the View API, the vector path ----------

/// A 4-input op of our own: a * b + c * d (the largest arity apply takes).
struct DotOfPairs {
  static constexpr int arity = 4;
  static constexpr const char* name = "dot_of_pairs";
  template <class C>
  KOKKOS_INLINE_FUNCTION C operator()(C a, C b, C c, C d) const {
    return a * b + c * d;
  }
};

TEST(ElementwiseGenericApply, FourInputFunctorOfOurOwnMatchesItsHostValue) {
  const int64_t M = 37, N = 45;
  Kokkos::View<float**, Kokkos::LayoutRight> A("A", M, N), B("B", M, N), C("C", M, N), D("D", M, N), O("O", M, N);
  fill_random(A.data(), M * N, 1);
  fill_random(B.data(), M * N, 2);
  fill_random(C.data(), M * N, 3);
  fill_random(D.data(), M * N, 4);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  auto hd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D);
  for (const ElementwiseConfig& cfg : configs()) {
    SCOPED_TRACE(cfg.name());
    Kokkos::deep_copy(O, 0.0f);

    apply(DotOfPairs{}, make_inputs(A, B, C, D), O, cfg);

    auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), O);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        // Products may be fused differently on the device: within two roundings.
        const double want = double(ha(i, j)) * hb(i, j) + double(hc(i, j)) * hd(i, j);
        ASSERT_NEAR(ho(i, j), want, 3e-7 * (std::fabs(want) + 1.0)) << i << "," << j;
      }
  }
}

/// Every 16-bit pattern (zeros, subnormals, the largest finite values, infinities, NaNs) as input
/// a, mixed patterns as input b, through every config: the sums are the scalar conversions' sums
/// bit for bit (the host's block conversions of whole vectors included), NaN where theirs is NaN.
template <class T>
void expect_every_bit_pattern_adds_like_the_scalar_conversions() {
  const int64_t N = 65536 + 37;  // every pattern, then a tail shorter than a block
  Kokkos::View<T**, Kokkos::LayoutRight> A("A", 1, N), B("B", 1, N), O("O", 1, N);
  auto ha = Kokkos::create_mirror_view(A);
  auto hb = Kokkos::create_mirror_view(B);
  for (int64_t j = 0; j < N; ++j) {
    ha(0, j) = T::from_bits(static_cast<uint16_t>(j & 0xffff));
    hb(0, j) = T::from_bits(static_cast<uint16_t>((j * 40503) & 0xffff));
  }
  Kokkos::deep_copy(A, ha);
  Kokkos::deep_copy(B, hb);
  for (const ElementwiseConfig& cfg : configs()) {
    SCOPED_TRACE(cfg.name());
    apply(ops::Add{}, make_inputs(A, B), O, cfg);
    auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), O);
    int64_t bad = 0;
    for (int64_t j = 0; j < N; ++j) {
      const float sum = float(ha(0, j)) + float(hb(0, j));
      const T want(sum);
      const bool ok = sum != sum ? float(ho(0, j)) != float(ho(0, j)) : ho(0, j).bits == want.bits;
      if (!ok && bad++ < 5)
        ADD_FAILURE() << "element " << j << ": " << std::hex << ha(0, j).bits << " + " << hb(0, j).bits << " gave "
                      << ho(0, j).bits << ", want " << want.bits;
    }
    EXPECT_EQ(bad, 0);
  }
}

TEST(Elementwise16Bit, EveryF16BitPatternAddsLikeTheScalarConversions) {
  expect_every_bit_pattern_adds_like_the_scalar_conversions<f16>();
}
TEST(Elementwise16Bit, EveryBf16BitPatternAddsLikeTheScalarConversions) {
  expect_every_bit_pattern_adds_like_the_scalar_conversions<bf16>();
}

TEST(ElementwiseViews, LayoutLeftInputRowVectorBiasAndStridedSubviewOutput) {
  const int64_t M = 40, N = 50;
  Kokkos::View<float**, Kokkos::LayoutLeft> A("A", M, N);
  Kokkos::View<float**, Kokkos::LayoutRight> bias("bias", 1, N);
  Kokkos::View<float**, Kokkos::LayoutRight> big("big", M + 7, N + 9);
  fill_random(A.data(), M * N, 1);
  fill_random(bias.data(), N, 2);
  auto C = Kokkos::subview(big, std::make_pair<int64_t, int64_t>(3, 3 + M), std::make_pair<int64_t, int64_t>(5, 5 + N));

  apply(ops::Add{}, make_inputs(A, bias), C, ElementwiseConfig{});

  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  auto hbias = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bias);
  auto hbig = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), big);
  for (int64_t i = 0; i < M + 7; ++i)
    for (int64_t j = 0; j < N + 9; ++j) {
      const bool inside = i >= 3 && i < 3 + M && j >= 5 && j < 5 + N;
      if (inside)
        ASSERT_EQ(hbig(i, j), ha(i - 3, j - 5) + hbias(0, j - 5)) << i << "," << j;
      else
        ASSERT_EQ(hbig(i, j), 0.0f) << "wrote outside the subview at " << i << "," << j;
    }
}

TEST(ElementwiseVectorPath, TakenOnlyWhenEveryOperandIsContiguousAndAligned) {
  constexpr int VB = tilekit::kElementwiseVectorBytes;
  Kokkos::View<float*> buf("buf", 4096);
  float* p = buf.data();  // Kokkos allocations are at least 16-byte aligned
  auto problem = [&](StridedMatrix<const float> a, StridedMatrix<const float> b, StridedMatrix<float> c) {
    ElementwiseProblem<float, 2> pr;
    pr.in[0] = a;
    pr.in[1] = b;
    pr.out = c;
    return detail::normalized(pr);
  };
  const StridedMatrix<float> out{p, 8, 16, 16, 1};
  const StridedMatrix<const float> a{p + 256, 8, 16, 16, 1}, b{p + 512, 8, 16, 16, 1};
  EXPECT_TRUE(detail::vector_path_ok<VB>(problem(a, b, out)));
  EXPECT_TRUE(detail::vector_path_ok<VB>(problem(a, StridedMatrix<const float>{p + 512, 1, 16, 0, 1}, out)))
      << "a row vector (bias) keeps the vector path";
  EXPECT_TRUE(detail::vector_path_ok<VB>(problem(a, StridedMatrix<const float>{p + 513, 8, 1, 1, 0}, out)))
      << "a column vector is one value per row (splat), at any alignment";
  EXPECT_FALSE(detail::vector_path_ok<VB>(problem(StridedMatrix<const float>{p + 257, 8, 16, 16, 1}, b, out)))
      << "misaligned base";
  EXPECT_FALSE(detail::vector_path_ok<VB>(problem(StridedMatrix<const float>{p + 256, 8, 16, 17, 1}, b, out)))
      << "row pitch of 17 floats breaks the alignment of every other row";
  EXPECT_FALSE(detail::vector_path_ok<VB>(problem(StridedMatrix<const float>{p + 256, 8, 16, 32, 2}, b, out)))
      << "every other column";
  EXPECT_TRUE(detail::vector_path_ok<VB>(problem(StridedMatrix<const float>{p + 256, 8, 16, 1, 8}, 
                                                 StridedMatrix<const float>{p + 512, 8, 16, 1, 8},
                                                 StridedMatrix<float>{p, 8, 16, 1, 8})))
      << "column-major operands are transposed to row-major first";
}

// --- configs and rejection of bad input ----------------------------------------------------------

TEST(ElementwiseConfigName, RoundTripsThroughParse) {
  for (const ElementwiseConfig& c : configs()) {
    ElementwiseConfig back;
    std::string why;
    ASSERT_TRUE(ElementwiseConfig::parse(c.name(), back, why)) << c.name() << ": " << why;
    EXPECT_EQ(back.name(), c.name());
  }
  ElementwiseConfig c;
  std::string why;
  ASSERT_TRUE(ElementwiseConfig::parse("tiled_r8_c32", c, why)) << why;
  EXPECT_EQ(c.variant, ElementwiseVariant::tiled);
  EXPECT_EQ(c.rows_per_thread, 8);
  EXPECT_EQ(c.vectors_per_thread, 32);
  EXPECT_FALSE(ElementwiseConfig::parse("tiled_q3", c, why));
  EXPECT_NE(why.find("q3"), std::string::npos) << why;
  EXPECT_FALSE(ElementwiseConfig::parse("naive_r4", c, why));
  EXPECT_FALSE(ElementwiseConfig::parse("blocked", c, why));
}

std::string rejection(OpKind op, const std::vector<StridedMatrix<const float>>& in, const StridedMatrix<float>& out,
                      const ElementwiseConfig& cfg = ElementwiseConfig{}) {
  try {
    apply_op<float>(op, OpScalars{}, in, out, cfg);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

struct Buffers {
  Kokkos::View<float*> a{"a", 64}, b{"b", 64}, c{"c", 64};
  StridedMatrix<const float> in(const Kokkos::View<float*>& v, int64_t r = 4, int64_t col = 4) const {
    return {v.data(), r, col, col, 1};
  }
  StridedMatrix<float> out(int64_t r = 4, int64_t col = 4) const { return {c.data(), r, col, col, 1}; }
};

TEST(ElementwiseRejects, MoreInputsThanTheOpTakes) {
  Buffers b;
  const std::string why = rejection(OpKind::relu, {b.in(b.a), b.in(b.b)}, b.out());
  EXPECT_NE(why.find("takes 1 input (got 2)"), std::string::npos) << why;
  EXPECT_NE(rejection(OpKind::fma, {b.in(b.a), b.in(b.b)}, b.out()).find("takes 3 inputs"), std::string::npos);
}

TEST(ElementwiseRejects, ShapeMismatchNamingTheShapes) {
  Buffers b;
  const std::string why = rejection(OpKind::add, {b.in(b.a, 3, 4), b.in(b.b)}, b.out());
  EXPECT_NE(why.find("3x4"), std::string::npos) << why;
  EXPECT_NE(why.find("4x4 output"), std::string::npos) << why;
  EXPECT_NE(why.find("1x4"), std::string::npos) << "names the broadcast shapes allowed: " << why;
}

TEST(ElementwiseRejects, SiluOnIntegersAndFractionalAxpbyScalarsOnIntegers) {
  Kokkos::View<int32_t*> a("a", 16), c("c", 16);
  const StridedMatrix<const int32_t> in{a.data(), 4, 4, 4, 1};
  const StridedMatrix<int32_t> out{c.data(), 4, 4, 4, 1};
  try {
    apply_op<int32_t>(OpKind::silu, OpScalars{}, {in}, out, ElementwiseConfig{});
    FAIL() << "silu on i32 was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("floating-point"), std::string::npos) << e.what();
  }
  try {
    apply_op<int32_t>(OpKind::axpby, OpScalars{0.5, 1.0}, {in, in}, out, ElementwiseConfig{});
    FAIL() << "axpby on i32 with alpha 0.5 was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("whole-number"), std::string::npos) << e.what();
  }
}

TEST(ElementwiseRejects, InputsThatPartlyOverlapTheOutput) {
  Buffers b;
  const StridedMatrix<const float> shifted{b.c.data() + 1, 4, 4, 4, 1};
  const std::string why = rejection(OpKind::add, {b.in(b.a), shifted}, b.out());
  EXPECT_NE(why.find("overlaps the output"), std::string::npos) << why;
  EXPECT_EQ(rejection(OpKind::add, {b.in(b.a), b.in(b.c)}, b.out()), "") << "the output itself is allowed";
}

TEST(ElementwiseRejects, OutputsWhoseElementsOverlap) {
  Buffers b;
  const std::string why = rejection(OpKind::add, {b.in(b.a), b.in(b.b)}, StridedMatrix<float>{b.c.data(), 4, 4, 2, 1});
  EXPECT_NE(why.find("overlap"), std::string::npos) << why;
}

TEST(ElementwiseRejects, ConfigsTheBackendCannotRun) {
  Buffers b;
  auto tiled = tuning::default_elementwise_config(backend_name(), DType::f32, ElementwiseVariant::tiled);
  ElementwiseConfig cfg = tiled;
  cfg.vector_bytes = 8;
  EXPECT_NE(rejection(OpKind::add, {b.in(b.a), b.in(b.b)}, b.out(), cfg).find("vector_bytes"), std::string::npos);
  cfg = tiled;
  cfg.team_size = 4;
  cfg.threads_n = 3;
  EXPECT_NE(rejection(OpKind::add, {b.in(b.a), b.in(b.b)}, b.out(), cfg).find("threads_n"), std::string::npos);
  cfg = tiled;
  cfg.team_size = 1 << 20;
  cfg.threads_n = 1;
  EXPECT_NE(rejection(OpKind::add, {b.in(b.a), b.in(b.b)}, b.out(), cfg).find("team_size"), std::string::npos);
  cfg = tiled;
  cfg.rows_per_thread = 0;
  EXPECT_NE(rejection(OpKind::add, {b.in(b.a), b.in(b.b)}, b.out(), cfg).find("rows_per_thread"), std::string::npos);
}

}  // namespace
