// The Opt space: text form, rejection with reasons, determinism, results unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <sys/mman.h>

#include <beamlab/beamlab.hpp>
#include <beamlab/tuning.hpp>

#include "engine/codegen/expand.hpp"
#include "engine/codegen/lower.hpp"
#include "engine/codegen/partition.hpp"
#include "engine/codegen/split_vectors.hpp"
#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"
#include "engine/realize/pipeline.hpp"
#include "engine/rewrite/symbolic.hpp"
#include "tests/tensor/scoped_env.hpp"

// libomp keeps the thread structures of a team that grew (5, then 16 threads on a 2-core
// machine) where LeakSanitizer can't reach them: its runtime's, not beamlab's.
extern "C" const char* __lsan_default_suppressions() { return "leak:libomp.so\n"; }

namespace beamlab {
namespace {

UOpPtr matmul_ast(int64_t n) {
  Tensor a = Tensor::rand({n, n}, 1), b = Tensor::rand({n, n}, 2);
  return a.matmul(b).schedule().items.at(0).ast;
}

TEST(Opts, TextFormRoundTrips) {
  std::vector<Opt> opts = {{OptOp::Upcast, 1, 16}, {OptOp::Thread, 0, 2}, {OptOp::Swap, 0, 1},
                           {OptOp::Group, 2, 4},   {OptOp::Tile, 1, 32},  {OptOp::Unroll, 2, 4},
                           {OptOp::Padto, 1, 16}};
  std::string text = to_string(opts);
  EXPECT_EQ(text,
            "UPCAST(1,16) THREAD(0,2) SWAP(0,1) GROUP(2,4) TILE(1,32) UNROLL(2,4) PADTO(1,16)");
  Expected<std::vector<Opt>> back = parse_opts(text);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(*back, opts);
  EXPECT_TRUE(parse_opts("")->empty());
}

TEST(Opts, BadTextNamesTheToken) {
  EXPECT_THAT(parse_opts("UPCAST(1,16) FROB(0,2)").error(), ::testing::HasSubstr("FROB(0,2)"));
  EXPECT_THAT(parse_opts("UPCAST(1)").error(), ::testing::HasSubstr("needs two integers"));
  EXPECT_THAT(parse_opts("UPCAST 1,2").error(), ::testing::HasSubstr("missing parentheses"));
}

TEST(Opts, AxesAndKinds) {
  std::vector<Axis> axes = kernel_axes(matmul_ast(32));
  ASSERT_EQ(axes.size(), 3u);
  EXPECT_EQ(axes[0].kind, LoopKind::Loop);
  EXPECT_EQ(axes[1].kind, LoopKind::Loop);
  EXPECT_EQ(axes[2].kind, LoopKind::Reduce);
  Expected<OptimizedKernel> k =
      apply_opts(matmul_ast(32), {{OptOp::Upcast, 1, 8}, {OptOp::Thread, 0, 2}});
  ASSERT_TRUE(k) << k.error();
  ASSERT_EQ(k->axes.size(), 5u);
  EXPECT_EQ(k->axes[0].kind, LoopKind::Parallel);
  EXPECT_EQ(k->axes.back().kind, LoopKind::Upcast);
  EXPECT_EQ(k->axes.back().extent, 8);
}

TEST(Opts, InapplicableOptsAreRejectedWithAReason) {
  UOpPtr ast = matmul_ast(32);
  auto why = [&](std::vector<Opt> opts) {
    Expected<OptimizedKernel> k = apply_opts(ast, opts);
    return k ? std::string("applied") : k.error();
  };
  EXPECT_THAT(why({{OptOp::Upcast, 2, 4}}), ::testing::HasSubstr("UPCAST applies to loop axes"));
  EXPECT_THAT(why({{OptOp::Unroll, 0, 4}}), ::testing::HasSubstr("UNROLL applies to reduce axes"));
  EXPECT_THAT(why({{OptOp::Upcast, 0, 5}}), ::testing::HasSubstr("not a multiple of 5"));
  EXPECT_THAT(why({{OptOp::Upcast, 7, 2}}), ::testing::HasSubstr("out of range"));
  EXPECT_THAT(why({{OptOp::Thread, 0, 2}, {OptOp::Thread, 0, 2}}),
              ::testing::HasSubstr("THREAD applies to loop axes"));
  EXPECT_THAT(why({{OptOp::Upcast, 0, 32}, {OptOp::Upcast, 0, 32}, {OptOp::Unroll, 0, 2}}),
              ::testing::HasSubstr("lanes"));
  EXPECT_THAT(why({{OptOp::Swap, 0, 2}}), ::testing::HasSubstr("SWAP exchanges two loop axes"));
  EXPECT_THAT(why({{OptOp::Padto, 2, 8}}), ::testing::HasSubstr("PADTO applies to loop axes"));
  EXPECT_THAT(why({{OptOp::Padto, 0, 8}}), ::testing::HasSubstr("32 iterations already"));
  EXPECT_THAT(why({{OptOp::Padto, 0, 128}}), ::testing::HasSubstr("more than double"));
  // 16 x 6 lanes (computed in register-wide pieces), 16 x 4 and a lone 12
  EXPECT_EQ(why({{OptOp::Upcast, 1, 16}, {OptOp::Padto, 0, 36}, {OptOp::Upcast, 0, 6}}), "applied");
  EXPECT_EQ(why({{OptOp::Upcast, 1, 16}, {OptOp::Upcast, 0, 4}}), "applied");
  EXPECT_EQ(why({{OptOp::Padto, 1, 36}, {OptOp::Upcast, 1, 12}}), "applied");
}

TEST(Opts, NestedReductionsMultiplyTheirUnrollsSiblingsDoNot) {
  // max over rows of row sums: the sum's loop runs inside the max's, so their unrolls multiply.
  // (The scheduler gives such a sum a kernel of its own; a kernel file can still nest them.)
  UOpPtr nested = parse_graph(R"(
    %0 = DEFINE_GLOBAL float32* : 0
    %1 = CONST index : 0
    %2 = INDEX float32* %0, %1
    %3 = DEFINE_GLOBAL float32* : 1
    %4 = CONST index : 64
    %5 = RANGE index %4 : (0, "reduce")
    %6 = RANGE index %4 : (1, "reduce")
    %7 = MUL index %5, %4
    %8 = ADD index %7, %6
    %9 = INDEX float32* %3, %8
    %10 = LOAD float32 %9
    %11 = REDUCE float32 %10, %6 : ADD
    %12 = REDUCE float32 %11, %5 : MAX
    %13 = STORE void %2, %12
    %14 = SINK void %13)")
                      .value();
  ASSERT_EQ(apply_opts(nested, {}).value().axes.size(), 2u);
  EXPECT_TRUE(apply_opts(nested, {{OptOp::Unroll, 0, 32}, {OptOp::Unroll, 1, 32}}).has_value());
  Expected<OptimizedKernel> wide =
      apply_opts(nested, {{OptOp::Unroll, 0, 32}, {OptOp::Unroll, 1, 64}});
  ASSERT_FALSE(wide.has_value());
  EXPECT_EQ(wide.error(), "UNROLL(1,64): the kernel would have 2048 lanes, more than 1024");
  EXPECT_EQ(apply_opts(nested, {{OptOp::Unroll, 0, 32}, {OptOp::Unroll, 1, 32}})->lanes, 1024);
  // Two UNROLLs of one reduction multiply too.
  UOpPtr sum = Tensor::rand({16384}, 1).sum().schedule().items.at(0).ast;
  EXPECT_EQ(apply_opts(sum, {{OptOp::Unroll, 0, 32}, {OptOp::Unroll, 0, 16}})->lanes, 512);
  // softmax's max and sum reduce the same row one after the other: their unrolls don't
  // multiply (16 upcast lanes x 16 x 16 would be 4096). Axes: rows, columns, max, sum.
  UOpPtr siblings = Tensor::rand({16, 128}, 2).softmax(-1).schedule().items.at(0).ast;
  Expected<OptimizedKernel> k = apply_opts(
      siblings, {{OptOp::Upcast, 1, 16}, {OptOp::Unroll, 2, 16}, {OptOp::Unroll, 3, 16}});
  EXPECT_TRUE(k.has_value()) << k.error();
  EXPECT_EQ(k->lanes, 16); // no node varies with more than one of the three 16-lane axes
}

TEST(Opts, SameListSameKernel) {
  std::vector<Opt> opts = {{OptOp::Upcast, 1, 16}, {OptOp::Upcast, 0, 4}, {OptOp::Thread, 0, 2}};
  Expected<OptimizedKernel> a = apply_opts(matmul_ast(64), opts),
                            b = apply_opts(matmul_ast(64), opts);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->stages[0]->hash(), b->stages[0]->hash());
  Expected<std::shared_ptr<const CompiledStage>> ca = compile_stage(a->stages[0], "k");
  ASSERT_TRUE(ca) << ca.error();
  EXPECT_EQ(ca.value()->kernel.code_hash,
            compile_stage(b->stages[0], "k").value()->kernel.code_hash);
}

// Every Opt of the menu, alone and after the heuristic's list, computes the same result as the
// plain kernel: `make` builds the one-kernel program afresh each time.
void expect_every_action_keeps_the_result(const std::function<Tensor()>& make) {
  Tensor ref = make();
  UOpPtr ast = ref.schedule().items.at(0).ast;
  HeuristicPolicy none;
  none.set("*", {});
  ref.realize({.threads = 2, .policy = &none});
  std::vector<float> want = ref.to_vector<float>();
  std::vector<Opt> heuristic = heuristic_opts(ast, 2);
  for (const std::vector<Opt>& before : {std::vector<Opt>{}, heuristic})
    for (const Opt& o : candidate_actions(ast, before, 2)) {
      std::vector<Opt> opts = before;
      opts.push_back(o);
      HeuristicPolicy p;
      p.set("*", opts);
      Tensor t = make();
      t.realize({.threads = 2, .policy = &p});
      std::vector<float> got = t.to_vector<float>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-4) << "with " << to_string(opts) << " at " << i;
    }
}

