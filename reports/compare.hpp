// Comparing two runs: every workload, kernel and suite benchmark both runs measured, matched by
// identity (a kernel by its AST hash), with its change and a noise-aware verdict (stats.hpp);
// what only one run measured, listed apart; and what the reader must know first (different
// devices, a machine whose reference benchmarks moved, unfinished runs).
#pragma once

#include <string>
#include <vector>

#include "reports/run_data.hpp"
#include "reports/stats.hpp"

namespace beamlab::reports {

struct ComparedRow {
  Measurement baseline, candidate;
  Delta delta;
  const std::string& name() const { return candidate.name; }
  Section section() const { return candidate.section; }
};

struct Comparison {
  RunData baseline, candidate;
  VerdictRule rule;
  int history_runs = 0; ///< the earlier runs the history held (floors from it where it could)
  bool same_device = true;
  /// Things both runs measured: by section, then worst change first.
  std::vector<ComparedRow> rows;
  std::vector<Measurement> only_baseline, only_candidate;
  /// For the top of the report, most important first.
  std::vector<std::string> warnings;

  struct Counts {
    int regressions = 0, improvements = 0, unchanged = 0, unknown = 0, incomparable = 0;
  };
  Counts counts() const;
  /// "2 regressions, 1 improvement, 18 within noise".
  std::string counts_text() const;
  /// Where the floors came from: "The history held 12 earlier bench runs on the candidate's
  /// device: 40 of 47 measurements have their own floor, the rest 5.0%."
  std::string history_text() const;
  /// Regressions whose change exceeds `pct` percent.
  std::vector<const ComparedRow*> regressions_above(double pct) const;
};

/// Compares two runs, each measurement's floor from `history` where it holds enough runs of it.
/// A UserError naming both when they have nothing in common.
Comparison compare_runs(RunData baseline, RunData candidate, const VerdictRule& rule,
                        const History& history = {});

/// How many earlier bench runs a stored comparison's history reads by default.
inline constexpr int kDefaultHistoryWindow = 30;

/// Runs `baseline` and `candidate` of `db` compared with the history of the newest
/// `history_window` bench runs on the candidate's device (0: none): what `beamlab report` and
/// the GUI's Compare do.
Comparison compare_stored(db::Database& db, int64_t baseline, int64_t candidate,
                          const VerdictRule& rule, int history_window);

} // namespace beamlab::reports
