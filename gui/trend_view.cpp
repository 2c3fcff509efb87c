// A measurement across bench runs; see trend_view.hpp.
#include "gui/trend_view.hpp"

#include <algorithm>

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QLineSeries>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include "engine/support/statistics.hpp"
#include "gui/style.hpp"

namespace beamlab::gui {

TrendView::TrendView(QWidget* parent) : QDialog(parent) {
  setWindowTitle("Trend across bench runs");
  chart_ = new QChartView(new QChart);
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->chart()->legend()->setAlignment(Qt::AlignBottom);
  note_ = new QLabel;
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* v = new QVBoxLayout(this);
  v->addWidget(chart_, 1);
  v->addWidget(note_);
  resize(900, 520);
}

void TrendView::set_error(const QString& message) {
  QChart* chart = chart_->chart();
  clear_chart(chart);
  chart->setTitle({});
  note_->setText("<span style='color:#d62728'>" + message.toHtmlEscaped() + "</span>");
}

void TrendView::set_trend(const Trend& trend) {
  QChart* chart = chart_->chart();
  clear_chart(chart);
  setWindowTitle("Trend of " + qstr(trend.name));
  chart->setTitle(QString("%1 across %2 bench run(s) on %3")
                      .arg(qstr(trend.name))
                      .arg(trend.points.size())
                      .arg(qstr(trend.device)));
  auto* median = new QLineSeries;
  median->setName("median of the run's samples");
  median->setPointsVisible(true);
  auto *low = new QLineSeries, *high = new QLineSeries;
  auto* band = new QAreaSeries(high, low);
  high->setParent(band); // the area series doesn't own its edges
  low->setParent(band);
  band->setName("interquartile range");
  band->setColor(QColor(0x1f, 0x77, 0xb4, 60));
  band->setBorderColor(Qt::transparent);
  auto* changes = new QScatterSeries;
  changes->setName("change point (beyond noise from the run before)");
  changes->setMarkerSize(17);
  changes->setColor(Qt::transparent);
  changes->setBorderColor(QColor(0xd6, 0x27, 0x28));
  auto* ax = new QCategoryAxis;
  ax->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  ax->setTitleText("bench run, oldest first");
  double top = 0;
  int regressions = 0, improvements = 0;
  for (size_t i = 0; i < trend.points.size(); ++i) {
    const TrendPoint& p = trend.points[i];
    double x = static_cast<double>(i + 1);
    double mid = quantile(p.samples_ms, 0.5);
    median->append(x, mid);
    low->append(x, quantile(p.samples_ms, 0.25));
    high->append(x, quantile(p.samples_ms, 0.75));
    top = std::max(top, quantile(p.samples_ms, 0.75));
    if (p.change == reports::Verdict::regression || p.change == reports::Verdict::improvement) {
      changes->append(x, mid);
      (p.change == reports::Verdict::regression ? regressions : improvements)++;
    }
    ax->append(QString("run %1").arg(p.run_id), x);
  }
  ax->setRange(0.5, static_cast<double>(trend.points.size()) + 0.5);
  auto* ay = new QValueAxis;
  ay->setTitleText("ms per run");
  ay->setRange(0, top > 0 ? top * 1.15 : 1);
  ay->applyNiceNumbers();
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{band, median, changes}) {
    chart->addSeries(s);
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  note_->setText(
      trend.points.size() < 2
          ? QString("Only %1 bench run on this device measured it: a trend needs two.")
                .arg(trend.points.size())
          : QString("Each run: the median of its samples (line) and their interquartile range "
                    "(band). Ringed: %1 regression(s) and %2 improvement(s) against the run "
                    "before, by the reports' noise-aware rule; the other steps are within noise.")
                .arg(regressions)
                .arg(improvements));
}

int TrendView::points(const QString& series) const {
  for (QAbstractSeries* s : chart_->chart()->series())
    if (s->name().startsWith(series))
      if (auto* xy = qobject_cast<QXYSeries*>(s)) return xy->count();
  return 0;
}

} // namespace beamlab::gui
