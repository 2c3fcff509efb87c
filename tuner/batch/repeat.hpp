// How repeatable a search is: the same batch run N times (`beamlab tune --repeat N`), then for
// each kernel the distinct plans its runs picked are timed together in this process in paired
// rounds (tuner/measure/fidelity.hpp). A repeat's winner is within noise of the best plan
// found when their paired 95% interval includes 1 or their ratio is under 1.05; the score is
// the share of (kernel, repeat) pairs that are.
#pragma once

#include <string>
#include <vector>

#include "tuner/batch/batch.hpp"

namespace beamlab::tuner {

struct RepeatKernel {
  std::string name;
  std::vector<std::string> winners; ///< per repeat, its plan's text
  std::vector<double> over_best;    ///< per repeat, its plan's time over the best plan's
  std::vector<bool> within;         ///< per repeat, within noise of the best
  int distinct = 0;                 ///< distinct plans among the repeats
  std::string error;                ///< why it couldn't be compared (failed in a repeat, ...)
};

struct RepeatStudy {
  std::vector<RepeatKernel> kernels;
  int within = 0, pairs = 0;
  double score() const { return pairs > 0 ? static_cast<double>(within) / pairs : 0; }
};

/// Compares the kernels of `reports` (one per repeat of the same batch, in key order).
RepeatStudy study_repeats(const std::vector<BatchReport>& reports, int threads);

} // namespace beamlab::tuner