// `make`'s kernel under `opts` (cut by the pipeline) computes what it does with no Opts; only
// the kernel `kernel` names when given (the others keep the heuristic's plans), to `tolerance`.
void expect_same_result(const std::function<Tensor()>& make, const std::vector<Opt>& opts,
                        const std::string& kernel = "*", double tolerance = 1e-4) {
  HeuristicPolicy none, p;
  none.set(kernel, {});
  p.set(kernel, opts);
  Tensor ref = make(), t = make();
  ref.realize({.threads = 2, .policy = &none});
  t.realize({.threads = 2, .policy = &p});
  std::vector<float> want = ref.to_vector<float>(), got = t.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tolerance) << i;
}

TEST(Opts, EveryActionKeepsTheResult) {
  Tensor a = Tensor::rand({24, 40}, 1), b = Tensor::rand({40, 32}, 2);
  expect_every_action_keeps_the_result([&] { return a.matmul(b); });
}

// A conv2d over a padded view of its input (gated loads; conv2d's own padding is a stage of its
// own): SWAPs of its reduce axes (taps and channels), PADTO of rows no vector divides (7 and 10
// wide), and the heuristic's plan with them.
TEST(Opts, EveryActionKeepsAPaddedConvolution) {
  Tensor x = Tensor::rand({1, 6, 7, 10}, 3), w = Tensor::rand({8, 6, 3, 3}, 4);
  auto conv = [&] { return x.pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}).conv2d(w); };
  std::vector<Opt> menu = candidate_actions(conv().schedule().items.at(0).ast, {}, 2);
  EXPECT_THAT(menu, ::testing::Contains(Opt{OptOp::Swap, 3, 5}));   // channels and a tap
  EXPECT_THAT(menu, ::testing::Contains(Opt{OptOp::Padto, 2, 16})); // 10 -> 16
  expect_every_action_keeps_the_result(conv);
}

// A weight stored blocked, (Cout/16, C, kh, kw, 16) read as (Cout, C, kh, kw) as the ONNX import
// stores convolution weights: its index divides and takes remainders by 16, output channels in
// lanes load whole vectors of it, and each input under them is a broadcast load.
Tensor blocked_weight(int64_t cout, int64_t c, uint64_t seed) {
  return Tensor::rand({cout / 16, c, 3, 3, 16}, seed)
      .permute({0, 4, 1, 2, 3})
      .reshape({cout, c, 3, 3});
}

TEST(Opts, EveryActionKeepsABlockedWeightConvolution) {
  Tensor x = Tensor::rand({1, 5, 7, 7}, 3), w = blocked_weight(32, 5, 4);
  auto conv = [&] { return x.conv2d(w); };
  std::vector<Opt> plan = heuristic_opts(conv().schedule().items.at(0).ast, 2);
  // rows of 5 columns are the tile whole, 32 x 5 lanes in register pieces
  EXPECT_THAT(to_string(plan), ::testing::StartsWith("UPCAST(0,32) UPCAST(1,5)"));
  expect_every_action_keeps_the_result(conv);
}

// Lanes two or four elements apart (a stride-2 row, a Winograd F(4x4) input transform's
// patches) read one vector over their span and pick their lanes from it, not a load per lane;
// eight apart, a load per lane. Gated ones (a stride-2 depthwise convolution over a padded view)
// mask what no lane reads or whose gate is off.
TEST(Opts, StridedLanesReadOneCoveringVector) {
  Tensor x = Tensor::rand({4, 128}, 1);
  auto strided = [&](int64_t stride) {
    return [&x, stride] {
      return x.reshape({4, 128 / stride, stride})
                 .shrink({{0, 4}, {0, 16}, {0, 1}})
                 .reshape({4, 16}) +
             1.0;
    };
  };
  for (auto [stride, cover] : {std::pair(2, 32), std::pair(4, 64), std::pair(8, 1)}) {
    Expected<OptimizedKernel> k =
        apply_opts(strided(stride)().schedule().items.at(0).ast, {{OptOp::Upcast, 1, 16}});
    ASSERT_TRUE(k) << k.error();
    std::vector<int> loads_by_lanes(65);
    for (const UOpPtr& u : toposort(expand_upcasts(k->stages[0])))
      if (u->op() == Op::Load) ++loads_by_lanes[static_cast<size_t>(u->dtype().lanes())];
    // lanes 0, 2, .., 30 of one 32-lane load; 0, 4, .., 60 of one 64-lane load; 16 loads
    EXPECT_EQ(loads_by_lanes[static_cast<size_t>(cover)], cover == 1 ? 16 : 1) << stride;
    if (cover > 1) EXPECT_EQ(loads_by_lanes[1], 0) << stride;
    expect_every_action_keeps_the_result(strided(stride));
  }
  Tensor img = Tensor::rand({1, 4, 9, 12}, 2), w = Tensor::rand({4, 1, 3, 3}, 3);
  expect_every_action_keeps_the_result([&] {
    return img.pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}).conv2d(w, std::nullopt, 2, 0, 1, 4);
  });
}

// PACK: matmul's B copied into panels in the loop order before the kernel (the copy runs first;
// the kernel then reads the next 32 contiguous columns each step of its reduction), the result
// unchanged, and what PACK can't do rejected with the reason.
TEST(Opts, PackCopiesAnInputIntoPanelsInLoopOrder) {
  Tensor a = Tensor::rand({64, 96}, 1), b = Tensor::rand({96, 128}, 2);
  UOpPtr ast = a.matmul(b).schedule().items.at(0).ast;
  Expected<OptimizedKernel> k = apply_opts(ast, {{OptOp::Upcast, 1, 32}, {OptOp::Pack, 1, 0}});
  ASSERT_TRUE(k) << k.error();
  ASSERT_EQ(k->stages.size(), 2u);
  EXPECT_EQ(k->main, 1u);
  ASSERT_EQ(k->scratch.size(), 1u);
  EXPECT_EQ(k->scratch[0].size, 96 * 128);
  UOpPtr read, k_loop;
  for (const UOpPtr& u : toposort(k->main_stage())) {
    if (u->op() == Op::Index && u->src(0)->arg().as_int() == 3) read = u; // the copy's slot
    if (u->op() == Op::Range && u->arg().items()[1].as_str() == "reduce") k_loop = u;
  }
  ASSERT_TRUE(read && k_loop);
  UOpPtr step = substitute(read->src(1), {{k_loop.get(), k_loop + 1}});
  EXPECT_EQ(simplify_kernel(step - read->src(1))->const_value(), 32); // a panel row a step
  expect_every_action_keeps_the_result([&] { return a.matmul(b); });
  // The heuristic packs B where it outgrows a core's L2, and not below.
  Tensor c = Tensor::rand({1024, 1024}, 3), d = Tensor::rand({1024, 1024}, 4);
  EXPECT_THAT(to_string(heuristic_opts(c.matmul(d).schedule().items.at(0).ast, 2)),
              ::testing::HasSubstr("PACK(1,0)"));
  EXPECT_THAT(to_string(heuristic_opts(ast, 2)), ::testing::Not(::testing::HasSubstr("PACK")));
  auto error = [](const UOpPtr& ast, const std::vector<Opt>& opts) {
    Expected<OptimizedKernel> k = apply_opts(ast, opts);
    return k ? std::string("applied") : k.error();
  };
  EXPECT_EQ(error(ast, {{OptOp::Pack, 1, 0}, {OptOp::Pack, 1, 0}}),
            "PACK(1,0): input 1 is packed already");
  EXPECT_EQ(error(ast, {{OptOp::Pack, 2, 0}}),
            "PACK(2,0): input 2 is out of range (the kernel reads 2 buffers)");
  EXPECT_EQ(error(ast, {{OptOp::Pack, 0, 1}}), "PACK(0,1): PACK's second number must be 0");
  Tensor x = Tensor::rand({16}, 5);
  EXPECT_EQ(error((x.shrink({{0, 8}}) + x.shrink({{8, 16}})).schedule().items.at(0).ast,
                  {{OptOp::Pack, 0, 0}}),
            "PACK(0,0): input 0 is read at 2 places; PACK copies a buffer read at one");
  Tensor img = Tensor::rand({1, 2, 8, 8}, 6), w = Tensor::rand({4, 2, 3, 3}, 7);
  EXPECT_EQ(error(img.conv2d(w).schedule().items.at(0).ast, {{OptOp::Pack, 0, 0}}),
            "PACK(0,0): the copy would hold 648 elements for 128 read; PACK copies no more than "
            "twice the data");
}

