// Sample statistics; see statistics.hpp.
#include "engine/support/statistics.hpp"

#include <algorithm>

namespace beamlab {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double relative_spread(const std::vector<double>& v) {
  double m = quantile(v, 0.5);
  return m > 0 ? (quantile(v, 0.75) - quantile(v, 0.25)) / m : 0;
}

} // namespace beamlab
