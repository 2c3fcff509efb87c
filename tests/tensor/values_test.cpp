// Hand-computed values for each family of Tensor ops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <beamlab/beamlab.hpp>

namespace beamlab {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::Pointwise;

std::vector<float> f(const Tensor& t) { return t.to_vector<float>(); }
std::vector<int32_t> i(const Tensor& t) { return t.to_vector<int32_t>(); }

MATCHER_P(NearAll, tol, "") { return std::abs(std::get<0>(arg) - std::get<1>(arg)) <= tol; }

TEST(Values, MatmulTwoByTwo) {
  Tensor a({1, 2, 3, 4}, {2, 2}), b({5, 6, 7, 8}, {2, 2});
  EXPECT_THAT(f(a.matmul(b)), ElementsAre(19, 22, 43, 50));
}

TEST(Values, ElementwiseBroadcast) {
  Tensor a({1, 2, 3}, {3, 1}), b({10, 20}, {1, 2});
  EXPECT_THAT(f(a + b), ElementsAre(11, 21, 12, 22, 13, 23));
  EXPECT_THAT(f(a * 2.0 - 1.0), ElementsAre(1, 3, 5));
}

class Reductions : public ::testing::Test {
protected:
  Tensor a{{1, 2, 3, 4, 5, 6}, {2, 3}};
};
TEST_F(Reductions, SumAll) { EXPECT_THAT(f(a.sum()), ElementsAre(21)); }
TEST_F(Reductions, SumAxis0) { EXPECT_THAT(f(a.sum({0})), ElementsAre(5, 7, 9)); }
TEST_F(Reductions, SumKeepdim) { EXPECT_THAT(f(a.sum({1}, true)), ElementsAre(6, 15)); }
TEST_F(Reductions, Max) { EXPECT_THAT(f(a.max({1})), ElementsAre(3, 6)); }
TEST_F(Reductions, Min) { EXPECT_THAT(f(a.min({0})), ElementsAre(1, 2, 3)); }
TEST_F(Reductions, Mean) { EXPECT_THAT(f(a.mean({1})), ElementsAre(2, 5)); }
TEST_F(Reductions, Prod) { EXPECT_THAT(f(a.prod({1})), ElementsAre(6, 120)); }
TEST_F(Reductions, Argmax) { EXPECT_THAT(i(a.argmax(1)), ElementsAre(2, 2)); }
TEST_F(Reductions, Cumsum) { EXPECT_THAT(f(a.cumsum(1)), ElementsAre(1, 3, 6, 4, 9, 15)); }

class Movement : public ::testing::Test {
protected:
  Tensor a{{1, 2, 3, 4, 5, 6}, {2, 3}};
};
TEST_F(Movement, Transpose) { EXPECT_THAT(f(a.transpose()), ElementsAre(1, 4, 2, 5, 3, 6)); }
TEST_F(Movement, Flip) { EXPECT_THAT(f(a.flip({1})), ElementsAre(3, 2, 1, 6, 5, 4)); }
TEST_F(Movement, Slice) { EXPECT_THAT(f(a.slice(1, 1, 3)), ElementsAre(2, 3, 5, 6)); }
TEST_F(Movement, PadValue) {
  EXPECT_THAT(f(a.pad({{0, 0}, {1, 0}}, -1)), ElementsAre(-1, 1, 2, 3, -1, 4, 5, 6));
}
TEST_F(Movement, Reshape) { EXPECT_THAT(f(a.reshape({3, -1})), ElementsAre(1, 2, 3, 4, 5, 6)); }

TEST(Values, Softmax) {
  Tensor a({0, 0, std::log(2.0f)}, {1, 3});
  EXPECT_THAT(f(a.softmax()), Pointwise(NearAll(1e-6f), std::vector<float>{0.25, 0.25, 0.5}));
}

} // namespace
} // namespace beamlab

