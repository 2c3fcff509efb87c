// Tensors with symbolic shapes: a Variable("seq", lo, hi) in a shape, one plan run at any value.
//
// The differential test builds random programs of what a transformer does along a sequence
// (elementwise chains, broadcasting against fixed rows, GEMMs with fixed weights, a head split
// and attention, softmax and layernorm along either axis, reductions over the sequence), once
// over `seq` rows of a fixed input (x.shrink to seq) and once over v rows, for random v in the
// range. The symbolic program is scheduled and compiled once; its plan runs at each v, and each
// output must match the fixed-shape program's at v.
//
// Knobs: BEAMLAB_SYMBOLIC_SHAPE_CASES (default 24), BEAMLAB_SYMBOLIC_SHAPE_SEED (default 1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <random>

#include <beamlab/beamlab.hpp>

#include "engine/support/knobs.hpp"

namespace beamlab {
namespace {

using ::testing::HasSubstr;

const Variable kSeq{"seq", 1, 24};

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SymbolicDim, ProductsAndQuotientsStayMonomials) {
  Dim seq = kSeq;
  EXPECT_EQ(seq * 768, 768 * seq);
  EXPECT_EQ((seq * 768 / 12).str(), "64*seq");
  EXPECT_EQ((seq * Dim(Variable{"batch", 1, 8})).str(), "batch*seq");
  EXPECT_EQ(shape_str({seq, 768}), "(seq, 768)");
  EXPECT_EQ((seq * 4).max(), 96);
  EXPECT_EQ((seq * 4).min(), 4);
  EXPECT_EQ((seq * 4).at({{"seq", 5}}), 20);
  EXPECT_TRUE(divides(seq, seq * 3));
  EXPECT_FALSE(divides(seq * 2, seq * 3));
  EXPECT_EQ(seq + 0, seq);
  EXPECT_EQ(seq - seq, 0);
  EXPECT_NE(seq, 24); // a variable is not its upper bound
}

TEST(SymbolicDim, WhatAShapeCantHoldIsAClearError) {
  Dim seq = kSeq;
  EXPECT_THAT(error_of([&] { (void)(seq + 1); }), HasSubstr("seq + 1"));
  EXPECT_THAT(error_of([&] { (void)(seq * 3 / 2); }), HasSubstr("3*seq is not a multiple of 2"));
  EXPECT_THAT(error_of([&] { (void)static_cast<int64_t>(seq); }),
              HasSubstr("depends on variable seq"));
  EXPECT_THAT(error_of([&] { (void)Dim(Variable{"n", 3, 1}); }), HasSubstr("variable n"));
  EXPECT_THAT(error_of([&] { (void)seq.at({}); }), HasSubstr("seq=N, N in [1, 24]"));
}

TEST(SymbolicShapes, BroadcastReshapeAndMatmulKeepTheVariable) {
  Dim seq = kSeq;
  Tensor x = Tensor::randn({24, 48}, 1).shrink({{0, seq}, {0, 48}});
  EXPECT_EQ(shape_str(x.shape()), "(seq, 48)");
  EXPECT_EQ(shape_str((x + Tensor::randn({48}, 2)).shape()), "(seq, 48)");
  EXPECT_EQ(shape_str(x.reshape({seq, 4, -1}).shape()), "(seq, 4, 12)");
  EXPECT_EQ(shape_str(x.reshape({-1}).shape()), "(48*seq,)");
  EXPECT_EQ(shape_str(x.matmul(x.transpose()).shape()), "(seq, seq)");
  EXPECT_EQ(shape_str(x.sum({0}).shape()), "(48,)");
  EXPECT_THAT(error_of([&] {
                (void)(x + Tensor::randn({5, 48}, 3));
              }),
              HasSubstr("dimension 0: seq vs 5"));
  EXPECT_THAT(error_of([&] {
                (void)x.shrink({{0, Dim(Variable{"n", 1, 30})}, {0, 48}});
              }),
              HasSubstr("not a non-empty range"));
  EXPECT_THAT(error_of([&] {
                (void)x.shrink({{-1, seq}, {0, 48}});
              }),
              HasSubstr("not a non-empty range"));
  EXPECT_THAT(error_of([&] { (void)x.reshape({seq * -1, -48}); }), HasSubstr("bad dimension"));
}

// The output of a plan's run, at the values it ran with.
std::vector<float> output_at(const ExecutionPlan& plan, const Schedule& s, const Shape& shape,
                             const VarValues& values) {
  auto buffer = plan.buffer(*s.outputs.at(0));
  const auto* p = static_cast<const float*>(buffer->data());
  return {p, p + shape_numel(shape).at(values)};
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 2e-4 + 2e-4 * std::fabs(want[i])) << what << ", element " << i;
}

