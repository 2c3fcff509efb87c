// Loop partitioning: a padded loop's whole iterations run without the padding's gates.
//
// PADTO runs a loop past its extent and gates every access that moves with it; a register tile
// over the padded axis (49 pixels as 7 tiles of 8) then tests the gate, lane by lane, inside the
// reduction, in every tile, though only the last one is partial (r_80_49_16_20_16 of MobileNetV2:
// seven masked scalar loads and their selects beside 16 FMAs a step). As TVM's LoopPartition and
// Halide's loop partitioning do, the loop is cut where the gates change: the iterations where
// every gate inside a reduction's body holds for all lanes (the steady part) run as a copy of the
// kernel with those gates folded away, the iterations before and after as copies of their own,
// where the gates fold lane by lane (a constant mask; a lane that is never read drops its load).
//
// Only plain loops are cut (the parallel range is the runtime's, lanes are vectors), only for
// gates inside a reduction's body (where they run every step), and at most kMaxCopies copies of
// a store are made, each cut multiplying the kernel's code.
//
// A reduction over a symbolic axis unrolled by k (rounded up to ceil(n / k) steps, its reads
// gated or clamped at n and its padding the REDUCE's identity) is split the same way before
// that: its first n / k steps, where every such bound holds for all lanes, as a REDUCE with the
// bounds folded to true (plain vector loads), and the last step at most as one of its own,
// gated; the two combined by the REDUCE's op (a softmax over seq = 512: 1.2 ms, against 1.9
// with every step gated and 1.1 for the fixed-shape kernel, on 2 cores).
#pragma once

#include "engine/ir/uop.hpp"

namespace beamlab {

/// `ast` (a kernel AST: a SINK of STOREs) with its padded loops cut and its unrolled symbolic
/// reductions split (see above); `ast` itself when there is nothing to cut.
UOpPtr partition_loops(const UOpPtr& ast);

} // namespace beamlab
