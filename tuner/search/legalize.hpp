// A plan tuned for one kernel, rewritten for another kernel of the same structure (a warm
// start's seed; see tuner/store/warm_start.hpp).
//
// Kernels of one structure (structure.hpp) start with the same axes in the same order, so a
// plan's first Opt names the same axis in both. Later ones may not: an UPCAST by a whole extent
// (16 of 16) removes its axis in one kernel and leaves an outer loop of 2 in the other (16 of
// 32), and every axis after it moves. So each axis carries a label, its lineage from the
// kernel's own axes (an axis split keeps its label; the new block loop of TILE, THREAD or GROUP
// gets its parent's label and the step), followed through both kernels as the Opts apply, and
// each Opt of the plan is sent to the axis with its label in the new kernel. An Opt that does
// not apply there takes the nearest amount that does (opt_amounts, by ratio; the lane and size
// caps of the search count as not applying), else it is dropped. The result always applies.
#pragma once

#include <vector>

#include "tuner/search/search.hpp"

namespace beamlab::tuner {

/// A plan as legalize_plan rewrote it.
struct LegalizedPlan {
  std::vector<Opt> opts; ///< applies to the new kernel, within the caps (may be empty)
  int changed = 0;       ///< Opts that took another amount
  int dropped = 0;       ///< Opts with no counterpart or no amount that applies
};

/// `plan`, tuned for kernel `from`, for kernel `to` of the same structure, at `threads` cores
/// (THREAD and GROUP amounts), within `caps.max_lanes` and `caps.max_ops`. Fails when the two
/// kernels' axes differ in number or kind (they are not of one structure) or when the plan
/// does not apply to `from`.
Expected<LegalizedPlan> legalize_plan(const UOpPtr& from, const std::vector<Opt>& plan,
                                      const UOpPtr& to, int threads, const SearchSettings& caps);

} // namespace beamlab::tuner