std::vector<Opt> heuristic_for(const Tensor& t) {
  return heuristic_opts(t.schedule().items.at(0).ast, 2);
}

// The heuristic's plans for the kernels the bench measures (engine/opt/heuristic.cpp says why
// each is fast): a 3x3 convolution over its padded input, a stage of its own, with no gate to
// move out of its channel loop, under a 16-register tile of vectors of output channels (its
// OIHW weights packed) x 8 or 4 columns; a 1x1 convolution's rows in lanes; a matmul too
// large for L2 cache-blocked.
TEST(Opts, HeuristicTilesConvolutionsAndLargeMatmuls) {
  test::ScopedEnv direct("BEAMLAB_WINOGRAD", "0"); // the direct convolution's schedule
  auto conv = [](int64_t c, int64_t hw, int64_t k, int64_t stride) {
    Tensor x = Tensor::rand({1, c, hw, hw}, 5), w = Tensor::rand({c, c, k, k}, 6);
    Schedule s = x.conv2d(w, std::nullopt, stride, k / 2).schedule();
    EXPECT_EQ(s.items.size(), k > 1 ? 2u : 1u); // the padded input, the convolution
    UOpPtr ast = s.items.back().ast;
    std::vector<Opt> opts = heuristic_opts(ast, 2);
    Expected<OptimizedKernel> kernel = apply_opts(ast, opts);
    EXPECT_TRUE(kernel) << kernel.error();
    return std::pair(opts, *kernel);
  };
  auto [opts56, k56] = conv(64, 56, 3, 1);
  std::vector<Axis> reduces;
  for (const Axis& a : k56.axes)
    if (a.kind == LoopKind::Reduce) reduces.push_back(a);
  ASSERT_EQ(reduces.size(), 3u);
  EXPECT_EQ(reduces.front().extent, 64) << to_string(opts56); // no SWAP: nothing is gated
  EXPECT_THAT(to_string(opts56), ::testing::StartsWith("UPCAST(0,32) UPCAST(2,8) PACK(1,0)"));
  EXPECT_EQ(k56.lanes, 256) << to_string(opts56); // 16 accumulators of 16 lanes
  auto [opts28, k28] = conv(64, 28, 3, 1);
  // (the whole channel axis in lanes: the row is axis 1 now)
  EXPECT_THAT(to_string(opts28), ::testing::StartsWith("UPCAST(0,64) UPCAST(1,4) PACK(1,0)"));
  EXPECT_EQ(k28.lanes, 256) << to_string(opts28);
  auto [opts_s2, k_s2] = conv(64, 56, 3, 2); // lanes along its rows would gather
  EXPECT_THAT(to_string(opts_s2), ::testing::StartsWith("UPCAST(0,64) UPCAST(1,4) PACK(1,0)"));
  // ResNet-18's stem, 7x7/2 over 3 channels: rows of 112 gather, the reduction is short;
  // 8 columns x two vectors of channels.
  Tensor img3 = Tensor::rand({1, 3, 224, 224}, 5), w7 = Tensor::rand({64, 3, 7, 7}, 6);
  Schedule stem = img3.conv2d(w7, std::nullopt, 2, 3).schedule();
  EXPECT_THAT(to_string(heuristic_opts(stem.items.back().ast, 2)),
              ::testing::StartsWith("UPCAST(0,32) UPCAST(2,8)"));
  auto [opts14, k14] = conv(256, 14, 3, 1); // a row of 14 columns whole (224 lanes, split)
  EXPECT_THAT(to_string(opts14), ::testing::StartsWith("UPCAST(0,16) UPCAST(2,14)"));
  auto [opts1x1, k1x1] = conv(384, 14, 1, 1); // no window: the row stays the vector
  EXPECT_THAT(to_string(opts1x1), ::testing::StartsWith("PADTO(2,16) UPCAST(2,16)"));
  EXPECT_THAT(to_string(opts1x1), ::testing::Not(::testing::HasSubstr("PACK")));
  // A depthwise convolution's rows take no lanes from its channels (its weights would gather).
  Tensor x = Tensor::rand({1, 144, 56, 56}, 5), w = Tensor::rand({144, 1, 3, 3}, 6);
  Schedule dw = x.conv2d(w, std::nullopt, 1, 1, 1, 144).schedule();
  EXPECT_THAT(to_string(heuristic_opts(dw.items.back().ast, 2)),
              ::testing::StartsWith("UPCAST(2,8) UPCAST(1,4) THREAD"));
  // A 3x3/2 max pool: its rows' windows overlap, so 8 rows share loads as lanes (2x), under
  // its 9 taps unrolled whole (2.4x in ResNet-18).
  Tensor img = Tensor::rand({1, 64, 112, 112}, 5);
  Schedule pool =
      (img.conv2d(Tensor::rand({64, 64, 1, 1}, 6)) - 0.5).max_pool2d(3, 2, 1).schedule();
  EXPECT_THAT(to_string(heuristic_opts(pool.items.back().ast, 2)),
              ::testing::StartsWith("UPCAST(2,8) UPCAST(1,8) UNROLL(3,3) UNROLL(3,3) THREAD"));
  Tensor small = Tensor::rand({1, 4, 17, 17}, 7) - 0.5;
  auto small_pool = [&] { return small.max_pool2d(3, 2, 0); }; // 8 x 8 outputs, one kernel
  std::vector<Opt> pool_plan = heuristic_opts(small_pool().schedule().items.back().ast, 2);
  EXPECT_THAT(to_string(pool_plan), ::testing::HasSubstr("UNROLL(1,3) UNROLL(1,3)"));
  expect_same_result(small_pool, pool_plan);
  Tensor a = Tensor::rand({2048, 2048}, 7), b = Tensor::rand({2048, 2048}, 8);
  EXPECT_THAT(to_string(heuristic_for(a.matmul(b))), ::testing::HasSubstr("TILE(1,2)"));
  Tensor c = Tensor::rand({256, 256}, 7), d = Tensor::rand({256, 256}, 8);
  EXPECT_THAT(to_string(heuristic_for(c.matmul(d))), ::testing::Not(::testing::HasSubstr("TILE")));
  EXPECT_THAT(to_string(heuristic_for(c.matmul(d))), ::testing::StartsWith("UPCAST(1,32)"));
  // A reduction so long that one column of tiles streams 576 KiB of B (BERT's down projection,
  // 128 x 3072 @ 3072 x 768): the columns run outermost, each one's B reused from L2.
  Tensor h = Tensor::rand({128, 3072}, 7), w2 = Tensor::rand({3072, 768}, 8);
  EXPECT_THAT(to_string(heuristic_for(h.matmul(w2))), ::testing::HasSubstr("SWAP(0,1)"));
  // A batched matmul's B is one batch's matrix (256 KiB): neither blocked nor packed.
  Tensor ba = Tensor::rand({8, 256, 256}, 7), bb = Tensor::rand({8, 256, 256}, 8);
  std::string batched = to_string(heuristic_for(ba.matmul(bb)));
  EXPECT_THAT(batched, ::testing::StartsWith("UPCAST(2,32) UPCAST(1,8)"));
  EXPECT_THAT(batched, ::testing::Not(::testing::HasSubstr("TILE")));
  EXPECT_THAT(batched, ::testing::Not(::testing::HasSubstr("PACK")));
}

// The heuristic's plan for `make`'s one kernel starts with `prefix`, and computes what the
// unoptimized kernel does.
void expect_heuristic_plan(const std::function<Tensor()>& make, const std::string& prefix) {
  std::vector<Opt> opts = heuristic_opts(make().schedule().items.at(0).ast, 2);
  EXPECT_THAT(to_string(opts), ::testing::StartsWith(prefix));
  expect_same_result(make, opts);
}

