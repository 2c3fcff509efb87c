// The roofline view; see roofline_view.hpp.
#include "gui/roofline_view.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <QCursor>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QToolTip>
#include <QVBoxLayout>

#include "gui/program.hpp"
#include "gui/style.hpp"
#include "tuner/store/device.hpp"
#include "tuner/store/journal.hpp"

namespace beamlab::gui {

RoofLineView::RoofLineView(QWidget* parent) : QWidget(parent) {
  view_ = new QChartView(new QChart);
  view_->setRenderHint(QPainter::Antialiasing);
  message_ = new QLabel;
  message_->setWordWrap(true);
  auto* v = new QVBoxLayout(this);
  v->addWidget(message_);
  v->addWidget(view_, 1);
  clear();
}

QList<QPointF> RoofLineView::candidate_positions() const {
  return candidates_ ? candidates_->points() : QList<QPointF>{};
}

QList<QPointF> RoofLineView::winner_position() const {
  return winner_ ? winner_->points() : QList<QPointF>{};
}

QStringList RoofLineView::roof_names() const {
  QStringList names;
  for (QAbstractSeries* s : view_->chart()->series())
    if (s->type() == QAbstractSeries::SeriesTypeLine) names << s->name();
  return names;
}

QString RoofLineView::title() const { return view_->chart()->title(); }

void RoofLineView::clear() {
  QChart* chart = view_->chart();
  clear_chart(chart);
  chart->setTitle({});
  candidates_ = winner_ = over_ = nullptr;
  message_->setText("Open a kernel to see its candidates on the roofline.");
}

void RoofLineView::set_data(const TuningDetail& d, const std::vector<KernelRow>& run) {
  clear();
  QChart* chart = view_->chart();
  const db::Kernel& k = d.row.kernel;
  if (!d.device || !d.device->limits) {
    message_->setText("The device of this run has no measured limits (a tuning run measures "
                      "them on its first use of the device; `beamlab device --measure` does now).");
    return;
  }
  if (k.flops <= 0 || k.bytes <= 0) {
    message_->setText(QString::fromStdString(k.name) +
                      " does no arithmetic on data (a copy): it has no place on a roofline.");
    return;
  }
  const MachineLimits& limits = *d.device->limits;
  KernelTraffic traffic = tuner::traffic_of(k);
  double peak = limits.fma_f32_gflops;
  const MemoryLevel& fits = limits.level_for(k.bytes);
  double write_share = traffic.written_bytes ? static_cast<double>(*traffic.written_bytes) /
                                                   static_cast<double>(k.bytes)
                                             : 1.0 / 3;
  double ai = static_cast<double>(k.flops) / static_cast<double>(k.bytes);
  auto gflops = [](int64_t flops, double ms) { return static_cast<double>(flops) / (ms * 1e6); };
  candidates_ = new QScatterSeries;
  candidates_->setName("candidates (median)");
  candidates_->setColor(status_color(StatusClass::ok));
  candidates_->setMarkerSize(8);
  winner_ = new QScatterSeries;
  winner_->setName(tuner::tried_by_hand(d.row.tuning) ? "fastest plan tried by hand"
                                                      : "winner (on its candidate)");
  winner_->setMarkerShape(QScatterSeries::MarkerShapeStar);
  winner_->setMarkerSize(22);
  winner_->setColor(QColor(0xd6, 0x27, 0x28));
  auto* others = new QScatterSeries;
  others->setName("other kernels' winners");
  others->setColor(QColor(0xb0, 0xb0, 0xb0));
  others->setMarkerSize(7);
  // A figure over its roof is impossible unless the limits were measured low (under load) or
  // the data is reused from a closer level than its size suggests: such points are drawn in
  // their own series, never passed off as reaching the roof.
  over_ = new QScatterSeries;
  over_->setName("over its roof (!): hover for why");
  over_->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  over_->setColor(QColor(0xff, 0x8c, 0x00));
  over_->setMarkerSize(10);
  std::vector<int> candidate_seqs, over_seqs; // point index -> candidate seq (-1: a kernel)
  std::vector<int64_t> other_tunings, over_tunings;
  auto over_roof = [&](const KernelTraffic& t, double ms) {
    std::optional<Roof> r = roofline(limits, t, ms);
    return r && !r->over_note().empty();
  };
  double lo_x = ai, hi_x = ai, lo_y = peak, hi_y = peak;
  auto extend = [&](double x, double y) {
    lo_x = std::min(lo_x, x), hi_x = std::max(hi_x, x);
    lo_y = std::min(lo_y, y), hi_y = std::max(hi_y, y);
  };
  // Every point is a median, the winner's too (its tuning's winner_ms): one statistic, so the
  // winner sits on its own candidate.
  for (const db::CandidateRow& c : d.candidates) {
    double ms = median_ms(c);
    if (ms <= 0 || (c.status != "ok" && c.status != "slow")) continue;
    double y = gflops(k.flops, ms);
    if (over_roof(traffic, ms)) {
      over_->append(ai, y);
      over_seqs.push_back(c.seq), over_tunings.push_back(0);
    } else {
      candidates_->append(ai, y);
      candidate_seqs.push_back(c.seq);
    }
    extend(ai, y);
  }
  // The winner is starred on its own candidate's point (its search samples' median, as every
  // point); the verdict below quotes the tuning's figure for it, the final rounds' median.
  if (d.row.tuning.winner_ms && *d.row.tuning.winner_ms > 0) {
    double ms = *d.row.tuning.winner_ms;
    for (const db::CandidateRow& c : d.candidates)
      if (c.opts == d.row.tuning.winner_opts && median_ms(c) > 0) ms = median_ms(c);
    double y = gflops(k.flops, ms);
    winner_->append(ai, y);
    extend(ai, y);
  }
  for (const KernelRow& r : run) {
    if (r.tuning.id == d.row.tuning.id || !r.tuning.winner_ms || r.kernel.flops <= 0 ||
        r.kernel.bytes <= 0)
      continue;
    double x = static_cast<double>(r.kernel.flops) / static_cast<double>(r.kernel.bytes);
    double y = gflops(r.kernel.flops, *r.tuning.winner_ms);
    if (over_roof(tuner::traffic_of(r.kernel), *r.tuning.winner_ms)) {
      over_->append(x, y);
      over_seqs.push_back(-1), over_tunings.push_back(r.tuning.id);
    } else {
      others->append(x, y);
      other_tunings.push_back(r.tuning.id);
    }
    extend(x, y);
  }
  // The roofs, one per memory level: bandwidth-bound below its ridge point, compute-bound
  // above, at the device's read bandwidths as `beamlab device` prints them, so every kernel's
  // chart has the same roofs and the other kernels' points mean the same on each. The level
  // this kernel's data fits in is drawn solid, the others dashed; the verdict above the chart
  // uses the roof at this kernel's own mix of reads and writes.
  lo_x /= 4, hi_x *= 4, lo_y /= 4, hi_y *= 2;
  std::vector<QLineSeries*> roofs;
  for (const MemoryLevel& m : limits.levels) {
    double level_bw = m.read_gbps;
    auto* roof = new QLineSeries;
    bool applies = m.name == fits.name;
    roof->setName(QString("%1 %2 GB/s%3")
                      .arg(QString::fromStdString(m.name))
                      .arg(level_bw, 0, 'f', 0)
                      .arg(applies ? " (fits)" : ""));
    QPen pen(applies ? QColor(Qt::black) : QColor(0x90, 0x90, 0x90));
    pen.setWidthF(applies ? 2.5 : 1.2);
    if (!applies) pen.setStyle(Qt::DashLine);
    roof->setPen(pen);
    double ridge = peak / level_bw;
    for (double x : {lo_x, std::clamp(ridge, lo_x, hi_x), hi_x})
      roof->append(x, std::min(peak, x * level_bw));
    lo_y = std::min(lo_y, lo_x * level_bw);
    roofs.push_back(roof);
  }
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
  std::vector<QXYSeries*> series(roofs.begin(), roofs.end());
  series.insert(series.end(), {others, candidates_, over_, winner_});
  for (QXYSeries* s : series) {
    chart->addSeries(s);
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  // Every point answers a hover (what it is, its figures, and for one over its roof why that
  // can be) and a click (it opens: a candidate's plan, another kernel's search).
  auto nearest = [](QScatterSeries* s, const QPointF& p) {
    int best = -1;
    double best_d = 0;
    for (int i = 0; i < s->count(); ++i) {
      double d =
          std::abs(std::log(s->at(i).y() / p.y())) + std::abs(std::log(s->at(i).x() / p.x()));
      if (best < 0 || d < best_d) best = i, best_d = d;
    }
    return best;
  };
  for (QScatterSeries* points : {candidates_, winner_, others, over_}) {
    connect(points, &QScatterSeries::hovered, this, [points](const QPointF& p, bool on) {
      if (!on) return QToolTip::hideText();
      QString why = points->name().startsWith("over")
                        ? "\nfaster than the measured limit (the roof at its own mix of reads "
                          "and writes, which can lie under the read-bandwidth line drawn): data "
                          "reused from a closer level than its size suggests, or limits "
                          "measured under load (`beamlab device --measure` re-measures)"
                        : QString();
      QToolTip::showText(QCursor::pos(), QString("%1: %2 GFLOP/s at %3 FLOP/byte%4")
                                             .arg(points->name())
                                             .arg(p.y(), 0, 'f', 1)
                                             .arg(p.x(), 0, 'g', 3)
                                             .arg(why));
    });
  }
  auto clicks = [this, nearest](QScatterSeries* s, std::vector<int> seqs,
                                std::vector<int64_t> tunings) {
    connect(s, &QScatterSeries::clicked, this, [=, this](const QPointF& p) {
      int i = nearest(s, p);
      if (i < 0) return;
      if (!seqs.empty() && seqs[size_t(i)] >= 0)
        Q_EMIT candidate_clicked(seqs[size_t(i)]);
      else if (!tunings.empty() && tunings[size_t(i)] > 0)
        Q_EMIT tuning_clicked(tunings[size_t(i)]);
    });
  };
  clicks(candidates_, candidate_seqs, {});
  clicks(others, {}, other_tunings);
  clicks(over_, over_seqs, over_tunings);
  chart->setTitle(QString("Roofline of %1: FMA peak %2 GFLOP/s, roofs at read bandwidth "
                          "(%3 threads)")
                      .arg(QString::fromStdString(k.name))
                      .arg(peak, 0, 'f', 0)
                      .arg(limits.threads));
  std::optional<Roof> roof =
      d.row.tuning.winner_ms ? roofline(limits, traffic, *d.row.tuning.winner_ms) : std::nullopt;
  QString verdict =
      roof
          ? QString("the winner (median %1 ms in the final rounds) reaches %2% of its roof at "
                    "that intensity, "
                    "%3 GB/s at its mix of reads and writes (bound: %4)%5")
                .arg(*d.row.tuning.winner_ms, 0, 'g', 3)
                .arg(100 * roof->fraction, 0, 'f', 1)
                .arg(fits.bandwidth_for(write_share), 0, 'f', 0)
                .arg(QString::fromStdString(roof->bound))
                .arg(roof->over_note().empty() ? QString()
                                               : "\n! " + QString::fromStdString(roof->over_note()))
          : QString("no winner yet");
  QString over = over_->count() > 0
                     ? QString(" <span style='color:#b86e00'>%1 point(s) over their roof "
                               "(orange squares): hover one for why.</span>")
                           .arg(over_->count())
                     : QString();
  // Every candidate the search journaled is counted, as Runs counts them; only those timed and
  // correct have a point.
  auto drawn =
      static_cast<int>(candidates_->count() + std::count_if(over_seqs.begin(), over_seqs.end(),
                                                            [](int seq) { return seq >= 0; }));
  auto total = static_cast<int>(d.candidates.size());
  std::map<std::string, int> why; // the statuses of those without a point
  for (const db::CandidateRow& c : d.candidates)
    if ((c.status != "ok" && c.status != "slow") || median_ms(c) <= 0) ++why[c.status];
  QStringList parts;
  for (const auto& [status, n] : why) parts << QString("%1 %2").arg(n).arg(qstr(status));
  QString not_drawn = total > drawn
                          ? QString(" (%1 not drawn: %2)").arg(total - drawn).arg(parts.join(", "))
                          : QString();
  message_->setText(QString("%1 candidates, %2 drawn at their median%3, at %4 FLOP/byte; its %5 "
                            "of data fit in %6; %7.%8")
                        .arg(total)
                        .arg(drawn)
                        .arg(not_drawn)
                        .arg(ai, 0, 'g', 3)
                        .arg(QString::fromStdString(format_bytes(k.bytes)))
                        .arg(QString::fromStdString(fits.name))
                        .arg(verdict.toHtmlEscaped().replace("\n", "<br>"), over));
}

} // namespace beamlab::gui
