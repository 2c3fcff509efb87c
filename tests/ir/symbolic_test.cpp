// Hand-computed cases of the symbolic simplifier: each input must simplify to exactly the
// expected node (interning makes that a pointer comparison).
#include <gtest/gtest.h>

#include <cmath>

#include "engine/ir/printer.hpp"
#include "engine/rewrite/linear_form.hpp"
#include "engine/rewrite/symbolic.hpp"
#include "tests/ir/eval_reference.hpp"

namespace beamlab {
namespace {

class Symbolic : public ::testing::Test {
protected:
  UOpPtr x = UOp::variable("x", 0, 10);
  UOpPtr y = UOp::variable("y", 0, 3);
  UOpPtr z = UOp::variable("z", -5, 5);
  UOpPtr r = UOp::range(UOp::const_int(Scalar::Index, 16), 0);
  UOpPtr c(int64_t v) { return UOp::const_int(Scalar::Index, v); }
};

#define EXPECT_SIMPLIFIES(in, out)                                                                 \
  do {                                                                                             \
    UOpPtr got_ = simplify(in);                                                                    \
    UOpPtr want_ = (out);                                                                          \
    EXPECT_EQ(got_, want_) << "simplify(" << to_expr(in) << ") = " << to_expr(got_)                \
                           << ", expected " << to_expr(want_);                                     \
  } while (0)

TEST_F(Symbolic, DivModOfSplitSums) {
  EXPECT_SIMPLIFIES((x * 4 + y) / 4, x);
  EXPECT_SIMPLIFIES((x * 4 + y) % 4, y);
  EXPECT_SIMPLIFIES((y + x * 4) / 4, x);                 // operand order doesn't matter
  EXPECT_SIMPLIFIES((x * 8 + y * 2 + 1) / 2, x * 4 + y); // y*2+1 < 8 is not needed: gcd-free split
  EXPECT_SIMPLIFIES((x * 6 + 4) % 2, c(0));
  EXPECT_SIMPLIFIES((x * 4 + y + 4) / 4, x + 1);
}

TEST_F(Symbolic, DivModRecombine) {
  EXPECT_SIMPLIFIES((x / 2) * 2 + x % 2, x);
  EXPECT_SIMPLIFIES(x % 2 + (x / 2) * 2, x);
  EXPECT_SIMPLIFIES((z / 3) * 3 + z % 3, z); // holds for negative values too (truncation)
  EXPECT_SIMPLIFIES(x - (x / 4) * 4, x % 4);
  EXPECT_SIMPLIFIES(((x / 2) * 2 + x % 2) * 3, x * 3);
}

TEST_F(Symbolic, DivModFromBounds) {
  EXPECT_SIMPLIFIES(y / 4, c(0));
  EXPECT_SIMPLIFIES(y % 4, y);
  EXPECT_SIMPLIFIES((y + 4) / 4, c(1));
  EXPECT_SIMPLIFIES((y + 4) % 4, y);
  EXPECT_SIMPLIFIES(r / 16, c(0));
  EXPECT_SIMPLIFIES(x % 1, c(0));
  EXPECT_SIMPLIFIES(x / 1, x);
  EXPECT_SIMPLIFIES((x / 2) / 3, x / 6);
  EXPECT_SIMPLIFIES((x % 8) % 4, x % 4);
  EXPECT_SIMPLIFIES(x / -2, (x / 2) * -1);
}

// A flattened index unflattened into a blocked layout: x*4 + y with y < 4, divided by 4*k,
// is x // k (the remainder y never reaches the next multiple of 4); x*4 + y % (4*k) keeps y.
TEST_F(Symbolic, DivModOfABlockedIndex) {
  EXPECT_SIMPLIFIES((x * 4 + y) / 8, x / 2);
  EXPECT_SIMPLIFIES((x * 4 + y) % 8, y + (x % 2) * 4);
  EXPECT_SIMPLIFIES((r * 36 + y * 9 + 8) / 144, r / 4);
  // y*9 + 8 can reach 35 < 36 but not with y*10 (38): left as it was.
  UOpPtr wide = y * 10 + r * 36 + 8;
  EXPECT_EQ(simplify(wide / 144)->op(), Op::Idiv);
}

TEST_F(Symbolic, DivModLeftAloneWhenUnsound) {
  // z may be negative: (z*4 + y)//4 != z + y//4 under truncation (z=-1, y=1 gives 0 vs -1).
  // Only the numerator's canonical order changes.
  EXPECT_SIMPLIFIES((z * 4 + y) / 4, (y + z * 4) / 4);
  UOpPtr by_zero = x / 0;
  EXPECT_EQ(simplify(by_zero), by_zero);
}

// Values at which e and simplify(e) must agree, by the reference interpreter.
void expect_same_values(const UOpPtr& e, const std::string& var, std::vector<int64_t> values) {
  UOpPtr s = simplify(e);
  for (int64_t v : values) {
    testing::Point p;
    p.vars[var] = v;
    EXPECT_EQ(testing::Evaluator(p).eval(s), testing::Evaluator(p).eval(e))
        << var << "=" << v << ": " << to_expr(e) << " simplified to " << to_expr(s);
  }
}

TEST_F(Symbolic, DivModRespectWraparound) {
  UOpPtr t8 = UOp::variable("t", 0, 100, Scalar::Int8);
  expect_same_values((t8 * 2) / 2, "t", {0, 63, 64, 100});
  expect_same_values((t8 * 2) % 4, "t", {1, 64, 101 - 1});
  UOpPtr t32 = UOp::variable("t", 0, int64_t{1} << 30, Scalar::Int32);
  expect_same_values((t32 * 4) / 2, "t", {1, int64_t{1} << 29, int64_t{1} << 30});
  UOpPtr t64 = UOp::variable("t", 0, int64_t{1} << 62);
  expect_same_values((t64 * 4) / 2, "t", {1, int64_t{1} << 62});
  // Constants near the limits: no overflow in the simplifier either (UBSan checks this).
  UOpPtr u = UOp::variable("u", 0, 10);
  expect_same_values((u + c(INT64_MIN + 1)) / 3, "u", {0, 5, 10});
  UOpPtr b = UOp::variable("u", 0, 1);
  expect_same_values((b * c(INT64_MIN) + 1) / 3, "u", {0, 1});
}

TEST_F(Symbolic, IntegerToFloatConstantsRoundOnce) {
  auto i64 = [](int64_t v) { return UOp::const_int(Scalar::Int64, v); };
  EXPECT_SIMPLIFIES(cast(UOp::const_int(Scalar::UInt64, -1), Scalar::Float64),
                    UOp::const_float(Scalar::Float64, 18446744073709551616.0));
  EXPECT_SIMPLIFIES(cast(i64((int64_t{1} << 60) + (int64_t{1} << 36) + 1), Scalar::Float32),
                    UOp::const_float(Scalar::Float32, std::ldexp(1.0, 60) + std::ldexp(1.0, 37)));
  EXPECT_SIMPLIFIES(cast(i64((int64_t{1} << 60) + (int64_t{1} << 52) + 1), Scalar::BFloat16),
                    UOp::const_float(Scalar::BFloat16, std::ldexp(1.0, 60) + std::ldexp(1.0, 53)));
}

TEST_F(Symbolic, VectorOperandsKeepTheirType) {
  DType i32x4 = DType(Scalar::Int32).vec(4);
  UOpPtr s32 = UOp::variable("s", 0, 9, Scalar::Int32);
  UOpPtr v = UOp::make(Op::Vectorize, i32x4, {s32, s32, s32, s32});
  EXPECT_EQ(simplify(lt(v, v))->dtype(), DType(Scalar::Bool).vec(4));
  EXPECT_EQ(simplify(alu(Op::Xor, v, v))->dtype(), i32x4);
}

TEST_F(Symbolic, LinearForms) {
  EXPECT_SIMPLIFIES(x + x, x * 2);
  EXPECT_SIMPLIFIES((x + 3) - 3, x);
  EXPECT_SIMPLIFIES(x - x, c(0));
  EXPECT_SIMPLIFIES(x * 0, c(0));
  EXPECT_SIMPLIFIES(x * 1 + 0, x);
  EXPECT_SIMPLIFIES((x + 2) * 3, x * 3 + 6);
  EXPECT_SIMPLIFIES(c(3) + x + 2, x + 5);
  EXPECT_SIMPLIFIES(y + x, x + y); // canonical order: by name
  EXPECT_SIMPLIFIES(-(x - y), x * -1 + y);
  EXPECT_SIMPLIFIES((x * 2) * y, (x * y) * 2);
}

TEST_F(Symbolic, ConstantFolding) {
  EXPECT_SIMPLIFIES(c(7) / c(2), c(3));
  EXPECT_SIMPLIFIES(c(-7) / c(2), c(-3));
  EXPECT_SIMPLIFIES(c(-7) % c(2), c(-1));
  EXPECT_SIMPLIFIES(maximum(c(3), c(9)), c(9));
  UOpPtr i32 = UOp::const_int(Scalar::Int32, 2147483647);
  EXPECT_SIMPLIFIES(i32 + 1, UOp::const_int(Scalar::Int32, -2147483648LL)); // wraps like the target
  UOpPtr f = UOp::const_float(Scalar::Float32, 1.5);
  EXPECT_SIMPLIFIES(f * f, UOp::const_float(Scalar::Float32, 2.25));
}

TEST_F(Symbolic, CastsOfConstantsFoldOnlyWhenDefined) {
  auto f32 = [](double v) { return UOp::const_float(Scalar::Float32, v); };
  EXPECT_SIMPLIFIES(cast(f32(3.7), Scalar::UInt8), UOp::const_int(Scalar::UInt8, 3));
  EXPECT_SIMPLIFIES(cast(f32(-1.5), Scalar::Int32), UOp::const_int(Scalar::Int32, -1));
  EXPECT_SIMPLIFIES(cast(f32(255.9), Scalar::UInt8), UOp::const_int(Scalar::UInt8, 255));
  EXPECT_SIMPLIFIES(cast(UOp::const_float(Scalar::Float64, 1.8446744073709550e19), Scalar::UInt64),
                    UOp::const_int(Scalar::UInt64, static_cast<int64_t>(18446744073709549568ULL)));
  for (UOpPtr undefined : {cast(f32(256.0), Scalar::UInt8), cast(f32(-1.0), Scalar::UInt32),
                           cast(f32(3e9), Scalar::Int32), cast(f32(NAN), Scalar::Int64)})
    EXPECT_EQ(simplify(undefined), undefined) << to_expr(undefined);
  EXPECT_SIMPLIFIES(cast(x, Scalar::Index), x);
  EXPECT_SIMPLIFIES(cast(UOp::const_int(Scalar::Int32, 300), Scalar::Int8),
                    UOp::const_int(Scalar::Int8, 44));
}

TEST_F(Symbolic, ComparisonsAndSelects) {
  UOpPtr t = UOp::const_bool(true), f = UOp::const_bool(false);
  EXPECT_SIMPLIFIES(lt(y, 4), t);
  EXPECT_SIMPLIFIES(lt(x, 0), f);
  EXPECT_SIMPLIFIES(lt(x + 1, 5), lt(x, 4));
  EXPECT_SIMPLIFIES(lt(x * 4, 10), lt(x, 3));
  EXPECT_SIMPLIFIES(lt(x, x), f);
  EXPECT_SIMPLIFIES(eq(x + 2, c(5)), eq(x, c(3)));
  EXPECT_SIMPLIFIES(where(lt(y, 4), x, z), x);
  EXPECT_SIMPLIFIES(where(lt(x, 5), z, z), z);
  EXPECT_SIMPLIFIES(maximum(x, y + 20), y + 20);
  EXPECT_SIMPLIFIES(maximum(x, x), x);
  EXPECT_SIMPLIFIES(maximum(c(0), x), x);
}

TEST_F(Symbolic, CanonicalOrderHandlesVeryDeepGraphs) {
  // Two structurally alike chains deeper than the call stack could recurse.
  UOpPtr a = x, b = y;
  for (int i = 0; i < 300000; ++i) {
    a = maximum(a, z);
    b = maximum(b, z);
  }
  EXPECT_LT(compare_uops(*a, *b), 0); // they differ only at the bottom: x < y
  EXPECT_GT(compare_uops(*b, *a), 0);
  EXPECT_EQ(compare_uops(*a, *a), 0);
}

TEST_F(Symbolic, ResultsAreFixedPoints) {
  for (const UOpPtr& e : {(x * 4 + y) / 4, x + x + y * 3, (x / 2) * 2 + x % 2, lt(x * 4 + 2, 11)}) {
    UOpPtr once = simplify(e);
    EXPECT_EQ(simplify(once), once) << to_expr(e);
  }
}

TEST_F(Symbolic, OutputPassesTheVerifier) {
  UOpPtr e = where(lt(x * 4 + y, 30), (x * 4 + y) % 4, maximum(z, y));
  EXPECT_TRUE(verify(simplify(e), spec_scalar()).empty());
}

} // namespace
} // namespace beamlab
