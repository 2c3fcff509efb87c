// Linearization; see linearize.hpp.
//
// Kahn's algorithm over the graph with a priority: definitions and constants first, then
// ordinary nodes, then RANGEs (outer axes before inner ones). Deferring a RANGE until nothing
// else is ready places everything that doesn't depend on the loop before it.
#include "engine/codegen/linearize.hpp"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "engine/ir/printer.hpp"
#include "engine/support/error.hpp"

namespace beamlab {

std::string range_kind(const UOp& range) {
  const Arg& a = range.arg();
  if (a.kind() == Arg::Kind::Tuple && a.items().size() == 2 &&
      a.items()[1].kind() == Arg::Kind::Str)
    return a.items()[1].as_str();
  return "loop";
}

int64_t range_axis(const UOp& range) {
  const Arg& a = range.arg();
  if (a.is_int()) return a.as_int();
  if (a.kind() == Arg::Kind::Tuple && !a.items().empty() && a.items()[0].is_int())
    return a.items()[0].as_int();
  return 0;
}

bool nests_outside(const UOp& a, const UOp& b) {
  bool pa = range_kind(a) == "parallel", pb = range_kind(b) == "parallel";
  if (pa != pb) return pa;
  return range_axis(a) < range_axis(b);
}

namespace {

// Lower sorts first.
struct Priority {
  int group;       // 0 definitions and constants, 1 other nodes, 2 ranges
  int64_t axis;    // ranges: outer (parallel) first, then by axis id
  size_t position; // deterministic tie-break: position in the topological order
  auto operator<=>(const Priority&) const = default;
};

Priority priority_of(const UOp& u, size_t position) {
  switch (u.op()) {
  case Op::DefineGlobal:
  case Op::DefineVar:
  case Op::DefineReg:
  case Op::Const: return {0, 0, position};
  case Op::Range: return {2, range_kind(u) == "parallel" ? -1 : range_axis(u), position};
  default: return {1, 0, position};
  }
}

// Checks the loop structure of the linear order: every use of a RANGE's variable sits
// between the RANGE and its END, and loops nest.
void check_loops(const std::vector<UOpPtr>& order) {
  std::vector<const UOp*> open;
  std::unordered_set<const UOp*> closed;
  for (const UOpPtr& u : order) {
    for (const UOpPtr& s : u->src()) {
      if (s->op() != Op::Range || u->op() == Op::End) continue;
      internal_assert(!closed.contains(s.get()))
          << "linearize: " << op_name(u->op()) << " uses loop r" << range_axis(*s)
          << " after the loop has ended; give it an END of its own or move it inside";
    }
    if (u->op() == Op::Range) open.push_back(u.get());
    if (u->op() != Op::End) continue;
    const UOp* range = u->src().back().get();
    internal_assert(!open.empty() && open.back() == range)
        << "linearize: END of r" << range_axis(*range) << " does not close the innermost open loop";
    open.pop_back();
    closed.insert(range);
  }
  internal_assert(open.empty()) << "linearize: " << open.size() << " loop(s) have no END";
}

} // namespace

std::vector<UOpPtr> linearize(const UOpPtr& sink) {
  std::vector<UOpPtr> nodes = toposort(sink);
  std::unordered_map<const UOp*, size_t> position;
  std::unordered_map<const UOp*, std::vector<const UOp*>> users;
  std::unordered_map<const UOp*, size_t> waiting; // distinct sources not yet placed
  for (size_t i = 0; i < nodes.size(); ++i) {
    const UOp* u = nodes[i].get();
    position.emplace(u, i);
    std::unordered_set<const UOp*> distinct;
    for (const UOpPtr& s : u->src())
      if (distinct.insert(s.get()).second) users[s.get()].push_back(u);
    waiting[u] = distinct.size();
  }
  using Entry = std::pair<Priority, const UOp*>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (const UOpPtr& u : nodes)
    if (waiting[u.get()] == 0) ready.emplace(priority_of(*u, position[u.get()]), u.get());
  std::vector<UOpPtr> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    const UOp* u = ready.top().second;
    ready.pop();
    order.push_back(nodes[position[u]]);
    for (const UOp* user : users[u])
      if (--waiting[user] == 0) ready.emplace(priority_of(*user, position[user]), user);
  }
  internal_assert(order.size() == nodes.size()) << "linearize: the kernel graph has a cycle";
  check_loops(order);
  return order;
}

} // namespace beamlab
