// Kernel timing of one program execution: a bar chart of each kernel's median time (Qt
// Charts), and a timeline across cores of one traced execution, one row per OpenMP thread with
// every launch drawn as a span from that thread's start to its end, so parallel imbalance
// (ragged ends) and serial kernels (one busy row) show at a glance. Clicking a bar or a span
// activates its kernel.
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

#include "gui/program.hpp"

class QBarSet;
class QChartView;
class QHorizontalBarSeries;
class QLabel;
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

  /// The bar series: one bar set of one bar per kernel (kernel 0 at the top); null while a
  /// message is shown.
  QHorizontalBarSeries* bars() const { return bars_; }
  QBarSet* bar_set() const { return bar_set_; }
  QChartView* chart_view() const { return chart_view_; }
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
  QChartView* chart_view_ = nullptr;
  QLabel* timeline_title_ = nullptr;
  TimelineWidget* timeline_ = nullptr;
  QHorizontalBarSeries* bars_ = nullptr;
  QBarSet* bar_set_ = nullptr;
  std::vector<QString> keys_; ///< per kernel
};

} // namespace beamlab::gui
