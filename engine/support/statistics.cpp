// Sample statistics; see statistics.hpp.
#include "engine/support/statistics.hpp"

#include <algorithm>
#include <cmath>

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

namespace {

// Student's t quantile for a two-sided 95% interval with `df` degrees of freedom.
double t95(int df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  static_assert(sizeof(table) / sizeof(table[0]) == 30);
  if (df < 1) return INFINITY;
  return df <= 30 ? table[df - 1] : 1.96;
}

} // namespace

PairedRatio paired_ratio(const std::vector<double>& slow, const std::vector<double>& fast) {
  std::vector<double> logs;
  for (size_t r = 0; r < std::min(slow.size(), fast.size()); ++r)
    if (slow[r] > 0 && fast[r] > 0) logs.push_back(std::log(slow[r] / fast[r]));
  PairedRatio p;
  p.rounds = static_cast<int>(logs.size());
  if (logs.empty()) return p;
  double n = static_cast<double>(logs.size()), mean = 0, var = 0;
  for (double x : logs) mean += x / n;
  for (double x : logs) var += (x - mean) * (x - mean) / std::max(n - 1, 1.0);
  double half = logs.size() > 1 ? t95(p.rounds - 1) * std::sqrt(var / n) : INFINITY;
  p.estimate = std::exp(mean);
  p.lo = std::exp(mean - half);
  p.hi = std::exp(mean + half);
  return p;
}

std::vector<bool> disturbed_rounds(const std::vector<std::vector<double>>& rows, double factor) {
  size_t rounds = 0;
  for (const auto& row : rows) rounds = std::max(rounds, row.size());
  std::vector<std::vector<double>> ratios(rounds);
  for (const auto& row : rows) {
    std::vector<double> present;
    for (double x : row)
      if (x > 0) present.push_back(x);
    double m = quantile(present, 0.5);
    for (size_t r = 0; r < row.size(); ++r)
      if (row[r] > 0 && m > 0) ratios[r].push_back(row[r] / m);
  }
  std::vector<bool> out(rounds, false);
  for (size_t r = 0; r < rounds; ++r)
    out[r] = !ratios[r].empty() && quantile(ratios[r], 0.5) > factor;
  return out;
}

} // namespace beamlab
