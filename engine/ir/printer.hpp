// Text forms of UOp graphs.
//
// print_graph writes one node a line in topological order, read back exactly by parse_graph
// (parser.hpp):
//     %0 = DEFINE_VAR index : ("x", 0, 10)
//     %1 = CONST index : 4
//     %2 = MUL index %0, %1
// to_expr renders integer index math in infix for people: "(((x*4)+y)//4)".
#pragma once

#include <string>
#include <vector>

#include "engine/ir/uop.hpp"

namespace beamlab {

/// Every node reachable from `root`, sources before users, in a deterministic order
/// (depth-first over sources in order). `root` is last.
std::vector<UOpPtr> toposort(const UOpPtr& root);

/// The graph's text form: one line per node, `root` last.
std::string print_graph(const UOpPtr& root);
/// A linearized kernel (linearize.hpp) in its program order, in the same form, each node
/// indented by the loops it runs in (for people; not read back).
std::string print_program(const std::vector<UOpPtr>& program);

/// Infix text of an expression: variables by name, ranges as r<axis>, constants as numbers;
/// ops without an infix form print as OP(src, ...).
std::string to_expr(const UOpPtr& u);

} // namespace beamlab