TEST(SymbolicShapes, RealizeAtAValueGivesThatShape) {
  Dim seq = kSeq;
  Tensor base = Tensor::randn({24, 8}, 1);
  Tensor y = (base.shrink({{0, seq}, {0, 8}}) * 2).softmax(0);
  Tensor r = y;
  r.realize({.vars = {{"seq", 5}}});
  EXPECT_EQ(shape_str(r.shape()), "(5, 8)");
  expect_near(r.to_vector<float>(), (base.slice(0, 0, 5) * 2).softmax(0).to_vector<float>(),
              "softmax over 5 rows");
  CompileCacheStats before = compile_cache_stats();
  Tensor(y).realize({.vars = {{"seq", 9}}});
  EXPECT_EQ(compile_cache_stats().misses, before.misses); // nothing compiled for a new value
  EXPECT_THAT(error_of([&] { Tensor(y).realize(); }), HasSubstr("variable seq has no value"));
  EXPECT_THAT(error_of([&] { Tensor(y).realize({.vars = {{"seq", 25}}}); }), HasSubstr("seq"));
  EXPECT_THAT(error_of([&] {
                Tensor(y).realize({.vars = {{"seq", 3}, {"batch", 2}}});
              }),
              HasSubstr("no variable 'batch'"));
}

// Positions over a symbolic length: arange(seq) is 0..seq-1 at each value, and a causal mask
// (tril of a seq x seq matrix, kept where column <= row) is the running sum's matrix: its
// matmul with x sums the rows up to each, checked here at values across the range.
TEST(SymbolicShapes, ArangeAndTrilOverAVariableGivePositionsAndACausalMask) {
  Dim seq = kSeq;
  Tensor base = Tensor::randn({24, 4}, 2);
  Tensor x = base.shrink({{0, seq}, {0, 4}});
  Tensor pos = Tensor::arange(seq).cast(Scalar::Float32);
  EXPECT_EQ(shape_str(pos.shape()), "(seq,)");
  Tensor y = x + pos.reshape({seq, 1});
  Tensor z = Tensor::ones({seq, seq}).tril().matmul(x);
  Tensor w = Tensor::ones({seq, seq}).triu(1).matmul(x); // the rows strictly after each
  std::vector<float> all = base.to_vector<float>();
  for (int64_t v : {1, 6, 24}) {
    SCOPED_TRACE("seq=" + std::to_string(v));
    Tensor ry = y, rz = z, rw = w;
    std::array<Tensor*, 3> outs = {&ry, &rz, &rw};
    Tensor::realize_all(outs, {.vars = {{"seq", v}}});
    std::vector<float> gy = ry.to_vector<float>(), gz = rz.to_vector<float>(),
                       gw = rw.to_vector<float>();
    ASSERT_EQ(gy.size(), static_cast<size_t>(v * 4));
    for (int64_t c = 0; c < 4; ++c) {
      float total = 0, running = 0;
      for (int64_t i = 0; i < v; ++i) total += all[static_cast<size_t>(i * 4 + c)];
      for (int64_t i = 0; i < v; ++i) {
        auto e = static_cast<size_t>(i * 4 + c);
        running += all[e];
        EXPECT_FLOAT_EQ(gy[e], all[e] + static_cast<float>(i)) << "y[" << i << ", " << c << "]";
        EXPECT_NEAR(gz[e], running, 1e-4) << "z[" << i << ", " << c << "]";
        EXPECT_NEAR(gw[e], total - running, 1e-4) << "w[" << i << ", " << c << "]";
      }
    }
  }
}

// A kernel that reads only constants (a model's position table, cut to the sequence) is not
// run once for the plan as one over fixed sizes is: its result changes with the value.
TEST(SymbolicShapes, AKernelOfConstantsOverAVariableRunsAtEachValue) {
  Dim seq = kSeq;
  auto storage = std::make_shared<Buffer>(24 * 8 * sizeof(float));
  std::vector<float> table = Tensor::randn({24, 8}, 2).to_vector<float>();
  std::copy(table.begin(), table.end(), storage->as<float>().data());
  storage->mark_constant();
  Tensor pos = Tensor::from_storage(storage, {24, 8}, Scalar::Float32);
  Tensor base = Tensor::randn({24, 8}, 1);
  auto f = [&](const Tensor& x, const Dim& n) {
    return x + (pos.shrink({{0, n}, {0, 8}}) * 2).contiguous().softmax(0);
  };
  Tensor y = f(base.shrink({{0, seq}, {0, 8}}), seq);
  Schedule s = y.schedule();
  ExecutionPlan plan = ExecutionPlan::prepare(s, y.inputs());
  for (int64_t v : {5, 9, 3}) {
    plan.run({{"seq", v}});
    expect_near(output_at(plan, s, y.shape(), {{"seq", v}}),
                f(base.slice(0, 0, v), v).to_vector<float>(), "seq=" + std::to_string(v));
  }
}

