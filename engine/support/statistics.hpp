// Statistics of timing samples, in one place for the engine's profiles, the tuner's verdicts,
// the reports and the GUI.
#pragma once

#include <vector>

namespace beamlab {

/// The q-quantile of `v` (linear interpolation between order statistics; 0 when empty).
double quantile(std::vector<double> v, double q);

/// The interquartile range relative to the median: the noise of one set of samples.
double relative_spread(const std::vector<double>& v);

/// How much faster one kernel is than another, from rounds in which both were timed back to
/// back (so a round's outside load touches both): the geometric mean of the per-round ratios
/// slow/fast and its 95% confidence interval (Student's t on the logarithms).
struct PairedRatio {
  double estimate = 1, lo = 1, hi = 1;
  int rounds = 0;
  /// The interval excludes 1: `fast` is faster beyond the rounds' noise. Otherwise a tie.
  bool significant() const { return rounds >= 2 && lo > 1; }
};
/// Pairs `slow[r]` with `fast[r]`; rounds where either is missing (<= 0) are skipped.
PairedRatio paired_ratio(const std::vector<double>& slow, const std::vector<double>& fast);

/// The rounds outside load disturbed: those in which the kernels timed (`rows[k][r]`: kernel k's
/// time in round r, <= 0 when missing) ran, at the median over kernels, more than `factor`
/// times their own median over the rounds.
std::vector<bool> disturbed_rounds(const std::vector<std::vector<double>>& rows,
                                   double factor = 1.25);

} // namespace beamlab
