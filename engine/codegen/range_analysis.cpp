// Loop sets of nodes; see range_analysis.hpp.
#include "engine/codegen/range_analysis.hpp"

#include <algorithm>

#include "engine/codegen/linearize.hpp"
#include "engine/ir/printer.hpp"

namespace beamlab {
namespace {

bool closes(const UOp& n, const UOp* r) {
  if (n.op() == Op::End) return n.src().back().get() == r;
  if (n.op() != Op::Reduce) return false;
  return std::any_of(n.src().begin() + 1, n.src().end(),
                     [&](const UOpPtr& s) { return s.get() == r; });
}

} // namespace

const LoopNest& RangeAnalysis::of(const UOpPtr& u) {
  if (auto it = memo_.find(u.get()); it != memo_.end()) return it->second;
  for (const UOpPtr& n : toposort(u)) { // sources first, no recursion: graphs can be deep
    if (memo_.contains(n.get())) continue;
    LoopNest out;
    for (const UOpPtr& s : n->src()) {
      const LoopNest& rs = memo_.at(s.get());
      out.insert(out.end(), rs.begin(), rs.end());
    }
    if (n->op() == Op::Range) out.push_back(n.get());
    std::sort(out.begin(), out.end(),
              [](const UOp* a, const UOp* b) { return nests_outside(*a, *b); });
    out.erase(std::unique(out.begin(), out.end()), out.end());
    std::erase_if(out, [&](const UOp* r) { return closes(*n, r); });
    keep_.push_back(n);
    memo_.emplace(n.get(), std::move(out));
  }
  return memo_.at(u.get());
}

} // namespace beamlab
