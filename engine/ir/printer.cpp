// Graph and expression printing; see printer.hpp.
#include "engine/ir/printer.hpp"

#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace beamlab {

std::vector<UOpPtr> toposort(const UOpPtr& root) {
  std::vector<UOpPtr> order;
  std::unordered_set<const UOp*> done;
  // Iterative post-order DFS: a frame is a node and the index of its next source to visit.
  std::vector<std::pair<const UOp*, size_t>> stack = {{root.get(), 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next == 0 && done.contains(node)) {
      stack.pop_back();
      continue;
    }
    if (next < node->src().size()) {
      const UOp* child = node->src()[next++].get();
      if (!done.contains(child)) stack.emplace_back(child, 0);
      continue;
    }
    if (done.insert(node).second) order.push_back(node->ptr());
    stack.pop_back();
  }
  return order;
}

std::string print_graph(const UOpPtr& root) {
  std::unordered_map<const UOp*, size_t> ids;
  std::string out;
  for (const UOpPtr& u : toposort(root)) {
    size_t id = ids.size();
    ids.emplace(u.get(), id);
    out += fmt::format("%{} = {} {}", id, op_name(u->op()), u->dtype().str());
    for (size_t i = 0; i < u->src().size(); ++i)
      out += fmt::format("{}%{}", i ? ", " : " ", ids.at(u->src(i).get()));
    if (!u->arg().is_none()) out += " : " + u->arg().str();
    out += '\n';
  }
  return out;
}

namespace {

std::string_view infix_symbol(Op op) {
  switch (op) {
  case Op::Add: return "+";
  case Op::Sub: return "-";
  case Op::Mul: return "*";
  case Op::Idiv: return "//";
  case Op::Fdiv: return "/";
  case Op::Mod: return "%";
  case Op::CmpLt: return "<";
  case Op::CmpNe: return "!=";
  case Op::CmpEq: return "==";
  case Op::And: return "&";
  case Op::Or: return "|";
  case Op::Xor: return "^";
  case Op::Shl: return "<<";
  case Op::Shr: return ">>";
  default: return {};
  }
}

} // namespace

std::string to_expr(const UOpPtr& u) {
  const auto& s = u->src();
  switch (u->op()) {
  case Op::Const: return u->arg().str();
  case Op::DefineVar:
    if (u->arg().kind() == Arg::Kind::Tuple && !u->arg().items().empty() &&
        u->arg().items()[0].kind() == Arg::Kind::Str)
      return u->arg().items()[0].as_str();
    break;
  case Op::Range:
    return "r" + (u->arg().is_int() ? std::to_string(u->arg().as_int()) : u->arg().str());
  case Op::Neg: return "(-" + to_expr(s[0]) + ")";
  case Op::Max: return "max(" + to_expr(s[0]) + ", " + to_expr(s[1]) + ")";
  case Op::Where: return "(" + to_expr(s[0]) + " ? " + to_expr(s[1]) + " : " + to_expr(s[2]) + ")";
  default: break;
  }
  if (std::string_view sym = infix_symbol(u->op()); !sym.empty())
    return "(" + to_expr(s[0]) + std::string(sym) + to_expr(s[1]) + ")";
  std::string out = std::string(op_name(u->op())) + "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + to_expr(s[i]);
  return out + ")";
}

} // namespace beamlab
