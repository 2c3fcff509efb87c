// Statistics of timing samples, in one place for the engine's profiles, the tuner's verdicts,
// the reports and the GUI.
#pragma once

#include <vector>

namespace beamlab {

/// The q-quantile of `v` (linear interpolation between order statistics; 0 when empty).
double quantile(std::vector<double> v, double q);

/// The interquartile range relative to the median: the noise of one set of samples.
double relative_spread(const std::vector<double>& v);

} // namespace beamlab
