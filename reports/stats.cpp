// Sample statistics, the Mann-Whitney U test and the verdict rule; see stats.hpp.
#include "reports/stats.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tuner/search/search.hpp"

namespace beamlab::reports {

double SampleStats::spread() const { return median > 0 ? (q3 - q1) / median : 0; }

SampleStats describe(const std::vector<double>& samples) {
  SampleStats s;
  s.n = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  s.median = beamlab::quantile(samples, 0.5);
  s.q1 = beamlab::quantile(samples, 0.25);
  s.q3 = beamlab::quantile(samples, 0.75);
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

namespace {

/// U of `a` against `b`: pairs with a above b, ties counting a half.
double u_statistic(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a)
    for (double y : b) u += x > y ? 1.0 : x == y ? 0.5 : 0.0;
  return u;
}

bool has_ties(std::vector<double> all) {
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) != all.end();
}

/// The number of orderings of na a's and nb b's giving each U = 0..na*nb, by the recurrence
/// f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u) (the last element is an a, or a b).
std::vector<double> u_counts(int na, int nb) {
  const int top = na * nb;
  // row[j] holds f(i, j, .) for the current i.
  std::vector<std::vector<double>> row(nb + 1, std::vector<double>(top + 1, 0.0));
  for (int j = 0; j <= nb; ++j) row[j][0] = 1; // i = 0: only U = 0
  for (int i = 1; i <= na; ++i) {
    std::vector<std::vector<double>> next(nb + 1, std::vector<double>(top + 1, 0.0));
    next[0][0] = 1;
    for (int j = 1; j <= nb; ++j)
      for (int u = 0; u <= top; ++u) next[j][u] = (u >= j ? row[j][u - j] : 0.0) + next[j - 1][u];
    row = std::move(next);
  }
  return row[nb];
}

double exact_p(double u, int na, int nb) {
  std::vector<double> counts = u_counts(na, nb);
  double total = 0, below = 0, above = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    total += counts[k];
    if (static_cast<double>(k) <= u) below += counts[k];
    if (static_cast<double>(k) >= u) above += counts[k];
  }
  return std::min(1.0, 2 * std::min(below, above) / total);
}

double normal_p(double u, const std::vector<double>& a, const std::vector<double>& b) {
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  const double n = na + nb;
  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  double ties = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  double variance = na * nb / 12.0 * ((n + 1) - ties / (n * (n - 1)));
  if (variance <= 0) return 1; // every sample equal
  double z = std::max(0.0, std::abs(u - na * nb / 2) - 0.5) / std::sqrt(variance);
  return std::erfc(z / std::sqrt(2.0));
}

} // namespace

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 1;
  double u = u_statistic(a, b);
  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  const bool small = a.size() * b.size() <= 900;
  if (small && !has_ties(all))
    return exact_p(u, static_cast<int>(a.size()), static_cast<int>(b.size()));
  return normal_p(u, a, b);
}

double min_attainable_p(int na, int nb) {
  if (na <= 0 || nb <= 0) return 1;
  // 2 / C(na + nb, na): the two most extreme orderings.
  double c = 1;
  for (int k = 1; k <= na; ++k) c = c * (nb + k) / k;
  return std::min(1.0, 2 / c);
}

const char* to_string(Verdict v) {
  switch (v) {
  case Verdict::regression: return "regression";
  case Verdict::improvement: return "improvement";
  case Verdict::unchanged: return "within noise";
  case Verdict::unknown: return "no data";
  case Verdict::incomparable: return "measured differently";
  }
  return "?";
}

std::optional<Drift> drift_of(const std::vector<double>& medians, int min_runs) {
  std::vector<double> valid; // a run without a usable time drops out of the series
  for (double m : medians)
    if (std::isfinite(m) && m > 0) valid.push_back(m);
  if (static_cast<int>(valid.size()) < std::max(min_runs, 2)) return std::nullopt;
  std::vector<double> changes;
  for (size_t i = 1; i < valid.size(); ++i) {
    auto [lo, hi] = std::minmax(valid[i - 1], valid[i]);
    changes.push_back(hi / lo - 1);
  }
  double q1 = beamlab::quantile(changes, 0.25), q3 = beamlab::quantile(changes, 0.75);
  Drift d;
  d.runs = static_cast<int>(valid.size());
  d.fence = q3 + 1.5 * (q3 - q1);
  return d;
}

Delta compare_samples(const std::vector<double>& baseline, const std::vector<double>& candidate,
                      const VerdictRule& rule, const std::optional<Drift>& drift) {
  Delta d;
  d.baseline = describe(baseline);
  d.candidate = describe(candidate);
  d.floor = drift ? std::max(drift->fence, rule.history_floor) : rule.min_change;
  d.history_runs = drift ? drift->runs : 0;
  if (d.baseline.n == 0 || d.candidate.n == 0 || d.baseline.median <= 0) return d;
  d.change = d.candidate.median / d.baseline.median - 1;
  d.noise = std::max(d.baseline.spread(), d.candidate.spread());
  d.threshold = std::max(d.noise, d.floor);
  d.p = mann_whitney_p(baseline, candidate);
  d.tested = min_attainable_p(d.baseline.n, d.candidate.n) < rule.alpha;
  const bool significant = !d.tested || d.p < rule.alpha;
  d.verdict = !significant || std::abs(d.change) <= d.threshold ? Verdict::unchanged
              : d.change > 0                                    ? Verdict::regression
                                                                : Verdict::improvement;
  return d;
}

std::string describe_rule(const VerdictRule& rule) {
  return fmt::format(
      "change = median(candidate) / median(baseline) - 1; noise = the larger of the two runs' "
      "interquartile range / median. A change counts as a regression or an improvement only "
      "when |change| exceeds both the noise and a floor, and a two-sided Mann-Whitney U test on "
      "the two runs' samples gives p < {:g} (with fewer samples than the test needs to reach "
      "that, marked \u2020, the noise band alone decides). The floor is the measurement's own "
      "run-to-run drift where at least {} earlier bench runs on this device measured it (the "
      "upper fence, Q3 + 1.5 IQR, of the changes between consecutive runs' medians; at least "
      "{:.1f}%), else {:.1f}%.",
      rule.alpha, rule.history_min_runs, rule.history_floor * 100, rule.min_change * 100);
}

} // namespace beamlab::reports
