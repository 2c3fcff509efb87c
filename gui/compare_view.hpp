// Compare: two candidates of a search side by side (the Opt diff, the diff of their LLVM IR,
// and the timing change with the regression report's verdict), or two runs as `beamlab report`
// compares them (every workload, kernel and suite benchmark they share: times, change, noise,
// p, verdict; what only one measured; warnings), which can be saved as a report file.
#pragma once

#include <optional>

#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextEdit>
#include <QWidget>

#include "gui/store.hpp"
#include "gui/workbench.hpp"

namespace beamlab::gui {

/// A line diff (longest common subsequence): each line of the merged text with ' ', '-' (only
/// in a) or '+' (only in b).
std::vector<std::pair<char, std::string>> line_diff(const std::string& a, const std::string& b);

class CompareView : public QWidget {
  Q_OBJECT
public:
  explicit CompareView(QWidget* parent = nullptr);
  /// Another database: nothing compared in the last one stays (its table, summary, report).
  void set_database(const std::string& path);
  void set_tuning(const TuningDetail& d);
  void set_runs(const std::vector<RunRow>& runs);
  /// Picks run `b` as B and, as A, the newest run before it of its kind (else the one before).
  void pick_run(int64_t b);
  /// Compares candidates `a` and `b` (by seq) of the tuning shown.
  void compare_candidates(int a, int b);
  /// Compares runs `a` (baseline) and `b` (candidate) by id.
  void compare_runs(int64_t a, int64_t b);
  /// Writes the last run comparison as a report, its format chosen by the file's suffix (.html,
  /// .md, .xml for JUnit). The one-line reason when there is none or the file can't be written.
  std::optional<QString> save_report(const QString& path) const;
  QString summary() const { return summary_->text(); }
  QString code_diff() const { return diff_->toPlainText(); }
  /// Diffs the two candidates' assembly (true) or LLVM IR (false).
  void diff_assembly(bool assembly) { diff_of_->setCurrentIndex(assembly ? 1 : 0); }
  QTableWidget* run_table() const { return runs_table_; }
  /// The candidates (seq) picked as A and B; -1 where none.
  std::pair<int, int> picked_candidates() const {
    auto seq = [](const QComboBox* c) { return c->count() ? c->currentData().toInt() : -1; };
    return {seq(cand_a_), seq(cand_b_)};
  }
  /// The runs picked as A (baseline) and B (candidate); 0 where none.
  std::pair<int64_t, int64_t> picked_runs() const {
    return {run_a_->currentData().toLongLong(), run_b_->currentData().toLongLong()};
  }

Q_SIGNALS:
  void compared();

private:
  /// The run to compare run index `b` (in runs_, newest first) against: index of A, or -1.
  int default_a(int b) const;

  std::string db_path_;
  TuningDetail detail_;
  std::vector<RunRow> runs_;
  int code_serial_ = 0, runs_serial_ = 0;
  QComboBox *cand_a_, *cand_b_, *run_a_, *run_b_;
  QLabel* summary_;
  QTextEdit* opts_diff_;
  QPlainTextEdit* diff_;
  QComboBox* diff_of_; ///< LLVM IR or assembly
  /// The last compared candidates' code (A, B), or the error compiling them.
  std::optional<std::pair<KernelCode, KernelCode>> codes_;
  std::string code_error_;
  void show_diff();
  QTableWidget* runs_table_;
  QTabWidget* tabs_;
  QPushButton* save_;
  std::optional<reports::Comparison> last_;
};

} // namespace beamlab::gui
