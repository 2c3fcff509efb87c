// The statistics behind a report's verdicts: each measured thing has repeated timing samples in
// both runs, and a change counts only when it is both larger than the noise those samples show
// and unlikely to be chance.
//
// The rule (VerdictRule, and the Method section every report prints):
//   change    = median(candidate) / median(baseline) - 1
//   noise     = the larger of the two runs' interquartile range / median
//   floor     = the measurement's own run-to-run drift, where enough earlier runs measured it:
//               the upper fence (Q3 + 1.5 IQR) of the relative changes between consecutive
//               runs' medians, at least history_floor (1%); else min_change (5%)
//   threshold = max(noise, floor)
//   a regression (improvement) when change > threshold (< -threshold) and a two-sided
//   Mann-Whitney U test of the two sample sets gives p < alpha. With too few samples for the
//   test to reach alpha at all (2 / C(na + nb, na) >= alpha: 3 a side for 0.05), the band
//   alone decides and the row says so.
// The band keeps a run's own scatter from counting; the floor keeps run-to-run drift (clocks,
// neighbours, placement), which no single run's samples show, from counting; the rank test keeps
// a lucky median of a few samples from counting; none assumes the samples are normal. A history
// makes the floor each measurement's own, as rustc-perf's significance thresholds are: a
// steady kernel's 3% change can count, a bimodal one's 15% need not.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace beamlab::reports {

/// The order statistics of a sample set.
struct SampleStats {
  int n = 0;
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  /// The interquartile range over the median (0 without samples).
  double spread() const;
};

SampleStats describe(const std::vector<double>& samples);

/// The two-sided p-value of a Mann-Whitney U test that `a` and `b` come from the same
/// distribution: exact for small sets without ties, else the normal approximation with tie and
/// continuity corrections. 1 when either set is empty.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

/// The smallest two-sided p-value the test can give for sets of these sizes.
double min_attainable_p(int na, int nb);

/// `unknown`: a side has no samples. `incomparable`: both have, but timed by different means
/// (a tuning run's sandbox against a bench run's own timing), so their change is no verdict.
enum class Verdict { regression, improvement, unchanged, unknown, incomparable };
const char* to_string(Verdict v);
/// Whether the verdict judges a change (regression, improvement or within noise).
inline bool judged(Verdict v) { return v != Verdict::unknown && v != Verdict::incomparable; }

struct VerdictRule {
  double alpha = 0.05; ///< the rank test's significance level
  /// The floor for a measurement without a history: runs of the same code on a shared machine
  /// drift apart by a few percent, and no single run's samples show that drift.
  double min_change = 0.05;
  /// With a history, the floor is the measurement's own drift, but never below this.
  double history_floor = 0.01;
  /// A history needs the measurement in this many earlier runs (this many - 1 changes).
  int history_min_runs = 6;
};

/// A measurement's run-to-run drift as earlier runs showed it.
struct Drift {
  int runs = 0;     ///< the earlier runs that measured it
  double fence = 0; ///< Q3 + 1.5 IQR of max/min - 1 of consecutive runs' medians
};

/// The drift of a measurement whose medians in earlier runs were `medians` (in run order); none
/// with fewer than `min_runs` finite positive ones. A change is max/min - 1 of two consecutive
/// medians, so a step up and the same step down weigh the same; the fence ignores the few real
/// changes among them.
std::optional<Drift> drift_of(const std::vector<double>& medians, int min_runs);

/// A measured thing's change between two runs, and the verdict on it.
struct Delta {
  SampleStats baseline, candidate;
  double change = 0;    ///< relative: +0.2 is 20% slower
  double noise = 0;     ///< the larger relative IQR of the two
  double floor = 0;     ///< the drift floor (see VerdictRule)
  int history_runs = 0; ///< the earlier runs the floor came from (0: rule.min_change)
  double threshold = 0;
  double p = 1;
  bool tested = false; ///< the rank test could reach alpha (else the band alone decided)
  Verdict verdict = Verdict::unknown;
};

/// Judges `candidate` against `baseline`; `drift` (when known) sets the floor.
Delta compare_samples(const std::vector<double>& baseline, const std::vector<double>& candidate,
                      const VerdictRule& rule, const std::optional<Drift>& drift = std::nullopt);

/// The rule in one sentence, for a report's Method section.
std::string describe_rule(const VerdictRule& rule);

} // namespace beamlab::reports