// Across the cores goes the axis whose split leaves each thread the fewest bytes to read: a
// 1x1 convolution whose input outweighs its weights (MobileNetV2's 384 -> 64 projection at
// 14 x 14) splits its rows, so a thread reads half the input; the expansion back (64 -> 384,
// writing more than it reads) keeps its output channels, where the next kernel reads them.
TEST(Opts, HeuristicSplitsTheAxisThatLeavesEachThreadLeastToRead) {
  auto plan = [](int64_t in, int64_t out) {
    Tensor x = Tensor::rand({1, in, 14, 14}, 1), w = Tensor::rand({out, in, 1, 1}, 2);
    auto make = [=] { return x.conv2d(w); };
    std::vector<Opt> opts = heuristic_opts(make().schedule().items.at(0).ast, 2);
    expect_same_result(make, opts);
    return to_string(opts);
  };
  EXPECT_THAT(plan(384, 64), ::testing::EndsWith("THREAD(1,2)"));
  EXPECT_THAT(plan(64, 384), ::testing::EndsWith("THREAD(0,2)"));
}

// A Winograd GEMM over a 7x7 map (ResNet-18's layer 4: 16 points x channels x 49 tiles, its
// transformed weight stored channels-last): 7 tiles whole a step under two vectors of output
// channels, not the 49 padded to 64 in lanes (0.63 -> 0.54 ms at 256 channels).
TEST(Opts, HeuristicTakesAWinogradGemmsTilesSevenAtATime) {
  Tensor w = Tensor::rand({16, 64, 64}, 1), v = Tensor::rand({16, 64, 49}, 2);
  expect_heuristic_plan([&] { return w.permute({0, 2, 1}).matmul(v); }, "UPCAST(1,32) UPCAST(2,7)");
}

// A row under a register tile that whole vectors don't divide is padded to three vectors where
// that wastes a quarter of it or less, under 8 rows (one of whole three-vector steps takes them
// as it is): a Winograd F(4x4) GEMM's 196 tiles as 240
// (0.31 -> 0.23 ms in ResNet-18), a matmul's 200 columns (0.23 -> 0.07 ms over half vectors).
// A row of 100 (144 would waste 44%) keeps one vector padded.
TEST(Opts, HeuristicPadsTiledRowsToThreeVectors) {
  Tensor w = Tensor::rand({36, 64, 64}, 1), v = Tensor::rand({36, 64, 196}, 2);
  expect_heuristic_plan(
      [&] {
        return w.permute({0, 2, 1}).matmul(v);
      },
      "PADTO(2,48) UPCAST(2,48) UPCAST(1,8)");
  Tensor a = Tensor::rand({64, 96}, 3), b = Tensor::rand({96, 200}, 4);
  expect_heuristic_plan([&] { return a.matmul(b); }, "PADTO(1,48) UPCAST(1,48) UPCAST(0,8)");
  Tensor c = Tensor::rand({96, 100}, 5);
  EXPECT_THAT(to_string(heuristic_for(a.matmul(c))), ::testing::StartsWith("PADTO(1,16)"));
  // A row of whole three-vector steps takes them too (BERT's 768 columns: 1.05-1.1x).
  Tensor e = Tensor::rand({96, 96}, 6);
  expect_heuristic_plan([&] { return a.matmul(e); }, "UPCAST(1,48) UPCAST(0,8)");
}

// An elementwise kernel's axes that select constants go into lanes by their period, so each
// lane's constant folds: a stack's axis whole; a Winograd F(4x4) input transform's 6 x 6
// points whole under 16 tiles of a row (14 padded); its output transform's rows by the tile's
// 4 (0.19 -> 0.06 ms at 56x56, Zen 5, 2 threads), F(2x2)'s by 2. Each plan computes what the
// unoptimized kernel does.
TEST(Opts, HeuristicPutsAxesThatSelectConstantsInLanes) {
  Tensor a = Tensor::rand({64, 32}, 3);
  auto stack = [&] {
    std::array<Tensor, 3> parts = {a * 2, a * 3, a + 1};
    return Tensor::stack(parts, 0);
  };
  std::vector<Opt> opts = heuristic_opts(stack().schedule().items.at(0).ast, 2);
  EXPECT_THAT(to_string(opts), ::testing::HasSubstr("UPCAST(0,3)"));
  expect_same_result(stack, opts);
  auto plans = [](int64_t hw, int tile) {
    test::ScopedEnv winograd("BEAMLAB_WINOGRAD", std::to_string(tile).c_str());
    Tensor x = Tensor::rand({1, 64, hw, hw}, 1), w = Tensor::rand({64, 64, 3, 3}, 2);
    std::map<std::string, std::string> out;
    for (const ScheduleItem& k : x.conv2d(w, std::nullopt, 1, 1).schedule().items)
      out[k.name] = to_string(heuristic_opts(k.ast, 2));
    return out;
  };
  std::map<std::string, std::string> f4 = plans(56, 4), f2 = plans(28, 2);
  EXPECT_THAT(f4["E_6_6_64_14_14"], ::testing::StartsWith("PADTO(4,16) UPCAST(4,16) UPCAST(0,6) "
                                                          "UPCAST(0,6)"));
  EXPECT_THAT(f4["E_64_56_56"], ::testing::HasSubstr("UPCAST(1,4)"));
  EXPECT_THAT(f2["E_4_4_64_14_14"], ::testing::HasSubstr("UPCAST(0,4) UPCAST(0,4)"));
  EXPECT_THAT(f2["E_64_28_28"], ::testing::HasSubstr("UPCAST(1,2)"));
}

// A Winograd output transform added to a downsampling 1x1 convolution (the first block of a
// ResNet stage) is a kernel of its own, read by the convolution's epilogue: fused, its 36
// loads an output rode the convolution's register tile unfolded (0.30-0.37 ms and 12 s to
// compile in ResNet-18). Added to a residual that another kernel computes, it keeps the whole
// epilogue.
TEST(Opts, AWinogradOutputTransformBesideAReductionIsAKernelOfItsOwn) {
  test::ScopedEnv winograd("BEAMLAB_WINOGRAD", "4");
  Tensor x = Tensor::rand({1, 64, 28, 28}, 1), w3 = Tensor::rand({64, 64, 3, 3}, 2),
         w1 = Tensor::rand({64, 64, 1, 1}, 3), b = Tensor::rand({64}, 4);
  auto names = [](const Tensor& t) {
    std::vector<std::string> out;
    for (const ScheduleItem& k : t.schedule().items) out.push_back(k.name);
    return out;
  };
  auto downsampled = [&] {
    return (x.conv2d(w3, b, 1, 1) + x.conv2d(w1, std::nullopt, 1, 0)).relu();
  };
  std::vector<std::string> ds = names(downsampled());
  EXPECT_THAT(ds, ::testing::Contains("E_64_28_28"));
  EXPECT_THAT(ds.back(), ::testing::StartsWith("r_64_28_28_64"));
  std::vector<float> got = downsampled().to_vector<float>(), want = [&] {
    test::ScopedEnv direct("BEAMLAB_WINOGRAD", "0");
    return downsampled().to_vector<float>();
  }();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i += 7)
    ASSERT_NEAR(got[i], want[i], 1e-3 * (1 + std::abs(want[i]))) << i;
  // An identity block after it, as in ResNet: its residual is the block above's output, which
  // its first convolution reads too (realized, but not by the first pass that meets it).
  Tensor r = downsampled();
  std::vector<std::string> id = names((r.conv2d(w3, b, 1, 1) + r).relu());
  EXPECT_EQ(id.back(), "E_64_28_28");
  // The block above's transform, and this one's with its whole epilogue (bias, add, ReLU).
  EXPECT_EQ(std::count(id.begin(), id.end(), "E_64_28_28"), 2) << ::testing::PrintToString(id);
}

