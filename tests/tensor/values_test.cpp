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
// edges, in vector and scalar code.
TEST(Values, Exp2AccurateAndExactAtTheEdges) {
  std::vector<float> xs;
  for (int i = -1600; i <= 1300; ++i) xs.push_back(static_cast<float>(i) * 0.1f + 0.0371f);
  xs.insert(xs.end(),
            {0.0f, -0.0f, 1.0f, 127.5f, 128.0f, -149.5f, -151.0f, -1e30f, 1e30f,
             -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
             std::numeric_limits<float>::quiet_NaN()});
  while (xs.size() % 16) xs.push_back(0.5f);
  Tensor x(std::span<const float>(xs), {static_cast<int64_t>(xs.size())});
  std::vector<float> got = x.exp2().to_vector<float>();
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

} // namespace
} // namespace beamlab
