// Compare: two candidates of a search side by side (the Opt diff, the diff of their LLVM IR,
// and the timing delta against the noise of both sample sets), or two runs (every kernel they
// share, by kernel hash: tuned times, change, noise, verdict).
#pragma once

#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTableWidget>
#include <QTextEdit>
#include <QWidget>

#include "gui/store.hpp"

namespace beamlab::gui {

/// A line diff (longest common subsequence): each line of the merged text with ' ', '-' (only
/// in a) or '+' (only in b).
std::vector<std::pair<char, std::string>> line_diff(const std::string& a, const std::string& b);

/// The timing verdict of b against a: the relative change of the medians, the noise (the larger
/// interquartile range over median of the two) and whether the change lies outside it.
struct TimingDelta {
  double a_ms = 0, b_ms = 0, change = 0, noise = 0;
  bool significant = false;
};
TimingDelta timing_delta(const std::vector<double>& a, const std::vector<double>& b);

class CompareView : public QWidget {
  Q_OBJECT
public:
  explicit CompareView(QWidget* parent = nullptr);
  void set_database(const std::string& path) { db_path_ = path; }
  void set_tuning(const TuningDetail& d);
  void set_runs(const std::vector<RunRow>& runs);
  /// Compares candidates `a` and `b` (by seq) of the tuning shown.
  void compare_candidates(int a, int b);
  /// Compares runs `a` and `b` (by id).
  void compare_runs(int64_t a, int64_t b);
  QString summary() const { return summary_->text(); }
  QString code_diff() const { return diff_->toPlainText(); }
  QTableWidget* run_table() const { return runs_table_; }

Q_SIGNALS:
  void compared();

private:
  std::string db_path_;
  TuningDetail detail_;
  int code_serial_ = 0;
  QComboBox *cand_a_, *cand_b_, *run_a_, *run_b_;
  QLabel* summary_;
  QTextEdit* opts_diff_;
  QPlainTextEdit* diff_;
  QTableWidget* runs_table_;
};

} // namespace beamlab::gui
