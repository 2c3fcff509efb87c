// Lowering a kernel AST to a kernel graph with explicit loops.
//
// A kernel AST (what the scheduler produces and the optimizer rewrites) is a SINK of STOREs
// whose values may contain REDUCE(value, ranges... : op) nodes and use RANGE nodes freely; it
// has no loops yet. lower_kernel turns it into the kernel graph the linearizer expects:
//   * each REDUCE becomes a register accumulator: set to the op's identity inside the loops
//     the result depends on, updated inside the reduce loops, read after them;
//   * every STORE is closed by the ENDs of the loops it runs in, innermost first.
// A RANGE node opens one loop, so a range that two REDUCEs reduce, or that stores in
// different loop nests share, is cloned (same extent, a fresh axis id) for each loop.
// Steps are named for BEAMLAB_PRINT_AFTER: "separate_reduce_ranges", "lower_reduce",
// "close_loops".
#pragma once

#include "engine/ir/uop.hpp"

namespace beamlab {

/// The kernel graph for a kernel AST (see above).
UOpPtr lower_kernel(const UOpPtr& ast);

} // namespace beamlab
