// Legalizing a plan for another kernel of the same structure; see legalize.hpp.
#include "tuner/search/legalize.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace beamlab::tuner {
namespace {

/// The axes an Opt can address: loops and reduces (lanes are no longer loops).
std::vector<Axis> addressable(const OptimizedKernel& k) {
  std::vector<Axis> out;
  for (const Axis& a : k.axes)
    if (!is_lane(a.kind)) out.push_back(a);
  return out;
}

/// Within the search's caps on the widest vector and on AST nodes x lanes.
bool within_caps(const OptimizedKernel& k, const SearchSettings& caps) {
  int64_t nodes = 0;
  for (const UOpPtr& stage : k.stages) nodes += static_cast<int64_t>(toposort(stage).size());
  return k.lanes <= caps.max_lanes && nodes * k.lanes <= caps.max_ops;
}

/// A kernel's addressable axes as a plan applies, each with its lineage.
struct Tracked {
  std::string label;
  Axis axis;
};

bool same_axes(const std::vector<Tracked>& t, const std::vector<Axis>& axes) {
  return t.size() == axes.size() &&
         std::equal(t.begin(), t.end(), axes.begin(), [](const Tracked& x, const Axis& a) {
           return x.axis.kind == a.kind && x.axis.extent == a.extent;
         });
}

/// What `o` (the plan's step `step`) makes of the axes `before`, as apply_opts splits them:
/// the part of a split axis that stays in its place keeps its label; a block loop moved
/// outward is labelled by its parent and the step.
std::vector<Tracked> expected_after(std::vector<Tracked> t, const Opt& o, size_t step) {
  if (o.op == OptOp::Pack) return t;
  auto at = t.begin() + o.axis;
  std::string child = at->label + "/" + std::string(opt_op_name(o.op)) + std::to_string(step);
  int64_t n = at->axis.extent;
  bool has_parallel = std::any_of(
      t.begin(), t.end(), [](const Tracked& x) { return x.axis.kind == LoopKind::Parallel; });
  // UPCAST, UNROLL, THREAD and GROUP leave n / amount iterations in the axis's place (a part
  // of 1 is left out).
  auto keep_the_rest = [&] {
    if (n / o.arg > 1)
      at->axis.extent = n / o.arg;
    else
      t.erase(at);
  };
  switch (o.op) {
  case OptOp::Upcast:
  case OptOp::Unroll: keep_the_rest(); return t;
  case OptOp::Thread:
  case OptOp::Group:
    keep_the_rest();
    if (has_parallel) // its parts join the parallel axis, which is first
      t.front().axis.extent *= o.arg;
    else
      t.insert(t.begin(), {child, {o.arg, LoopKind::Parallel}});
    return t;
  case OptOp::Tile:
    at->axis.extent = o.arg;
    t.insert(t.begin() + (has_parallel ? 1 : 0), {child, {n / o.arg, LoopKind::Loop}});
    return t;
  case OptOp::Swap: std::swap(t[size_t(o.axis)], t[size_t(o.arg)]); return t;
  case OptOp::Padto: at->axis.extent = (n + o.arg - 1) / o.arg * o.arg; return t;
  case OptOp::Pack: return t;
  }
  return t;
}

/// The tracked axes after `o`: expected_after when it matches what apply_opts made (`after`).
/// GROUP also drops the loops its partial stage no longer has; those are found by matching the
/// expected axes in order against `after`. Unmatched lineage gets fresh labels, so no later Opt
/// is sent there.
std::vector<Tracked> track(const std::vector<Tracked>& before, const Opt& o, size_t step,
                           const std::vector<Axis>& after) {
  std::vector<Tracked> want = expected_after(before, o, step);
  if (same_axes(want, after)) return want;
  std::vector<Tracked> kept;
  for (const Tracked& w : want)
    if (kept.size() < after.size() && w.axis.kind == after[kept.size()].kind &&
        w.axis.extent == after[kept.size()].extent)
      kept.push_back(w);
  if (kept.size() == after.size()) return kept;
  std::vector<Tracked> fresh;
  for (size_t i = 0; i < after.size(); ++i)
    fresh.push_back({"?" + std::to_string(step) + "." + std::to_string(i), after[i]});
  return fresh;
}

std::vector<Tracked> initial(const std::vector<Axis>& axes) {
  std::vector<Tracked> t;
  for (size_t i = 0; i < axes.size(); ++i) t.push_back({std::to_string(i), axes[i]});
  return t;
}

/// The position of the axis labelled `label`, or -1.
int find_label(const std::vector<Tracked>& t, const std::string& label) {
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].label == label) return static_cast<int>(i);
  return -1;
}

