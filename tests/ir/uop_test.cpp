// Tests of UOp and Arg: hash-consing, node lifetime, stable hashes and value bounds.
#include "engine/ir/uop.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "engine/ir/arg.hpp"
#include "engine/support/error.hpp"
#include "engine/support/hash.hpp"

namespace beamlab {
namespace {

using S = Scalar;

// Held by a static object: released during exit, after thread-local storage is gone. ASan
// builds catch a release path that touches destroyed thread-locals.
const UOpPtr kNodeReleasedAtExit = UOp::variable("held_at_exit", 0, 3) * 2 + 1;

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// ---- Arg ----

TEST(Arg, EqualityIsByKindAndValue) {
  EXPECT_EQ(Arg(1), Arg(int64_t{1}));
  EXPECT_FALSE(Arg(1) == Arg(true));
  EXPECT_FALSE(Arg(1) == Arg(1.0));
  EXPECT_FALSE(Arg("ADD") == Arg(Op::Add));
  EXPECT_EQ(Arg(Op::Add), Arg(Op::Add));
  EXPECT_FALSE(Arg(Op::Add) == Arg(Op::Mul));
  EXPECT_EQ(Arg(), Arg());
  EXPECT_EQ((Arg{1, "x"}), (Arg{1, "x"}));
  EXPECT_FALSE((Arg{1, "x"}) == (Arg{1, "y"}));
  EXPECT_FALSE((Arg{1, 2}) == (Arg{1, 2, 3}));
}

TEST(Arg, FloatsCompareByBitPattern) {
  EXPECT_FALSE(Arg(0.0) == Arg(-0.0));
  EXPECT_EQ(Arg(std::nan("")), Arg(std::nan("")));
  EXPECT_EQ(Arg(0.1), Arg(0.1));
}

TEST(Arg, TextForm) {
  EXPECT_EQ(Arg().str(), "none");
  EXPECT_EQ(Arg(true).str(), "true");
  EXPECT_EQ(Arg(-3).str(), "-3");
  EXPECT_EQ(Arg(1.5).str(), "1.5");
  EXPECT_EQ(Arg(2.0).str(), "2.0");
  EXPECT_EQ(Arg(-0.0).str(), "-0.0");
  EXPECT_EQ(Arg(INFINITY).str(), "inf");
  EXPECT_EQ(Arg(-INFINITY).str(), "-inf");
  EXPECT_EQ(Arg(std::nan("")).str(), "nan");
  EXPECT_EQ(Arg(1e-300).str(), "1e-300");
  EXPECT_EQ(Arg("a\"b\\c\nd").str(), R"("a\"b\\c\nd")");
  EXPECT_EQ(Arg(std::string("\x01\x7f\xff\t")).str(), R"("\x01\x7f\xff\x09")");
  EXPECT_EQ(Arg(Op::DefineGlobal).str(), "DEFINE_GLOBAL");
  EXPECT_EQ((Arg{Arg(1), Arg("x"), Arg{Arg(2), Arg(3)}}).str(), R"((1, "x", (2, 3)))");
  EXPECT_EQ(Arg(std::vector<Arg>{Arg(1)}).str(), "(1,)");
  EXPECT_EQ(Arg(std::vector<Arg>{}).str(), "()");
}

TEST(Arg, AccessorsCheckTheKind) {
  EXPECT_EQ(Arg(7).as_int(), 7);
  EXPECT_THROW(Arg(7).as_float(), InternalError);
  EXPECT_THROW(Arg(1.0).as_int(), InternalError);
  EXPECT_THROW(Arg("s").as_op(), InternalError);
  EXPECT_THROW(Arg(1).items(), InternalError);
  EXPECT_THROW(Arg(1).as_bool(), InternalError);
}

// ---- hash-consing ----

TEST(UOpIntern, StructurallyEqualNodesAreTheSameObject) {
  UOpPtr x1 = UOp::variable("x", 0, 10);
  UOpPtr x2 = UOp::variable("x", 0, 10);
  EXPECT_EQ(x1, x2);
  UOpPtr e1 = x1 * 4 + 1;
  UOpPtr e2 = x2 * 4 + 1;
  EXPECT_EQ(e1, e2);
  EXPECT_EQ(UOp::make(Op::Add, S::Index, {x1 * 4, UOp::const_int(S::Index, 1)}), e1);
  EXPECT_EQ(UOp::const_int(S::Int32, 3), UOp::const_int(S::Int32, 3));
}

TEST(UOpIntern, AnyDifferenceGivesADifferentNode) {
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr y = UOp::variable("y", 0, 10);
  EXPECT_NE(x, UOp::variable("x", 0, 11));           // arg
  EXPECT_NE(x, UOp::variable("x", 0, 10, S::Int32)); // dtype
  EXPECT_NE(x + y, y + x);                           // source order
  EXPECT_NE(x + y, x - y);                           // op
  EXPECT_NE(UOp::const_int(S::Int32, 3), UOp::const_int(S::Int64, 3));
  EXPECT_NE(UOp::const_int(S::Int32, 3), UOp::const_int(S::Int32, 4));
  // An int 1 and a bool true are different args even in the same dtype.
  EXPECT_NE(UOp::make(Op::Const, S::Index, {}, Arg(1)),
            UOp::make(Op::Const, S::Index, {}, Arg(true)));
  EXPECT_NE(UOp::make(Op::Sink, S::Void, {x}), UOp::make(Op::Sink, S::Void, {x, x}));
}

TEST(UOpIntern, SignedZerosAreDistinctAndNaNsIntern) {
  UOpPtr pz = UOp::const_float(S::Float32, 0.0);
  UOpPtr nz = UOp::const_float(S::Float32, -0.0);
  EXPECT_NE(pz, nz);
  EXPECT_NE(pz->hash(), nz->hash());
  EXPECT_EQ(UOp::const_float(S::Float32, std::nan("")), UOp::const_float(S::Float32, std::nan("")));
}

TEST(UOpIntern, ReplaceSrc) {
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr y = UOp::variable("y", 0, 10);
  UOpPtr sum = x + y;
  EXPECT_EQ(sum->replace_src({x, y}), sum);
  EXPECT_EQ(sum->replace_src({y, x}), y + x);
  EXPECT_EQ(sum->replace_src({x, x}), x + x);
}

TEST(UOpIntern, ArityAndNullSourcesAreChecked) {
  UOpPtr x = UOp::variable("x", 0, 10);
  EXPECT_THROW(UOp::make(Op::Add, S::Index, {x}), InternalError);
  EXPECT_THROW(UOp::make(Op::Const, S::Index, {x}, Arg(1)), InternalError);
  EXPECT_THROW(UOp::make(Op::Neg, S::Index, {x, x}), InternalError);
  EXPECT_THROW(UOp::make(Op::Add, S::Index, {x, nullptr}), InternalError);
  EXPECT_THROW(UOp::variable("x", 5, 4), InternalError);
}

TEST(UOpIntern, Builders) {
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr f = UOp::const_float(S::Float32, 2.0);
  EXPECT_EQ((x / 2)->op(), Op::Idiv);
  EXPECT_EQ((f / f)->op(), Op::Fdiv);
  EXPECT_EQ(lt(x, 3)->dtype(), DType(S::Bool));
  EXPECT_EQ((f + 1)->src(1), UOp::const_float(S::Float32, 1.0));
  EXPECT_EQ((x + 1)->src(1), UOp::const_int(S::Index, 1));
  EXPECT_EQ(minimum(x, x + 1)->op(), Op::Neg); // -max(-a, -b)
  EXPECT_EQ(minimum(x, x + 1)->src(0)->op(), Op::Max);
  EXPECT_EQ(UOp::const_like(S::Bool, 2.0), UOp::const_bool(true));
  EXPECT_EQ(UOp::const_like(S::Int32, 3.0), UOp::const_int(S::Int32, 3));
  EXPECT_EQ(UOp::const_like(S::Float16, 3.0), UOp::const_float(S::Float16, 3.0));
  // 64-bit literals must not round through a double.
  UOpPtr big = UOp::variable("big", 0, 1, S::Int64) + kI64Max;
  EXPECT_EQ(big->src(1)->const_value(), kI64Max);
  UOpPtr w = where(lt(x, 3), f, f);
  EXPECT_EQ(w->dtype(), DType(S::Float32));
  EXPECT_EQ(UOp::const_bool(true)->const_value(), 1);
  EXPECT_THROW(x->const_value(), InternalError);
}

// ---- lifetime ----

TEST(UOpLifetime, LiveCountDropsBackAfterReleasingAGraph) {
  size_t before = live_uop_count();
  {
    UOpPtr x = UOp::variable("lifetime_x", -7, 7);
    UOpPtr c = UOp::const_int(S::Index, 987654321);
    UOpPtr e = (x + c) * c;
    EXPECT_EQ(live_uop_count(), before + 4);
    UOpPtr again = (UOp::variable("lifetime_x", -7, 7) + c) * c;
    EXPECT_EQ(live_uop_count(), before + 4);
    x.reset();
    c.reset();
    again.reset();
    EXPECT_EQ(live_uop_count(), before + 4); // still held through e
  }
  EXPECT_EQ(live_uop_count(), before);
}

TEST(UOpLifetime, ReleasedNodesAreBuiltAfresh) {
  uint64_t h = 0;
  {
    UOpPtr n = UOp::variable("fresh", 1, 2) * 3;
    h = n->hash();
  }
  UOpPtr n = UOp::variable("fresh", 1, 2) * 3;
  EXPECT_EQ(n->hash(), h);
  EXPECT_EQ(n->src(0)->vmin(), 1);
}

TEST(UOpLifetime, LongChainIsReleasedWithoutStackOverflow) {
  size_t before = live_uop_count();
  {
    // An unusual constant, so no node of the chain can be alive before the test.
    UOpPtr step = UOp::const_int(S::Index, 7919);
    UOpPtr chain = UOp::variable("chain", 0, 10);
    for (int i = 0; i < 200000; ++i) chain = chain + step;
    EXPECT_EQ(chain->vmin(), 1583800000);
    EXPECT_EQ(chain->vmax(), 1583800010);
    EXPECT_EQ(live_uop_count(), before + 200002);
  }
  EXPECT_EQ(live_uop_count(), before);
}

TEST(UOpLifetime, ConcurrentMakeYieldsIdenticalNodes) {
  size_t before = live_uop_count();
  constexpr int kThreads = 4;
  constexpr int kExprs = 3000;
  std::vector<std::vector<UOpPtr>> built(kThreads);
  auto work = [&built](int t) {
    UOpPtr x = UOp::variable("tx", 0, 100);
    UOpPtr y = UOp::variable("ty", -5, 5);
    for (int i = 0; i < kExprs; ++i) {
      // Also churn: nodes that die right away race with other threads re-creating them.
      UOpPtr temp = (x + y) * (i % 7) - int64_t{i % 13};
      temp.reset();
      built[t].push_back((x * i + y) % (i + 1) + (i % 5));
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (std::thread& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) {
    ASSERT_EQ(built[t].size(), built[0].size());
    for (int i = 0; i < kExprs; ++i)
      ASSERT_EQ(built[t][i], built[0][i]) << "thread " << t << " expr " << i;
  }
  // The nodes the threads built are the ones a fresh build finds.
  UOpPtr x = UOp::variable("tx", 0, 100);
  UOpPtr y = UOp::variable("ty", -5, 5);
  EXPECT_EQ(built[0][42], (x * 42 + y) % 43 + 2);
  x.reset();
  y.reset();
  built.clear();
  EXPECT_EQ(live_uop_count(), before);
}

// ---- stable hash ----

TEST(UOpHash, GoldenValue) {
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr g = x * 4 + 1;
  // This value keys the on-disk tuning cache: it must never change without bumping kHashVersion
  // (engine/support/hash.hpp). If the recipe changes on purpose, bump the version and update it.
  static_assert(kHashVersion == 1, "update the golden hash below together with kHashVersion");
  EXPECT_EQ(hash_hex(g->hash()), "e0ef8d4a2fc4ad35");
}

TEST(UOpHash, HashDependsOnEveryField) {
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr y = UOp::variable("y", 0, 10);
  EXPECT_NE((x + y)->hash(), (y + x)->hash());
  EXPECT_NE((x + y)->hash(), (x * y)->hash());
  EXPECT_NE(x->hash(), y->hash());
  EXPECT_NE(UOp::const_int(S::Int32, 1)->hash(), UOp::const_int(S::Int64, 1)->hash());
  EXPECT_EQ(hash_hex(0x1234), "0000000000001234");
}

// ---- bounds ----

TEST(UOpBounds, VariablesRangesAndConstants) {
  UOpPtr x = UOp::variable("x", -3, 7);
  EXPECT_EQ(x->vmin(), -3);
  EXPECT_EQ(x->vmax(), 7);
  EXPECT_FALSE(x->is_known());
  UOpPtr r = UOp::range(UOp::const_int(S::Index, 10), 0);
  EXPECT_EQ(r->vmin(), 0);
  EXPECT_EQ(r->vmax(), 9);
  UOpPtr n = UOp::variable("n", 1, 16);
  UOpPtr rn = UOp::range(n, 1);
  EXPECT_EQ(rn->vmin(), 0);
  EXPECT_EQ(rn->vmax(), 15);
  UOpPtr c = UOp::const_int(S::Int32, -5);
  EXPECT_EQ(c->vmin(), -5);
  EXPECT_EQ(c->vmax(), -5);
  EXPECT_TRUE(c->is_known());
  EXPECT_EQ(UOp::const_bool(true)->vmin(), 1);
  EXPECT_EQ(UOp::const_bool(false)->vmax(), 0);
  UOpPtr f = UOp::const_float(S::Float32, 1.0);
  EXPECT_EQ(f->vmin(), kI64Min);
  EXPECT_EQ(f->vmax(), kI64Max);
}

TEST(UOpBounds, AddSubMulNeg) {
  UOpPtr x = UOp::variable("x", -3, 7);
  UOpPtr y = UOp::variable("y", 2, 5);
  EXPECT_EQ((x + y)->vmin(), -1);
  EXPECT_EQ((x + y)->vmax(), 12);
  EXPECT_EQ((x - y)->vmin(), -8);
  EXPECT_EQ((x - y)->vmax(), 5);
  EXPECT_EQ((x * y)->vmin(), -15);
  EXPECT_EQ((x * y)->vmax(), 35);
  EXPECT_EQ((x * -2)->vmin(), -14);
  EXPECT_EQ((x * -2)->vmax(), 6);
  EXPECT_EQ((-x)->vmin(), -7);
  EXPECT_EQ((-x)->vmax(), 3);
}

TEST(UOpBounds, DivisionTruncates) {
  UOpPtr x = UOp::variable("x", -3, 7);
  UOpPtr y = UOp::variable("y", 2, 5);
  EXPECT_EQ((x / 2)->vmin(), -1);
  EXPECT_EQ((x / 2)->vmax(), 3);
  EXPECT_EQ((x / y)->vmin(), -1);
  EXPECT_EQ((x / y)->vmax(), 3);
  EXPECT_EQ((x / -2)->vmin(), -3);
  EXPECT_EQ((x / -2)->vmax(), 1);
  // A divisor that may be zero gives no bounds.
  UOpPtr z = UOp::variable("z", -1, 1);
  EXPECT_EQ((x / z)->vmin(), kI64Min);
  EXPECT_EQ((x / z)->vmax(), kI64Max);
}

TEST(UOpBounds, ModuloFollowsTheDividendsSign) {
  UOpPtr small = UOp::variable("small", 0, 7);
  EXPECT_EQ((small % 10)->vmin(), 0);
  EXPECT_EQ((small % 10)->vmax(), 7);
  UOpPtr big = UOp::variable("big", 0, 20);
  EXPECT_EQ((big % 10)->vmin(), 0);
  EXPECT_EQ((big % 10)->vmax(), 9);
  UOpPtr x = UOp::variable("x", -3, 7);
  EXPECT_EQ((x % 4)->vmin(), -3);
  EXPECT_EQ((x % 4)->vmax(), 3);
  UOpPtr neg = UOp::variable("neg", -20, -1);
  EXPECT_EQ((neg % 4)->vmin(), -3);
  EXPECT_EQ((neg % 4)->vmax(), 0);
  UOpPtr d = UOp::variable("d", -5, -2);
  EXPECT_EQ((big % d)->vmin(), 0);
  EXPECT_EQ((big % d)->vmax(), 4);
  UOpPtr z = UOp::variable("z", 0, 3);
  EXPECT_EQ((big % z)->vmin(), kI64Min);
}

TEST(UOpBounds, MaxAndMin) {
  UOpPtr x = UOp::variable("x", -3, 7);
  UOpPtr y = UOp::variable("y", 2, 5);
  EXPECT_EQ(maximum(x, y)->vmin(), 2);
  EXPECT_EQ(maximum(x, y)->vmax(), 7);
  EXPECT_EQ(minimum(x, y)->vmin(), -3);
  EXPECT_EQ(minimum(x, y)->vmax(), 5);
}

TEST(UOpBounds, Comparisons) {
  UOpPtr x = UOp::variable("x", -3, 7);
  UOpPtr y = UOp::variable("y", 2, 5);
  UOpPtr maybe = lt(x, y);
  EXPECT_EQ(maybe->vmin(), 0);
  EXPECT_EQ(maybe->vmax(), 1);
  EXPECT_EQ(lt(x, 8)->vmin(), 1); // always true
  EXPECT_EQ(lt(x, 8)->vmax(), 1);
  EXPECT_EQ(lt(x, -3)->vmin(), 0); // always false
  EXPECT_EQ(lt(x, -3)->vmax(), 0);
  EXPECT_EQ(lt(x, 7)->vmax(), 1);
  EXPECT_EQ(lt(x, 7)->vmin(), 0);
  UOpPtr eight = UOp::const_int(S::Index, 8);
  EXPECT_EQ(ne(x, eight)->vmin(), 1);
  EXPECT_EQ(eq(x, eight)->vmax(), 0);
  EXPECT_EQ(ne(x, y)->vmin(), 0);
  EXPECT_EQ(ne(x, y)->vmax(), 1);
  UOpPtr four = UOp::const_int(S::Index, 4);
  EXPECT_EQ(eq(four, four)->vmin(), 1);
  EXPECT_EQ(ne(four, four)->vmax(), 0);
}

TEST(UOpBounds, Where) {
  UOpPtr x = UOp::variable("x", -3, 7);
  UOpPtr y = UOp::variable("y", 2, 15);
  UOpPtr w = where(lt(x, 0), x, y);
  EXPECT_EQ(w->vmin(), -3);
  EXPECT_EQ(w->vmax(), 15);
  UOpPtr known = where(lt(x, 100), x, y);
  EXPECT_EQ(known->vmin(), -3);
  EXPECT_EQ(known->vmax(), 7);
  UOpPtr known_false = where(UOp::const_bool(false), x, y);
  EXPECT_EQ(known_false->vmin(), 2);
  EXPECT_EQ(known_false->vmax(), 15);
}

TEST(UOpBounds, BitwiseAndShifts) {
  UOpPtr x = UOp::variable("x", 0, 12);
  UOpPtr y = UOp::variable("y", 2, 5);
  UOpPtr both = alu(Op::And, x, y);
  EXPECT_EQ(both->vmin(), 0);
  EXPECT_EQ(both->vmax(), 5);
  UOpPtr either = alu(Op::Or, x, y);
  EXPECT_EQ(either->vmin(), 2);
  EXPECT_EQ(either->vmax(), 15);
  UOpPtr shl = alu(Op::Shl, x, UOp::const_int(S::Index, 2));
  EXPECT_EQ(shl->vmin(), 0);
  EXPECT_EQ(shl->vmax(), 48);
  UOpPtr s = UOp::variable("s", -8, 7);
  UOpPtr shr = alu(Op::Shr, s, UOp::const_int(S::Index, 1));
  EXPECT_EQ(shr->vmin(), -4);
  EXPECT_EQ(shr->vmax(), 3);
}

TEST(UOpBounds, Int32OverflowFallsBackToTheFullRange) {
  UOpPtr x = UOp::variable("x32", 0, kI32Max, S::Int32);
  UOpPtr sum = x + 1;
  EXPECT_EQ(sum->vmin(), kI32Min);
  EXPECT_EQ(sum->vmax(), kI32Max);
  UOpPtr product =
      UOp::variable("m32", 0, 70000, S::Int32) * UOp::variable("n32", 0, 70000, S::Int32);
  EXPECT_EQ(product->vmin(), kI32Min);
  EXPECT_EQ(product->vmax(), kI32Max);
  UOpPtr neg = -UOp::variable("nn32", kI32Min, 0, S::Int32);
  EXPECT_EQ(neg->vmin(), kI32Min);
  EXPECT_EQ(neg->vmax(), kI32Max);
  // Without overflow the bounds stay exact.
  UOpPtr fits = UOp::variable("f32", 0, kI32Max - 1, S::Int32) + 1;
  EXPECT_EQ(fits->vmin(), 1);
  EXPECT_EQ(fits->vmax(), kI32Max);
  UOpPtr i8 = UOp::variable("x8", 100, 120, S::Int8) + 10;
  EXPECT_EQ(i8->vmin(), -128);
  EXPECT_EQ(i8->vmax(), 127);
}

TEST(UOpBounds, CastsAndUInt64) {
  UOpPtr x = UOp::variable("x", -3, 7);
  UOpPtr c = cast(x, S::Int32);
  EXPECT_EQ(c->vmin(), -3);
  EXPECT_EQ(c->vmax(), 7);
  UOpPtr u = cast(x, S::UInt8); // -3 wraps, so no narrower bound is sound
  EXPECT_EQ(u->vmin(), 0);
  EXPECT_EQ(u->vmax(), 255);
  UOpPtr wide = cast(UOp::variable("w", 0, int64_t{1} << 40), S::Int32);
  EXPECT_EQ(wide->vmin(), kI32Min);
  EXPECT_EQ(wide->vmax(), kI32Max);
  UOpPtr u64 = UOp::const_int(S::UInt64, 5);
  EXPECT_EQ(u64->vmin(), 0);
  EXPECT_EQ(u64->vmax(), kI64Max);
}

} // namespace
} // namespace beamlab
