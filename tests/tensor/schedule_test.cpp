// Fusion and scheduling: kernel counts, order, identity, memory planning.
#include <gtest/gtest.h>

#include <cmath>

#include <beamlab/beamlab.hpp>

namespace beamlab {
namespace {

size_t kernels(const Tensor& t) { return t.schedule().items.size(); }

TEST(Fusion, MatmulBiasReluIsOneKernel) {
  Tensor x = Tensor::rand({8, 16}, 1), w = Tensor::rand({16, 4}, 2), b = Tensor::rand({4}, 3);
  EXPECT_EQ(kernels((x.matmul(w) + b).relu()), 1u);
}

TEST(Fusion, ElementwiseChainOfAnyLengthIsOneKernel) {
  Tensor x = Tensor::rand({64, 3}, 1), y = Tensor::rand({64, 3}, 2);
  Tensor t = x;
  for (int i = 0; i < 50; ++i) t = (t * y + 1.0).relu().sigmoid() - x.transpose().transpose();
  EXPECT_EQ(kernels(t), 1u);
}

TEST(Fusion, SoftmaxAndLayernormAtMostThreeKernels) {
  Tensor x = Tensor::rand({32, 64}, 1);
  EXPECT_LE(kernels(x.softmax(-1)), 3u);
  EXPECT_LE(kernels(x.layernorm(-1)), 3u);
  EXPECT_EQ(kernels(x.softmax(-1)), 1u); // the row statistics are hoisted, not realized
}

TEST(Fusion, AnEpilogueReadUnderTheNextMatmulStaysWithItsProducer) {
  // BERT's feed-forward, gelu(x @ w1 + b) @ w2, and a layernorm read by the next matmul: fused
  // into the reader they would be computed again for every column of its output (BERT's two
  // big GEMMs ran at a third of the plain one's rate); kept with their producer, once.
  Tensor x = Tensor::rand({8, 16}, 1), w1 = Tensor::rand({16, 32}, 2), b = Tensor::rand({32}, 3);
  Tensor w2 = Tensor::rand({32, 4}, 4);
  Tensor h = (x.matmul(w1) + b).gelu();
  Schedule ffn = h.matmul(w2).schedule();
  ASSERT_EQ(ffn.items.size(), 2u);
  EXPECT_EQ(ffn.items[0].buffers[0], ffn.items[1].buffers[1]);
  EXPECT_EQ(ffn.items[1].buffers.size(), 3u); // its output, h and w2: no bias, no gelu
  EXPECT_EQ(kernels(x.matmul(w1).layernorm(-1).matmul(w2)), 3u);
  // The values are the unfused ones: the second matmul over the first's realized output.
  std::vector<float> hv = h.to_vector<float>(), w2v = w2.to_vector<float>();
  std::vector<float> got = h.matmul(w2).to_vector<float>();
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) {
      double want = 0;
      for (int k = 0; k < 32; ++k) want += double(hv[i * 32 + k]) * w2v[k * 4 + j];
      EXPECT_NEAR(got[i * 4 + j], want, 1e-4 * (1 + std::abs(want))) << i << "," << j;
    }
}

TEST(Fusion, ReductionUsedUnderDifferentIndicesIsRealizedOnce) {
  Tensor x = Tensor::rand({16, 16}, 1);
  Tensor s = x.matmul(x);
  Schedule sched = (s + s.transpose()).schedule();
  EXPECT_EQ(sched.items.size(), 2u);
  // Dependencies first: the matmul kernel writes what the second reads.
  EXPECT_EQ(sched.items[0].buffers[0], sched.items[1].buffers[1]);
}

TEST(Fusion, ReductionBroadcastOverAnOuterLoopIsRealized) {
  Tensor x = Tensor::rand({16, 16}, 1);
  // The row sums vary with the inner axis of the output: recomputing them per element of the
  // outer axis would multiply the work, so they get their own kernel.
  Tensor t = x.sum({0}, true).expand({16, 16}) + x;
  EXPECT_EQ(kernels(t), 2u);
}

// `got` and `want` (computed without fusion) agree elementwise.
void expect_same_values(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  for (size_t i = 0; i < w.size(); ++i)
    ASSERT_NEAR(g[i], w[i], 1e-4 * (1 + std::abs(w[i]))) << "element " << i;
}

TEST(Fusion, ReductionReadThroughAWindowIsRealizedNotRecomputedPerTap) {
  // MobileNet's block: a 1x1 conv read by a depthwise 3x3 conv. Fused, the 1x1 conv would run
  // once per tap (9 times per output); realized, it runs once per result, stored straight into
  // the interior of the depthwise conv's zero-bordered input: no copy between them.
  Tensor x = Tensor::rand({1, 8, 10, 10}, 1), w1 = Tensor::rand({16, 8, 1, 1}, 2);
  Tensor dw = Tensor::rand({16, 1, 3, 3}, 3);
  Tensor y = x.conv2d(w1).relu().conv2d(dw, std::nullopt, 1, 1, 1, 16);
  Schedule sched = y.schedule();
  ASSERT_EQ(sched.items.size(), 2u); // the 1x1 conv, the depthwise conv
  EXPECT_EQ(sched.items[0].buffers[0], sched.items[1].buffers[1]);
  ASSERT_EQ(sched.bordered.size(), 1u);
  EXPECT_EQ(sched.bordered[0].buffer, sched.items[0].buffers[0]);
  EXPECT_EQ(sched.bordered[0].fill, nullptr); // zeros
  expect_same_values(y, x.conv2d(w1).relu().realize().conv2d(dw, std::nullopt, 1, 1, 1, 16));
}

TEST(Fusion, APaddedProducerKeepsItsBorderThroughRunsAndSharedStorage) {
  // ResNet's blocks: each block's output is the next convolution's padded input and the
  // residual added after it, so it is read both in the padded buffer and through it. Four
  // blocks of one shape: their padded buffers share storage, and the border is never written.
  Tensor x = Tensor::rand({1, 8, 6, 6}, 1);
  std::vector<Tensor> w;
  for (int i = 0; i < 8; ++i)
    w.push_back(Tensor::rand({8, 8, 3, 3}, 10 + static_cast<uint64_t>(i)) - 0.5);
  auto block = [&](Tensor t, int i, bool staged) {
    Tensor in = staged ? t.realize() : t;
    Tensor h = in.conv2d(w[2 * i], std::nullopt, 1, 1).relu();
    return (staged ? h.realize() : h).conv2d(w[2 * i + 1], std::nullopt, 1, 1) + in;
  };
  Tensor got = x, want = x;
  for (int i = 0; i < 4; ++i) {
    got = block(got, i, false);
    want = block(want, i, true);
  }
  Schedule s = got.schedule();
  EXPECT_EQ(s.items.size(), 9u); // x's padded copy (x is an input), then one per convolution
  EXPECT_EQ(s.bordered.size(), 7u);
  ExecutionPlan plan = ExecutionPlan::prepare(s, got.inputs());
  EXPECT_LT(plan.storage_count(), 7u);
  std::vector<float> w0 = want.to_vector<float>();
  for (int run = 0; run < 3; ++run) {
    plan.run();
    auto* g = static_cast<const float*>(plan.buffer(*s.outputs[0])->data());
    for (size_t i = 0; i < w0.size(); ++i)
      ASSERT_NEAR(g[i], w0[i], 1e-3 * (1 + std::abs(w0[i]))) << "run " << run << ", element " << i;
  }
}

TEST(Fusion, AMaxPoolsPaddingIsFilledWithTheLowestValueOnce) {
  // ResNet's stem: conv then a 3x3/2 max pool padded by 1. The conv (no relu here: negative
  // values, so a zero border would change the result) stores into the pool's padded input,
  // whose border holds -inf from the plan's start.
  Tensor x = Tensor::rand({1, 3, 9, 9}, 1), w = Tensor::rand({4, 3, 3, 3}, 2) - 0.5;
  Tensor c = x.conv2d(w, std::nullopt, 1, 1) - 10.0;
  Tensor p = c.max_pool2d(3, 2, 1);
  Schedule s = p.schedule();
  ASSERT_EQ(s.bordered.size(), 1u);
  ASSERT_NE(s.bordered[0].fill, nullptr);
  EXPECT_TRUE(std::isinf(s.bordered[0].fill->arg().as_float()));
  EXPECT_EQ(s.items.size(), 3u); // x's padded copy, the conv (minus 10), the pool
  expect_same_values(p, c.realize().max_pool2d(3, 2, 1));
  // The pool's result (a reduction with its window dims kept, reshaped away) is stored into
  // the next convolution's zero-bordered input in turn.
  Tensor w2 = Tensor::rand({4, 4, 3, 3}, 3) - 0.5;
  Tensor q = p.conv2d(w2, std::nullopt, 1, 1);
  Schedule sq = q.schedule();
  EXPECT_EQ(sq.items.size(), 4u);
  ASSERT_EQ(sq.bordered.size(), 2u);
  EXPECT_NE(sq.bordered[0].fill == nullptr, sq.bordered[1].fill == nullptr); // zeros, -inf
  expect_same_values(q, c.realize().max_pool2d(3, 2, 1).realize().conv2d(w2, std::nullopt, 1, 1));
}

TEST(Fusion, AReductionInsideAnotherReductionsLoopIsItsOwnKernel) {
  // ResNet's head: its last convolution (+ relu) summed by the global average pool. Nested in
  // the pool's loop the convolution could be neither vectorized nor tiled; a matmul summed
  // over its rows likewise. The sum of a row's exponentials around its max (softmax) is not
  // nested that way: the max doesn't move with the sum's loop, so it stays one kernel.
  Tensor x = Tensor::rand({1, 8, 7, 7}, 1), w = Tensor::rand({16, 8, 3, 3}, 2);
  Schedule pooled = x.conv2d(w, std::nullopt, 1, 1).relu().mean({2, 3}).schedule();
  ASSERT_EQ(pooled.items.size(), 3u); // the padded input, the convolution, the pool
  EXPECT_EQ(pooled.items[1].buffers[0], pooled.items[2].buffers[1]);
  Tensor a = Tensor::rand({8, 16}, 3), b = Tensor::rand({16, 4}, 4);
  EXPECT_EQ(kernels(a.matmul(b).sum({0})), 2u);
  Tensor r = Tensor::rand({8, 16}, 5);
  EXPECT_EQ(kernels((r - r.max({1}, true)).exp().sum({1})), 1u);
}

TEST(Provenance, EachKernelNamesTheNamedNodesItComputesAndNoOthers) {
  Tensor x = Tensor::rand({8, 16}, 1), w1 = Tensor::rand({16, 16}, 2),
         w2 = Tensor::rand({16, 4}, 3);
  Tensor fc1 = x.matmul(w1), relu = fc1.relu(), fc2 = relu.matmul(w2);
  Program p;
  p.outputs = {fc2};
  p.names = {{fc1.uop(), "fc1"}, {relu.uop(), "relu"}, {fc2.uop(), "fc2"}, {x.uop(), "input"}};
  Schedule s = p.schedule();
  // fc1's reduction is read under fc2's, so it is realized by a kernel of its own, and the relu
  // with it: fused into fc2 it would be computed again for every column of fc2. The input is a
  // buffer, computed by no kernel.
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(p.kernel_names(s), (std::vector<std::vector<std::string>>{{"fc1", "relu"}, {"fc2"}}));
  EXPECT_EQ(join_names({"a", "b", "c", "d", "e"}, 2), "a ... e (5 nodes)");
  EXPECT_EQ(join_names({"a", "b"}, 2), "a, b");
}

TEST(Identity, SameKernelSameKeyAcrossPrograms) {
  Tensor a = Tensor::rand({32, 32}, 1), b = Tensor::rand({32, 32}, 2);
  Tensor c = Tensor::rand({32, 32}, 3), d = Tensor::rand({32, 32}, 4);
  ScheduleItem k1 = a.matmul(b).schedule().items.at(0), k2 = c.matmul(d).schedule().items.at(0);
  EXPECT_EQ(k1.key, k2.key);
  EXPECT_EQ(k1.name, "r_32_32_32");
  EXPECT_NE(k1.key, (a + b).schedule().items.at(0).key);
  EXPECT_EQ((a + b).schedule().items.at(0).name, "E_32_32");
}

TEST(Memory, IntermediatesShareStorageByLiveness) {
  // A chain of realized steps (CONTIGUOUS, and column sums broadcast over the outer loop):
  // each intermediate is dead two kernels after it is written.
  Tensor x = Tensor::rand({64, 64}, 1);
  Tensor t = x;
  for (int i = 0; i < 4; ++i) t = (t.sum({0}, true).expand({64, 64}) * x).contiguous();
  Schedule s = t.schedule();
  ASSERT_GE(s.items.size(), 4u);
  ExecutionPlan plan = ExecutionPlan::prepare(s, t.inputs());
  EXPECT_GE(plan.intermediate_count(), 3u);
  EXPECT_LT(plan.storage_count(), plan.intermediate_count());
  plan.run();
  // The values survive the sharing: compare with the same chain realized step by step.
  Tensor u = x;
  for (int i = 0; i < 4; ++i) u = (u.sum({0}, true).expand({64, 64}) * x).realize();
  std::vector<float> want = u.to_vector<float>();
  auto* got = static_cast<const float*>(plan.buffer(*s.outputs[0])->data());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-3 * std::abs(want[i]));
}

