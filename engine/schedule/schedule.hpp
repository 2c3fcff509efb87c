// Scheduling: a tensor graph -> kernel ASTs in dependency order.
//
// Movement ops become index arithmetic: a kernel computes its output element at loop indices
// (r0, r1, ...) by walking the graph from the output down to BUFFERs, rewriting the indices
// through each RESHAPE/PERMUTE/EXPAND/PAD/SHRINK/FLIP it passes, so nothing is copied. Every
// elementwise op along the way is fused into the kernel. A REDUCE_AXIS becomes an in-kernel
// REDUCE over fresh reduce ranges, fused into its consumer when each of its results is then
// computed once: it is reached with one index vector per kernel, and the loops it doesn't vary
// with (the ones an EXPAND broadcast it over) nest inside the ones it does, so the code
// generator hoists it out of them (softmax and layernorm over the last axis are one kernel).
// Otherwise the reduction is realized into a buffer by a kernel of its own. So is an
// elementwise node computed from a reduction (a conv's bias, residual add and activation) when
// its reader would compute it more times than it has results (through a convolution's window,
// or inside a loop it doesn't vary with, as the next GEMM reads a GELU or a layernorm): it is
// computed once, with the reduction, and each read loads it. A node realized only to be padded
// (for a convolution or a pooling) is stored by its own kernel into the padded buffer's
// interior, with no copy; the plan fills the border once (Schedule::bordered).
//
// A kernel AST is a SINK of one STORE to DEFINE_GLOBAL 0 (the output); inputs are the next
// slots in first-use order. With buffers renumbered this way, the AST's hash is the kernel's
// stable identity across programs, runs and machines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ir/tensor_ops.hpp"

namespace beamlab {

struct ScheduleItem {
  UOpPtr ast;                  ///< SINK(STORE(INDEX(DEFINE_GLOBAL 0, ...), value))
  std::vector<UOpPtr> buffers; ///< the BUFFER bound to each DEFINE_GLOBAL slot; 0 is the output
  std::string name;            ///< kind and loop extents, e.g. "r_512_512_512"
  uint64_t key = 0;            ///< stable identity: the AST's hash
  /// The tensor-graph nodes this kernel computes, in the order it reached them: its root and
  /// everything fused into it (not the realized nodes it reads). A node fused into two kernels
  /// is in both. Front-ends name kernels from it (an ONNX model's node names).
  std::vector<UOpPtr> nodes;
  /// Per slot, whether a plan binds it to constants (a model's weights, or what a kernel run
  /// once made from them): empty until ExecutionPlan::prepare fills it. A real run reads them
  /// cold, a whole run of other kernels after their last use, so a tuner times the kernel with
  /// them evicted from the caches. Not part of the key.
  std::vector<bool> constant_slots;
};

/// A buffer whose kernel writes only its interior: a node padded for a convolution or pooling
/// is stored there by its producer, so the padding is never written by a kernel. It must hold
/// `fill` from its allocation on; buffers of one `layout` may share storage, others not.
struct BorderedBuffer {
  UOpPtr buffer;
  UOpPtr fill;        ///< a CONST of the buffer's dtype; null for zeros
  std::string layout; ///< shape, interior and fill in words (equal: the same border)
};

struct Schedule {
  std::vector<ScheduleItem> items; ///< dependencies first
  std::vector<UOpPtr> outputs;     ///< per root, the BUFFER holding it (row-major, root's shape)
  std::vector<BorderedBuffer> bordered; ///< intermediates with a border no kernel writes
};

/// The kernels that compute `roots` (tensor graphs; see tensor_ops.hpp).
Schedule create_schedule(const std::vector<UOpPtr>& roots);

/// A readable kernel name from its AST: "r_" (has a reduction) or "E_", then the extents of
/// its loops in nesting order.
std::string kernel_name(const UOpPtr& ast);

} // namespace beamlab