// A 1x1 convolution on channel blocks (MobileNetV2's, as the ONNX import runs them): vectors of
// output channels under a register tile of 8 accumulators or more whatever the map's size:
// 7 positions at 56x56, 28x28 and 14x14 (2 vectors x 7: each pair of weight vectors reused by 7
// broadcasts; in MobileNetV2's whole program 1.4-6x faster than the 8, 4 or 2 x 2 positions
// before), a 7-wide row whole at 7x7 (it was padded to 8 before vectors wider than a register
// were split: 2.1x slower). Four accumulators ran 1.5x slower at 14x14, two 3.3x at 7x7.
TEST(Opts, HeuristicTilesChannelBlockConvolutions) {
  auto lanes = [](int64_t c, int64_t cout, int64_t hw) {
    Tensor x = Tensor::rand({1, c, hw, hw}, 5), w = Tensor::rand({cout, c, 1, 1}, 6);
    Tensor y = x.to_channel_blocks().conv_blocked(w, std::nullopt, 1, {}).relu();
    UOpPtr ast = y.schedule().items.back().ast;
    std::vector<Opt> opts = heuristic_opts(ast, 2);
    Expected<OptimizedKernel> k = apply_opts(ast, opts);
    EXPECT_TRUE(k) << k.error();
    return std::pair(k ? k->lanes : 0, to_string(opts));
  };
  for (int64_t hw : {56, 14, 7}) {
    auto [n, opts] = lanes(96, 64, hw);
    EXPECT_GE(n, 8 * 16) << hw << "x" << hw << ": " << opts;
    EXPECT_LE(n, 16 * 16) << hw << "x" << hw << ": " << opts;
  }
  EXPECT_THAT(lanes(960, 160, 7).second, ::testing::HasSubstr("UPCAST(0,2) UPCAST(2,7)"));
  for (int64_t hw : {56, 28, 14})
    EXPECT_THAT(lanes(384, 64, hw).second, ::testing::HasSubstr("UPCAST(0,2) UPCAST(2,7)")) << hw;
  // ... and computes what it does with no Opts (the weight's blocking kernel keeps its plan).
  Tensor x14 = Tensor::rand({1, 384, 14, 14}, 7), w14 = Tensor::rand({64, 384, 1, 1}, 8);
  auto make14 = [&] { return x14.to_channel_blocks().conv_blocked(w14, std::nullopt, 1, {}); };
  const ScheduleItem conv14 = make14().schedule().items.back();
  expect_same_result(make14, heuristic_opts(conv14.ast, 2), conv14.name, 1e-3);
  // Not a depthwise one, even with 49 taps of reduction: its input moves with its channels.
  Tensor dx = Tensor::rand({1, 64, 56, 56}, 3).to_channel_blocks();
  Tensor dw = Tensor::rand({64, 1, 7, 7}, 4);
  UOpPtr depthwise = dx.conv_blocked(dw, std::nullopt, 64, {.padding = {{3, 3}, {3, 3}}})
                         .schedule()
                         .items.back()
                         .ast;
  EXPECT_THAT(to_string(heuristic_opts(depthwise, 2)), ::testing::Not(::testing::HasSubstr(",7)")));
  // A matmul's rows are not a whole axis of channels: 7 rows keep their plan (no padded or
  // second tile axis); 16 or more of odd count get a register tile of rows all the same, one
  // that divides them (77 tokens: 7) or rows padded to 8 (197: 200).
  auto matmul_opts = [](int64_t m) {
    return to_string(heuristic_for(Tensor::rand({m, 64}, 1).matmul(Tensor::rand({64, 64}, 2))));
  };
  EXPECT_THAT(matmul_opts(7), ::testing::Not(::testing::HasSubstr("PADTO(0,")));
  EXPECT_THAT(matmul_opts(77), ::testing::HasSubstr("UPCAST(0,7)"));
  EXPECT_THAT(matmul_opts(197), ::testing::HasSubstr("PADTO(0,8) UPCAST(0,8)"));
}

// Reductions along memory: a row's max unrolls its contiguous reduce axis four vectors wide
// instead of gathering across output lanes, as does x @ W.T over too few rows to share a copy of
// W (and x @ x.T, its input read twice); with 16 rows or more (x @ W.T, with a GELU on x or not;
// attention's q @ k^T) the input the lanes would gather is PACKed into the register tile's panels,
// a matmul's B; softmax keeps its output vector. Each plan computes what the kernel with no Opts
// does.
TEST(Opts, HeuristicVectorizesReductionsAlongTheirData) {
  Tensor x = Tensor::rand({256, 1024}, 1), w = Tensor::rand({512, 1024}, 2);
  EXPECT_EQ(to_string(heuristic_for(x.max({1}))), "UNROLL(1,64) THREAD(0,2)");
  Tensor few = Tensor::rand({8, 1024}, 3);
  // (Its 8 rows share the weight's rows across the cores: each thread reads half of W.)
  EXPECT_EQ(to_string(heuristic_for(few.matmul(w.transpose(0, 1)))), "UNROLL(2,64) THREAD(1,2)");
  // (Nor x @ x.T: its one input is read at two places, which PACK doesn't copy.)
  EXPECT_EQ(to_string(heuristic_for(x.matmul(x.transpose(0, 1)))), "UNROLL(2,64) THREAD(0,2)");
  for (const Tensor& t : {x.matmul(w.transpose(0, 1)), x.gelu().matmul(w.transpose(0, 1))})
    EXPECT_THAT(to_string(heuristic_for(t)),
                ::testing::AllOf(::testing::StartsWith("UPCAST(1,32) UPCAST(0,8)"),
                                 ::testing::HasSubstr("PACK(1,0)")));
  Tensor q = Tensor::rand({4, 128, 64}, 4), k = Tensor::rand({4, 128, 64}, 5);
  auto scores = [&] { return q.matmul(k.transpose(1, 2)); };
  std::vector<Opt> attention = heuristic_for(scores());
  EXPECT_THAT(to_string(attention),
              ::testing::AllOf(::testing::StartsWith("UPCAST(2,32) UPCAST(1,8)"),
                               ::testing::HasSubstr("PACK(1,0)")));
  expect_same_result(scores, attention);
  expect_same_result([&] { return x.gelu().matmul(w.transpose(0, 1)); },
                     heuristic_for(x.gelu().matmul(w.transpose(0, 1))), "*", 1e-3);
  EXPECT_THAT(to_string(heuristic_for(x.softmax(-1))),
              ::testing::StartsWith("UPCAST(1,16) UNROLL(2,64) UNROLL(3,64)"));
}

// A kernel too small to pay for starting the threads runs on one core.
TEST(Opts, HeuristicThreadsOnlyKernelsWorthIt) {
  EXPECT_THAT(to_string(heuristic_for(Tensor::rand({16, 16, 16}, 1) * 2.0)),
              ::testing::Not(::testing::HasSubstr("THREAD")));
  EXPECT_THAT(to_string(heuristic_for(Tensor::rand({32, 32, 32}, 1) * 2.0)),
              ::testing::HasSubstr("THREAD(0,2)"));
  EXPECT_THAT(to_string(heuristic_for(Tensor::rand({8, 64}, 1).sum({1}))),
              ::testing::Not(::testing::HasSubstr("THREAD")));
}

// An elementwise row no quarter vector divides (an input image padded to 230 columns) is padded
// to whole vectors; a row shorter than a vector (7) is left as it is; the copy's result is the
// same either way.
TEST(Opts, HeuristicPadsRowsOfElementwiseKernelsToVectors) {
  auto image = [] {
    return Tensor::rand({1, 3, 224, 224}, 1).pad({{0, 0}, {0, 0}, {3, 3}, {3, 3}});
  };
  EXPECT_THAT(to_string(heuristic_for(image())), ::testing::StartsWith("PADTO(2,16) UPCAST(2,16)"));
  expect_same_result(image, heuristic_for(image()));
  EXPECT_THAT(to_string(heuristic_for(Tensor::rand({512, 7, 7}, 1) * 2.0)),
              ::testing::Not(::testing::HasSubstr("PADTO")));
}

TEST(Opts, ExplicitListThroughThePolicy) {
  Tensor a = Tensor::rand({64}, 3);
  HeuristicPolicy p;
  p.set("r_64", {{OptOp::Group, 0, 4}, {OptOp::Unroll, 1, 4}});
  Tensor s = a.sum();
  Schedule sched = s.schedule();
  ExecutionPlan plan = ExecutionPlan::prepare(sched, s.inputs(), {.threads = 2, .policy = &p});
  ASSERT_EQ(plan.kernels().size(), 1u);
  EXPECT_EQ(to_string(plan.kernels()[0].opts), "GROUP(0,4) UNROLL(1,4)");
  EXPECT_EQ(plan.kernels()[0].stages.size(), 2u); // partial sums, then their combination
  plan.run();
  std::vector<float> v = a.to_vector<float>();
  double want = 0;
  for (float x : v) want += x;
  EXPECT_NEAR(static_cast<const float*>(plan.buffer(*sched.outputs[0])->data())[0], want, 1e-4);
}

