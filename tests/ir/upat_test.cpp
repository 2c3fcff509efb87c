// Tests of UPat matching: captures, commutative sources, repeated names, predicates, source modes.
#include "engine/rewrite/upat.hpp"

#include <gtest/gtest.h>

#include "engine/support/error.hpp"

namespace beamlab {
namespace {

using S = Scalar;
using Mode = UPat::SrcMode;

struct Nodes {
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr y = UOp::variable("y", -5, 5);
  UOpPtr c3 = UOp::const_int(S::Index, 3);
  UOpPtr c4 = UOp::const_int(S::Index, 4);
};

bool matches(const UPat& p, const UOpPtr& u) {
  Captures caps;
  return p.match(u, caps);
}

TEST(UPat, CapturesByName) {
  Nodes n;
  UPat p = UPat::var("x") * UPat::cvar("c");
  Captures caps;
  ASSERT_TRUE(p.match(n.x * 3, caps));
  EXPECT_EQ(caps["x"], n.x);
  EXPECT_EQ(caps["c"], n.c3);
  ASSERT_NE(caps.find("x"), nullptr);
  EXPECT_EQ(*caps.find("x"), n.x);
  EXPECT_EQ(caps.find("z"), nullptr);
  EXPECT_THROW(caps["z"], InternalError);
}

TEST(UPat, NamedRootIsCaptured) {
  Nodes n;
  UPat p = (UPat::var("a") + UPat::var("b")).named("sum");
  UOpPtr sum = n.x + n.y;
  Captures caps;
  ASSERT_TRUE(p.match(sum, caps));
  EXPECT_EQ(caps["sum"], sum);
  EXPECT_EQ(caps["a"], n.x);
  EXPECT_EQ(caps["b"], n.y);
}

TEST(UPat, CommutativeOpsMatchBothOrders) {
  Nodes n;
  UPat mul = UPat::var("x") * UPat::cvar("c");
  Captures a, b;
  ASSERT_TRUE(mul.match(n.x * n.c4, a));
  ASSERT_TRUE(mul.match(n.c4 * n.x, b));
  EXPECT_EQ(a["x"], n.x);
  EXPECT_EQ(b["x"], n.x);
  EXPECT_EQ(a["c"], n.c4);
  EXPECT_EQ(b["c"], n.c4);
  UPat add = UPat::var("x") + UPat::cvar("c");
  EXPECT_TRUE(matches(add, n.x + n.c3));
  EXPECT_TRUE(matches(add, n.c3 + n.x));
  EXPECT_FALSE(matches(add, n.x + n.y)); // no constant either way
}

TEST(UPat, NonCommutativeOpsMatchInOrderOnly) {
  Nodes n;
  UPat sub = UPat::var("x") - UPat::cvar("c");
  EXPECT_TRUE(matches(sub, n.x - n.c3));
  EXPECT_FALSE(matches(sub, n.c3 - n.x));
  UPat div = UPat::var("x") / UPat::cvar("c");
  EXPECT_TRUE(matches(div, n.x / n.c3));
  EXPECT_FALSE(matches(div, n.c3 / n.x));
  UPat mod = UPat::var("x") % UPat::cvar("c");
  EXPECT_TRUE(matches(mod, n.x % n.c3));
  EXPECT_FALSE(matches(mod, n.c3 % n.x));
}

TEST(UPat, OpMustMatch) {
  Nodes n;
  EXPECT_FALSE(matches(UPat::var("x") + UPat::var("y"), n.x * n.y));
  EXPECT_FALSE(matches(UPat::var("x") / UPat::var("y"), n.x % n.y));
  UPat add_or_mul = UPat::ops({Op::Add, Op::Mul}, "e");
  EXPECT_TRUE(matches(add_or_mul, n.x + n.y));
  EXPECT_TRUE(matches(add_or_mul, n.x * n.y));
  EXPECT_FALSE(matches(add_or_mul, n.x - n.y));
  EXPECT_TRUE(add_or_mul.root_ops().contains(Op::Mul));
  EXPECT_FALSE(add_or_mul.any_op());
  EXPECT_TRUE(UPat::var("v").any_op());
}

TEST(UPat, RepeatedNameMustBindTheSameNode) {
  Nodes n;
  UPat twice = UPat::var("x") + UPat::var("x");
  Captures caps;
  ASSERT_TRUE(twice.match(n.x + n.x, caps));
  EXPECT_EQ(caps["x"], n.x);
  EXPECT_FALSE(matches(twice, n.x + n.y));
  // Structurally equal subtrees are one interned node, so they count as the same.
  EXPECT_TRUE(matches(twice, (n.x * 3) + (n.x * 3)));
  EXPECT_FALSE(matches(twice, (n.x * 3) + (n.x * 4)));
}

TEST(UPat, RepeatedNameAcrossLevelsBacktracksOverOrders) {
  Nodes n;
  // x + x*c in either order: the first order tried binds x to the product and must be undone.
  UPat p = UPat::var("x") + UPat::var("x") * UPat::cvar("c");
  Captures caps;
  ASSERT_TRUE(p.match((n.x * 3) + n.x, caps));
  EXPECT_EQ(caps["x"], n.x);
  EXPECT_EQ(caps["c"], n.c3);
  Captures caps2;
  ASSERT_TRUE(p.match(n.x + (n.x * 3), caps2));
  EXPECT_EQ(caps2["x"], n.x);
  EXPECT_FALSE(matches(p, n.y + (n.x * 3)));
  EXPECT_FALSE(matches(p, (n.x * 3) + n.y));
}

TEST(UPat, NameBoundBeforeTheMatchConstrainsIt) {
  Nodes n;
  Captures caps;
  ASSERT_TRUE(UPat::var("x").match(n.y, caps));
  EXPECT_FALSE((UPat::var("x") + UPat::cvar("c")).match(n.x + n.c3, caps));
  EXPECT_TRUE((UPat::var("x") + UPat::cvar("c")).match(n.y + n.c3, caps));
  EXPECT_EQ(caps["c"], n.c3);
}

TEST(UPat, FailedMatchLeavesCapturesUnchanged) {
  Nodes n;
  Captures caps;
  ASSERT_TRUE(UPat::var("keep").match(n.c4, caps));
  // Binds "root" and "a" before the second source fails.
  UPat exact = UPat(Op::Sub, {UPat::var("a"), UPat::cvar("c")}).named("root");
  EXPECT_FALSE(exact.match(n.x - n.y, caps));
  // Permuted: every order binds "x" and then fails on the constant.
  UPat permuted = UPat::var("x") * UPat::cvar("c");
  EXPECT_FALSE(permuted.match(n.x * n.y, caps));
  // Each: the first source matches and binds, the second does not.
  UPat each(Op::Sink, {UPat::cvar("k")}, Mode::Each);
  EXPECT_FALSE(each.match(sink({n.c3, n.x}), caps));
  for (const char* name : {"root", "a", "c", "x", "k"}) EXPECT_EQ(caps.find(name), nullptr) << name;
  ASSERT_NE(caps.find("keep"), nullptr);
  EXPECT_EQ(caps["keep"], n.c4);
}

TEST(UPat, ArgAndArgIf) {
  Nodes n;
  UPat three = UPat(Op::Const).arg(Arg(3));
  EXPECT_TRUE(matches(three, n.c3));
  EXPECT_FALSE(matches(three, n.c4));
  UPat positive_even = UPat::cvar("c").arg_if(
      [](const Arg& a) { return a.is_int() && a.as_int() > 0 && a.as_int() % 2 == 0; });
  EXPECT_TRUE(matches(positive_even, n.c4));
  EXPECT_FALSE(matches(positive_even, n.c3));
  EXPECT_FALSE(matches(positive_even, UOp::const_int(S::Index, -4)));
  EXPECT_FALSE(matches(positive_even, UOp::const_float(S::Float32, 4.0)));
  UPat axis2 = UPat(Op::Range, {UPat::var()}).arg(Arg(2));
  EXPECT_TRUE(matches(axis2, UOp::range(n.c4, 2)));
  EXPECT_FALSE(matches(axis2, UOp::range(n.c4, 1)));
}

TEST(UPat, DtypesAndDtypeIf) {
  Nodes n;
  UPat floats = UPat::var("v").dtype_if([](DType t) { return t.is_float(); });
  EXPECT_TRUE(matches(floats, UOp::const_float(S::Float16, 1.0)));
  EXPECT_FALSE(matches(floats, n.x));
  UPat ints = UPat::var("v").dtype_if([](DType t) { return t.is_int(); });
  EXPECT_TRUE(matches(ints, n.x));
  EXPECT_FALSE(matches(ints, UOp::const_bool(true)));
  UPat listed = UPat::var("v").dtypes({S::Int32, S::Int64});
  EXPECT_TRUE(matches(listed, UOp::const_int(S::Int32, 1)));
  EXPECT_TRUE(matches(listed, UOp::const_int(S::Int64, 1)));
  EXPECT_FALSE(matches(listed, UOp::const_int(S::Int8, 1)));
  EXPECT_FALSE(matches(listed, n.x));
}

TEST(UPat, EachSourceMatchesOnePattern) {
  Nodes n;
  UPat all_consts(Op::Sink, {UPat(Op::Const)}, Mode::Each);
  EXPECT_TRUE(matches(all_consts, sink({n.c3})));
  EXPECT_TRUE(matches(all_consts, sink({n.c3, n.c4, n.c3})));
  EXPECT_FALSE(matches(all_consts, sink({n.c3, n.x})));
  EXPECT_FALSE(matches(all_consts, sink({})));
  // A name inside Each must bind the same node for every source.
  UPat all_same(Op::Sink, {UPat::var("s")}, Mode::Each);
  EXPECT_TRUE(matches(all_same, sink({n.x, n.x})));
  EXPECT_FALSE(matches(all_same, sink({n.x, n.y})));
  EXPECT_THROW(UPat(Op::Sink, {UPat::var(), UPat::var()}, Mode::Each), InternalError);
}

TEST(UPat, ExactAndAnySourceModes) {
  Nodes n;
  UPat exact(Op::Sink, {UPat::var(), UPat::var()});
  EXPECT_TRUE(matches(exact, sink({n.x, n.y})));
  EXPECT_FALSE(matches(exact, sink({n.x})));
  EXPECT_FALSE(matches(exact, sink({n.x, n.y, n.x})));
  UPat any(OpSet{Op::Sink}, {}, Mode::Any);
  EXPECT_TRUE(matches(any, sink({})));
  EXPECT_TRUE(matches(any, sink({n.x, n.y, n.x})));
  // Exact with no source patterns: only leaves.
  UPat leaf(Op::Sink);
  EXPECT_TRUE(matches(leaf, sink({})));
  EXPECT_FALSE(matches(leaf, sink({n.x})));
}

TEST(UPat, ConstValue) {
  Nodes n;
  EXPECT_TRUE(matches(UPat::const_value(3), n.c3));
  EXPECT_TRUE(matches(UPat::const_value(3), UOp::const_int(S::Int8, 3)));
  EXPECT_FALSE(matches(UPat::const_value(3), n.c4));
  EXPECT_FALSE(matches(UPat::const_value(3), UOp::const_float(S::Float32, 3.0)));
  EXPECT_FALSE(matches(UPat::const_value(3), n.x));
  EXPECT_TRUE(matches(UPat::const_value(1), UOp::const_bool(true)));
  EXPECT_TRUE(matches(UPat::const_value(0), UOp::const_bool(false)));
  EXPECT_FALSE(matches(UPat::const_value(0), UOp::const_bool(true)));
  EXPECT_FALSE(matches(UPat::const_value(2), UOp::const_bool(true)));
  EXPECT_TRUE(matches(UPat::const_value(-1), UOp::const_int(S::Int32, -1)));
  UPat plus_zero = UPat::var("x") + UPat::const_value(0);
  EXPECT_TRUE(matches(plus_zero, UOp::const_int(S::Index, 0) + n.x));
  EXPECT_FALSE(matches(plus_zero, n.x + n.c3));
}

} // namespace
} // namespace beamlab
