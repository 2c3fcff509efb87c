// Loop partitioning; see partition.hpp.
#include "engine/codegen/partition.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "engine/codegen/linearize.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/rewrite/graph_rewrite.hpp"
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

// The clauses of the gates of the memory accesses inside reductions' bodies.
std::vector<UOpPtr> hot_clauses(const UOpPtr& root) {
  std::vector<UOpPtr> out;
  for (const UOpPtr& u : toposort(root)) {
    if (u->op() != Op::Reduce) continue;
    for (const UOpPtr& n : toposort(u->src(0)))
      if (n->op() == Op::Index && n->src().size() > 2) split_conjunction(n->src(2), out);
  }
  return out;
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
  if (hot_clauses(ast).empty()) return ast; // most kernels: no gate inside a reduction
  int64_t next_axis = 0;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Op::Range) next_axis = std::max(next_axis, range_axis(*u) + 1);
  std::vector<UOpPtr> effects = cut(ast->src(), kMaxCopies, next_axis);
  return effects == ast->src() ? ast : sink(std::move(effects));
}

} // namespace beamlab