// A random program along the sequence: what it does to x (rows seq or v, D columns).
using Program = std::function<Tensor(const Tensor&)>;

class Programs {
public:
  explicit Programs(uint64_t seed) : rng_(seed) {}

  // A chain of 1 to 4 steps over (rows, d).
  Program next(int64_t d) {
    std::vector<Program> steps;
    int n = pick(1, 4);
    for (int i = 0; i < n; ++i) steps.push_back(step(d));
    return [steps](const Tensor& x) {
      Tensor y = x;
      for (const Program& s : steps) y = s(y);
      return y;
    };
  }

private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  // One step, (rows, d) -> (rows, d).
  Program step(int64_t d) {
    uint64_t seed = seed_;
    seed_ += 4;
    switch (pick(0, 8)) {
    case 0: return [](const Tensor& x) { return (x * 0.5).tanh() + x.relu(); };
    case 1: // a fixed row broadcast along the sequence
      return [d, seed](const Tensor& x) { return x * Tensor::rand({d}, seed) + 0.25; };
    case 2: // a linear layer with a fixed weight
      return [d, seed](const Tensor& x) {
        return x.linear(Tensor::randn({d, d}, seed) * (1.0 / std::sqrt(double(d))),
                        Tensor::randn({d}, seed + 1));
      };
    case 3: return [](const Tensor& x) { return x.softmax(-1); };
    case 4: return [](const Tensor& x) { return x.softmax(0); }; // along the sequence
    case 5: return [](const Tensor& x) { return x.layernorm(-1); };
    case 6: // sums and maxima over the sequence, broadcast back
      return [](const Tensor& x) { return x - x.max({0}, true) + x.sum({0}, true) * 0.01; };
    case 7: // attention over 2 heads: a head split, (seq x seq) scores, a merge
      return [d](const Tensor& x) {
        Dim rows = x.shape()[0];
        Tensor h = x.reshape({rows, 2, d / 2}).transpose(0, 1);
        return h.scaled_dot_product_attention(h, h).transpose(0, 1).reshape({rows, d});
      };
    default: // gelu, through a flattening reshape and back
      return [d](const Tensor& x) { return x.reshape({-1}).gelu().reshape({-1, d}); };
    }
  }

  std::mt19937_64 rng_;
  uint64_t seed_ = 10;
};

TEST(SymbolicShapes, OnePlanMatchesTheFixedShapeProgramAtEveryValue) {
  int cases = static_cast<int>(knob_int("BEAMLAB_SYMBOLIC_SHAPE_CASES", 24));
  uint64_t seed = static_cast<uint64_t>(knob_int("BEAMLAB_SYMBOLIC_SHAPE_SEED", 1));
  Programs programs(seed);
  std::mt19937_64 rng(seed * 7919);
  Dim seq = kSeq;
  for (int c = 0; c < cases; ++c) {
    int64_t d = 4 * std::uniform_int_distribution<int64_t>(1, 4)(rng);
    Program f = programs.next(d);
    Tensor base = Tensor::randn({kSeq.hi, d}, 100 + static_cast<uint64_t>(c));
    Tensor y = f(base.shrink({{0, seq}, {0, d}}));
    Schedule s = y.schedule();
    ExecutionPlan plan = ExecutionPlan::prepare(s, y.inputs());
    size_t kernels = plan.kernels().size();
    std::vector<int64_t> values = {kSeq.lo, kSeq.hi};
    for (int i = 0; i < 3; ++i)
      values.push_back(std::uniform_int_distribution<int64_t>(kSeq.lo, kSeq.hi)(rng));
    for (int64_t v : values) {
      std::string what = "case " + std::to_string(c) + " (d " + std::to_string(d) + ", seed " +
                         std::to_string(seed) + ") at seq=" + std::to_string(v);
      SCOPED_TRACE(what);
      plan.run({{"seq", v}});
      Tensor fixed = f(base.slice(0, 0, v));
      EXPECT_EQ(shape_at(y.shape(), {{"seq", v}}), std::vector<int64_t>(fixed.shape()));
      expect_near(output_at(plan, s, y.shape(), {{"seq", v}}), fixed.to_vector<float>(), what);
      if (HasFailure()) return;
    }
    EXPECT_EQ(plan.kernels().size(), kernels); // nothing compiled for a new value
  }
}