// A PACK of a constant buffer (a model's weight) is copied once, when the plan is prepared,
// into a scratch buffer no other kernel shares; a PACK of any other input on every run.
TEST(Opts, APackOfAConstantIsCopiedOncePerPlan) {
  const int64_t m = 16, k = 96, n = 64;
  Tensor a = Tensor::rand({m, k}, 1);
  auto weight = std::make_shared<Buffer>(static_cast<size_t>(k * n) * sizeof(float));
  std::span<float> w = weight->as<float>();
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) - 3;
  auto plan_for = [&](bool constant) {
    if (constant) weight->mark_constant();
    Tensor b = Tensor::from_storage(weight, {k, n}, Scalar::Float32);
    HeuristicPolicy p;
    p.set("*", {{OptOp::Upcast, 1, 32}, {OptOp::Pack, 1, 0}});
    Tensor out = a.matmul(b);
    Schedule s = out.schedule();
    ExecutionPlan plan = ExecutionPlan::prepare(s, out.inputs(), {.threads = 2, .policy = &p});
    return std::make_pair(std::move(plan), s.outputs.at(0));
  };
  auto value = [&](ExecutionPlan& plan, const UOpPtr& out, int64_t i, int64_t j) {
    plan.run();
    return static_cast<const float*>(plan.buffer(*out)->data())[i * n + j];
  };
  std::vector<float> av = a.to_vector<float>();
  auto want = [&](int64_t i, int64_t j) {
    double sum = 0;
    for (int64_t q = 0; q < k; ++q) sum += double(av[size_t(i * k + q)]) * w[size_t(q * n + j)];
    return sum;
  };
  auto [live, live_out] = plan_for(false);
  ASSERT_EQ(live.kernels().at(0).prepared, (std::vector<bool>{false, false}));
  EXPECT_NEAR(value(live, live_out, 3, 5), want(3, 5), 1e-3);
  w[size_t(7 * n + 5)] += 1; // a new weight: the next run copies it again
  EXPECT_NEAR(value(live, live_out, 3, 5), want(3, 5), 1e-3);
  auto [fixed, fixed_out] = plan_for(true);
  ASSERT_EQ(fixed.kernels().at(0).prepared, (std::vector<bool>{true, false}));
  EXPECT_NEAR(value(fixed, fixed_out, 3, 5), want(3, 5), 1e-3);
  EXPECT_NEAR(value(fixed, fixed_out, 2, 40), want(2, 40), 1e-3); // the copy serves every run
}

// A (k, n) float32 weight of small integers, marked constant as a model's are.
std::shared_ptr<Buffer> constant_weight(int64_t k, int64_t n) {
  auto weight = std::make_shared<Buffer>(static_cast<size_t>(k * n) * sizeof(float));
  std::span<float> w = weight->as<float>();
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) - 2;
  weight->mark_constant();
  return weight;
}

// Runs `plan` `runs` times, each time checking corner elements of its output `out` against
// (a @ w) * scale for a (m, k) and w (k, n), mkn = {m, k, n}.
void expect_runs_multiply(ExecutionPlan& plan, const UOp& out, const std::vector<float>& a,
                          std::span<const float> w, std::array<int64_t, 3> mkn, double scale,
                          int runs) {
  auto [m, k, n] = mkn;
  for (int run = 0; run < runs; ++run) {
    plan.run();
    const float* got = static_cast<const float*>(plan.buffer(out)->data());
    for (int64_t i : {int64_t{0}, m - 1})
      for (int64_t j : {int64_t{0}, n / 2 + 1, n - 1}) {
        double want = 0;
        for (int64_t q = 0; q < k; ++q)
          want += double(a[size_t(i * k + q)]) * scale * w[size_t(q * n + j)];
        EXPECT_NEAR(got[i * n + j], want, 1e-3 * (1 + std::abs(want)))
            << run << ": " << i << "," << j;
      }
  }
}

// The copy made once must not share storage with an intermediate an earlier kernel writes on
// every run: kernel 0's output dies before the GEMM, whose packed weight would fit in it.
TEST(Opts, APackMadeOnceKeepsItsOwnStorage) {
  const int64_t m = 8, k = 64, n = 64;
  auto weight = constant_weight(k, n);
  std::span<const float> w = weight->as<float>();
  Tensor b = Tensor::from_storage(weight, {k, n}, Scalar::Float32);
  Tensor big = (Tensor::rand({k * n}, 1) + 1.0).contiguous(); // kernel 0
  Tensor a = (Tensor::rand({m, k}, 2) + big.sum({0}, true).reshape({1, 1}))
                 .contiguous(); // big's last reader
  Tensor out = a.matmul(b);     // packs b once
  HeuristicPolicy p;
  p.set("*", {});
  p.set(out.schedule().items.back().name, {{OptOp::Upcast, 1, 32}, {OptOp::Pack, 1, 0}});
  Schedule s = out.schedule();
  ExecutionPlan plan = ExecutionPlan::prepare(s, out.inputs(), {.threads = 2, .policy = &p});
  ASSERT_EQ(plan.kernels().back().prepared.front(), true);
  expect_runs_multiply(plan, *s.outputs.at(0), a.to_vector<float>(), w, {m, k, n}, 1, 2);
}

// A kernel that reads only constants (a model's weight, transformed) runs once, before the
// first run, into storage of its own: the kernels after it, which reuse the storage of what
// died before them, must not overwrite it, and every run reads it.
TEST(Opts, AKernelOfConstantsRunsOncePerPlan) {
  const int64_t m = 8, k = 64, n = 32;
  auto weight = constant_weight(k, n);
  std::span<const float> w = weight->as<float>();
  Tensor b = Tensor::from_storage(weight, {k, n}, Scalar::Float32);
  Tensor doubled = (b * 2.0).contiguous();                 // of constants only
  Tensor x = (Tensor::rand({m, k}, 1) + 1.0).contiguous(); // every run
  Tensor y = (x.exp() + x.sum({1}, true)).contiguous();    // x dies here
  Tensor out = y.matmul(doubled);
  Schedule s = out.schedule();
  ExecutionPlan plan = ExecutionPlan::prepare(s, out.inputs(), {.threads = 2});
  int once = 0;
  for (const PlannedKernel& pk : plan.kernels()) {
    once += pk.once ? 1 : 0;
    EXPECT_EQ(pk.once,
              std::all_of(pk.prepared.begin(), pk.prepared.end(), [](bool p) { return p; }))
        << pk.item.name;
  }
  EXPECT_EQ(once, 1);
  expect_runs_multiply(plan, *s.outputs.at(0), y.to_vector<float>(), w, {m, k, n}, 2, 3);
  for (const KernelProfile& p : plan.profile(2)) {
    EXPECT_EQ(p.ms == 0, p.once) << p.name;
  }
}

// A plan tells its policy which slots of each kernel it binds to constants: the weight, and what
// a kernel of constants made from it (not the output, not an input of every run). kernel_task
// carries that to the tuner, whose workers time such kernels with those slots evicted.
TEST(Opts, APlanTellsItsPolicyWhichSlotsHoldConstants) {
  struct Spy : OptPolicy {
    mutable std::map<std::string, std::vector<bool>> seen;
    std::vector<Opt> opts_for(const ScheduleItem& kernel, int) const override {
      seen[kernel.name] = kernel.constant_slots;
      return {};
    }
  };
  const int64_t m = 8, k = 64, n = 32;
  Tensor w = Tensor::from_storage(constant_weight(k, n), {k, n}, Scalar::Float32);
  Tensor doubled = (w * 2.0).contiguous(); // a kernel of constants
  Tensor x = (Tensor::rand({m, k}, 1) + 1.0).contiguous();
  Tensor out = x.matmul(doubled);
  Schedule s = out.schedule();
  Spy spy;
  ExecutionPlan plan = ExecutionPlan::prepare(s, out.inputs(), {.threads = 2, .policy = &spy});
  std::set<int64_t> constants;
  int checked = 0;
  for (const PlannedKernel& pk : plan.kernels()) {
    const ScheduleItem& item = pk.item;
    ASSERT_EQ(item.constant_slots.size(), item.buffers.size()) << item.name;
    EXPECT_EQ(spy.seen.at(item.name), item.constant_slots) << item.name;
    KernelTask task = kernel_task(item);
    for (size_t slot = 0; slot < item.buffers.size(); ++slot) {
      int64_t id = buffer_id(*item.buffers[slot]);
      bool constant = slot > 0 && (pk.once ? slot == 1 : constants.count(id) > 0);
      EXPECT_EQ(item.constant_slots[slot], constant) << item.name << " slot " << slot;
      EXPECT_EQ(task.buffers[slot].constant, constant) << item.name << " slot " << slot;
      checked += constant ? 1 : 0;
    }
    if (pk.once) constants.insert(buffer_id(*item.buffers[0]));
  }
  EXPECT_EQ(checked, 2); // the weight in the kernel of constants, its result in the GEMM
}

// Evicting memory from the caches leaves every byte as it was, on read-only pages too, for any
// start and length.
TEST(Runtime, EvictingFromTheCachesLeavesTheBytesAsTheyWere) {
  const size_t bytes = 3 * 4096;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* c = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < bytes; ++i) c[i] = static_cast<unsigned char>(i * 7 + 3);
  ASSERT_EQ(::mprotect(p, bytes, PROT_READ), 0); // a worker's inputs are read-only
  evict_from_caches(p, bytes);
  evict_from_caches(c + 13, 100); // within lines, across one
  evict_from_caches(c + bytes - 1, 1);
  evict_from_caches(p, 0);
  for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(c[i], static_cast<unsigned char>(i * 7 + 3)) << i;
  ::munmap(p, bytes);
}

