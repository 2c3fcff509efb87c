// Loop partitioning; see partition.hpp.
#include "engine/codegen/partition.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "engine/codegen/linearize.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
#include "engine/rewrite/linear_form.hpp"
#include "engine/rewrite/symbolic.hpp"

namespace beamlab {
namespace {

constexpr size_t kMaxCopies = 4; // copies of the kernel's effects, over all cuts

bool reaches(const UOpPtr& root, const UOp* target) {
  const std::vector<UOpPtr> nodes = toposort(root);
  return std::any_of(nodes.begin(), nodes.end(),
                     [&](const UOpPtr& u) { return u.get() == target; });
}

void split_conjunction(const UOpPtr& gate, std::vector<UOpPtr>& out) {
  if (gate->op() == Op::And) {
    split_conjunction(gate->src(0), out);
    split_conjunction(gate->src(1), out);
  } else if (std::find(out.begin(), out.end(), gate) == out.end()) {
    out.push_back(gate);
  }
}

// The clauses of the gates of the memory accesses in `body`.
void gate_clauses(const UOpPtr& body, std::vector<UOpPtr>& out) {
  for (const UOpPtr& n : toposort(body))
    if (n->op() == Op::Index && n->src().size() > 2) split_conjunction(n->src(2), out);
}

// The clauses of the gates of the memory accesses inside reductions' bodies.
std::vector<UOpPtr> hot_clauses(const UOpPtr& root) {
  std::vector<UOpPtr> out;
  for (const UOpPtr& u : toposort(root))
    if (u->op() == Op::Reduce) gate_clauses(u->src(0), out);
  return out;
}

// An iteration count s such that `clause` holds at every iteration of `r` below s, for every
// lane and every iteration of the other loops; null when the clause isn't a bound `a < b`
// whose left side grows with r (coef * r + rest, rest free of r, b of constants and variables:
// s is a loop extent) or s could be negative.
// coef * r + rest < b for every rest <= M  <=>  r < (b - M - 1) / coef + 1.
UOpPtr holds_below(const UOpPtr& clause, const UOp& r) {
  if (clause->op() != Op::CmpLt) return nullptr;
  for (const UOpPtr& u : toposort(clause->src(1))) // b: constants and variables only (an extent)
    if (u->op() == Op::Range || u->op() == Op::Load || u->op() == Op::Reduce) return nullptr;
  LinearForm form = decompose(clause->src(0));
  int64_t coef = 0;
  LinearForm rest{form.dtype, {}, form.constant};
  for (const LinearTerm& t : form.terms) {
    if (t.base.get() == &r)
      coef = t.coef;
    else
      rest.terms.push_back(t);
  }
  UOpPtr other = build(rest);
  if (coef <= 0 || reaches(other, &r)) return nullptr;
  UOpPtr top = simplify_kernel(clause->src(1) + (coef - 1 - other->vmax()));
  if (top->vmin() < 0) return nullptr;
  return simplify_kernel(top / coef);
}

// Whether a <= b for every value of the variables: by bounds, or as floors a = x / d, b = y / d
// of a positive d with x <= y by bounds (the steady part of a loop of ceil(n / d) iterations).
bool at_most(const UOpPtr& a, const UOpPtr& b) {
  if (simplify_kernel(b - a)->vmin() >= 0) return true;
  return a->op() == Op::Idiv && b->op() == Op::Idiv && a->src(1) == b->src(1) &&
         a->src(1)->is_const() && a->src(1)->const_value() > 0 &&
         simplify_kernel(b->src(0) - a->src(0))->vmin() >= 0;
}

// A REDUCE over a reduce range r of symbolic extent whose body is gated by bounds on r (an
// UNROLL of a symbolic axis, rounded up and gated, reads `r * 64 + lane < seq`) as two: r's
// iterations where every such gate holds (all but the last at most) with the gates folded
// away, then the rest, gated as before; combined by the REDUCE's op. Each part reduces over
// ranges of its own (fresh axis ids, in the original order).
UOpPtr split_symbolic_reduce(const UOpPtr& red, int64_t& next_axis) {
  std::vector<UOpPtr> clauses; // the gates' clauses and the index conditions of its WHEREs
  gate_clauses(red->src(0), clauses);
  for (const UOpPtr& u : toposort(red->src(0))) {
    if (u->op() != Op::Where) continue;
    const std::vector<UOpPtr> cond = toposort(u->src(0));
    if (std::none_of(cond.begin(), cond.end(), [](const UOpPtr& c) { return c->op() == Op::Load; }))
      split_conjunction(u->src(0), clauses);
  }
  for (size_t i = 1; i < red->src().size(); ++i) {
    const UOpPtr& r = red->src(i);
    if (loop_kind(*r) != LoopKind::Reduce || !symbolic_extent(*r)) continue;
    std::unordered_map<const UOp*, UOpPtr> folded; // the clauses on r: true in the steady part
    UOpPtr steady;
    for (const UOpPtr& c : clauses) {
      if (!reaches(c, r.get())) continue;
      if (UOpPtr below = holds_below(c, *r)) {
        steady = steady ? minimum(steady, below) : below;
        folded.emplace(c.get(), UOp::const_bool(true));
      }
    }
    if (!steady) continue;
    UOpPtr extent = r->src(0);
    steady = simplify_kernel(steady);
    if (!at_most(steady, extent)) steady = simplify_kernel(minimum(extent, steady));
    Op op = red->arg().as_op();
    UOpPtr parts[2];
    for (int part = 0; part < 2; ++part) {
      int64_t base = next_axis;
      std::unordered_map<const UOp*, UOpPtr> mine =
          part == 0 ? folded : std::unordered_map<const UOp*, UOpPtr>{};
      std::vector<UOpPtr> ranges;
      for (size_t j = 1; j < red->src().size(); ++j) {
        const UOpPtr& o = red->src(j);
        if (is_lane(loop_kind(*o))) {
          ranges.push_back(o);
          continue;
        }
        UOpPtr own = kernel_range(o == r ? (part == 0 ? steady : simplify_kernel(extent - steady))
                                         : o->src(0),
                                  base + range_axis(*o), loop_kind(*o));
        next_axis = std::max(next_axis, range_axis(*own) + 1);
        mine.emplace(o.get(), o == r && part == 1 ? own + steady : own);
        ranges.push_back(own);
      }
      parts[part] = reduce_over(simplify_kernel(substitute(red->src(0), mine)), ranges, op);
    }
    return alu(op, parts[0], parts[1]);
  }
  return red;
}

// Every REDUCE of `ast` split as above, inner ones first.
UOpPtr split_symbolic_reduces(const UOpPtr& ast, int64_t& next_axis) {
  std::unordered_map<const UOp*, UOpPtr> done;
  for (const UOpPtr& u : toposort(ast)) {
    std::vector<UOpPtr> src;
    for (const UOpPtr& s : u->src()) src.push_back(done.at(s.get()));
    UOpPtr out = u->replace_src(std::move(src));
    if (out->op() == Op::Reduce) out = split_symbolic_reduce(out, next_axis);
    done.emplace(u.get(), std::move(out));
  }
  return done.at(ast.get());
}

// Iterations [lo, hi) of a loop as a value: the constant lo for one, a loop of their own (axis
// id `axis`) from lo otherwise.
UOpPtr iterations(int64_t lo, int64_t hi, int64_t axis) {
  if (hi - lo == 1) return UOp::const_int(Scalar::Index, lo);
  UOpPtr part = kernel_range(hi - lo, axis, LoopKind::Loop);
  return lo == 0 ? part : part + lo;
}

bool all_hold(const std::vector<UOpPtr>& clauses, const UOp& loop, const UOpPtr& value) {
  return std::all_of(clauses.begin(), clauses.end(), [&](const UOpPtr& c) {
    UOpPtr folded = simplify(substitute(c, {{&loop, value}}));
    return folded->is_const() && folded->const_value() != 0;
  });
}

// The run of `loop`'s iterations around its middle one where every clause moving with the loop
// holds for all lanes and all other loops' iterations, if it is not the whole loop. The clauses
// are affine bounds (a padded axis's end, a window's edges), so where they hold is an interval:
// its ends are found by bisection, and checked for the whole run at once.
std::optional<std::pair<int64_t, int64_t>> steady_part(const std::vector<UOpPtr>& clauses,
                                                       const UOp& loop) {
  std::vector<UOpPtr> mine;
  for (const UOpPtr& c : clauses)
    if (reaches(c, &loop)) mine.push_back(c);
  int64_t n = loop.src(0)->const_value(), mid = (n - 1) / 2, axis = range_axis(loop);
  auto holds_at = [&](int64_t i) { return all_hold(mine, loop, iterations(i, i + 1, axis)); };
  if (mine.empty() || !holds_at(mid)) return std::nullopt;
  int64_t lo = 0, hi = mid; // the first iteration that holds is in [lo, hi]
  while (lo < hi) {
    int64_t m = lo + (hi - lo) / 2;
    if (holds_at(m))
      hi = m;
    else
      lo = m + 1;
  }
  int64_t first = lo;
  lo = mid, hi = n - 1; // the last one is in [lo, hi]
  while (lo < hi) {
    int64_t m = lo + (hi - lo + 1) / 2;
    if (holds_at(m))
      lo = m;
    else
      hi = m - 1;
  }
  int64_t end = lo + 1;
  if (end - first == n || !all_hold(mine, loop, iterations(first, end, axis))) return std::nullopt;
  return std::pair{first, end};
}

// Cuts the effects at their outermost loop with a gated steady part, then each part's effects
// in turn, into at most `budget` copies in all. Each part gets loops of its own for the cut loop
// and every loop inside it (fresh axis ids above all in the kernel, in the same order, so they
// nest where the originals did): no value computed in one part's loops is used in another's.
std::vector<UOpPtr> cut(std::vector<UOpPtr> effects, size_t budget, int64_t& next_axis) {
  std::vector<UOpPtr> loops; // plain loops, outermost first
  for (const UOpPtr& u : toposort(sink(effects)))
    if (u->op() == Op::Range && loop_kind(*u) == LoopKind::Loop) loops.push_back(u);
  std::sort(loops.begin(), loops.end(),
            [](const UOpPtr& a, const UOpPtr& b) { return range_axis(*a) < range_axis(*b); });
  for (const UOpPtr& loop : loops) {
    std::vector<UOpPtr> moving, still;
    for (const UOpPtr& e : effects) (reaches(e, loop.get()) ? moving : still).push_back(e);
    std::vector<UOpPtr> clauses;
    for (const UOpPtr& e : moving)
      for (const UOpPtr& c : hot_clauses(e))
        if (std::find(clauses.begin(), clauses.end(), c) == clauses.end()) clauses.push_back(c);
    if (symbolic_extent(*loop)) continue; // its parts' ends would be expressions: not cut yet
    auto steady = steady_part(clauses, *loop);
    if (!steady) continue;
    int64_t n = loop->src(0)->const_value();
    std::vector<std::pair<int64_t, int64_t>> parts;
    for (auto [lo, hi] :
         {std::pair{int64_t{0}, steady->first}, *steady, std::pair{steady->second, n}})
      if (lo < hi) parts.emplace_back(lo, hi);
    if (parts.size() > budget) continue;
    int64_t axis = range_axis(*loop);
    std::vector<UOpPtr> inner; // the loops inside `loop` (and the reductions'), to copy per part
    for (const UOpPtr& u : toposort(sink(moving)))
      if (u->op() == Op::Range && !is_lane(loop_kind(*u)) && loop_kind(*u) != LoopKind::Parallel &&
          range_axis(*u) > axis)
        inner.push_back(u);
    for (auto [lo, hi] : parts) {
      int64_t base = next_axis;
      std::unordered_map<const UOp*, UOpPtr> mine;
      UOpPtr own = iterations(lo, hi, base + axis);
      mine.emplace(loop.get(), own);
      for (const UOpPtr& r : inner)
        mine.emplace(r.get(), kernel_range(r->src(0), base + range_axis(*r), loop_kind(*r)));
      for (const auto& [old, fresh] : mine)
        if (fresh->op() == Op::Range) next_axis = std::max(next_axis, range_axis(*fresh) + 1);
      std::vector<UOpPtr> piece;
      for (const UOpPtr& e : moving) piece.push_back(simplify_kernel(substitute(e, mine)));
      for (UOpPtr& e : cut(std::move(piece), budget / parts.size(), next_axis))
        still.push_back(std::move(e));
    }
    return still;
  }
  return effects;
}

} // namespace

UOpPtr partition_loops(const UOpPtr& ast) {
  int64_t next_axis = 0;
  bool symbolic = false;
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() != Op::Range) continue;
    next_axis = std::max(next_axis, range_axis(*u) + 1);
    symbolic |= symbolic_extent(*u);
  }
  UOpPtr split = symbolic ? split_symbolic_reduces(ast, next_axis) : ast;
  if (hot_clauses(split).empty()) return split; // most kernels: no gate inside a reduction
  std::vector<UOpPtr> effects = cut(split->src(), kMaxCopies, next_axis);
  return effects == split->src() ? split : sink(std::move(effects));
}

} // namespace beamlab
