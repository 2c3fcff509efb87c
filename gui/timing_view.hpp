// Kernel timing of one program execution: a table of the kernels in program order, each with
// its model nodes, median time and spread, share of the whole (drawn as a bar) and throughput,
// sortable by any column, so "which layer costs what" reads the same on a 60-kernel network as
// on a matmul; and a timeline across cores of one traced execution, one row per OpenMP thread
// with every launch drawn as a span from that thread's start to its end, so parallel imbalance
// (ragged ends) and serial kernels (one busy row) show at a glance. Activating a row (Enter,
// double click) or clicking a span opens its kernel.
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

#include "gui/program.hpp"

class QLabel;
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

Q_SIGNALS:
  /// A kernel's bar or one of its spans was clicked.
  void kernel_activated(const QString& key_hex);

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
};

} // namespace beamlab::gui