// A Winograd convolution of a constant weight (a model's) transforms the weight once: one
// kernel of constants, and every run equals the direct convolution. The same weight not
// constant is transformed on every run, which a 16x16 map's 64 tiles don't pay for: direct.
TEST(Opts, AWinogradConvolutionTransformsAConstantWeightOnce) {
  const int64_t c = 64, hw = 16;
  auto storage = std::make_shared<Buffer>(static_cast<size_t>(c * c * 9) * sizeof(float));
  std::span<float> w = storage->as<float>();
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i * 7 % 11) / 11 - 0.5f;
  Tensor x = Tensor::rand({1, c, hw, hw}, 4);
  auto conv = [&] {
    return x.conv2d(Tensor::from_storage(storage, {c, c, 3, 3}, Scalar::Float32), std::nullopt, 1,
                    1);
  };
  auto winograd = [](const Tensor& t) { // its 16 GEMMs, F(2x2, 3x3) on 8x8 tiles
    for (const ScheduleItem& k : t.schedule().items)
      if (k.name.starts_with("r_16_")) return true;
    return false;
  };
  std::vector<float> direct = [&] {
    test::ScopedEnv off("BEAMLAB_WINOGRAD", "0");
    return conv().to_vector<float>();
  }();
  EXPECT_FALSE(winograd(conv())); // not constant yet
  storage->mark_constant();
  Tensor out = conv();
  ASSERT_TRUE(winograd(out));
  Schedule s = out.schedule();
  ExecutionPlan plan = ExecutionPlan::prepare(s, out.inputs(), {.threads = 2});
  EXPECT_EQ(std::count_if(plan.kernels().begin(), plan.kernels().end(),
                          [](const PlannedKernel& k) { return k.once; }),
            1);
  for (int run = 0; run < 2; ++run) {
    plan.run();
    const float* got = static_cast<const float*>(plan.buffer(*s.outputs.at(0))->data());
    for (size_t i = 0; i < direct.size(); i += 97)
      ASSERT_NEAR(got[i], direct[i], 1e-4 * (1 + std::abs(direct[i]))) << run << ": " << i;
  }
}

// Several THREADs fold into one parallel axis (the first varying slowest), and a GROUP on a
// kernel already parallel joins it too (split-K): each computes what the serial kernel does.
TEST(Opts, ThreadsOverSeveralAxesAndSplitK) {
  Tensor a = Tensor::rand({24, 40}, 1), b = Tensor::rand({40, 32}, 2);
  auto result = [&](std::vector<Opt> opts, int threads) {
    HeuristicPolicy p;
    p.set("*", std::move(opts));
    Tensor t = a.matmul(b);
    t.realize({.threads = threads, .policy = &p});
    return t.to_vector<float>();
  };
  std::vector<float> want = result({}, 1);
  UOpPtr ast = a.matmul(b).schedule().items.at(0).ast;
  for (const std::vector<Opt>& plan : std::vector<std::vector<Opt>>{
           {{OptOp::Thread, 0, 2}, {OptOp::Thread, 1, 4}},                        // 2 x 4
           {{OptOp::Upcast, 1, 8}, {OptOp::Thread, 0, 6}, {OptOp::Thread, 1, 4}}, // rows, columns
           {{OptOp::Thread, 0, 24}, {OptOp::Thread, 1, 32}},                      // every output
           {{OptOp::Thread, 0, 3}, {OptOp::Group, 3, 5}},                         // split-K
           {{OptOp::Upcast, 1, 8},
            {OptOp::Thread, 0, 4},
            {OptOp::Group, 3, 4},
            {OptOp::Unroll, 3, 2}}}) {
    Expected<OptimizedKernel> k = apply_opts(ast, plan);
    ASSERT_TRUE(k) << to_string(plan) << ": " << k.error();
    int parallel = 0;
    for (const Axis& x : k->axes) parallel += x.kind == LoopKind::Parallel ? 1 : 0;
    EXPECT_EQ(parallel, 1) << to_string(plan);
    for (int threads : {1, 2, 5, 16}) {
      std::vector<float> got = result(plan, threads);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-4) << to_string(plan) << " on " << threads << " at " << i;
    }
  }
  Expected<OptimizedKernel> k = apply_opts(ast, {{OptOp::Thread, 0, 2}, {OptOp::Thread, 1, 4}});
  EXPECT_EQ(k->axes.at(0).extent, 8);
  EXPECT_EQ(parallel_profile(*k, 16).chunks, 8);
}

// A split's profile by hand: P chunks over min(T, P) threads, ceil(P / used) each at most.
TEST(Opts, ParallelProfileByHand) {
  ParallelProfile p = parallel_profile(112, int64_t{1} << 30, 64);
  EXPECT_EQ(p.used, 64);
  EXPECT_EQ(p.per_thread, 2);
  EXPECT_DOUBLE_EQ(p.balance, 112.0 / 128.0);
  EXPECT_FALSE(p.fills());                         // 0.875
  p = parallel_profile(784, int64_t{1} << 30, 64); // 13 each at most, 12.25 on average
  EXPECT_NEAR(p.balance, 784.0 / (64 * 13), 1e-12);
  EXPECT_TRUE(p.fills());
  p = parallel_profile(3, int64_t{1} << 30, 16); // 3 threads of 16: even, but too few
  EXPECT_EQ(p.used, 3);
  EXPECT_DOUBLE_EQ(p.balance, 1.0);
  EXPECT_EQ(p.worth, 16);
  EXPECT_FALSE(p.fills());
  p = parallel_profile(1, kThreadGrain, 16); // too small to pay for a second thread
  EXPECT_EQ(p.worth, 1);
  EXPECT_TRUE(p.fills());
  EXPECT_EQ(threads_worth(5 * kThreadGrain, 64), 5);
  EXPECT_EQ(threads_worth(int64_t{1} << 40, 64), 64);
}

// The heuristic sizes its split by the threads it is given: a 3x3 convolution whose input
// outweighs its weights splits its rows (a thread reads half the input), on 16 cores all 56
// and then its register tile's two blocks of 32 channels (the plan on 16 cores once ran on 2 of
// them); a 7x7 layer's tiles, too few for 64 threads, split the reduction.
TEST(Opts, HeuristicSplitsByTheThreadsItIsGiven) {
  test::ScopedEnv direct("BEAMLAB_WINOGRAD", "0"); // the direct convolution's schedule
  auto conv_ast = [](int64_t c, int64_t hw) {
    Tensor x = Tensor::rand({1, c, hw, hw}, 5), w = Tensor::rand({c, c, 3, 3}, 6);
    return x.conv2d(w, std::nullopt, 1, 1).schedule().items.back().ast;
  };
  UOpPtr conv = conv_ast(64, 56);
  for (int threads : {2, 8, 16, 64}) {
    std::vector<Opt> opts = heuristic_opts(conv, threads);
    ParallelProfile p = parallel_profile(*apply_opts(conv, opts), threads);
    EXPECT_EQ(p.used, threads) << to_string(opts);
    EXPECT_GE(p.balance, kMinBalance) << to_string(opts);
  }
  EXPECT_THAT(to_string(heuristic_opts(conv, 2)), ::testing::EndsWith("THREAD(1,2)"));
  EXPECT_THAT(to_string(heuristic_opts(conv, 16)), ::testing::EndsWith("THREAD(1,56) THREAD(1,2)"));
  UOpPtr small = conv_ast(512, 7);
  std::vector<Opt> opts = heuristic_opts(small, 64);
  EXPECT_THAT(to_string(opts), ::testing::HasSubstr("GROUP")) << to_string(opts);
  EXPECT_TRUE(parallel_profile(*apply_opts(small, opts), 64).fills()) << to_string(opts);
}

// A kernel that reads only an input's padding doesn't bind that input: GROUP's scratch
// buffer once landed in its slot and overwrote it.
TEST(Opts, GroupScratchNeverAliasesAnInput) {
  Tensor x({1, 2}, {2});
  Tensor s = (x.pad({{0, 2}}).shrink({{2, 4}}) + 1.0).sum();
  HeuristicPolicy group;
  group.set("*", {{OptOp::Group, 0, 2}});
  s.realize({.policy = &group});
  EXPECT_THAT(s.to_vector<float>(), ::testing::ElementsAre(2));
  EXPECT_THAT(x.to_vector<float>(), ::testing::ElementsAre(1, 2));
}