// A mean or variance over the variable divides by its value, counted at run time; over fixed
// axes beside it, by the number, as before.
TEST(SymbolicShapes, AMeanOverTheVariableDividesByItsValue) {
  Dim seq = kSeq;
  Tensor base = Tensor::randn({kSeq.hi, 6}, 11);
  Tensor x = base.shrink({{0, seq}, {0, 6}});
  std::vector<Tensor> ys = {x.mean({0}), x.var({0}), x.var({0}, true, 0), x.mean(),
                            x.mean({1}, true)};
  TensorPlan plan(ys);
  for (int64_t v : {kSeq.lo + 1, int64_t{7}, kSeq.hi}) {
    SCOPED_TRACE("seq=" + std::to_string(v));
    plan.run({{"seq", v}});
    Tensor rows = base.slice(0, 0, v);
    std::vector<Tensor> want = {rows.mean({0}), rows.var({0}), rows.var({0}, true, 0), rows.mean(),
                                rows.mean({1}, true)};
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(plan.shape(i), std::vector<int64_t>(want[i].shape())) << "output " << i;
      const auto* out = static_cast<const float*>(plan.output(i)->data());
      expect_near({out, out + want[i].numel()}, want[i].to_vector<float>(),
                  "output " + std::to_string(i));
    }
  }
}

// A serving loop: one TensorPlan over an input whose storage each request rewrites in place
// (a request of v rows in the storage's first v rows), run at the request's length. Each output
// must match the fixed-shape program over that request, with nothing compiled after the first.
TEST(SymbolicShapes, ATensorPlanServesNewInputsInPlaceAtEachValue) {
  uint64_t seed = static_cast<uint64_t>(knob_int("BEAMLAB_SYMBOLIC_SHAPE_SEED", 1));
  Programs programs(seed + 1);
  std::mt19937_64 rng(seed * 104729);
  Dim seq = kSeq;
  for (int c = 0; c < 4; ++c) {
    int64_t d = 4 * std::uniform_int_distribution<int64_t>(1, 4)(rng);
    Program f = programs.next(d);
    auto storage = std::make_shared<Buffer>(static_cast<size_t>(kSeq.hi * d) * sizeof(float));
    Tensor x = Tensor::from_storage(storage, {kSeq.hi, d}, Scalar::Float32);
    Tensor y = f(x.shrink({{0, seq}, {0, d}}));
    TensorPlan plan({y});
    ASSERT_EQ(plan.variables().size(), 1u);
    EXPECT_EQ(plan.variables()[0].name, "seq");
    size_t kernels = plan.plan().kernels().size();
    for (int request = 0; request < 4; ++request) {
      int64_t v = request == 0 ? kSeq.hi : std::uniform_int_distribution<int64_t>(1, 24)(rng);
      std::string what = "case " + std::to_string(c) + " request " + std::to_string(request) +
                         " at seq=" + std::to_string(v);
      SCOPED_TRACE(what);
      std::vector<float> rows = Tensor::randn({v, d}, 500 + 10 * c + request).to_vector<float>();
      std::copy(rows.begin(), rows.end(), static_cast<float*>(storage->data()));
      plan.run({{"seq", v}});
      Tensor fixed = f(Tensor(rows, {v, d}));
      EXPECT_EQ(plan.shape(0), std::vector<int64_t>(fixed.shape()));
      const auto* out = static_cast<const float*>(plan.output(0)->data());
      expect_near({out, out + fixed.numel()}, fixed.to_vector<float>(), what);
      if (HasFailure()) return;
    }
    EXPECT_EQ(plan.plan().kernels().size(), kernels);
    EXPECT_THAT(error_of([&] { plan.run({{"seq", 25}}); }), HasSubstr("seq"));
    EXPECT_THAT(error_of([&] { plan.run(); }), HasSubstr("seq has no value"));
    // A variable no output's shape has (a sum over it) is needed all the same.
    TensorPlan sums({x.shrink({{0, seq}, {0, d}}).sum({0})});
    sums.run({{"seq", 3}});
    EXPECT_THAT(error_of([&] { sums.run(); }), HasSubstr("seq has no value"));
  }
}

} // namespace
} // namespace beamlab
