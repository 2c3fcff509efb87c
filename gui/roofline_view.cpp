// The roofline view; see roofline_view.hpp.
#include "gui/roofline_view.hpp"

#include <algorithm>
#include <cmath>

#include <QLineSeries>
#include <QLogValueAxis>
#include <QVBoxLayout>

#include "gui/style.hpp"

namespace beamlab::gui {

RoofLineView::RoofLineView(QWidget* parent) : QWidget(parent) {
  view_ = new QChartView(new QChart);
  view_->setRenderHint(QPainter::Antialiasing);
  message_ = new QLabel("Open a kernel to see its candidates on the roofline.");
  message_->setWordWrap(true);
  auto* v = new QVBoxLayout(this);
  v->addWidget(message_);
  v->addWidget(view_, 1);
}

void RoofLineView::set_data(const TuningDetail& d, const std::vector<KernelRow>& run) {
  QChart* chart = view_->chart();
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  candidates_ = winner_ = nullptr;
  const db::Kernel& k = d.row.kernel;
  if (!d.device || !d.device->peak_gflops || !d.device->peak_gbps) {
    message_->setText("The device of this run has no measured peaks (a tuning run measures "
                      "them on its first use of the device).");
    return;
  }
  if (k.flops <= 0 || k.bytes <= 0) {
    message_->setText(QString::fromStdString(k.name) +
                      " does no arithmetic on data (a copy): it has no place on a roofline.");
    return;
  }
  double peak = *d.device->peak_gflops, bw = *d.device->peak_gbps;
  double ai = static_cast<double>(k.flops) / static_cast<double>(k.bytes);
  auto gflops = [](int64_t flops, double ms) { return static_cast<double>(flops) / (ms * 1e6); };
  candidates_ = new QScatterSeries;
  candidates_->setName("candidates of " + QString::fromStdString(k.name));
  candidates_->setColor(status_color(StatusClass::ok));
  candidates_->setMarkerSize(8);
  winner_ = new QScatterSeries;
  winner_->setName("winner");
  winner_->setMarkerShape(QScatterSeries::MarkerShapeStar);
  winner_->setMarkerSize(22);
  winner_->setColor(QColor(0xd6, 0x27, 0x28));
  auto* others = new QScatterSeries;
  others->setName("the run's other kernels (winners)");
  others->setColor(QColor(0xb0, 0xb0, 0xb0));
  others->setMarkerSize(7);
  double lo_x = ai, hi_x = ai, lo_y = peak, hi_y = peak;
  auto extend = [&](double x, double y) {
    lo_x = std::min(lo_x, x), hi_x = std::max(hi_x, x);
    lo_y = std::min(lo_y, y), hi_y = std::max(hi_y, y);
  };
  for (const db::CandidateRow& c : d.candidates) {
    double ms = best_ms(c);
    if (ms <= 0 || (c.status != "ok" && c.status != "slow")) continue;
    double y = gflops(k.flops, ms);
    candidates_->append(ai, y);
    extend(ai, y);
  }
  if (d.row.tuning.winner_ms && *d.row.tuning.winner_ms > 0) {
    double y = gflops(k.flops, *d.row.tuning.winner_ms);
    winner_->append(ai, y);
    extend(ai, y);
  }
  for (const KernelRow& r : run) {
    if (r.tuning.id == d.row.tuning.id || !r.tuning.winner_ms || r.kernel.flops <= 0 ||
        r.kernel.bytes <= 0)
      continue;
    double x = static_cast<double>(r.kernel.flops) / static_cast<double>(r.kernel.bytes);
    double y = gflops(r.kernel.flops, *r.tuning.winner_ms);
    others->append(x, y);
    extend(x, y);
  }
  // The roofs: bandwidth-bound below the ridge point, compute-bound above.
  lo_x /= 4, hi_x *= 4, lo_y /= 4, hi_y *= 2;
  auto* roof = new QLineSeries;
  roof->setName(QString("roofline: %1 GFLOP/s, %2 GB/s").arg(peak, 0, 'f', 1).arg(bw, 0, 'f', 1));
  roof->setColor(Qt::black);
  double ridge = peak / bw;
  for (double x : {lo_x, std::clamp(ridge, lo_x, hi_x), hi_x})
    roof->append(x, std::min(peak, x * bw));
  lo_y = std::min(lo_y, lo_x * bw);
  auto* ax = new QLogValueAxis;
  ax->setTitleText("arithmetic intensity (FLOP/byte)");
  ax->setRange(lo_x, hi_x);
  ax->setLabelFormat("%g");
  auto* ay = new QLogValueAxis;
  ay->setTitleText("GFLOP/s");
  ay->setRange(lo_y, hi_y);
  ay->setLabelFormat("%g");
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{roof, others, candidates_, winner_}) {
    chart->addSeries(s);
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  chart->setTitle("Roofline of " + QString::fromStdString(k.name));
  message_->setText(
      QString("%1 candidates at %2 FLOP/byte; the winner reaches %3% of the roof "
              "at that intensity.")
          .arg(candidates_->count())
          .arg(ai, 0, 'g', 3)
          .arg(winner_->count() ? 100 * winner_->at(0).y() / std::min(peak, ai * bw) : 0.0, 0, 'f',
               1));
}

} // namespace beamlab::gui
