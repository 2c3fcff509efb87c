// Kernel timing of one program execution: a table of the kernels in program order, each with
// its model nodes, median time and spread, share of the whole (drawn as a bar) and throughput,
// sortable by any column, so "which layer costs what" reads the same on a 60-kernel network as
// on a matmul; and a timeline across cores of one traced execution, one row per OpenMP thread
// with every launch drawn as a span from that thread's start to its end, so parallel imbalance
// (ragged ends) and serial kernels (one busy row) show at a glance. Activating a row (Enter,
// double click) or clicking a span opens its kernel.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

#include "gui/program.hpp"

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QSplitter;
class QStackedWidget;

namespace beamlab::gui {

class TimelineWidget;

class TimingView : public QWidget {
  Q_OBJECT
public:
  explicit TimingView(QWidget* parent = nullptr);

  /// Draws `program`'s kernel times and its traced execution, replacing what was shown.
  void set_program(const ProgramProfile& program);
  /// Shows `message` instead of the charts.
  void show_message(const QString& message);

  /// One row per kernel, in program order until sorted; the columns are Column's. Empty while a
  /// message is shown.
  QTableWidget* table() const { return table_; }
  enum Column {
    kIndex,
    kKernel,
    kTime,
    kSpread,
    kShare,
    kGflops,
    kRoof,
    kTuned,
    kNodes,
    kOpts,
    kColumns
  };
  /// The summary above the table: the program, its total, and a warning when it was noisy.
  QString summary() const;
  /// Thread spans drawn on the timeline (every kernel's launches on every thread).
  int span_count() const;
  /// The keys of the `n` costliest kernels whose plan is no search's winner (nor a search's
  /// tie with the heuristic), costliest first: what "Tune the N costliest" asks for.
  QStringList costliest_untuned(int n) const;
  /// Sets N and presses "Tune the N costliest" (the tests' door).
  void tune_costliest(int n);

Q_SIGNALS:
  /// A kernel's bar or one of its spans was clicked.
  void kernel_activated(const QString& key_hex);
  /// "Tune the N costliest" was pressed: these kernels, costliest first.
  void tune_requested(const QStringList& keys_hex);

private:
  void activate(int kernel);

  QStackedWidget* stack_ = nullptr;
  QLabel* message_ = nullptr;
  QSplitter* charts_ = nullptr;
  QLabel* summary_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* timeline_title_ = nullptr;
  TimelineWidget* timeline_ = nullptr;
  std::vector<QString> keys_; ///< per kernel
  ProgramProfile program_;    ///< what is shown
  QSpinBox* top_n_ = nullptr;
  QPushButton* tune_top_ = nullptr;
  void update_tune_button();
};

} // namespace beamlab::gui
