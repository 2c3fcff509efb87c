// The kernel view: one kernel's search in a run. Its axes coloured by kind for the Opt list
// being edited, the list itself (add, remove, type, or reset to the winner or the heuristic),
// the LLVM IR and assembly that list compiles to, the search's candidates, and the kernel's
// timing history over every run. Each edit compiles the code for reading in this process and
// measures the plan in a sandbox (HandBench), showing its time or why it failed.
#pragma once

#include <memory>

#include <QChartView>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QWidget>

#include "gui/code_map.hpp"
#include "gui/models.hpp"
#include "gui/workbench.hpp"

namespace beamlab::gui {

class KernelView : public QWidget {
  Q_OBJECT
public:
  explicit KernelView(QWidget* parent = nullptr);

  /// Shows `detail`; plans tried by hand are journaled in `db_path`.
  void set_tuning(const TuningDetail& detail, const std::string& db_path);
  /// Shows no kernel (another database was opened).
  void clear();
  bool has_kernel() const { return task_.has_value(); }
  const TuningDetail& detail() const { return detail_; }
  /// The Opt list as the editor holds it.
  std::vector<Opt> opts() const { return opts_; }
  /// Shows `opts` (a candidate picked elsewhere) and its code, without measuring it: Enter in
  /// the Opts text measures it as a plan tried by hand.
  void show_plan(const std::vector<Opt>& opts);
  /// Replaces the Opt list (as typing it does): updates the code and measures it.
  void try_opts(const std::vector<Opt>& opts);
  /// The last hand measurement's text ("0.123 ms (heuristic 0.2 ms)" or the reason).
  QString result_text() const { return result_->text(); }
  QString llvm_ir() const { return ir_->toPlainText(); }
  QString assembly() const { return asm_->toPlainText(); }
  QString axes_text() const { return axes_->text(); }
  /// The header: the kernel, its run and its times before and after tuning.
  QString title() const { return title_->text(); }
  CandidatesModel* candidates() const { return candidates_; }
  QTabWidget* tabs() const { return tabs_; }
  QChart* history_chart() const { return history_->chart(); }
  /// The side-by-side tab's loop annotations (one line per loop of the assembly).
  QStringList loop_annotations() const;
  /// Puts the side-by-side IR cursor on line `line`; the assembly follows to the same block.
  void follow_ir_line(int line);
  /// The assembly pane's current line (0-based) in the side-by-side tab.
  int side_assembly_line() const;
  /// Points of the history's series whose name starts with `series` ("tried by hand",
  /// "bench runs", "tuned", "heuristic").
  int history_points(const QString& series) const;
  /// The Candidates tab's strip of samples: one row per candidate shown (the heuristic, the
  /// winner, the selected one), every timed run a dot, its median and best marked.
  QChart* samples_chart() const { return samples_->chart(); }
  /// The strip's rows, bottom up: "#1 heuristic", "#7 winner", "#12 selected".
  QStringList sample_rows() const { return sample_rows_; }
  /// Shows candidate `seq`'s samples in the strip beside the heuristic's and the winner's (-1:
  /// theirs alone).
  void show_samples_of(int seq);

Q_SIGNALS:
  void code_ready();
  void measured(const QString& status);
  void candidate_activated(int seq);

private:
  void show_opts();
  void refresh_code();
  void measure();
  void update_history();
  void add_opt();
  void remove_opt();

  TuningDetail detail_;
  std::optional<KernelTask> task_;
  std::vector<Opt> opts_;
  std::shared_ptr<HandBench> bench_;
  std::string bench_path_;
  int code_serial_ = 0;

  QLabel *title_, *axes_, *result_;
  QListWidget* list_;
  QComboBox* op_;
  QSpinBox *axis_, *amount_;
  QLineEdit* text_;
  QTabWidget* tabs_;
  QPlainTextEdit *ir_, *asm_;
  QPlainTextEdit *side_ir_, *side_asm_; ///< the side-by-side tab's panes
  QListWidget* loops_;
  std::vector<AsmLoop> loop_data_;
  bool following_ = false; ///< a cursor move made by following the other pane
  void follow(QPlainTextEdit* from, QPlainTextEdit* to, bool from_ir);
  CandidatesModel* candidates_;
  QTableView* table_;
  QChartView* history_;
  QChartView* samples_;
  QStringList sample_rows_;
  int samples_selected_ = -1; ///< the candidate the strip shows beside the heuristic and winner
};

} // namespace beamlab::gui
