// Features of kernels and plans: one fixed length with a name each, the same vector for the
// same AST and plan (also after the AST went through its text form), and values that say what
// the plan did.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tuner/search/features.hpp"

namespace beamlab::tuner {
namespace {

UOpPtr first_kernel(const Tensor& t) { return t.schedule().items.at(0).ast; }

UOpPtr matmul_kernel() {
  return first_kernel(Tensor::rand({64, 48}, 1).matmul(Tensor::rand({48, 32}, 2)));
}

/// The value of the feature called `name`.
float feature(const Features& f, const std::string& name) {
  const std::vector<std::string>& names = feature_names();
  auto it = std::find(names.begin(), names.end(), name);
  EXPECT_NE(it, names.end()) << name;
  return it == names.end() ? NAN : f.at(static_cast<size_t>(it - names.begin()));
}

/// A size feature back to the size (they are log2(1 + x)).
double size_of(float f) { return std::exp2(static_cast<double>(f)) - 1; }

Features features_of(const UOpPtr& ast, const std::string& plan, int threads = 2) {
  Expected<Features> f = plan_features(ast, kernel_features(ast), *parse_opts(plan), threads);
  EXPECT_TRUE(f) << plan << ": " << (f ? "" : f.error());
  return f ? *f : Features{};
}

TEST(Features, HaveOneNameEachAndOneLength) {
  const std::vector<std::string>& names = feature_names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_EQ(names.front().rfind("kernel.", 0), 0u);
  EXPECT_EQ(names.back().rfind("plan.", 0), 0u);
  std::vector<UOpPtr> kernels = {
      matmul_kernel(), first_kernel(Tensor::rand({1000}, 3).exp() + Tensor::rand({1000}, 4)),
      first_kernel(Tensor::rand({16, 128}, 5).softmax(1))};
  for (const UOpPtr& ast : kernels)
    for (const char* plan : {"", "THREAD(0,2)"}) {
      Expected<Features> f = plan_features(ast, kernel_features(ast), *parse_opts(plan), 2);
      ASSERT_TRUE(f) << f.error();
      EXPECT_EQ(f->size(), names.size());
      for (float x : *f) EXPECT_TRUE(std::isfinite(x));
    }
}

TEST(Features, AreTheSameForTheSameAstAndPlanAndAfterTheAstsTextForm) {
  const std::string plan = "UPCAST(1,4) UNROLL(2,4) THREAD(0,2)";
  std::string text;
  Features first;
  {
    UOpPtr ast = matmul_kernel();
    text = print_graph(ast);
    first = features_of(ast, plan);
    EXPECT_EQ(features_of(ast, plan), first);
  }
  // The original nodes are gone (interned nodes live while referenced): parsed afresh.
  auto parsed = parse_graph(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(features_of(*parsed, plan), first);
}

TEST(Features, SayWhatThePlanDid) {
  UOpPtr ast = matmul_kernel();
  Features none = features_of(ast, "");
  EXPECT_EQ(feature(none, "plan.opts"), 0);
  EXPECT_NEAR(size_of(feature(none, "plan.lanes")), 1, 1e-4);
  EXPECT_EQ(feature(none, "plan.parallel_extent"), 0);

  Features f = features_of(ast, "UPCAST(1,4) THREAD(0,2)");
  EXPECT_GE(size_of(feature(f, "plan.lanes")), 4 - 1e-4);
  EXPECT_EQ(feature(f, "plan.count.upcast"), 1);
  EXPECT_EQ(feature(f, "plan.amount.upcast"), 2); // log2 4
  EXPECT_EQ(feature(f, "plan.count.thread"), 1);
  EXPECT_EQ(feature(f, "plan.amount.thread"), 1);
  EXPECT_NEAR(size_of(feature(f, "plan.upcast_size")), 4, 1e-4);
  EXPECT_NEAR(size_of(feature(f, "plan.parallel_extent")), 2, 1e-4);
  EXPECT_EQ(feature(f, "plan.thread_balance"), 1);
  // The output's columns are its contiguous axis: the upcast store is one vector.
  EXPECT_EQ(feature(f, "plan.lane_store_contiguous"), 1);
  // The kernel's part doesn't depend on the plan.
  for (size_t i = 0; i < kernel_features(ast).size(); ++i) EXPECT_EQ(f[i], none[i]) << i;

  Features unrolled = features_of(ast, "UNROLL(2,8) TILE(0,16)");
  EXPECT_EQ(feature(unrolled, "plan.amount.unroll"), 3);
  EXPECT_EQ(feature(unrolled, "plan.amount.tile"), 4);
  EXPECT_NEAR(size_of(feature(unrolled, "plan.tile_max")), 16, 1e-3);
  EXPECT_NEAR(size_of(feature(unrolled, "plan.unroll_size")), 8, 1e-4);
}

TEST(Features, OfTheKernelCountItsWork) {
  UOpPtr ast = matmul_kernel();
  Features k = kernel_features(ast);
  Features f = features_of(ast, "");
  // 64 x 32 outputs, 48 multiply-adds each (a MUL and the REDUCE's ADD).
  EXPECT_NEAR(size_of(feature(f, "kernel.flops")), 64.0 * 32 * 48 * 2, 1);
  EXPECT_NEAR(size_of(feature(f, "kernel.bytes")), (64.0 * 32 + 64 * 48 + 48 * 32) * 4, 1);
  EXPECT_EQ(feature(f, "kernel.buffers"), 3);
  EXPECT_EQ(feature(f, "kernel.loop_axes"), 2);
  EXPECT_EQ(feature(f, "kernel.reduce_axes"), 1);
  EXPECT_NEAR(size_of(feature(f, "kernel.reduce_size")), 48, 1e-3);
  EXPECT_EQ(feature(f, "kernel.output_bits"), 32);
  EXPECT_EQ(feature(f, "kernel.output_float"), 1);
  EXPECT_NEAR(size_of(feature(f, "kernel.loads")), 2, 1e-4);
  EXPECT_NEAR(size_of(feature(f, "kernel.reduces")), 1, 1e-4);
  Features e = kernel_features(first_kernel(Tensor::rand({1000}, 3).exp()));
  EXPECT_GT(e[1], 0); // bytes
  EXPECT_NE(e, k);
}

TEST(Features, OfAPlanThatDoesNotApplyAreItsReason) {
  UOpPtr ast = matmul_kernel();
  Expected<Features> f = plan_features(ast, kernel_features(ast), *parse_opts("UNROLL(0,5)"), 2);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().find("UNROLL(0,5)"), std::string::npos) << f.error();
}

} // namespace
} // namespace beamlab::tuner