/// The amounts to try for `o`, its own first, then the search's amounts by nearness of ratio
/// (the smaller of two as near).
std::vector<int64_t> amounts_to_try(const Opt& o, int threads) {
  std::vector<int64_t> out = {o.arg};
  if (o.op == OptOp::Swap || o.op == OptOp::Pack) return out;
  std::vector<int64_t> others = opt_amounts(o.op, threads);
  auto far = [&](int64_t a) {
    return std::abs(std::log2(static_cast<double>(a)) - std::log2(static_cast<double>(o.arg)));
  };
  std::sort(others.begin(), others.end(),
            [&](int64_t a, int64_t b) { return far(a) < far(b) || (far(a) == far(b) && a < b); });
  for (int64_t a : others)
    if (a != o.arg && a >= 2) out.push_back(a);
  return out;
}

} // namespace

Expected<LegalizedPlan> legalize_plan(const UOpPtr& from, const std::vector<Opt>& plan,
                                      const UOpPtr& to, int threads, const SearchSettings& caps) {
  Expected<OptimizedKernel> a = apply_opts(from, {});
  Expected<OptimizedKernel> b = apply_opts(to, {});
  if (!a || !b) return make_unexpected(!a ? a.error() : b.error());
  std::vector<Tracked> ta = initial(addressable(*a)), tb = initial(addressable(*b));
  if (ta.size() != tb.size() ||
      !std::equal(ta.begin(), ta.end(), tb.begin(),
                  [](const Tracked& x, const Tracked& y) { return x.axis.kind == y.axis.kind; }))
    return make_unexpected(std::string("the kernels' axes differ: not one structure"));
  LegalizedPlan out;
  std::vector<Opt> done_a;
  for (size_t step = 0; step < plan.size(); ++step) {
    const Opt& o = plan[step];
    done_a.push_back(o);
    Expected<OptimizedKernel> next_a = apply_opts(from, done_a);
    if (!next_a)
      return make_unexpected("the plan does not apply to its own kernel: " + next_a.error());
    // The same step in the new kernel, on the axes with the same lineage.
    Opt mine = o;
    bool found = true;
    if (o.op != OptOp::Pack) {
      mine.axis = find_label(tb, ta[size_t(o.axis)].label);
      if (o.op == OptOp::Swap) mine.arg = find_label(tb, ta[size_t(o.arg)].label);
      found = mine.axis >= 0 && (o.op != OptOp::Swap || mine.arg >= 0);
    }
    bool applied = false;
    for (int64_t amount : found ? amounts_to_try(mine, threads) : std::vector<int64_t>{}) {
      Opt tried = mine;
      if (o.op != OptOp::Swap) tried.arg = amount;
      out.opts.push_back(tried);
      Expected<OptimizedKernel> next_b = apply_opts(to, out.opts);
      if (next_b && within_caps(*next_b, caps)) {
        tb = track(tb, tried, step, addressable(*next_b));
        out.changed += tried.arg != o.arg && o.op != OptOp::Swap;
        applied = true;
        break;
      }
      out.opts.pop_back();
    }
    out.dropped += !applied;
    ta = track(ta, o, step, addressable(*next_a));
  }
  return out;
}

} // namespace beamlab::tuner
