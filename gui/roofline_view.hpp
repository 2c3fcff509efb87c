// The roofline: every candidate of a kernel as a point under the device's measured roofs
// (the FMA peak and each memory level's bandwidth, stored for the device; the level the
// kernel's data fits in drawn solid: it is the roof that applies), the winner highlighted, and the
// run's other kernels' winners in grey for context. Opts change how fast a kernel runs, not its
// work or traffic, so a kernel's candidates share one arithmetic intensity and stack vertically.
#pragma once

#include <QChartView>
#include <QLabel>
#include <QScatterSeries>
#include <QWidget>

#include "gui/store.hpp"

namespace beamlab::gui {

class RoofLineView : public QWidget {
  Q_OBJECT
public:
  explicit RoofLineView(QWidget* parent = nullptr);
  /// Draws `detail`'s candidates (and `run`'s kernels, when given) on its device's roofline.
  void set_data(const TuningDetail& detail, const std::vector<KernelRow>& run);
  /// Shows no kernel.
  void clear();
  int candidate_points() const { return candidates_ ? candidates_->count() : 0; }
  bool has_winner() const { return winner_ && winner_->count() == 1; }
  QString message() const { return message_->text(); }
  /// Points drawn above the roof that applies to them (flagged in their own series).
  int over_roof_points() const { return over_ ? over_->count() : 0; }
  /// The candidates' points and the winner's ((intensity, GFLOP/s); none: empty).
  QList<QPointF> candidate_positions() const;
  QList<QPointF> winner_position() const;
  /// The roofs' legend entries, and the chart's title.
  QStringList roof_names() const;
  QString title() const;

Q_SIGNALS:
  /// A candidate's point was clicked: candidate `seq` of the tuning shown.
  void candidate_clicked(int seq);
  /// Another kernel's point was clicked: its tuning.
  void tuning_clicked(qint64 tuning_id);

private:
  QChartView* view_;
  QLabel* message_;
  QScatterSeries *candidates_ = nullptr, *winner_ = nullptr, *over_ = nullptr;
};

} // namespace beamlab::gui
