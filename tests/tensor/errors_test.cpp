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
// One line naming the op, the shapes or values, and the fix.
MATCHER(OneLine, "") { return arg.find('\n') == std::string::npos && arg != "no error"; }

TEST(UserErrors, ConvShapes) {
  std::string e = error_of([] { (void)m({1, 2, 5}).conv(m({4, 2, 3, 3})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv: input must be (N, C, d1..dk)"),
                       HasSubstr("same rank, not (1, 2, 5) and (4, 2, 3, 3)")));
  e = error_of([] { (void)m({1, 4, 5}).conv(m({6, 2, 3}), std::nullopt, 3); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv: input (1, 4, 5) and weight (6, 2, 3)"),
                       HasSubstr("groups=3"), HasSubstr("need C = weight C * groups")));
  e = error_of([] { (void)m({1, 2, 5}).conv(m({4, 2, 3}), m({3})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv: bias has shape (3,), not (4,)")));
  e = error_of([] { (void)m({1, 1, 2, 2}).conv(m({1, 1, 3, 1})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv: a window of 3"), HasSubstr("spans 3 elements"),
                       HasSubstr("dim 2 of (1, 1, 2, 2) has 2"), HasSubstr("pad more")));
  e = error_of([] { (void)m({1, 1, 5}).conv2d(m({1, 1, 3})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv2d: input must be (N, C, H, W)")));
  // Channel blocks: a plain input, a dense 3x3 weight, a bias of the wrong length, blocks of
  // the wrong count.
  e = error_of([] { (void)m({1, 16, 4, 4}).conv_blocked(m({16, 16, 1, 1}), std::nullopt, 1, {}); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv_blocked: input (1, 16, 4, 4) must be float32 "
                                            "channel blocks (N, 1, H, W, 16) for weight "
                                            "(16, 16, 1, 1) with groups=1")));
  e = error_of([] {
    (void)m({1, 1, 4, 4, 16}).conv_blocked(m({16, 16, 3, 3}), std::nullopt, 1, {});
  });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("a depthwise or unpadded stride-1 1x1 convolution "
                                            "(conv computes the others)")));
  e = error_of([] { (void)m({1, 1, 4, 4, 16}).conv_blocked(m({16, 16, 1, 1}), m({1}), 1, {}); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv_blocked: bias has shape (1,), not (16,)")));
  e = error_of([] { (void)m({1, 2, 4, 4, 16}).from_channel_blocks(16); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("from_channel_blocks: input must be (N, 1, d1..dk, 16) "
                                            "for 16 channels, not (1, 2, 4, 4, 16)")));
}

TEST(UserErrors, WindowArguments) {
  Tensor x = m({1, 1, 5, 5}), w = m({1, 1, 3, 3});
  auto conv = [&](WindowArgs a) { return error_of([&] { (void)x.conv(w, std::nullopt, 1, a); }); };
  EXPECT_THAT(conv({.stride = {1, 2, 1}}),
              AllOf(OneLine(), HasSubstr("conv: stride has 3 values for 2 spatial dims"),
                    HasSubstr("one per dim")));
  EXPECT_THAT(conv({.stride = {0}}),
              AllOf(OneLine(), HasSubstr("conv: stride must be at least 1, not 0")));
  EXPECT_THAT(conv({.dilation = {1, -1}}),
              AllOf(OneLine(), HasSubstr("conv: dilation must be at least 1, not -1"),
                    HasSubstr("spatial dim 1")));
  EXPECT_THAT(conv({.padding = {{0, 0}, {-1, 0}}}),
              AllOf(OneLine(), HasSubstr("conv: padding (-1, 0) of dim 1 is negative"),
                    HasSubstr("shrink")));
  EXPECT_THAT(conv({.ceil_mode = true}),
              AllOf(OneLine(), HasSubstr("conv: ceil_mode and count_include_pad apply to pooling "
                                         "only; leave them unset")));
  std::string e = error_of([&] { (void)x.max_pool({2, 2, 2, 2, 2}); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("max_pool: a kernel of 5 dims"),
                       HasSubstr("(1, 1, 5, 5) has 4")));
  e = error_of([&] { (void)x.avg_pool({}); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("avg_pool: the kernel is empty; give one size")));
  e = error_of([&] { (void)x.max_pool({2, 0}); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("max_pool: kernel (2, 0) has a size below 1; every")));
  e = error_of([&] { (void)x.max_pool({2}, {.count_include_pad = true}); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("max_pool: count_include_pad applies to avg_pool "
                                            "only; leave it unset")));
  e = error_of([&] { (void)x.lp_pool({2}, 0); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("lp_pool: p must be positive and finite, not 0")));
  e = error_of([&] { (void)x.max_pool({7}); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("max_pool: a window of 7"),
                       HasSubstr("dim 3 of (1, 1, 5, 5) has 5")));
}

TEST(UserErrors, ConvTransposeShapes) {
  Tensor x = m({1, 2, 3}), w = m({2, 1, 1});
  std::string e = error_of([&] { (void)x.conv_transpose(m({3, 1, 2})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv_transpose: input (1, 2, 3) and weight (3, 1, 2)"),
                       HasSubstr("need C = weight dim 0")));
  e = error_of([&] { (void)x.conv_transpose(w, std::nullopt, 1, {.padding = {{2, 2}}}); });
  EXPECT_THAT(e, AllOf(OneLine(),
                       HasSubstr("conv_transpose: the output of spatial dim 0 would have -1"),
                       HasSubstr("padding (2, 2) cuts more")));
  e = error_of([&] { (void)x.conv_transpose(w, std::nullopt, 1, {}, {-1}); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv_transpose: output_padding -1 is negative")));
  e = error_of([&] { (void)x.conv_transpose(w, std::nullopt, 1, {}, {1, 1}); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("conv_transpose: output_padding has 2 values for 1")));
}

Tensor ints(Shape s) { return Tensor::zeros(s, Scalar::Int64); }

TEST(UserErrors, IndexingArguments) {
  std::string e = error_of([] { (void)m({3}).triu(); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("triu: needs at least 2 dims, not (3,)")));
  e = error_of([] { (void)m({3}).one_hot(4); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("one_hot: indices must be integers, not float32 (3,)"),
                       HasSubstr("cast them first")));
  e = error_of([] { (void)ints({3}).one_hot(0); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("one_hot: num_classes must be at least 1, not 0")));
  e = error_of([] { (void)m({2, 5}).topk(6); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("topk: k = 6 is not in [1, 5]"),
                       HasSubstr("axis -1 of shape (2, 5)")));
  e = error_of([] { (void)m({2, 5}).sort(2); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("sort: axis 2 is out of range for shape (2, 5)")));
  e = error_of([] { (void)m({2, 3}).take(m({2})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("take: index must be an integer tensor, not float32")));
  e = error_of([] { (void)m({2, 3}).gather(0, ints({2, 4})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("gather: index shape (2, 4) is larger than (2, 3) "
                                            "on axis 1")));
  e = error_of([] { (void)m({2, 3}).gather(0, m({2, 3})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("gather: index must be an integer tensor of rank 2")));
}

TEST(UserErrors, ScatterArguments) {
  Tensor x = m({2, 3});
  std::string e = error_of([&] { (void)x.scatter(0, ints({1, 3}), m({1, 3}), "sum"); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("scatter: reduce must be none, add, mul, max or min, "
                                            "not 'sum'")));
  e = error_of([&] { (void)x.scatter(0, ints({1, 3}), m({1, 2})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("scatter: src (1, 2) and index (1, 3) must have the "
                                            "same shape")));
  e = error_of([&] { (void)x.scatter(0, ints({1, 4}), m({1, 4})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("scatter: index shape (1, 4) is larger than (2, 3) "
                                            "on axis 1")));
  e = error_of([&] { (void)x.scatter(1, m({2, 3}), m({2, 3})); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("scatter: index must be an integer tensor of rank 2, "
                                            "not float32")));
}

TEST(UserErrors, MatmulAccumulatorAndBytes) {
  std::string e = error_of([] { (void)m({2, 2}).matmul(m({2, 2}), Scalar::Int32); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("matmul: accumulating float32 @ float32 in int32"),
                       HasSubstr("accumulate in a float dtype")));
  e = error_of([] { (void)m({2, 2}).matmul(m({2, 2}), Scalar::Bool); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("matmul: cannot accumulate in bool")));
  std::vector<std::byte> three(3);
  e = error_of([&] { (void)Tensor::from_bytes(three, {2}, Scalar::Int16); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("from_bytes: 3 bytes do not fill shape (2,) of int16 "
                                            "(4 bytes)")));
  e = error_of([&] { (void)Tensor::from_bytes(three, {3}, Scalar::Index); });
  EXPECT_THAT(e, AllOf(OneLine(), HasSubstr("from_bytes: index is not an element dtype")));
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
