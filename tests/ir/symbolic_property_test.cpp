// Randomized differential test of the symbolic simplifier.
//
// Thousands of random integer expressions over bounded variables and loop ranges: the
// simplified form must evaluate equal to the original at random points within the bounds,
// and every node's [vmin, vmax] (original and simplified) must contain every value it takes.
//
// Knobs: BEAMLAB_SYMBOLIC_CASES (default 5000), BEAMLAB_SYMBOLIC_SEED (default 1), and
// BEAMLAB_SYMBOLIC_CASE=i to rerun just case i (a failure prints the command).
#include <gtest/gtest.h>

#include <random>

#include "engine/ir/printer.hpp"
#include "engine/rewrite/symbolic.hpp"
#include "engine/support/knobs.hpp"
#include "tests/ir/eval_reference.hpp"

namespace beamlab {
namespace {

using testing::Evaluator;
using testing::Point;

struct Leaf {
  UOpPtr node;
  int64_t lo, hi;
};

class ExprGen {
public:
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

// The root's value at `p`; a node whose value leaves its [vmin, vmax] fails the test and
// sets `ok` to false.
int64_t eval_checking_bounds(const UOpPtr& root, const Point& p, const std::string& where,
                             bool& ok) {
  Evaluator ev(p);
  for (const UOpPtr& u : toposort(root)) {
    int64_t v = ev.eval(u);
    if (v >= u->vmin() && v <= u->vmax()) continue;
    ADD_FAILURE() << where << ": node " << to_expr(u) << " = " << v << " is outside its bounds ["
                  << u->vmin() << ", " << u->vmax() << "]";
    ok = false;
    break;
  }
  return ev.eval(root);
}

std::string describe(const Point& p) {
  std::string out;
  for (const auto& [n, v] : p.vars) out += n + "=" + std::to_string(v) + " ";
  for (const auto& [r, v] : p.ranges) out += "r" + std::to_string(r) + "=" + std::to_string(v);
  return out;
}

TEST(SymbolicProperty, RandomExpressionsSimplifyToEqualValues) {
  int64_t cases = knob_int("BEAMLAB_SYMBOLIC_CASES", 5000);
  int64_t seed = knob_int("BEAMLAB_SYMBOLIC_SEED", 1);
  int64_t only = knob_int("BEAMLAB_SYMBOLIC_CASE", -1);
  int64_t failures = 0, shrunk = 0, points = 0;
  for (int64_t i = 0; i < cases && failures < 5; ++i) {
    if (only >= 0 && i != only) continue;
    DType dt = i % 3 == 2 ? DType(Scalar::Int32) : DType(Scalar::Index);
    ExprGen gen(static_cast<uint64_t>(seed) * 1000003 + static_cast<uint64_t>(i), dt);
    UOpPtr e = i % 5 == 4 ? where(gen.condition(3), gen.expr(3), gen.expr(2)) : gen.expr(4);
    std::string rerun = "rerun with BEAMLAB_SYMBOLIC_SEED=" + std::to_string(seed) +
                        " BEAMLAB_SYMBOLIC_CASE=" + std::to_string(i);
    UOpPtr s;
    try {
      s = simplify(e);
    } catch (const std::exception& ex) {
      ADD_FAILURE() << "case " << i << ": simplify threw: " << ex.what()
                    << "\n  expr: " << to_expr(e) << "\n  " << rerun;
      ++failures;
      continue;
    }
    shrunk += toposort(s).size() < toposort(e).size();
    for (int k = 0; k < 16; ++k) {
      Point p = gen.point();
      ++points;
      bool ok = true;
      int64_t want = eval_checking_bounds(e, p, "original, case " + std::to_string(i), ok);
      int64_t got = eval_checking_bounds(s, p, "simplified, case " + std::to_string(i), ok);
      if (want == got && ok) continue;
      ADD_FAILURE() << "case " << i << " at " << describe(p) << ": original = " << want
                    << ", simplified = " << got << "\n  original:   " << to_expr(e)
                    << "\n  simplified: " << to_expr(s) << "\n  " << rerun;
      ++failures;
      break;
    }
  }
  std::printf("symbolic property test: %lld cases, %lld points, %lld simplified to fewer nodes\n",
              static_cast<long long>(only >= 0 ? 1 : cases), static_cast<long long>(points),
              static_cast<long long>(shrunk));
}

} // namespace
} // namespace beamlab
