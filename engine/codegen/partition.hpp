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
#pragma once

#include "engine/ir/uop.hpp"

namespace beamlab {

/// `ast` (a kernel AST: a SINK of STOREs) with its padded loops cut (see above); `ast` itself
/// when no loop has a gated steady part.
UOpPtr partition_loops(const UOpPtr& ast);

} // namespace beamlab
