// Every user error of the Tensor API: a UserError naming the op, the shapes and the problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <beamlab/beamlab.hpp>

namespace beamlab {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

Tensor m(Shape s) { return Tensor::zeros(s); }

TEST(UserErrors, IncompatibleBroadcast) {
  EXPECT_THAT(error_of([] { (void)(m({2, 3}) + m({4, 3})); }),
              AllOf(HasSubstr("add"), HasSubstr("(2, 3)"), HasSubstr("(4, 3)"),
                    HasSubstr("do not broadcast")));
}
TEST(UserErrors, WrongReshapeSize) {
  EXPECT_THAT(error_of([] { (void)m({2, 3}).reshape({4, 2}); }),
              AllOf(HasSubstr("reshape"), HasSubstr("(2, 3)"), HasSubstr("(4, 2)")));
  EXPECT_THAT(error_of([] { (void)m({2, 3}).reshape({-1, -1}); }), HasSubstr("more than one -1"));
}
TEST(UserErrors, AxisOutOfRange) {
  EXPECT_THAT(error_of([] { (void)m({2, 3}).sum({2}); }),
              AllOf(HasSubstr("sum"), HasSubstr("axis 2"), HasSubstr("(2, 3)")));
  EXPECT_THAT(error_of([] { (void)m({2, 3}).permute({0, 0}); }), HasSubstr("appears twice"));
}
TEST(UserErrors, MatmulInnerDimensionMismatch) {
  EXPECT_THAT(error_of([] { (void)m({2, 3}).matmul(m({4, 5})); }),
              AllOf(HasSubstr("matmul"), HasSubstr("(2, 3) @ (4, 5)"), HasSubstr("3 vs 4")));
}
TEST(UserErrors, OpOnUnsupportedDtype) {
  EXPECT_THAT(error_of([] { (void)m({2}).bitwise_and(m({2})); }),
              AllOf(HasSubstr("bitwise_and"), HasSubstr("float32"), HasSubstr("(2,)")));
  EXPECT_THAT(error_of([] { (void)Tensor::zeros({2}, Scalar::Bool).neg(); }),
              AllOf(HasSubstr("neg"), HasSubstr("bool")));
  EXPECT_THAT(error_of([] { (void)m({2}).bitcast(Scalar::Int8); }), HasSubstr("bitcast"));
}
TEST(UserErrors, BadDataAndShapes) {
  EXPECT_THAT(error_of([] { Tensor t({1, 2, 3}, {2, 2}); }),
              AllOf(HasSubstr("3 values"), HasSubstr("(2, 2)")));
  EXPECT_THAT(error_of([] { (void)Tensor::zeros({2, 0}); }), HasSubstr("below 1"));
  EXPECT_THAT(error_of([] { Tensor t({1.0f, 1e30f}, {2}, Scalar::Int32); }),
              AllOf(HasSubstr("element 1"), HasSubstr("does not fit dtype int32")));
  EXPECT_THAT(error_of([] { (void)m({2, 3}).expand({4, 3}); }), HasSubstr("expand"));
  EXPECT_THAT(error_of([] { (void)m({2, 3}).shrink({{0, 2}, {2, 5}}); }), HasSubstr("shrink"));
  EXPECT_THAT(error_of([] { (void)m({2, 3}).pad({{0, 1}}); }), HasSubstr("pad"));
  EXPECT_THAT(error_of([] { (void)m({1, 2, 5, 5}).conv2d(m({4, 3, 3, 3})); }), HasSubstr("conv2d"));
  EXPECT_THAT(error_of([] { (void)Tensor::einsum("ij,jk->ik", std::vector<Tensor>{m({2, 3})}); }),
              HasSubstr("einsum"));
}
TEST(UserErrors, OptsThatDoNotApplyNameTheKernel) {
  HeuristicPolicy p;
  p.set("*", {{OptOp::Unroll, 0, 4}});
  Tensor t = m({8, 8}) + 1.0;
  EXPECT_THAT(error_of([&] { t.realize({.policy = &p}); }),
              AllOf(HasSubstr("kernel E_8_8"), HasSubstr("UNROLL(0,4)")));
}

} // namespace
} // namespace beamlab
