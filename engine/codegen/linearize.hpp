// Linearization: a kernel graph in program order, with loops as RANGE ... END brackets.
//
// The kernel graph (the input of the code generator) is a SINK of the kernel's effects.
// Loops are explicit: RANGE(end) : (axis, kind) opens a loop and END(effects..., range) closes
// it once its effects are done; kind is "parallel" (split across cores by the runtime; at most
// one, outermost), "loop" or "reduce". LOAD(index, after...) and STORE(index, value, after...)
// take extra sources that order them: a register access inside a loop lists that loop's RANGE,
// a read of an accumulator after its loop lists the loop's END.
//
// linearize orders the nodes so that every node follows its sources and sits in exactly the
// loops its value varies with (and the loops those sit in): loop-invariant work is hoisted, and
// a reduction that no outer loop affects runs once, outside them.
#pragma once

#include <vector>

#include "engine/ir/uop.hpp"

namespace beamlab {

/// Every node reachable from `sink`, in program order (see above). A graph whose loops can't
/// be nested that way (a RANGE without END, a value used outside its loop) is an InternalError.
std::vector<UOpPtr> linearize(const UOpPtr& sink);

/// The axis id of a RANGE, from its (axis, kind) or plain axis arg.
int64_t range_axis(const UOp& range);

/// Whether loop `a` encloses loop `b` when both are open: the parallel range is outermost,
/// the others nest by axis id.
bool nests_outside(const UOp& a, const UOp& b);

} // namespace beamlab
