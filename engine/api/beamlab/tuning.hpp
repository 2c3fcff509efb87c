// What a tuner needs from the engine beyond the Tensor API: a kernel in the text form a
// sandboxed worker receives, read back there, built with an Opt list and run on raw buffers.
//
//   KernelTask t = kernel_task(tensor.schedule().items[0]);   // tuner side
//   UOpPtr ast = *parse_graph(t.ast);                          // worker side
//   auto c = KernelCandidate::build(ast, opts, t.name);        // compile, then c->run(ptrs, n)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ir/parser.hpp"
#include "engine/ir/printer.hpp"
#include <beamlab/beamlab.hpp>

namespace beamlab {

struct KernelBufferSpec {
  DType dtype; ///< element type
  int64_t count = 0;
};

struct KernelTask {
  std::string name;
  uint64_t key = 0;
  std::string ast;                       ///< print_graph of the AST; parse_graph reads it back
  std::vector<KernelBufferSpec> buffers; ///< per DEFINE_GLOBAL slot; 0 is the output
  int64_t reduce_length = 1;             ///< elements combined into each output (tolerances)
};

KernelTask kernel_task(const ScheduleItem& item);

/// The product of the extents of an AST's reduce ranges (1 without reductions).
int64_t reduce_length(const UOpPtr& ast);

} // namespace beamlab
