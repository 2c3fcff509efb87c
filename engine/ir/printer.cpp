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

namespace {

// One line per node, in the given order (sources first); with `indent_loops`, indented two
// spaces per loop or branch open at the node (RANGE and IF open one, END and ENDIF close it).
std::string print_nodes(const std::vector<UOpPtr>& nodes, bool indent_loops) {
  std::unordered_map<const UOp*, size_t> ids;
  std::string out;
  size_t depth = 0;
  for (const UOpPtr& u : nodes) {
    size_t id = ids.size();
    ids.emplace(u.get(), id);
    bool closes = u->op() == Op::End || u->op() == Op::EndIf;
    if (indent_loops && closes && depth > 0) --depth;
    out += std::string(2 * depth, ' ');
    out += fmt::format("%{} = {} {}", id, op_name(u->op()), u->dtype().str());
    for (size_t i = 0; i < u->src().size(); ++i)
      out += fmt::format("{}%{}", i ? ", " : " ", ids.at(u->src(i).get()));
    if (!u->arg().is_none()) out += " : " + u->arg().str();
    out += '\n';
    if (indent_loops && (u->op() == Op::Range || u->op() == Op::If)) ++depth;
  }
  return out;
}

} // namespace

std::string print_graph(const UOpPtr& root) { return print_nodes(toposort(root), false); }

std::string print_program(const std::vector<UOpPtr>& program) { return print_nodes(program, true); }

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
