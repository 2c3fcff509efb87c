// Kernels over symbolic extents: a loop that runs to a DEFINE_VAR, compiled once and run at
// any value in the variable's range.
//
// The differential test takes the kernels real programs schedule into (elementwise chains with
// broadcasting, reductions, matmuls, softmax, padding, permutes, convolutions), makes one loop
// or reduce axis of each symbolic (its extent c becomes a variable in [1, c]), compiles it once
// with the heuristic's Opts, and once with a random split of the symbolic axis itself (UPCAST,
// THREAD or TILE of a loop axis, UNROLL of a reduce axis: rounded up and gated, a reduction's
// extra iterations adding its identity), and runs both at random values v; the reference is the
// same kernel with the constant v in the variable's place, compiled with no Opts. The unwritten
// part of the output (a loop axis cut short) must stay as it was on both sides.
//
// Knobs: BEAMLAB_SYMBOLIC_CASES (default 60), BEAMLAB_SYMBOLIC_SEED (default 1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include <beamlab/beamlab.hpp>
#include <beamlab/tuning.hpp>

#include "engine/codegen/expand.hpp"
#include "engine/codegen/partition.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"
#include "engine/opt/opt.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/support/knobs.hpp"

namespace beamlab {
namespace {

using ::testing::HasSubstr;

constexpr float kUnwritten = 7.25f; // the output's elements before the kernel runs

// Buffers for one kernel: inputs random, the output kUnwritten.
struct KernelData {
  std::vector<std::vector<float>> buffers;
  std::vector<void*> pointers() {
    std::vector<void*> out;
    for (auto& b : buffers) out.push_back(b.data());
    return out;
  }
};

KernelData data_for(const ScheduleItem& item, std::mt19937_64& rng) {
  KernelData d;
  std::uniform_real_distribution<float> u(-1, 1);
  KernelTask task = kernel_task(item);
  for (size_t s = 0; s < task.buffers.size(); ++s) {
    std::vector<float> b(static_cast<size_t>(task.buffers[s].count));
    for (float& x : b) x = s == 0 ? kUnwritten : u(rng);
    d.buffers.push_back(std::move(b));
  }
  return d;
}

// The kernel run once on `data` with `opts` and the variables `vars`: the output.
std::vector<float> run_kernel(const UOpPtr& ast, const std::vector<Opt>& opts, KernelData data,
                              const VarValues& vars = {}) {
  auto k = KernelCandidate::build(ast, opts, "k");
  if (!k) {
    ADD_FAILURE() << "opts " << to_string(opts) << ": " << k.error().message << "\n"
                  << print_graph(ast);
    return {};
  }
  k->run(data.pointers(), 2, vars);
  return data.buffers[0];
}

// Random programs of the shapes real networks have, small.
class Programs {
public:
  explicit Programs(uint64_t seed) : rng_(seed) {}
  std::mt19937_64& rng() { return rng_; }

