// graph_rewrite: fixed points, memoization, the two orders, the loop guards and the knobs.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/ir/printer.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/rewrite/verify.hpp"

namespace beamlab {
namespace {

UOpPtr idx(int64_t v) { return UOp::const_int(Scalar::Index, v); }

// Folds c1 + c2 into one constant, counting calls in the context.
struct Counter {
  int calls = 0;
  std::vector<std::string> seen;
};

PatternMatcher fold_add() {
  return PatternMatcher({
      {UPat::cvar("a") + UPat::cvar("b"),
       [](const Match& m) {
         ++m.ctx.get<Counter>().calls;
         return idx(m["a"]->const_value() + m["b"]->const_value());
       }},
  });
}

TEST(GraphRewrite, ReachesAFixedPoint) {
  UOpPtr e = ((idx(1) + idx(2)) + idx(3)) + idx(4);
  Counter ctx;
  EXPECT_EQ(graph_rewrite(e, fold_add(), ctx), idx(10));
  EXPECT_EQ(ctx.calls, 3);
}

TEST(GraphRewrite, RewritesASharedNodeOnce) {
  UOpPtr shared = idx(1) + idx(2);
  UOpPtr x = UOp::variable("x", 0, 9);
  UOpPtr e = sink({shared * x, shared - x, shared});
  Counter ctx;
  UOpPtr out = graph_rewrite(e, fold_add(), ctx);
  EXPECT_EQ(ctx.calls, 1);
  EXPECT_EQ(out, sink({idx(3) * x, idx(3) - x, idx(3)}));
}

TEST(GraphRewrite, RewritesWhatARuleReturns) {
  // x*2 -> x+x, whose new sum is folded when x is a constant sum.
  PatternMatcher pm =
      fold_add() +
      PatternMatcher({
          {UPat::var("x") * UPat::const_value(2), [](const Match& m) { return m["x"] + m["x"]; }},
      });
  Counter ctx;
  EXPECT_EQ(graph_rewrite((idx(1) + idx(2)) * idx(2), pm, ctx), idx(6));
}

// Records the order in which rules see nodes.
PatternMatcher recorder() {
  return PatternMatcher({
      {UPat::var(),
       [](const Match& m) -> UOpPtr {
         m.ctx.get<Counter>().seen.push_back(to_expr(m.root));
         return nullptr;
       }},
  });
}

TEST(GraphRewrite, BottomUpSeesSourcesFirst) {
  UOpPtr x = UOp::variable("x", 0, 9), y = UOp::variable("y", 0, 9);
  Counter ctx;
  graph_rewrite(x + y, recorder(), ctx);
  EXPECT_EQ(ctx.seen, (std::vector<std::string>{"x", "y", "(x+y)"}));
}

TEST(GraphRewrite, TopDownSeesUsersFirst) {
  UOpPtr x = UOp::variable("x", 0, 9), y = UOp::variable("y", 0, 9);
  Counter ctx;
  graph_rewrite(x + y, recorder(), ctx, {.name = "record", .top_down = true});
  EXPECT_EQ(ctx.seen, (std::vector<std::string>{"(x+y)", "x", "y"}));
}

TEST(GraphRewrite, TopDownRewritesBeforeDescending) {
  // Top-down, (x*0)+y becomes y before x*0 is ever visited.
  UOpPtr x = UOp::variable("x", 0, 9), y = UOp::variable("y", 0, 9);
  Counter ctx;
  PatternMatcher pm({
      {UPat::var("a") * UPat::const_value(0) + UPat::var("b"),
       [](const Match& m) { return m["b"]; }},
      {UPat::var("a") * UPat::const_value(0),
       [](const Match& m) { return ++m.ctx.get<Counter>().calls, idx(0); }},
  });
  EXPECT_EQ(graph_rewrite(x * idx(0) + y, pm, ctx, {.name = "t", .top_down = true}), y);
  EXPECT_EQ(ctx.calls, 0);
}

TEST(GraphRewrite, LoopGuardNamesTheRule) {
  UOpPtr x = UOp::variable("x", 0, 9), y = UOp::variable("y", 0, 9);
  // Two rules that undo each other: x+y -> y+x -> x+y.
  PatternMatcher pm({
      {UPat(Op::Add, {UPat::var("a"), UPat::var("b")}),
       [](const Match& m) { return m["b"] + m["a"]; }},
  });
  try {
    graph_rewrite(x + y, pm, {}, {.name = "swap"});
    FAIL() << "expected a rewrite loop error";
  } catch (const InternalError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("rewrite loop in step 'swap'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("graph_rewrite_test.cpp:"), std::string::npos) << msg;
  }
}

TEST(GraphRewrite, RunawayGuardStopsEndlessGrowth) {
  // c -> c+1 never repeats a node, so only the rewrite limit can stop it.
  PatternMatcher pm({
      {UPat::cvar("c").dtypes({Scalar::Index}),
       [](const Match& m) { return idx(m["c"]->const_value() + 1); }},
  });
  setenv("BEAMLAB_REWRITE_LIMIT", "50", 1);
  EXPECT_THROW(
      {
        try {
          graph_rewrite(idx(0), pm, {}, {.name = "grow"});
        } catch (const InternalError& e) {
          EXPECT_NE(std::string(e.what()).find("more than 50 rewrites in a row"), std::string::npos)
              << e.what();
          throw;
        }
      },
      InternalError);
  unsetenv("BEAMLAB_REWRITE_LIMIT");
}

TEST(GraphRewrite, RunawayGuardStopsGrowthInDepth) {
  // x+c -> (x+(c+1))-1: every output holds a new sum that matches again, one level deeper.
  UOpPtr x = UOp::variable("x", 0, 9);
  PatternMatcher pm({
      {UPat::var("x") + UPat::cvar("c"),
       [](const Match& m) { return (m["x"] + idx(m["c"]->const_value() + 1)) - idx(1); }},
  });
  setenv("BEAMLAB_REWRITE_LIMIT", "200", 1);
  try {
    graph_rewrite(x + idx(1), pm, {}, {.name = "deepen"});
    ADD_FAILURE() << "expected a rewrite loop error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 200 rewrites in a row"), std::string::npos)
        << e.what();
  }
  unsetenv("BEAMLAB_REWRITE_LIMIT");
}

TEST(GraphRewrite, PrintAfterKnobPrintsTheNamedStep) {
  UOpPtr e = idx(1) + idx(2);
  Counter ctx;
  setenv("BEAMLAB_PRINT_AFTER", "other,fold", 1);
  ::testing::internal::CaptureStderr();
  graph_rewrite(e, fold_add(), ctx, {.name = "fold"});
  graph_rewrite(e, fold_add(), ctx, {.name = "quiet"});
  std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("BEAMLAB_PRINT_AFTER");
  EXPECT_EQ(err, "# after fold\n%0 = CONST index : 3\n");
}

TEST(GraphRewrite, VerifiesItsOutputAgainstASpec) {
  // A broken rule: turns an index sum into a float32 constant.
  PatternMatcher bad({
      {UPat::cvar("a") + UPat::cvar("b"),
       [](const Match&) { return UOp::const_float(Scalar::Float32, 1.0); }},
  });
  UOpPtr e = sink({idx(1) + idx(2)});
  setenv("BEAMLAB_VERIFY", "1", 1);
  EXPECT_NO_THROW(graph_rewrite(e, bad, {}, {.name = "bad"}));
  Spec int_only("ints only",
                {
                    {UPat::ops({Op::Const}),
                     [](const Match& m) -> std::optional<std::string> {
                       if (m.root->dtype().is_int()) return std::nullopt;
                       return "not an int";
                     }},
                    {UPat::ops({Op::Sink}),
                     [](const Match&) -> std::optional<std::string> { return std::nullopt; }},
                });
  try {
    graph_rewrite(e, bad, {}, {.name = "bad", .spec = &int_only});
    FAIL() << "expected a verification error";
  } catch (const InternalError& err) {
    std::string msg = err.what();
    EXPECT_NE(msg.find("step 'bad' produced IR that violates spec 'ints only'"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("%0 = CONST float32: not an int"), std::string::npos) << msg;
  }
}

} // namespace
} // namespace beamlab
