// The statistics behind a report's verdicts: each measured thing has repeated timing samples in
// both runs, and a change counts only when it is both larger than the noise those samples show
// and unlikely to be chance.
//
// The rule (VerdictRule, and the Method section every report prints):
//   change    = median(candidate) / median(baseline) - 1
//   noise     = the larger of the two runs' interquartile range / median
//   threshold = max(noise, min_change)        (min_change 5% unless set)
//   a regression (improvement) when change > threshold (< -threshold) and a two-sided
//   Mann-Whitney U test of the two sample sets gives p < alpha. With too few samples for the
//   test to reach alpha at all (2 / C(na + nb, na) >= alpha: 3 a side for 0.05), the band
//   alone decides and the row says so.
// The band keeps run-to-run scatter from counting; the rank test keeps a lucky median of a few
// samples from counting; neither assumes the samples are normal.
#pragma once

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

enum class Verdict { regression, improvement, unchanged, unknown };
const char* to_string(Verdict v);

struct VerdictRule {
  double alpha = 0.05; ///< the rank test's significance level
  /// Changes at most this large (relative) never count: runs of the same code on a shared
  /// machine drift apart by a few percent (clocks, neighbours, placement), and no single run's
  /// samples show that drift.
  double min_change = 0.05;
};

/// A measured thing's change between two runs, and the verdict on it.
struct Delta {
  SampleStats baseline, candidate;
  double change = 0; ///< relative: +0.2 is 20% slower
  double noise = 0;  ///< the larger relative IQR of the two
  double threshold = 0;
  double p = 1;
  bool tested = false; ///< the rank test could reach alpha (else the band alone decided)
  Verdict verdict = Verdict::unknown;
};

Delta compare_samples(const std::vector<double>& baseline, const std::vector<double>& candidate,
                      const VerdictRule& rule);

/// The rule in one sentence, for a report's Method section.
std::string describe_rule(const VerdictRule& rule);

} // namespace beamlab::reports