namespace beamlab {
namespace {

// exp2 is computed inline (vectorizable); check it against libm over a wide range and at the
// edges, in scalar code and in vectors of 4, 16 and 64 lanes (AVX-512 scales whole 16-lane
// vectors: a narrower value is widened and cut back, a wider one split).
TEST(Values, Exp2AccurateAndExactAtTheEdges) {
  std::vector<float> xs;
  for (int i = -1600; i <= 1300; ++i) xs.push_back(static_cast<float>(i) * 0.1f + 0.0371f);
  xs.insert(xs.end(),
            {0.0f, -0.0f, 1.0f, 127.5f, 128.0f, -149.5f, -151.0f, -1e30f, 1e30f,
             -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
             std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()});
  while (xs.size() % 64) xs.push_back(0.5f);
  auto n = static_cast<int64_t>(xs.size());
  for (const char* opts : {"", "UPCAST(0,4)", "UPCAST(0,16)", "UPCAST(0,64)"}) {
    SCOPED_TRACE(std::string("opts: ") + opts);
    Tensor y = Tensor(std::span<const float>(xs), {n}).exp2();
    HeuristicPolicy policy;
    policy.set("E_" + std::to_string(n), *parse_opts(opts));
    Schedule sched = y.schedule();
    ExecutionPlan plan = ExecutionPlan::prepare(sched, y.inputs(), {.policy = &policy});
    ASSERT_EQ(to_string(plan.kernels().at(0).opts), opts);
    plan.run();
    const auto* got = static_cast<const float*>(plan.buffer(*sched.outputs[0])->data());
    for (size_t k = 0; k < xs.size(); ++k) {
      float want = std::exp2(xs[k]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[k])) << xs[k];
      } else if (std::isinf(want)) {
        EXPECT_EQ(got[k], want) << "exp2(" << xs[k] << ")";
      } else if (want < 1e-37f) {
        EXPECT_NEAR(got[k], want, 1e-44f) << "exp2(" << xs[k] << ")";
      } else {
        EXPECT_NEAR(got[k] / want, 1.0f, 5e-7f) << "exp2(" << xs[k] << ")";
      }
    }
  }
}

} // namespace
} // namespace beamlab

// ---------------------------------------------------------------- windows and indexing
namespace beamlab {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

std::vector<float> vals(const Tensor& t) { return t.to_vector<float>(); }
std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }
Tensor iota(Shape shape) { // 1, 2, 3, ... in `shape`
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(k + 1);
  return Tensor(std::span<const float>(v), shape);
}
Tensor idx(std::vector<int64_t> v, Shape shape) {
  return Tensor(std::span<const int64_t>(v), std::move(shape));
}

TEST(Conv, OneDimensional) {
  Tensor x({1, 2, 3, 4, 5}, {1, 1, 5}), w({1, 0, -1}, {1, 1, 3});
  EXPECT_THAT(vals(x.conv(w)), ElementsAre(-2, -2, -2));
  EXPECT_THAT(vals(x.conv(w, std::nullopt, 1, {.padding = {{1, 1}}})),
              ElementsAre(-2, -2, -2, -2, 4));
  EXPECT_THAT(vals(x.conv(w, std::nullopt, 1, {.stride = {2}, .padding = {{1, 1}}})),
              ElementsAre(-2, -2, 4));
  EXPECT_THAT(vals(x.conv(Tensor({1, -1}, {1, 1, 2}), std::nullopt, 1, {.dilation = {4}})),
              ElementsAre(-4));
}

TEST(Conv, NonSquareKernels) {
  Tensor x = iota({1, 1, 3, 4});
  EXPECT_THAT(vals(x.conv(Tensor({1, 1}, {1, 1, 1, 2}))),
              ElementsAre(3, 5, 7, 11, 13, 15, 19, 21, 23));
  EXPECT_THAT(vals(x.conv(Tensor({1, -1}, {1, 1, 2, 1}))),
              ElementsAre(-4, -4, -4, -4, -4, -4, -4, -4));
  EXPECT_THAT(vals(x.conv2d(Tensor({1, 1}, {1, 1, 1, 2}), std::nullopt, 2)),
              ElementsAre(3, 7, 19, 23));
}

TEST(Conv, AsymmetricPadsPerDim) {
  Tensor x({1, 2, 3, 4}, {1, 1, 2, 2}), w({1}, {1, 1, 1, 1});
  EXPECT_THAT(vals(x.conv(w, std::nullopt, 1, {.padding = {{1, 0}, {0, 1}}})),
              ElementsAre(0, 0, 0, 1, 2, 0, 3, 4, 0));
}