TEST(Plan, RunsManyTimesWithoutRecompiling) {
  Tensor x = Tensor::rand({128, 64}, 7);
  Tensor y = x.softmax(-1);
  ExecutionPlan plan = ExecutionPlan::prepare(y.schedule(), y.inputs());
  CompileCacheStats before = compile_cache_stats();
  for (int i = 0; i < 5; ++i) plan.run();
  std::vector<KernelProfile> prof = plan.profile(3);
  EXPECT_EQ(compile_cache_stats().misses, before.misses);
  ASSERT_EQ(prof.size(), 1u);
  EXPECT_GT(prof[0].cost.flops, 0);
  EXPECT_EQ(prof[0].cost.bytes, 2 * 128 * 64 * 4);
}

// A kernel's work counts its arithmetic, not the comparisons and selects that only choose a
// value: ResNet-18's Winograd output transforms, their coefficients picked by position, were
// counted 11.9 MFLOP for 7.9 of arithmetic (624 GFLOP/s reported on a 459 GFLOP/s machine).
TEST(Plan, CostCountsArithmeticNotSelection) {
  constexpr int64_t n = 1024;
  Tensor a = Tensor::rand({n}, 1), b = Tensor::rand({n}, 2), c = Tensor::rand({n}, 3);
  auto flops = [](const Tensor& t) { return kernel_cost(t.schedule().items.at(0)).flops; };
  EXPECT_EQ(flops(a * b + c), 2 * n);
  EXPECT_EQ(flops((a > b).where(a, b)), 0);
  EXPECT_EQ(flops((a > b).where(a * c, b)), n);
  EXPECT_EQ(flops(a.maximum(b)), n);
}

TEST(Plan, CompiledStagesAreCachedByAst) {
  Tensor a = Tensor::rand({48, 48}, 11), b = Tensor::rand({48, 48}, 12);
  (void)(a * b + 1.0).to_vector<float>();
  CompileCacheStats before = compile_cache_stats();
  Tensor c = Tensor::rand({48, 48}, 13), d = Tensor::rand({48, 48}, 14);
  (void)(c * d + 1.0).to_vector<float>();
  EXPECT_EQ(compile_cache_stats().misses, before.misses);
  EXPECT_GT(compile_cache_stats().hits, before.hits);
}

} // namespace
} // namespace beamlab
