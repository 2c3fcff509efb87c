// Reduce lowering and loop closing; see lower.hpp.
#include "engine/codegen/lower.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "engine/codegen/linearize.hpp"
#include "engine/codegen/range_analysis.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/rewrite/verify.hpp"

namespace beamlab {
namespace {

struct LowerCtx {
  RangeAnalysis ranges;
  int64_t next_register = 0;
  int64_t next_axis = 0;                 // above every axis id in the kernel: for cloned ranges
  std::unordered_set<const UOp*> closed; // RANGEs that have their END
  std::vector<UOpPtr> keep;              // keeps the keys above alive
};

// A copy of `range` with a fresh axis id: a RANGE node opens one loop, so a loop that must run
// in two places gets a second RANGE.
UOpPtr clone_range(const UOp& range, LowerCtx& ctx) {
  return kernel_range(range.src(0), ctx.next_axis++, loop_kind(range));
}

// Gives each REDUCE ranges of its own: a range that another REDUCE of the input already
// reduces is cloned for this one. One pass over the input in topological order; ownership is
// by the input's REDUCE nodes, so identical REDUCEs (one node) share one accumulator.
UOpPtr separate_reduce_ranges(const UOpPtr& ast, LowerCtx& ctx) {
  std::unordered_map<const UOp*, UOpPtr> done;      // input node -> output node
  std::unordered_map<const UOp*, const UOp*> owner; // RANGE -> input REDUCE
  for (const UOpPtr& u : toposort(ast)) {
    std::vector<UOpPtr> src;
    for (const UOpPtr& s : u->src()) src.push_back(done.at(s.get()));
    UOpPtr out = u->replace_src(std::move(src));
    if (u->op() == Op::Reduce) {
      std::unordered_map<const UOp*, UOpPtr> clones;
      for (size_t i = 1; i < out->src().size(); ++i) {
        const UOp* r = out->src(i).get();
        auto [it, fresh] = owner.emplace(r, u.get());
        if (!fresh && it->second != u.get()) clones.emplace(r, clone_range(*r, ctx));
      }
      if (!clones.empty()) out = substitute(out, clones);
      for (const auto& [old, clone] : clones) owner.emplace(clone.get(), u.get());
      ctx.keep.push_back(out);
      for (const auto& [old, clone] : clones) ctx.keep.push_back(clone);
    }
    done.emplace(u.get(), std::move(out));
  }
  return done.at(ast.get());
}

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
//
// A range that already has its END (it was closed in another group) is cloned for this group.
std::vector<UOpPtr> close_loops(std::vector<UOpPtr> effects, LowerCtx& ctx,
                                std::unordered_set<const UOp*>& excluded) {
  const UOp* outermost = nullptr;
  for (const UOpPtr& e : effects)
    for (const UOp* r : ctx.ranges.of(e))
      if (!excluded.contains(r) && (!outermost || nests_outside(*r, *outermost))) outermost = r;
  if (!outermost) return effects;
  std::vector<UOpPtr> inside, rest;
  for (UOpPtr& e : effects) {
    const LoopNest& rs = ctx.ranges.of(e);
    bool uses = std::find(rs.begin(), rs.end(), outermost) != rs.end();
    (uses ? inside : rest).push_back(std::move(e));
  }
  UOpPtr range = outermost->ptr();
  if (ctx.closed.contains(outermost)) {
    std::unordered_map<const UOp*, UOpPtr> clone = {{outermost, clone_range(*outermost, ctx)}};
    for (UOpPtr& e : inside) e = substitute(e, clone);
    range = clone.at(outermost);
  }
  ctx.closed.insert(range.get());
  ctx.keep.push_back(range);
  excluded.insert(range.get());
  std::vector<UOpPtr> closed = close_loops(std::move(inside), ctx, excluded);
  excluded.erase(range.get());
  rest.push_back(end_loop(std::move(closed), range));
  return close_loops(std::move(rest), ctx, excluded);
}

} // namespace

UOpPtr lower_kernel(const UOpPtr& ast) {
  internal_assert(ast->op() == Op::Sink) << "lower_kernel takes a SINK, got " << op_name(ast->op());
  bool verifying = verification_enabled();
  if (verifying) verify_or_throw(ast, spec_kernel(), "lower_kernel's input");
  LowerCtx ctx;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Op::Range) ctx.next_axis = std::max(ctx.next_axis, range_axis(*u) + 1);
  UOpPtr separated = separate_reduce_ranges(ast, ctx);
  print_after_step("separate_reduce_ranges", separated);
  static const PatternMatcher pm_lower_reduce({{UPat::ops({Op::Reduce}), lower_reduce}});
  UOpPtr lowered = graph_rewrite(separated, pm_lower_reduce, ctx,
                                 {.name = "lower_reduce", .spec = &spec_kernel()});
  std::unordered_set<const UOp*> excluded;
  UOpPtr closed = sink(close_loops(lowered->src(), ctx, excluded));
  print_after_step("close_loops", closed);
  if (verifying) verify_or_throw(closed, spec_kernel(), "close_loops");
  return closed;
}

} // namespace beamlab
