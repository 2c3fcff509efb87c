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
#include "tests/ir/expr_gen.hpp"

namespace beamlab {
namespace {

using testing::Evaluator;
using testing::ExprGen;
using testing::Point;

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
    // index and int32 mostly; int8 and int16, where products wrap, for the overflow gates.
    constexpr Scalar kDtypes[] = {Scalar::Index, Scalar::Index, Scalar::Int32, Scalar::Int8,
                                  Scalar::Int16};
    DType dt = kDtypes[i % 5];
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
