// A generator of random integer expressions for differential tests: sums, products,
// truncating division and remainder (never by zero), max/min, comparisons and selects over
// three bounded variables x, y, z and one loop range r0, in index or int32.
#pragma once

#include <random>
#include <vector>

#include "tests/ir/eval_reference.hpp"

namespace beamlab::testing {

struct Leaf {
  UOpPtr node;
  int64_t lo, hi;
};

class ExprGen {
public:
  /// The variables and the range, with their inclusive bounds.
  const std::vector<Leaf>& leaves() const { return leaves_; }

  ExprGen(uint64_t seed, DType dt) : rng_(seed), dt_(dt) {
    const char* names[] = {"x", "y", "z"};
    for (const char* n : names) {
      int64_t lo = pick(0, 2) == 0 ? pick(-12, 6) : pick(0, 4);
      int64_t hi = lo + pick(0, 24);
      leaves_.push_back({UOp::variable(n, lo, hi, dt), lo, hi});
    }
    int64_t end = pick(1, 16);
    leaves_.push_back({UOp::range(UOp::const_int(dt, end), 0), 0, end - 1});
  }

  UOpPtr expr(int depth) {
    if (depth == 0 || pick(0, 4) == 0) return leaf();
    switch (pick(0, 11)) {
    case 0:
    case 1: return expr(depth - 1) + expr(depth - 1);
    case 2: return expr(depth - 1) - expr(depth - 1);
    case 3: return expr(depth - 1) * constant(-4, 8);
    case 4: return expr(depth - 1) * expr(depth - 2 < 0 ? 0 : depth - 2);
    case 5: return expr(depth - 1) / divisor();
    case 6: return expr(depth - 1) % divisor();
    case 7: return maximum(expr(depth - 1), expr(depth - 1));
    case 8: return minimum(expr(depth - 1), expr(depth - 1));
    case 9: return where(condition(depth - 1), expr(depth - 1), expr(depth - 1));
    case 10: return -expr(depth - 1);
    default: return expr(depth - 1) / positive(depth - 1);
    }
  }

  UOpPtr condition(int depth) {
    switch (pick(0, 3)) {
    case 0: return lt(expr(depth), expr(depth));
    case 1: return lt(expr(depth), constant(-10, 20));
    case 2: return ne(expr(depth), constant(-5, 10));
    default: return eq(expr(depth), expr(depth));
    }
  }

  Point point() {
    Point p;
    for (const Leaf& l : leaves_) {
      int64_t v = pick(l.lo, l.hi);
      if (l.node->op() == Op::Range)
        p.ranges[0] = v;
      else
        p.vars[l.node->arg().items()[0].as_str()] = v;
    }
    return p;
  }

private:
  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  UOpPtr constant(int64_t lo, int64_t hi) { return UOp::const_int(dt_, pick(lo, hi)); }
  UOpPtr leaf() {
    if (pick(0, 3) == 0) return constant(-10, 10);
    return leaves_[static_cast<size_t>(pick(0, static_cast<int64_t>(leaves_.size()) - 1))].node;
  }
  UOpPtr divisor() {
    int64_t d = pick(0, 5) == 0 ? pick(-4, -1) : pick(1, 12);
    return UOp::const_int(dt_, d);
  }
  // A non-constant divisor that is never zero: a leaf shifted above zero.
  UOpPtr positive(int depth) {
    UOpPtr e = depth > 0 ? expr(0) : leaf();
    return e + (1 - e->vmin());
  }

  std::mt19937_64 rng_;
  DType dt_;
  std::vector<Leaf> leaves_;
};

} // namespace beamlab::testing
