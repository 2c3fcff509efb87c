// A workload's (or a kernel's, or a suite entry's) time across every bench run of one device:
// each run's median joined by a line, its interquartile range as a band, and the runs that
// moved beyond noise from the run before (the reports' verdict) ringed, so a slow drift and a
// step both show, not only what two runs side by side say.
#pragma once

#include <QChartView>
#include <QDialog>
#include <QLabel>

#include "gui/store.hpp"

namespace beamlab::gui {

class TrendView : public QDialog {
  Q_OBJECT
public:
  explicit TrendView(QWidget* parent = nullptr);

  /// Shows `trend` (replacing what was shown).
  void set_trend(const Trend& trend);
  /// Shows why there is no trend to draw.
  void set_error(const QString& message);

  QChart* chart() const { return chart_->chart(); }
  /// The line under the chart: how many runs, which figure, what the rings mean.
  QString note() const { return note_->text(); }
  /// Points of the series whose name starts with `series` ("median", "change point").
  int points(const QString& series) const;

private:
  QChartView* chart_;
  QLabel* note_;
};

} // namespace beamlab::gui
