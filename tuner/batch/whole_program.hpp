// Tuned is never slower: after a batch, each program of the corpus is timed as a whole with the
// batch's plans against the heuristic's, in this process, paired by round. A kernel's plan
// that wins alone in its sandbox can lose inside the program (its neighbours' data no longer in
// cache, a split that leaves threads idle between kernels), so where the whole is not faster
// beyond noise, each tuned kernel is timed in the program both ways and the plans that don't
// beat the heuristic's there are not kept: their cache entries go stale and the heuristic's
// plan is cached in their place. A program that what remains doesn't make faster (its paired
// estimate, not only beyond noise) keeps none.
#pragma once

#include <string>
#include <vector>

#include "tuner/batch/batch.hpp"
#include "tuner/batch/corpus.hpp"

namespace beamlab::tuner {

/// Checks every entry of `corpus` with the plans `report` holds, on `options.threads` threads;
/// reverts cache entries in `db` when `options.cache` writes. `rounds` paired rounds.
std::vector<ProgramCheck> check_programs(const Corpus& corpus, const BatchReport& report,
                                         const BatchOptions& options, db::Database& db,
                                         int rounds = 20);

} // namespace beamlab::tuner
