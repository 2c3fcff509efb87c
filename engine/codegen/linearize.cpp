// Linearization; see linearize.hpp.
//
// Every node belongs in one loop nest: the loops its value varies with (RangeAnalysis). Kahn's
// algorithm places a node only while exactly its nest is open; a RANGE opens only while the
// nest its loop sits in (that of its END) is open, and only after everything its loop body uses
// from outside the loop is placed (extra dependency edges). So loop-invariant work is hoisted,
// a reduction that no outer loop affects runs once, outside them, and its accumulator is set
// in the same nest its loop runs in. Among the nodes placeable at a step: definitions and
// constants first, then other nodes, then RANGEs (the parallel one first, then by axis).
#include "engine/codegen/linearize.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "engine/codegen/range_analysis.hpp"
#include "engine/ir/kernel_ops.hpp"
#include "engine/ir/printer.hpp"
#include "engine/support/error.hpp"

namespace beamlab {

int64_t range_axis(const UOp& range) {
  const Arg& a = range.arg();
  if (a.is_int()) return a.as_int();
  if (a.kind() == Arg::Kind::Tuple && !a.items().empty() && a.items()[0].is_int())
    return a.items()[0].as_int();
  return 0;
}

bool nests_outside(const UOp& a, const UOp& b) {
  bool pa = loop_kind(a) == LoopKind::Parallel, pb = loop_kind(b) == LoopKind::Parallel;
  if (pa != pb) return pa;
  return range_axis(a) < range_axis(b);
}

namespace {

// Lower sorts first.
struct Priority {
  int group;       // 0 definitions and constants, 1 other nodes, 2 ranges
  int64_t axis;    // ranges: the parallel one first, then by axis id
  size_t position; // deterministic tie-break: position in the topological order
  auto operator<=>(const Priority&) const = default;
};

Priority priority_of(const UOp& u, size_t position) {
  switch (u.op()) {
  case Op::DefineGlobal:
  case Op::DefineVar:
  case Op::DefineReg:
  case Op::Const: return {0, 0, position};
  case Op::Range: return {2, loop_kind(u) == LoopKind::Parallel ? -1 : range_axis(u), position};
  default: return {1, 0, position};
  }
}

bool same_loops(const LoopNest& a, const std::vector<const UOp*>& open) {
  return a.size() == open.size() && std::all_of(a.begin(), a.end(), [&](const UOp* r) {
           return std::find(open.begin(), open.end(), r) != open.end();
         });
}

class Linearizer {
public:
  explicit Linearizer(const UOpPtr& sink) : nodes_(toposort(sink)) {
    for (size_t i = 0; i < nodes_.size(); ++i) position_.emplace(nodes_[i].get(), i);
    for (const UOpPtr& u : nodes_) {
      waiting_[u.get()] = 0;
      for (const UOpPtr& s : u->src()) add_edge(s.get(), u.get());
      if (u->op() == Op::End) end_of_[u->src().back().get()] = u.get();
    }
    // A loop opens after everything its body uses from outside it.
    for (const UOpPtr& c : nodes_)
      for (const UOp* r : LoopNest(placed_in(*c)))
        for (const UOpPtr& s : c->src()) {
          const LoopNest& at = placed_in(*s);
          if (s.get() != r && std::find(at.begin(), at.end(), r) == at.end()) add_edge(s.get(), r);
        }
  }

  std::vector<UOpPtr> run() {
    std::vector<const UOp*> ready;
    for (const UOpPtr& u : nodes_)
      if (waiting_[u.get()] == 0) ready.push_back(u.get());
    std::vector<UOpPtr> order;
    while (!ready.empty()) {
      auto best = ready.end();
      for (auto it = ready.begin(); it != ready.end(); ++it)
        if (placeable(**it) && (best == ready.end() || priority(**it) < priority(**best)))
          best = it;
      if (best == ready.end()) report_stuck(ready);
      const UOp* u = *best;
      ready.erase(best);
      place(*u, order);
      for (const UOp* user : users_[u])
        if (--waiting_[user] == 0) ready.push_back(user);
    }
    internal_assert(order.size() == nodes_.size()) << "linearize: the kernel graph has a cycle";
    internal_assert(open_.empty()) << "linearize: " << open_.size() << " loop(s) have no END";
    return order;
  }

private:
  void add_edge(const UOp* from, const UOp* to) {
    if (edges_.insert({from, to}).second) {
      users_[from].push_back(to);
      ++waiting_[to];
    }
  }

  Priority priority(const UOp& u) { return priority_of(u, position_.at(&u)); }

  // The loops that must be open, exactly, to place `u`.
  // The loops open where `u` is placed: those its value varies with, and the loops those sit
  // in (a loop varying with j sits in i too when j's loop sits in i's); a RANGE opens in its
  // END's nest; an END runs inside the loop it closes.
  const LoopNest& placed_in(const UOp& u) {
    if (auto it = placed_.find(&u); it != placed_.end()) return it->second;
    const UOp* source = &u;
    if (u.op() == Op::Range) {
      auto end = end_of_.find(&u);
      internal_assert(end != end_of_.end())
          << "linearize: loop r" << range_axis(u) << " has no END";
      source = end->second;
    }
    LoopNest nest;
    for (const UOp* r : loops_.of(source->ptr())) {
      nest.push_back(r);
      if (r == &u) continue;
      const LoopNest& outer = placed_in(*r);
      nest.insert(nest.end(), outer.begin(), outer.end());
    }
    if (u.op() == Op::End) nest.push_back(u.src().back().get());
    std::sort(nest.begin(), nest.end());
    nest.erase(std::unique(nest.begin(), nest.end()), nest.end());
    return placed_.emplace(&u, std::move(nest)).first->second;
  }

  bool placeable(const UOp& u) {
    if (u.op() == Op::End && (open_.empty() || open_.back() != u.src().back().get())) return false;
    return same_loops(placed_in(u), open_);
  }

  void place(const UOp& u, std::vector<UOpPtr>& order) {
    order.push_back(u.ptr());
    if (u.op() == Op::Range) open_.push_back(&u);
    if (u.op() == Op::End) open_.pop_back();
  }

  [[noreturn]] void report_stuck(const std::vector<const UOp*>& ready) {
    std::string open, waiting;
    for (const UOp* r : open_) open += " r" + std::to_string(range_axis(*r));
    for (const UOp* u : ready) waiting += std::string(" ") + std::string(op_name(u->op()));
    internal_error << "linearize: no node can be placed with loops {" << open
                   << " } open; ready:" << waiting;
    std::abort();
  }

  std::vector<UOpPtr> nodes_;
  RangeAnalysis loops_;
  std::unordered_map<const UOp*, size_t> position_;
  std::unordered_map<const UOp*, std::vector<const UOp*>> users_;
  std::unordered_map<const UOp*, size_t> waiting_;
  std::set<std::pair<const UOp*, const UOp*>> edges_;
  std::unordered_map<const UOp*, const UOp*> end_of_;
  std::unordered_map<const UOp*, LoopNest> placed_;
  std::vector<const UOp*> open_;
};

} // namespace

std::vector<UOpPtr> linearize(const UOpPtr& sink) { return Linearizer(sink).run(); }

} // namespace beamlab
