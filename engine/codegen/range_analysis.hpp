// Which loops a node's value varies with.
//
// The loops of a node are the RANGEs it reaches through its sources, minus the ones closed on
// the way: a REDUCE closes its reduce ranges (kernel ASTs), an END closes its range (kernel
// graphs). Both lowering (where accumulators are set) and linearization (which loop nest each
// node goes in) stand on this.
#pragma once

#include <unordered_map>
#include <vector>

#include "engine/ir/uop.hpp"

namespace beamlab {

/// A set of loops, outermost first (see nests_outside in linearize.hpp).
using LoopNest = std::vector<const UOp*>;

/// Memoized loop sets of the nodes of one graph.
class RangeAnalysis {
public:
  /// The loops `u`'s value varies with, outermost first.
  const LoopNest& of(const UOpPtr& u);

private:
  std::unordered_map<const UOp*, LoopNest> memo_;
  std::vector<UOpPtr> keep_; // memo keys stay alive, so no address is reused
};

} // namespace beamlab
