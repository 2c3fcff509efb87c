// The cost model: it learns a known cost function well enough to rank kernels it never saw,
// refuses to fit what holds nothing to learn, shares one model between threads, and runs
// XGBoost (libgomp) in one process with beamlab's kernels (LLVM's libomp) in either order.
// Spearman's correlation on cases computed by hand, ties included.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <thread>

#include "engine/runtime/launch.hpp"
#include "tuner/search/cost_model.hpp"

namespace beamlab::tuner {
namespace {

constexpr size_t kWidth = 8;

/// Kernels of `rows` plans each: the time is the kernel's scale (decades apart) times
/// exp(3 x0) times a little noise; the other features are noise.
struct Synthetic {
  std::vector<uint64_t> kernel;
  std::vector<Features> x;
  std::vector<double> ms;
};

Synthetic synthetic(int kernels, int rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  Synthetic s;
  for (int k = 0; k < kernels; ++k) {
    double scale = std::pow(10.0, 4 * u(rng) - 2);
    for (int r = 0; r < rows; ++r) {
      Features x(kWidth);
      for (float& v : x) v = u(rng);
      s.kernel.push_back(static_cast<uint64_t>(k) * 7919 + 1);
      s.ms.push_back(scale * std::exp(3.0 * x[0]) * (1 + 0.01 * u(rng)));
      s.x.push_back(std::move(x));
    }
  }
  return s;
}

/// The median over the held-out kernels (`from` on) of the Spearman correlation of predicted
/// and true times, for a model trained on the kernels before `from`.
double held_out_correlation(CostObjective objective) {
  const int kernels = 30, rows = 40, from = 20;
  Synthetic s = synthetic(kernels, rows, 42);
  CostModel model({.objective = objective});
  for (size_t i = 0; i < static_cast<size_t>(from * rows); ++i)
    model.add(s.kernel[i], s.x[i], s.ms[i]);
  EXPECT_EQ(model.kernels(), from);
  EXPECT_TRUE(model.fit());
  EXPECT_TRUE(model.trained());
  std::vector<double> rho;
  for (int k = from; k < kernels; ++k) {
    auto begin = static_cast<size_t>(k * rows), end = begin + rows;
    std::vector<Features> x(s.x.begin() + static_cast<long>(begin),
                            s.x.begin() + static_cast<long>(end));
    std::vector<double> ms(s.ms.begin() + static_cast<long>(begin),
                           s.ms.begin() + static_cast<long>(end));
    std::vector<double> predicted = model.predict(x);
    EXPECT_EQ(predicted.size(), x.size());
    rho.push_back(rank_correlation(predicted, ms));
  }
  std::sort(rho.begin(), rho.end());
  EXPECT_GT(rho.front(), 0.8) << "the worst held-out kernel";
  return rho[rho.size() / 2];
}

TEST(CostModel, RanksHeldOutKernelsByALearnedFeature) {
  EXPECT_GT(held_out_correlation(CostObjective::rank), 0.9);
}

TEST(CostModel, RegressionRanksThemToo) {
  EXPECT_GT(held_out_correlation(CostObjective::regression), 0.9);
}

TEST(CostModel, TrainsTheSameModelTwice) {
  Synthetic s = synthetic(10, 30, 7);
  CostModel a, b;
  for (size_t i = 0; i < s.x.size(); ++i) {
    a.add(s.kernel[i], s.x[i], s.ms[i]);
    b.add(s.kernel[i], s.x[i], s.ms[i]);
  }
  ASSERT_TRUE(a.fit());
  ASSERT_TRUE(b.fit());
  EXPECT_EQ(a.predict(s.x), b.predict(s.x));
}

TEST(CostModel, DoesNotFitWithoutTwoDifferentTimesOfAKernel) {
  CostModel model;
  EXPECT_FALSE(model.fit()); // nothing added
  Features x(kWidth, 0.5f);
  // Every kernel has one time: its plans' order is unknown.
  for (uint64_t k = 0; k < 5; ++k)
    for (int r = 0; r < 10; ++r) {
      x[1] = static_cast<float>(r);
      model.add(k, x, 2.5 + static_cast<double>(k));
    }
  model.add(99, x, 1.0); // a kernel of one plan
  EXPECT_EQ(model.size(), 51u);
  EXPECT_EQ(model.kernels(), 6);
  EXPECT_FALSE(model.fit());
  EXPECT_FALSE(model.trained());
  EXPECT_TRUE(model.predict({x}).empty());
  // One kernel with two times is enough.
  model.add(99, x, 3.0);
  EXPECT_TRUE(model.fit());
  EXPECT_EQ(model.predict({x, x}).size(), 2u);
}

TEST(CostModel, IsSharedByThreadsAddingPredictingAndFitting) {
  Synthetic s = synthetic(12, 30, 9);
  CostModel model;
  for (size_t i = 0; i < s.x.size() / 2; ++i) model.add(s.kernel[i], s.x[i], s.ms[i]);
  ASSERT_TRUE(model.fit());
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = s.x.size() / 2 + static_cast<size_t>(t); i < s.x.size(); i += 3) {
        model.add(s.kernel[i], s.x[i], s.ms[i]);
        EXPECT_EQ(model.predict({s.x[i]}).size(), 1u);
        if (i % 40 == 0) EXPECT_TRUE(model.fit());
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(model.size(), s.x.size());
  EXPECT_TRUE(model.fit());
}

TEST(RankCorrelation, OfCasesComputedByHand) {
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {10, 20, 30, 40}), 1);
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {4, 3, 2, 1}), -1);
  // Only the order counts: the same order in other values.
  EXPECT_DOUBLE_EQ(rank_correlation({1, 5, 2}, {0.1, 900, 3}), 1);
  // Ties take their mean rank: (1, 2.5, 2.5, 4) against (1, 2, 3, 4) is 4.5 / sqrt(4.5 * 5).
  EXPECT_NEAR(rank_correlation({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  // (1, 3, 2) against (1, 2, 3): 1 - 6 * 2 / (3 * 8) = 0.5.
  EXPECT_NEAR(rank_correlation({1, 3, 2}, {1, 2, 3}), 0.5, 1e-12);
  // Ties on both sides: (1.5, 1.5, 3) against (1, 2.5, 2.5): 0.75 / sqrt(1.5 * 1.5) = 0.5.
  EXPECT_NEAR(rank_correlation({7, 7, 9}, {1, 5, 5}), 0.5, 1e-12);
  EXPECT_EQ(rank_correlation({3, 3, 3}, {1, 2, 3}), 0);
  EXPECT_EQ(rank_correlation({1}, {2}), 0);
  EXPECT_EQ(rank_correlation({}, {}), 0);
}

// XGBoost links libgomp, beamlab's kernels run on LLVM's libomp. Each test below runs in a
// process of its own (gtest_discover_tests), so each order is really first in its process.

/// A reduction over a tensor big enough to be split across 2 threads, checked on the host, and
/// traced to see both OpenMP threads run a chunk; the default thread count stays what it was.
void run_threaded_kernels() {
  int threads_before = default_threads();
  Tensor a = Tensor::rand({256, 512}, 11), b = Tensor::rand({256, 512}, 12);
  std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
  Tensor c = (a * 2.0f + b).sum({1});
  Program p;
  p.outputs = {c};
  ExecutionPlan plan = ExecutionPlan::prepare(p.schedule(), p.inputs(), {.threads = 2});
  std::set<int> ran;
  for (const KernelTrace& k : plan.trace())
    for (const ThreadSpan& s : k.spans) ran.insert(s.thread);
  EXPECT_EQ(ran, (std::set<int>{0, 1}));
  std::vector<float> got = c.realize({.threads = 2}).to_vector<float>();
  ASSERT_EQ(got.size(), 256u);
  for (size_t r = 0; r < 256; ++r) {
    double want = 0;
    for (size_t j = 0; j < 512; ++j) want += 2.0 * av[r * 512 + j] + bv[r * 512 + j];
    EXPECT_NEAR(got[r], want, 1e-3 * std::abs(want)) << r;
  }
  EXPECT_EQ(default_threads(), threads_before);
}

void fit_and_predict() {
  int threads_before = default_threads();
  Synthetic s = synthetic(10, 40, 3);
  CostModel model;
  for (size_t i = 0; i < s.x.size(); ++i) model.add(s.kernel[i], s.x[i], s.ms[i]);
  ASSERT_TRUE(model.fit());
  std::vector<double> predicted = model.predict(s.x);
  ASSERT_EQ(predicted.size(), s.x.size());
  // Within one kernel (the first 40 rows) the order is learned.
  EXPECT_GT(rank_correlation({predicted.begin(), predicted.begin() + 40},
                             {s.ms.begin(), s.ms.begin() + 40}),
            0.8);
  EXPECT_EQ(default_threads(), threads_before);
}

TEST(CostModelBesideKernels, KernelsFirstThenTheModel) {
  run_threaded_kernels();
  fit_and_predict();
  run_threaded_kernels();
}

TEST(CostModelBesideKernels, TheModelFirstThenKernels) {
  fit_and_predict();
  run_threaded_kernels();
  fit_and_predict();
}

} // namespace
} // namespace beamlab::tuner
