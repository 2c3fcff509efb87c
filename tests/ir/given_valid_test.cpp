// simplify_given: a gated address simplified under its gate. Hand-computed cases (the fold a
// padded convolution needs, multi-variable clauses, gates that decide nothing) and a random
// property test: wherever the gate holds, the simplified address has the original's value.
#include <gtest/gtest.h>

#include <random>

#include "engine/ir/printer.hpp"
#include "engine/rewrite/symbolic.hpp"
#include "tests/ir/eval_reference.hpp"
#include "tests/ir/expr_gen.hpp"

namespace beamlab {
namespace {

UOpPtr both(const UOpPtr& a, const UOpPtr& b) { return alu(Op::And, a, b); }
UOpPtr c(int64_t v) { return UOp::const_int(Scalar::Index, v); }

class GivenValid : public ::testing::Test {
protected:
  UOpPtr x = UOp::variable("x", -1, 60);
  UOpPtr y = UOp::variable("y", -1, 60);
  UOpPtr z = UOp::variable("z", 0, 63);
};

TEST_F(GivenValid, PaddedRowsAndColumnsDropTheWrap) {
  // A padded 56x56 image's flat address, wrapped into the buffer: inside the padding's gate
  // the remainder is the plain address.
  UOpPtr gate = both(both(lt(c(-1), x), lt(x, 56)), both(lt(c(-1), y), lt(y, 56)));
  UOpPtr flat = z * 3136 + x * 56 + y;
  EXPECT_EQ(simplify_given(flat % 200704, gate), simplify_kernel(flat));
  EXPECT_EQ(simplify_given(flat / 200704, gate), c(0));
  EXPECT_EQ(simplify_given((x * 56 + y) / 56, gate), x);
}

TEST_F(GivenValid, ClausesOverSumsBoundTheirMultiples) {
  UOpPtr gate = both(lt(x + y, 10), lt(c(1), x + y)); // 2 <= x + y <= 9
  EXPECT_EQ(simplify_given((x * 2 + y * 2 + 3) % 100, gate), simplify_kernel(x * 2 + y * 2 + 3));
  EXPECT_EQ(simplify_given((x + y) / 10, gate), c(0));
  // A negative multiple: 10 - (x + y) lies in [1, 8].
  EXPECT_EQ(simplify_given((c(10) - x - y) / 9, gate), c(0));
}

TEST_F(GivenValid, AGateThatBoundsNothingChangesNothing) {
  UOpPtr addr = (x * 56 + y) % 3136;
  EXPECT_EQ(simplify_given(addr, lt(z, 10)), addr);               // another variable
  EXPECT_EQ(simplify_given(addr, lt(x, 57)), addr);               // y still reaches -1
  EXPECT_EQ(simplify_given(addr, alu(Op::CmpNe, x, c(3))), addr); // not a bound
}

// Random gates of linear clauses over random expressions: equal values wherever the gate holds.
TEST(GivenValidProperty, RandomGatesKeepValuesWhereTheyHold) {
  int64_t checked = 0, folded = 0;
  for (uint64_t i = 0; i < 2000; ++i) {
    testing::ExprGen gen(i * 7919 + 17, DType(Scalar::Index));
    std::mt19937_64 rng(i);
    auto pick = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    const auto& leaves = gen.leaves();
    auto linear = [&] {
      UOpPtr e = c(pick(-3, 3));
      for (const auto& l : leaves)
        if (pick(0, 2) == 0) e = e + l.node * pick(-3, 3);
      return e;
    };
    UOpPtr gate = lt(linear(), c(pick(-5, 30)));
    for (int k = pick(0, 3); k > 0; --k)
      gate =
          both(gate, pick(0, 1) ? lt(linear(), c(pick(-5, 30))) : lt(c(pick(-20, 10)), linear()));
    UOpPtr e = gen.expr(4);
    UOpPtr s = simplify_given(e, gate);
    folded += s != e;
    for (int k = 0; k < 32; ++k) {
      testing::Point p = gen.point();
      if (!testing::Evaluator(p).eval(gate)) continue;
      ++checked;
      int64_t want = testing::Evaluator(p).eval(e), got = testing::Evaluator(p).eval(s);
      ASSERT_EQ(want, got) << "case " << i << "\n  gate: " << to_expr(gate)
                           << "\n  original:   " << to_expr(e) << "\n  simplified: " << to_expr(s);
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(folded, 20); // the test exercises folds, not only unchanged addresses
  std::printf("given_valid property test: %lld points checked, %lld addresses changed\n",
              static_cast<long long>(checked), static_cast<long long>(folded));
}

} // namespace
} // namespace beamlab