TEST(Conv, ThreeDimensionalWithBias) {
  Tensor x = iota({1, 1, 2, 2, 2}), w = Tensor::ones({1, 1, 2, 2, 2});
  EXPECT_THAT(vals(x.conv(w, Tensor({1}, {1}))), ElementsAre(37));
}

TEST(Conv, Groups) {
  Tensor x = iota({1, 2, 3}), w({2, 3}, {2, 1, 1});
  EXPECT_THAT(vals(x.conv(w, std::nullopt, 2)), ElementsAre(2, 4, 6, 12, 15, 18));
}

TEST(ConvTranspose, StrideInterleavesAndPaddingCuts) {
  Tensor x({1, 2, 3}, {1, 1, 3}), w({1, 1}, {1, 1, 2});
  EXPECT_THAT(vals(x.conv_transpose(w, std::nullopt, 1, {.stride = {2}})),
              ElementsAre(1, 1, 2, 2, 3, 3));
  EXPECT_THAT(vals(x.conv_transpose(w, std::nullopt, 1, {.stride = {2}, .padding = {{1, 1}}})),
              ElementsAre(1, 2, 2, 3));
  EXPECT_THAT(vals(x.conv_transpose(w, std::nullopt, 1, {.stride = {2}}, {1})),
              ElementsAre(1, 1, 2, 2, 3, 3, 0));
  EXPECT_THAT(vals(x.conv_transpose(Tensor({1, 2}, {1, 1, 2}))), ElementsAre(1, 4, 7, 6));
}

TEST(ConvTranspose, GroupsAndBias) {
  Tensor x = iota({1, 2, 2}), w({2, 3}, {2, 1, 1});
  EXPECT_THAT(vals(x.conv_transpose(w, Tensor({1, -1}, {2}), 2)), ElementsAre(3, 5, 8, 11));
}

TEST(Pool, MaxCeilModeAndPadding) {
  Tensor x({1, 5, 2, 4, 3}, {1, 1, 5});
  EXPECT_THAT(vals(x.max_pool({2})), ElementsAre(5, 5, 4, 4)); // stride 1 unless given
  EXPECT_THAT(vals(x.max_pool({2}, {.stride = {2}})), ElementsAre(5, 4));
  EXPECT_THAT(vals(x.max_pool({2}, {.stride = {2}, .ceil_mode = true})), ElementsAre(5, 4, 3));
  // ceil_mode adds no window that would start in the end padding
  EXPECT_THAT(vals(x.max_pool({2}, {.stride = {2}, .padding = {{1, 1}}, .ceil_mode = true})),
              ElementsAre(1, 5, 4));
  EXPECT_THAT(vals(Tensor({1, 9, 2, 8, 3}, {5}).max_pool({2}, {.stride = {1}, .dilation = {2}})),
              ElementsAre(2, 9, 3));
}

TEST(Pool, MaxOfIntegersPadsWithTheLowest) {
  Tensor x = Tensor({-5, -7}, {1, 2}).cast(dtypes::int32);
  EXPECT_THAT(x.max_pool({2}, {.stride = {1}, .padding = {{1, 1}}}).to_vector<int32_t>(),
              ElementsAre(-5, -5, -7));
}

TEST(Pool, AvgCountsPadsOnlyWhenAsked) {
  Tensor x({1, 2, 3}, {1, 3});
  WindowArgs args{.stride = {1}, .padding = {{1, 1}}};
  EXPECT_THAT(vals(x.avg_pool({2}, args)), ElementsAre(1, 1.5, 2.5, 3));
  args.count_include_pad = true;
  EXPECT_THAT(vals(x.avg_pool({2}, args)), ElementsAre(0.5, 1.5, 2.5, 1.5));
  // ceil_mode's extra elements are never counted
  Tensor y({1, 2, 3, 4, 5}, {5});
  EXPECT_THAT(vals(y.avg_pool({2}, {.stride = {2}, .ceil_mode = true, .count_include_pad = true})),
              ElementsAre(1.5, 3.5, 5));
  EXPECT_THAT(vals(iota({2, 2}).avg_pool({2, 2}, {.padding = {{1, 0}}})),
              ElementsAre(1, 1.5, 2, 2.5));
}