  Tensor next() {
    auto d = [&] { return pick(1, 12); };
    auto rand = [&](const Shape& s) { return Tensor::rand(s, seed_++) * 2 - 1; };
    switch (pick(0, 7)) {
    case 0: {
      int64_t m = d(), n = d();
      return ((rand({m, n}) + rand({1, n})) * rand({m, 1})).relu();
    }
    case 1: {
      Tensor a = rand({d(), d(), d()});
      return pick(0, 1) ? a.sum({pick(0, 2)}) : a.max({pick(0, 2)}, true) - a;
    }
    case 2: {
      int64_t m = d(), k = d(), n = d();
      return rand({m, k}).matmul(rand({k, n}));
    }
    case 3: return rand({d(), d()}).softmax(-1);
    case 4: return rand({d(), d(), d()}).permute({2, 0, 1}).contiguous() + 1;
    case 5: return rand({d(), d()}).pad({{1, 2}, {0, 3}}) * 2;
    case 6: {
      int64_t c = pick(1, 4), h = pick(3, 9);
      return rand({1, c, h, h}).conv2d(rand({pick(1, 4), c, 3, 3}), std::nullopt, 1, 1);
    }
    default: return rand({d(), pick(2, 12)}).layernorm();
    }
  }

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

private:
  std::mt19937_64 rng_;
  uint64_t seed_ = 1;
};

// `ast` with `range`'s extent c made the variable n in [1, c].
UOpPtr make_symbolic(const UOpPtr& ast, const UOp& range) {
  UOpPtr n = UOp::variable("n", 1, range.src(0)->const_value());
  UOpPtr symbolic = kernel_range(n, range.arg().items()[0].as_int(), loop_kind(range));
  return substitute(ast, {{&range, symbolic}});
}

TEST(Symbolic, AKernelCompiledOnceMatchesItsFixedShapeAtEveryValue) {
  int64_t cases = knob_int("BEAMLAB_SYMBOLIC_CASES", 60);
  Programs programs(static_cast<uint64_t>(knob_int("BEAMLAB_SYMBOLIC_SEED", 1)));
  int checked = 0, cut_short = 0, optimized = 0, split = 0;
  for (int64_t c = 0; c < cases; ++c) {
    Tensor program = programs.next();
    for (const ScheduleItem& item : program.schedule().items) {
      std::vector<const UOp*> ranges;
      for (const UOpPtr& u : toposort(item.ast))
        if (u->op() == Op::Range && u->src(0)->is_const() && u->src(0)->const_value() > 1)
          ranges.push_back(u.get());
      if (ranges.empty()) continue;
      const UOp& range =
          *ranges[static_cast<size_t>(programs.pick(0, static_cast<int64_t>(ranges.size()) - 1))];
      int64_t extent = range.src(0)->const_value();
      UOpPtr symbolic = make_symbolic(item.ast, range);
      std::vector<Opt> opts = heuristic_opts(symbolic, 2);
      optimized += !opts.empty();
      // The symbolic axis's position among the axes (nesting order: by axis id).
      int position = 0;
      auto axis_id = [](const UOp& r) { return r.arg().items()[0].as_int(); };
      for (const UOp* r : ranges) position += axis_id(*r) < axis_id(range);
      OptOp op = std::array{OptOp::Upcast, OptOp::Thread, OptOp::Tile}[programs.pick(0, 2)];
      if (loop_kind(range) == LoopKind::Reduce) op = OptOp::Unroll;
      std::vector<Opt> split_opts = {{op, position, programs.pick(2, 8)}};
      KernelData data = data_for(item, programs.rng());
      for (bool split_it : {false, true}) {
        std::vector<Opt> plan = split_it ? split_opts : opts;
        auto compiled = KernelCandidate::build(symbolic, plan, item.name);
        ASSERT_TRUE(compiled) << to_string(plan) << ": " << compiled.error().message << "\n"
                              << print_graph(symbolic);
        split += split_it;
        for (int64_t v : {int64_t{1}, extent, programs.pick(1, extent)}) {
          SCOPED_TRACE("case " + std::to_string(c) + ", kernel " + item.name + ", axis " +
                       std::to_string(range.arg().items()[0].as_int()) + " (" +
                       std::string(to_string(loop_kind(range))) + ") at n=" + std::to_string(v) +
                       " of " + std::to_string(extent) + ", opts " + to_string(plan));
          KernelData mine = data;
          compiled->run(mine.pointers(), 2, {{"n", v}});
          UOpPtr fixed = substitute(
              symbolic, {{variables_of(symbolic)[0].get(), UOp::const_int(Scalar::Index, v)}});
          std::vector<float> want = run_kernel(fixed, {}, data);
          ASSERT_EQ(want.size(), mine.buffers[0].size());
          for (size_t i = 0; i < want.size(); ++i) {
            float got = mine.buffers[0][i];
            if (std::isnan(want[i]) && std::isnan(got)) continue;
            ASSERT_NEAR(got, want[i], 2e-4 * (1 + std::abs(want[i]))) << "element " << i << "\n"
                                                                      << print_graph(symbolic);
          }
          cut_short += v < extent && std::count(want.begin(), want.end(), kUnwritten) > 0;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, cases);       // most programs have a kernel with an axis to make symbolic
  EXPECT_GT(cut_short, 0);         // and some runs leave part of the output unwritten
  EXPECT_GT(optimized, cases / 4); // the heuristic still splits the other axes
  EXPECT_GT(split, cases / 4);     // and a symbolic loop axis splits
}

// A max over n negative numbers rising along the axis, its symbolic axis unrolled: the padded
// iterations past n add the max's identity (-inf), where a gated read's 0 (or a read past n)
// would win.
TEST(Symbolic, AnUnrolledMaxOverASymbolicAxisIgnoresItsPadding) {
  UOpPtr n = UOp::variable("n", 1, 100);
  UOpPtr i = kernel_range(4, 0, LoopKind::Loop), k = kernel_range(n, 1, LoopKind::Reduce);
  UOpPtr a = load(index(buffer_param(1, Scalar::Float32), i * 100 + k), Scalar::Float32);
  UOpPtr ast =
      sink({store(index(buffer_param(0, Scalar::Float32), i), reduce_over(a, {k}, Op::Max))});
  for (const char* text : {"UNROLL(1,8)", "UNROLL(1,4) UPCAST(0,4)"}) {
    auto compiled = KernelCandidate::build(ast, *parse_opts(text), "max");
    ASSERT_TRUE(compiled) << text << ": " << compiled.error().message;
    std::vector<float> out(4), in(400);
    for (size_t j = 0; j < in.size(); ++j) in[j] = -100.0f + static_cast<float>(j % 100);
    for (int64_t v : {1, 5, 8, 13, 100}) { // the max of the first v: -100 + v - 1, below 0
      compiled->run({out.data(), in.data()}, 2, {{"n", v}});
      for (size_t row = 0; row < 4; ++row)
        EXPECT_EQ(out[row], static_cast<float>(-101 + v))
            << text << " at n=" << v << ", row " << row;
    }
  }
}

// A product over n twos, its symbolic axis unrolled by 8: 2^n, the padded iterations
// multiplying by the product's identity 1 (a gated read's 0 would zero it).
TEST(Symbolic, AnUnrolledProductOverASymbolicAxisIsTwoToTheN) {
  UOpPtr n = UOp::variable("n", 1, 40);
  UOpPtr i = kernel_range(2, 0, LoopKind::Loop), k = kernel_range(n, 1, LoopKind::Reduce);
  UOpPtr a = load(index(buffer_param(1, Scalar::Float32), i * 40 + k), Scalar::Float32);
  UOpPtr ast =
      sink({store(index(buffer_param(0, Scalar::Float32), i), reduce_over(a, {k}, Op::Mul))});
  auto compiled = KernelCandidate::build(ast, *parse_opts("UNROLL(1,8)"), "prod");
  ASSERT_TRUE(compiled) << compiled.error().message;
  std::vector<float> out(2), in(80, 2.0f);
  for (int64_t v : {1, 3, 8, 21, 40}) {
    compiled->run({out.data(), in.data()}, 2, {{"n", v}});
    EXPECT_EQ(out[0], std::ldexp(1.0f, static_cast<int>(v))) << "n=" << v;
    EXPECT_EQ(out[1], std::ldexp(1.0f, static_cast<int>(v))) << "n=" << v;
  }
}

// A max and a sum over n x 3 values whose symbolic (contiguous) axis is unrolled by 16 (padded
// to 16s and gated): the partition runs the reduction's whole steps (n / 16 of them) ungated and
// the rest as a reduction of its own, gated, whose gate is one vector compare (`base + lane < n`),
// not a compare per lane; at values below, at and past a multiple of 16 both match the host.
TEST(Symbolic, AnUnrolledSymbolicReductionRunsItsWholeStepsUngated) {
  UOpPtr n = UOp::variable("n", 1, 200);
  UOpPtr i = kernel_range(3, 0, LoopKind::Loop), k = kernel_range(n, 1, LoopKind::Reduce),
         j = kernel_range(3, 2, LoopKind::Reduce);
  UOpPtr a = load(index(buffer_param(1, Scalar::Float32), i * 600 + j * 200 + k), Scalar::Float32);
  std::vector<float> in(1800);
  for (size_t e = 0; e < in.size(); ++e) in[e] = -500.0f + static_cast<float>((e * 37) % 101);
  for (Op op : {Op::Max, Op::Add}) {
    SCOPED_TRACE(op_name(op));
    UOpPtr ast =
        sink({store(index(buffer_param(0, Scalar::Float32), i), reduce_over(a, {k, j}, op))});
    std::vector<Opt> opts = *parse_opts("UNROLL(1,16)");
    Expected<OptimizedKernel> optimized = apply_opts(ast, opts);
    ASSERT_TRUE(optimized) << optimized.error();
    UOpPtr cut = partition_loops(optimized->stages.at(optimized->main));
    int ungated = 0, gated = 0;
    for (const UOpPtr& u : toposort(cut)) {
      if (u->op() != Op::Reduce) continue;
      bool gates = false;
      for (const UOpPtr& x : toposort(u->src(0)))
        gates |= x->op() == Op::Index && x->src().size() > 2;
      ++(gates ? gated : ungated);
    }
    EXPECT_EQ(ungated, 1) << print_graph(cut);
    EXPECT_EQ(gated, 1) << print_graph(cut);
    for (const UOpPtr& u : toposort(expand_upcasts(cut))) // no gate built lane by lane
      EXPECT_FALSE(u->op() == Op::Vectorize && u->dtype().scalar_type() == Scalar::Bool)
          << print_graph(u);
    auto compiled = KernelCandidate::build(ast, opts, "reduce");
    ASSERT_TRUE(compiled) << compiled.error().message;
    std::vector<float> out(3);
    for (int64_t v : {1, 15, 16, 17, 48, 111, 200}) {
      compiled->run({out.data(), in.data()}, 2, {{"n", v}});
      for (int64_t row = 0; row < 3; ++row) {
        float want = op == Op::Max ? -INFINITY : 0.0f;
        for (int64_t col = 0; col < 3; ++col)
          for (int64_t e = 0; e < v; ++e) {
            float x = in[static_cast<size_t>(row * 600 + col * 200 + e)];
            want = op == Op::Max ? std::max(want, x) : want + x;
          }
        EXPECT_FLOAT_EQ(out[static_cast<size_t>(row)], want) << "n=" << v << ", row " << row;
      }
    }
  }
}

// A reduction over n elements of 1, 2, 3, ...: n(n+1)/2, from one compiled kernel.
TEST(Symbolic, ASumOverASymbolicAxisCountsOnlyItsValue) {
  UOpPtr n = UOp::variable("n", 1, 100);
  UOpPtr i = kernel_range(4, 0, LoopKind::Loop);
  UOpPtr k = kernel_range(n, 1, LoopKind::Reduce);
  UOpPtr a = load(index(buffer_param(1, Scalar::Float32), k), Scalar::Float32);
  UOpPtr sum = reduce_over(a * cast(i, Scalar::Float32), {k}, Op::Add);
  UOpPtr ast = sink({store(index(buffer_param(0, Scalar::Float32), i), sum)});
  auto compiled = KernelCandidate::build(ast, heuristic_opts(ast, 2), "sum");
  ASSERT_TRUE(compiled) << compiled.error().message;
  std::vector<float> out(4), in(100);
  for (size_t j = 0; j < in.size(); ++j) in[j] = static_cast<float>(j + 1);
  for (int64_t v : {1, 7, 100}) {
    compiled->run({out.data(), in.data()}, 2, {{"n", v}});
    for (int64_t row = 0; row < 4; ++row)
      EXPECT_EQ(out[static_cast<size_t>(row)], static_cast<float>(row * v * (v + 1) / 2))
          << "n=" << v << ", row " << row;
  }
}

UOpPtr symbolic_copy() {
  UOpPtr n = UOp::variable("seq", 1, 64);
  UOpPtr r = kernel_range(4, 0, LoopKind::Loop), c = kernel_range(n, 1, LoopKind::Loop);
  UOpPtr at = r * 64 + c;
  return sink({store(index(buffer_param(0, Scalar::Float32), at),
                     load(index(buffer_param(1, Scalar::Float32), at), Scalar::Float32))});
}

// A symbolic loop axis split by UPCAST, THREAD and TILE: every value of seq copies exactly its
// first seq columns, the remainder of a split included.
TEST(Symbolic, ASplitOfASymbolicAxisRunsItsRemainderGated) {
  UOpPtr ast = symbolic_copy();
  EXPECT_EQ(kernel_name(ast), "E_4_seq");
  std::vector<float> in(256), out(256);
  for (size_t j = 0; j < in.size(); ++j) in[j] = static_cast<float>(j);
  for (const char* text : {"UPCAST(1,16)", "THREAD(1,3)", "TILE(1,5)", "THREAD(0,2) UPCAST(2,8)",
                           "THREAD(0,2) THREAD(2,3)", "THREAD(1,2) UPCAST(2,4)"}) {
    auto k = KernelCandidate::build(ast, *parse_opts(text), "copy");
    ASSERT_TRUE(k) << text << ": " << k.error().message;
    for (int64_t v : {1, 5, 16, 17, 63, 64}) {
      std::fill(out.begin(), out.end(), -1.0f);
      k->run({out.data(), in.data()}, 2, {{"seq", v}});
      for (int row = 0; row < 4; ++row)
        for (int col = 0; col < 64; ++col) {
          size_t j = static_cast<size_t>(row * 64 + col);
          ASSERT_EQ(out[j], col < v ? in[j] : -1.0f) << text << " at seq=" << v << ", " << j;
        }
    }
  }
}

// Rows of any length, 8 columns: the fixed axis can't fill 16 cores, so the rows go across them
// (a constant number of chunks; the plan is the same at every length).
TEST(Symbolic, TheHeuristicSpreadsASymbolicAxisAcrossTheCores) {
  UOpPtr seq = UOp::variable("seq", 1, 8192);
  UOpPtr r = kernel_range(seq, 0, LoopKind::Loop), c = kernel_range(8, 1, LoopKind::Loop);
  UOpPtr at = r * 8 + c;
  UOpPtr x = load(index(buffer_param(1, Scalar::Float32), at), Scalar::Float32);
  UOpPtr ast = sink({store(index(buffer_param(0, Scalar::Float32), at), x * x)});
  std::vector<Opt> opts = heuristic_opts(ast, 16);
  auto thread =
      std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::Thread; });
  ASSERT_NE(thread, opts.end()) << to_string(opts);
  EXPECT_EQ(thread->axis, 0) << to_string(opts);
  EXPECT_GE(thread->arg, 2) << to_string(opts);
  auto k = KernelCandidate::build(ast, opts, "square");
  ASSERT_TRUE(k) << k.error().message;
  std::vector<float> in(8192 * 8), out(in.size());
  for (size_t j = 0; j < in.size(); ++j) in[j] = static_cast<float>(j % 1000);
  for (int64_t v : {1, 999, 8192}) {
    std::fill(out.begin(), out.end(), -1.0f);
    k->run({out.data(), in.data()}, 2, {{"seq", v}});
    for (size_t j = 0; j < out.size(); ++j)
      ASSERT_EQ(out[j], static_cast<int64_t>(j) < v * 8 ? in[j] * in[j] : -1.0f)
          << to_string(opts) << " at seq=" << v << ", element " << j;
  }
}

// Rows of a symbolic length and 768 fixed columns: a LayerNorm's columns are not where its
// cores go (each chunk of columns would compute its rows' mean and variance again), its rows
// are; a matmul reading a GELU of its input (work along the rows, but no reduction the columns
// don't vary with) keeps the columns.
TEST(Symbolic, TheHeuristicThreadsSymbolicRowsWhereColumnsWouldRecomputeAReduction) {
  Dim seq = Variable{"seq", 1, 512};
  Tensor x = Tensor::rand({512, 768}, 1).shrink({{0, seq}, {0, 768}});
  Tensor w = Tensor::rand({768, 768}, 2);
  auto threads_symbolic_axis = [](const Tensor& t) {
    UOpPtr ast = t.schedule().items.back().ast;
    std::vector<Opt> opts = heuristic_opts(ast, 2);
    auto thread =
        std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::Thread; });
    EXPECT_NE(thread, opts.end()) << to_string(opts);
    if (thread == opts.end()) return false;
    Expected<OptimizedKernel> before = apply_opts(ast, {opts.begin(), thread});
    EXPECT_TRUE(before) << before.error();
    return before && before->axes.at(static_cast<size_t>(thread->axis)).symbolic;
  };
  EXPECT_TRUE(threads_symbolic_axis(x.layernorm()));
  EXPECT_FALSE(threads_symbolic_axis(x.gelu().matmul(w)));
}

// A matmul whose rows are symbolic (a sequence length) gets the register tile of a fixed one,
// its row blocks rounded up and gated: the heuristic's plans for 2 and 16 cores, at every length.
TEST(Symbolic, AMatmulOverSymbolicRowsTilesThemAndMatchesAtEveryLength) {
  Tensor a = Tensor::rand({96, 64}, 1), w = Tensor::rand({64, 80}, 2);
  Schedule s = a.matmul(w).schedule();
  ASSERT_EQ(s.items.size(), 1u);
  const ScheduleItem& item = s.items[0];
  const UOp* rows = nullptr;
  for (const UOpPtr& u : toposort(item.ast))
    if (u->op() == Op::Range && u->src(0)->is_const() && u->src(0)->const_value() == 96)
      rows = u.get();
  ASSERT_NE(rows, nullptr);
  UOpPtr symbolic = make_symbolic(item.ast, *rows);
  std::mt19937_64 rng(3);
  KernelData data = data_for(item, rng);
  for (int threads : {2, 16}) {
    std::vector<Opt> opts = heuristic_opts(symbolic, threads);
    EXPECT_TRUE(std::any_of(opts.begin(), opts.end(),
                            [](const Opt& o) { return o.op == OptOp::Upcast && o.axis == 0; }))
        << "the rows are tiled: " << to_string(opts);
    auto k = KernelCandidate::build(symbolic, opts, item.name);
    ASSERT_TRUE(k) << to_string(opts) << ": " << k.error().message;
    for (int64_t v : {1, 7, 8, 77, 96}) {
      KernelData mine = data;
      k->run(mine.pointers(), 2, {{"n", v}});
      UOpPtr fixed = substitute(
          symbolic, {{variables_of(symbolic)[0].get(), UOp::const_int(Scalar::Index, v)}});
      std::vector<float> want = run_kernel(fixed, {}, data);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(mine.buffers[0][i], want[i], 1e-4 * (1 + std::abs(want[i])))
            << to_string(opts) << " at n=" << v << ", element " << i;
    }
  }
}

TEST(Symbolic, ACostCountsTheWorkAndTrafficAtTheValuesBound) {
  // (n x 64) @ (64 x 80), n in [1, 96]: a multiply-add per (row, column, k), rows of the
  // output and of the left operand touched up to n, the right operand whole.
  ScheduleItem item =
      Tensor::rand({96, 64}, 1).matmul(Tensor::rand({64, 80}, 2)).schedule().items[0];
  const UOp* rows = nullptr;
  for (const UOpPtr& u : toposort(item.ast))
    if (u->op() == Op::Range && u->src(0)->is_const() && u->src(0)->const_value() == 96)
      rows = u.get();
  ASSERT_NE(rows, nullptr);
  item.ast = make_symbolic(item.ast, *rows);
  KernelCost most = kernel_cost(item);
  EXPECT_EQ(most.flops, 2 * 96 * 80 * 64);
  EXPECT_EQ(most.bytes, 4 * (96 * 80 + 96 * 64 + 64 * 80));
  EXPECT_EQ(kernel_cost(item, {{"n", 96}}).bytes, most.bytes);
  for (int64_t n : {1, 7, 77}) {
    KernelCost at = kernel_cost(item, {{"n", n}});
    EXPECT_EQ(at.flops, 2 * n * 80 * 64) << n;
    EXPECT_EQ(at.bytes, 4 * (n * 80 + n * 64 + 64 * 80)) << n;
  }
}

TEST(Symbolic, AnOptThatCannotSplitASymbolicAxisIsRefusedWithTheReason) {
  UOpPtr n = UOp::variable("n", 1, 100);
  UOpPtr i = kernel_range(4, 0, LoopKind::Loop), k = kernel_range(n, 1, LoopKind::Reduce);
  UOpPtr a = load(index(buffer_param(1, Scalar::Float32), k), Scalar::Float32);
  UOpPtr sum =
      sink({store(index(buffer_param(0, Scalar::Float32), i), reduce_over(a, {k}, Op::Max))});
  // GROUP's partial reductions would each need their share's identity; not done.
  auto built = KernelCandidate::build(sum, *parse_opts("GROUP(1,2)"), "max");
  ASSERT_FALSE(built);
  EXPECT_TRUE(built.error().rejected);
  EXPECT_THAT(built.error().message, HasSubstr("axis 1 runs to a symbolic extent (n, at most "
                                               "100); of the splits only UPCAST, THREAD and "
                                               "TILE of a loop axis and UNROLL of a reduce axis "
                                               "apply"));
  auto padto = KernelCandidate::build(symbolic_copy(), *parse_opts("PADTO(1,8)"), "copy");
  ASSERT_FALSE(padto);
  EXPECT_THAT(padto.error().message, HasSubstr("symbolic extent (seq, at most 64)"));
}

TEST(Symbolic, APlanChecksEachValueAgainstItsVariable) {
  ScheduleItem item;
  item.ast = symbolic_copy();
  item.name = kernel_name(item.ast);
  item.key = item.ast->hash();
  item.buffers = {tensor_buffer(Scalar::Float32, 256), tensor_buffer(Scalar::Float32, 256)};
  auto out = std::make_shared<Buffer>(256 * 4), in = std::make_shared<Buffer>(256 * 4);
  auto* src = static_cast<float*>(in->data());
  auto* dst = static_cast<float*>(out->data());
  for (int j = 0; j < 256; ++j) src[j] = static_cast<float>(j), dst[j] = -1;
  BufferMap bound{{buffer_id(*item.buffers[0]), out}, {buffer_id(*item.buffers[1]), in}};
  Schedule schedule{{item}, {}, {}};
  schedule.outputs.push_back(item.buffers[0]);
  ExecutionPlan plan = ExecutionPlan::prepare(schedule, bound, {.threads = 2});
  ASSERT_EQ(plan.variables().size(), 1u);
  EXPECT_EQ(plan.variables()[0].name, "seq");
  EXPECT_EQ(plan.variables()[0].lo, 1);
  EXPECT_EQ(plan.variables()[0].hi, 64);
  auto message = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message([&] { plan.run(); }), HasSubstr("'seq', which has no value"));
  EXPECT_THAT(message([&] {
                plan.bind({{"seq", 65}});
              }),
              HasSubstr("'seq' is 65, outside its range [1, 64]"));
  EXPECT_THAT(message([&] {
                plan.bind({{"len", 3}});
              }),
              HasSubstr("no variable 'len' (its variables: seq)"));
  for (int64_t v : {3, 64}) { // the first run copies 3 columns of each row, the second all
    plan.bind({{"seq", v}});
    plan.run();
    for (int row = 0; row < 4; ++row)
      for (int col = 0; col < 64; ++col) {
        int j = row * 64 + col;
        ASSERT_EQ(dst[j], col < v ? src[j] : -1) << "seq=" << v << ", element " << j;
      }
  }
}

} // namespace
} // namespace beamlab
