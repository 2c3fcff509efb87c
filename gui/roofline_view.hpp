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
public:
  explicit RoofLineView(QWidget* parent = nullptr);
  /// Draws `detail`'s candidates (and `run`'s kernels, when given) on its device's roofline.
  void set_data(const TuningDetail& detail, const std::vector<KernelRow>& run);
  int candidate_points() const { return candidates_ ? candidates_->count() : 0; }
  bool has_winner() const { return winner_ && winner_->count() == 1; }
  QString message() const { return message_->text(); }

private:
  QChartView* view_;
  QLabel* message_;
  QScatterSeries *candidates_ = nullptr, *winner_ = nullptr;
};

} // namespace beamlab::gui