TEST(Pool, LpAndThreeDims) {
  EXPECT_THAT(vals(Tensor({3, 4}, {1, 2}).lp_pool({2}, 2)), ElementsAre(5));
  EXPECT_THAT(vals(Tensor({-3, 4}, {1, 2}).lp_pool({2}, 1)), ElementsAre(7));
  EXPECT_THAT(vals(iota({2, 2, 2, 2}).max_pool({2, 2, 2})), ElementsAre(8, 16));
  EXPECT_THAT(vals(iota({1, 2, 2, 2}).avg_pool({2, 1, 2})), ElementsAre(3.5, 5.5));
}

TEST(Indexing, TriuTril) {
  Tensor x = iota({3, 3});
  EXPECT_THAT(vals(x.triu()), ElementsAre(1, 2, 3, 0, 5, 6, 0, 0, 9));
  EXPECT_THAT(vals(x.triu(1)), ElementsAre(0, 2, 3, 0, 0, 6, 0, 0, 0));
  EXPECT_THAT(vals(x.tril()), ElementsAre(1, 0, 0, 4, 5, 0, 7, 8, 9));
  EXPECT_THAT(vals(x.tril(-1)), ElementsAre(0, 0, 0, 4, 0, 0, 7, 8, 0));
  EXPECT_THAT(vals(iota({2, 3}).triu(-1)), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(vals(iota({2, 3}).tril(-5)), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(Indexing, OneHotCountsNegativesFromTheEnd) {
  Tensor h = idx({0, 2, -1, 5}, {4}).one_hot(3);
  EXPECT_EQ(h.shape(), (Shape{4, 3}));
  EXPECT_THAT(h.to_vector<int32_t>(), ElementsAre(1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0));
}

TEST(Indexing, TopkAndSortAreStable) {
  Tensor x({3, 1, 4, 1, 5, 9, 2, 6}, {8});
  auto [v, i] = x.topk(3);
  EXPECT_THAT(vals(v), ElementsAre(9, 6, 5));
  EXPECT_THAT(ints(i), ElementsAre(5, 7, 4));
  EXPECT_EQ(i.dtype(), DType(dtypes::int64));
  auto [sv, si] = x.topk(3, 0, false);
  EXPECT_THAT(vals(sv), ElementsAre(1, 1, 2));
  EXPECT_THAT(ints(si), ElementsAre(1, 3, 6));
  auto [av, ai] = x.sort();
  EXPECT_THAT(vals(av), ElementsAre(1, 1, 2, 3, 4, 5, 6, 9));
  EXPECT_THAT(ints(ai), ElementsAre(1, 3, 6, 0, 2, 4, 7, 5));
  auto [dv, di] = x.sort(0, true);
  EXPECT_THAT(ints(di), ElementsAre(5, 7, 4, 2, 0, 6, 1, 3));
  auto [cv, ci] = iota({2, 2}).sort(0, true);
  EXPECT_THAT(vals(cv), ElementsAre(3, 4, 1, 2));
  EXPECT_THAT(ints(ci), ElementsAre(1, 1, 0, 0));
}

TEST(Indexing, SortPutsNanAboveEverything) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x({1, nan, 3}, {3});
  EXPECT_THAT(ints(x.sort().second), ElementsAre(0, 2, 1));
  EXPECT_THAT(ints(x.sort(-1, true).second), ElementsAre(1, 2, 0));
}

TEST(Indexing, ScatterAsOnnxExamples) {
  Tensor data = Tensor::zeros({3, 3});
  Tensor updates({1.0, 1.1, 1.2, 2.0, 2.1, 2.2}, {2, 3});
  EXPECT_THAT(vals(data.scatter(0, idx({1, 0, 2, 0, 2, 1}, {2, 3}), updates)),
              ElementsAre(2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2));
  Tensor row({1, 2, 3, 4, 5}, {1, 5}), up({1.1, 2.1}, {1, 2});
  EXPECT_THAT(vals(row.scatter(1, idx({1, 3}, {1, 2}), up)), ElementsAre(1, 1.1, 3, 2.1, 5));
  EXPECT_THAT(vals(row.scatter(1, idx({1, -3}, {1, 2}), up)), ElementsAre(1, 1.1, 2.1, 4, 5));
}

TEST(Indexing, ScatterCombinesDuplicates) {
  Tensor row({1, 2, 3, 4, 5}, {1, 5}), up({1.1, 2.1}, {1, 2});
  Tensor twice = idx({1, 1}, {1, 2});
  auto second = [&](const std::string& reduce) {
    return vals(row.scatter(1, twice, up, reduce))[1];
  };
  EXPECT_FLOAT_EQ(second("none"), 2.1f); // the last update wins
  EXPECT_FLOAT_EQ(second("add"), 5.2f);
  EXPECT_FLOAT_EQ(second("mul"), 2 * 1.1f * 2.1f);
  EXPECT_FLOAT_EQ(second("max"), 2.1f);
  EXPECT_FLOAT_EQ(second("min"), 1.1f);
  EXPECT_THAT(vals(row.scatter(1, twice, up, "max")), ElementsAre(1, 2.1, 3, 4, 5));
}

TEST(Indexing, GatherAndTakeCountNegativesFromTheEnd) {
  Tensor x({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT(vals(x.gather(1, idx({-1, 0, 0, -2}, {2, 2}))), ElementsAre(2, 1, 3, 3));
  Tensor y = iota({2, 3});
  Tensor cols = y.take(idx({2, -3}, {2}), 1);
  EXPECT_EQ(cols.shape(), (Shape{2, 2}));
  EXPECT_THAT(vals(cols), ElementsAre(3, 1, 6, 4));
  Tensor rows = y.take(idx({0, 1, 1, 0}, {2, 2}));
  EXPECT_EQ(rows.shape(), (Shape{2, 2, 3}));
  EXPECT_THAT(vals(rows), ElementsAreArray({1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3}));
  Tensor one = y.take(idx({-1}, {}));
  EXPECT_EQ(one.shape(), (Shape{3}));
  EXPECT_THAT(vals(one), ElementsAre(4, 5, 6));
}

TEST(Matmul, AccumulatesInTheGivenDtype) {
  Tensor a = Tensor({100, 100, 100, 100}, {2, 2}).cast(dtypes::int8);
  Tensor c = a.matmul(a, dtypes::int32);
  EXPECT_EQ(c.dtype(), DType(dtypes::int32));
  EXPECT_THAT(c.to_vector<int32_t>(), ElementsAre(20000, 20000, 20000, 20000));
  Tensor h = Tensor({1000, 1000}, {1, 2}).cast(dtypes::float16);
  Tensor s = h.matmul(h.transpose(), dtypes::float32);
  EXPECT_EQ(s.dtype(), DType(dtypes::float32));
  EXPECT_THAT(vals(s), ElementsAre(2000000));
}

TEST(Bytes, RoundTripExactly) {
  std::vector<int32_t> v = {1, -2, 3, 0x7fffffff};
  auto bytes = std::as_bytes(std::span<const int32_t>(v));
  Tensor t = Tensor::from_bytes(bytes, {2, 2}, dtypes::int32);
  EXPECT_THAT(t.to_vector<int32_t>(), ElementsAre(1, -2, 3, 0x7fffffff));
  std::vector<std::byte> back = (t + Tensor(0.0, dtypes::int32)).to_bytes();
  EXPECT_TRUE(std::equal(back.begin(), back.end(), bytes.begin(), bytes.end()));
  std::vector<uint16_t> half = {0x3c00, 0xc000}; // 1.0, -2.0
  EXPECT_THAT(vals(Tensor::from_bytes(std::as_bytes(std::span<const uint16_t>(half)), {2},
                                      dtypes::float16)),
              ElementsAre(1, -2));
  std::vector<uint8_t> flags = {0, 2};
  Tensor b =
      Tensor::from_bytes(std::as_bytes(std::span<const uint8_t>(flags)), {2}, dtypes::boolean);
  EXPECT_THAT(b.to_vector<int32_t>(), ElementsAre(0, 1));
  EXPECT_EQ(b.to_bytes()[1], std::byte{1});
}

} // namespace
} // namespace beamlab
