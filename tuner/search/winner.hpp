// The one place a kernel's winner is decided, on every path that searches and caches a plan
// (a batch's journaled search, BEAM while realizing, the GUI's live tuning):
//
//   1. the re-measurement: the finalists and the heuristic timed in interleaved rounds; the
//      fastest median of the undisturbed rounds wins, and its speedup over the heuristic (and
//      the runner-up) is paired by round, with a 95% interval (decide_by_rounds);
//   2. the in-process check: the winner and the heuristic timed again in the tuner's own process
//      as realize runs them; a winner slower there beyond noise is overruled and the
//      heuristic's plan kept (confirm_in_process);
//   3. plans tried by hand are not a search: the fastest median among them is the tuning's
//      best, with no speedup claimed (best_tried_by_hand).
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "tuner/measure/pool.hpp"
#include "tuner/search/search.hpp"

namespace beamlab::tuner {

/// Decides the winner of `r` from the re-measurement: `kept_rounds` holds each finalist's
/// median in every undisturbed round (0: it failed that round), `measured` the finalists that
/// ran correctly. Sets the winner, its time and the heuristic's, the finalists' order, the
/// speedup over the heuristic and the runner-up, the ties and the noise.
void decide_by_rounds(TuneResult& r, const std::map<int, std::vector<double>>& kept_rounds,
                      std::vector<int> measured);

/// The search's verdict timed again in this process (tuner/measure/fidelity.hpp) before it is
/// journaled or cached. Only a verdict the re-measurement reached (both timed there, in paired
/// rounds) is checked; a winner the real engine runs slower than the heuristic beyond noise is
/// overruled: the heuristic's plan wins, with no speedup.
void confirm_in_process(TuneResult& r, const KernelTask& task, const UOpPtr& ast, int threads,
                        WorkerPool& pool);

/// Among plans tried by hand (`tried`, the unoptimized reference excluded), the fastest median
/// of those that ran correctly: its index in `tried`, or none.
std::optional<size_t> best_tried_by_hand(const std::vector<Candidate>& tried);

} // namespace beamlab::tuner
