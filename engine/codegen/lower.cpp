// Reduce lowering and loop closing; see lower.hpp.
#include "engine/codegen/lower.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "engine/codegen/linearize.hpp"
#include "engine/codegen/range_analysis.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/rewrite/verify.hpp"
#include "engine/support/knobs.hpp"

namespace beamlab {
namespace {

struct LowerCtx {
  RangeAnalysis ranges;
  int64_t next_register = 0;
};

// REDUCE(x, r1..rk : op) -> an accumulator: set in the loops the result varies with, updated
// inside r1..rk, read after them.
UOpPtr lower_reduce(const Match& m) {
  LowerCtx& ctx = m.ctx.get<LowerCtx>();
  const UOpPtr& red = m.root;
  Op op = red->arg().as_op();
  DType dt = red->dtype();
  UOpPtr slot = index(define_reg(dt, 1, ctx.next_register++), UOp::const_int(Scalar::Index, 0));
  std::vector<UOpPtr> outer;
  for (const UOp* r : ctx.ranges.of(red)) outer.push_back(r->ptr());
  UOpPtr init = store(slot, reduce_identity(op, dt), outer);
  std::vector<UOpPtr> loops(red->src().begin() + 1, red->src().end());
  std::sort(loops.begin(), loops.end(),
            [](const UOpPtr& a, const UOpPtr& b) { return nests_outside(*a, *b); });
  std::vector<UOpPtr> after = {init};
  after.insert(after.end(), loops.begin(), loops.end());
  UOpPtr done = store(slot, alu(op, load(slot, dt, after), red->src(0)));
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) done = end_loop({done}, *it);
  return load(slot, dt, {done});
}

// Closes every loop the effects run in, except those in `excluded` (already being closed
// around them). The outermost open loop R groups the effects that use it: their inner loops
// are closed first, then R's END holds them all.
std::vector<UOpPtr> close_loops(std::vector<UOpPtr> effects, RangeAnalysis& ranges,
                                std::unordered_set<const UOp*>& excluded) {
  const UOp* outermost = nullptr;
  for (const UOpPtr& e : effects)
    for (const UOp* r : ranges.of(e))
      if (!excluded.contains(r) && (!outermost || nests_outside(*r, *outermost))) outermost = r;
  if (!outermost) return effects;
  std::vector<UOpPtr> inside, rest;
  for (UOpPtr& e : effects) {
    const LoopNest& rs = ranges.of(e);
    bool uses = std::find(rs.begin(), rs.end(), outermost) != rs.end();
    (uses ? inside : rest).push_back(std::move(e));
  }
  excluded.insert(outermost);
  std::vector<UOpPtr> closed = close_loops(std::move(inside), ranges, excluded);
  excluded.erase(outermost);
  rest.push_back(end_loop(std::move(closed), outermost->ptr()));
  return close_loops(std::move(rest), ranges, excluded);
}

void print_after(std::string_view step, const UOpPtr& g) {
  if (knob_lists("BEAMLAB_PRINT_AFTER", step))
    std::fprintf(stderr, "# after %.*s\n%s", static_cast<int>(step.size()), step.data(),
                 print_graph(g).c_str());
}

} // namespace

UOpPtr reduce_identity(Op op, DType dtype) {
  switch (op) {
  case Op::Add: return UOp::const_like(dtype, 0);
  case Op::Mul: return UOp::const_like(dtype, 1);
  case Op::Max:
    if (dtype.is_float()) return UOp::const_float(dtype, -std::numeric_limits<double>::infinity());
    if (dtype.is_bool()) return UOp::const_bool(false);
    return UOp::const_int(dtype, dtype.int_min());
  default: internal_error << "no identity for reduction " << op_name(op);
  }
  return nullptr;
}

UOpPtr lower_kernel(const UOpPtr& ast) {
  internal_assert(ast->op() == Op::Sink) << "lower_kernel takes a SINK, got " << op_name(ast->op());
  bool verifying = verification_enabled();
  if (verifying) verify_or_throw(ast, spec_kernel(), "lower_kernel's input");
  LowerCtx ctx;
  static const PatternMatcher pm_lower_reduce({{UPat::ops({Op::Reduce}), lower_reduce}});
  UOpPtr lowered =
      graph_rewrite(ast, pm_lower_reduce, ctx, {.name = "lower_reduce", .spec = &spec_kernel()});
  std::unordered_set<const UOp*> excluded;
  UOpPtr closed = sink(close_loops(lowered->src(), ctx.ranges, excluded));
  print_after("close_loops", closed);
  if (verifying) verify_or_throw(closed, spec_kernel(), "close_loops");
  return closed;
}

} // namespace beamlab