// The lowering pipeline (engine/realize/pipeline.hpp): each step prints what it made when
// BEAMLAB_PRINT_AFTER names it, and nothing is printed when nothing is named. (Kernels of shapes
// no other test uses, so the compile cache can't skip the steps.)
TEST(Pipeline, EveryStepPrintsWhatItMadeWhenNamed) {
  setenv("BEAMLAB_PRINT_AFTER", "schedule,apply_opts,expand,lower,linearize,emit,link", 1);
  ::testing::internal::CaptureStderr();
  (Tensor::rand({67, 3}, 7) * 7.25f).sum({1}).realize();
  std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("BEAMLAB_PRINT_AFTER");
  for (const char* step : {"# after schedule\n", "# after apply_opts\n", "# after expand\n",
                           "# after lower\n", "# after linearize (", "# after link: "})
    EXPECT_NE(err.find(step), std::string::npos) << step << " missing in:\n" << err;
  // Steps in pipeline order; emit's LLVM IR between linearize and link.
  EXPECT_LT(err.find("# after schedule"), err.find("# after apply_opts"));
  EXPECT_LT(err.find("# after apply_opts"), err.find("# after expand"));
  EXPECT_LT(err.find("# after expand"), err.find("# after lower"));
  EXPECT_LT(err.find("# after lower"), err.find("# after linearize"));
  EXPECT_LT(err.find("# after linearize"), err.find("define "));
  EXPECT_LT(err.find("define "), err.find("# after link: "));
  // The linearized program indents what runs inside a loop.
  std::string program = err.substr(err.find("# after linearize"));
  EXPECT_NE(program.find("RANGE index"), std::string::npos);
  EXPECT_NE(program.find("\n  %"), std::string::npos) << program;

  ::testing::internal::CaptureStderr();
  (Tensor::rand({71, 5}, 7) * 3.5f).sum({1}).realize();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// The gates of the memory accesses inside `effect`'s reductions, and whether any of them still
// moves with a plain loop (one a partition could have cut).
struct HotGates {
  int count = 0;
  bool on_loops = false;
};
HotGates hot_gates(const UOpPtr& effect) {
  HotGates g;
  for (const UOpPtr& u : toposort(effect)) {
    if (u->op() != Op::Reduce) continue;
    for (const UOpPtr& n : toposort(u->src(0))) {
      if (n->op() != Op::Index || n->src().size() < 3) continue;
      ++g.count;
      for (const UOpPtr& r : toposort(n->src(2)))
        g.on_loops |= r->op() == Op::Range && loop_kind(*r) == LoopKind::Loop;
    }
  }
  return g;
}

// 49 columns as 7 tiles of 8 under a register tile (MobileNetV2's last 1x1 convolution, 7x7
// pixels): the padding's gate is tested in every step of the reduction, though only the last
// tile is partial. The partition runs tiles 0-5 without it and tile 6 with a gate on its lanes
// alone (constant per lane once they are vectors).
TEST(Pipeline, APaddedTileAxisRunsItsWholeTilesWithoutGates) {
  Tensor w = Tensor::rand({16, 32}, 1), x = Tensor::rand({32, 49}, 2);
  auto make = [&] { return w.matmul(x); };
  std::vector<Opt> opts = {{OptOp::Upcast, 0, 16}, {OptOp::Padto, 0, 8}, {OptOp::Upcast, 0, 8}};
  Expected<OptimizedKernel> k = optimize_kernel(make().schedule().items.at(0).ast, opts);
  ASSERT_TRUE(k) << k.error();
  UOpPtr stage = k->stages.at(k->main);
  ASSERT_EQ(stage->src().size(), 1u);
  ASSERT_TRUE(hot_gates(stage).on_loops) << print_graph(stage);
  UOpPtr cut = partition_loops(stage);
  ASSERT_EQ(cut->src().size(), 2u) << print_graph(cut);
  EXPECT_EQ(hot_gates(cut->src(0)).count, 0) << print_graph(cut);
  EXPECT_GT(hot_gates(cut->src(1)).count, 0);
  EXPECT_FALSE(hot_gates(cut->src(1)).on_loops) << print_graph(cut);
  expect_same_result(make, opts);
  // Nothing to cut: a kernel with no padding, and 48 columns as whole tiles.
  UOpPtr plain = optimize_kernel(make().schedule().items.at(0).ast, {})->stages.at(0);
  EXPECT_EQ(partition_loops(plain), plain);
  Tensor x48 = Tensor::rand({32, 48}, 2);
  UOpPtr whole = optimize_kernel(w.matmul(x48).schedule().items.at(0).ast,
                                 {{OptOp::Upcast, 0, 16}, {OptOp::Upcast, 0, 8}})
                     ->stages.at(0);
  EXPECT_EQ(partition_loops(whole), whole);
}

// Rows padded on both sides (3 above, 3 below) and read in a reduction: rows 3-12 run without
// the gate, rows 0-2 and 13-15 as copies of their own, where it folds to false.
TEST(Pipeline, AWindowPaddedOnBothSidesIsCutInThree) {
  Tensor x = Tensor::rand({10, 32}, 3), w = Tensor::rand({32, 16}, 4);
  auto make = [&] { return x.pad({{3, 3}, {0, 0}}).matmul(w); };
  std::vector<Opt> opts = {{OptOp::Upcast, 1, 16}};
  Expected<OptimizedKernel> k = optimize_kernel(make().schedule().items.at(0).ast, opts);
  ASSERT_TRUE(k) << k.error();
  UOpPtr cut = partition_loops(k->stages.at(k->main));
  ASSERT_EQ(cut->src().size(), 3u) << print_graph(cut);
  for (const UOpPtr& part : cut->src()) EXPECT_FALSE(hot_gates(part).on_loops) << print_graph(cut);
  EXPECT_EQ(hot_gates(cut->src(1)).count, 0) << print_graph(cut);
  expect_same_result(make, opts);
}

// A register tile of 7 columns by 16 rows computes in 112-lane vectors, 3 by 8 in 24: after
// splitting, no vector of the kernel is wider than a register (LLVM would halve 112 lanes down to
// 7 and shuffle every step), the last piece of 24 lanes is 8 wide, and the results stay.
TEST(Pipeline, VectorsNoRegisterLinesUpWithComputeInRegisterPieces) {
  struct Case {
    int64_t rows, cols;
    std::vector<Opt> opts;
    int widest, last; // lanes before splitting; the narrowest piece after
  };
  for (const Case& c : {Case{16, 49, {{OptOp::Upcast, 0, 16}, {OptOp::Upcast, 0, 7}}, 112, 16},
                        Case{8, 3, {{OptOp::Upcast, 0, 8}, {OptOp::Upcast, 0, 3}}, 24, 8}}) {
    Tensor w = Tensor::rand({c.rows, 32}, 1), x = Tensor::rand({32, c.cols}, 2);
    auto make = [&] { return w.matmul(x); };
    Expected<OptimizedKernel> k = optimize_kernel(make().schedule().items.at(0).ast, c.opts);
    ASSERT_TRUE(k) << k.error();
    UOpPtr lowered = lower_kernel(expand_upcasts(partition_loops(k->stages.at(k->main))));
    auto lane_counts = [](const UOpPtr& g) {
      std::set<int> out;
      for (const UOpPtr& u : toposort(g))
        if (!u->dtype().is_ptr()) out.insert(u->dtype().lanes());
      return out;
    };
    ASSERT_EQ(*lane_counts(lowered).rbegin(), c.widest);
    std::set<int> after = lane_counts(split_wide_vectors(lowered));
    EXPECT_LE(*after.rbegin(), kRegisterLanes) << print_graph(split_wide_vectors(lowered));
    EXPECT_TRUE(after.contains(c.last));
    expect_same_result(make, c.opts);
  }
  // Powers of two are LLVM's to split: 16 x 8 lanes stay one vector.
  Tensor w = Tensor::rand({16, 32}, 1), x = Tensor::rand({32, 48}, 2);
  UOpPtr lowered =
      lower_kernel(expand_upcasts(optimize_kernel(w.matmul(x).schedule().items.at(0).ast,
                                                  {{OptOp::Upcast, 0, 16}, {OptOp::Upcast, 0, 8}})
                                      ->stages.at(0)));
  EXPECT_EQ(split_wide_vectors(lowered), lowered);
}

TEST(Pipeline, AStageIsNamedAfterItsKernel) {
  OptimizedKernel k;
  k.stages.resize(4);
  k.main = 2;
  EXPECT_EQ(stage_name("r_64", k, 0), "r_64_pack0");
  EXPECT_EQ(stage_name("r_64", k, 1), "r_64_pack1");
  EXPECT_EQ(stage_name("r_64", k, 2), "r_64");
  EXPECT_EQ(stage_name("r_64", k, 3), "r_64_combine");
}

} // namespace
} // namespace beamlab
