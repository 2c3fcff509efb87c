// The GUI and report stack works headless: a Qt Charts chart rendered offscreen into SVG
// with QtSvg, as the GUI and the HTML reports will.
#include <gtest/gtest.h>

#include <QApplication>
#include <QBuffer>
#include <QPainter>
#include <QSvgGenerator>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>

namespace {

TEST(DepsQt, ChartRendersToSvgOffscreen) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  int argc = 1;
  char name[] = "deps_test";
  char* argv[] = {name, nullptr};
  QApplication app(argc, argv);
  auto* series = new QLineSeries();
  series->append(0, 1.0);
  series->append(1, 0.5);
  auto* chart = new QChart();
  chart->addSeries(series);
  chart->setTitle("candidate times");
  QChartView view(chart);
  view.resize(320, 200);
  view.show(); // lays the chart out (offscreen) before it is rendered
  QApplication::processEvents();
  QBuffer svg;
  QSvgGenerator gen;
  gen.setOutputDevice(&svg);
  gen.setSize(QSize(320, 200));
  QPainter painter(&gen);
  view.render(&painter);
  painter.end();
  QByteArray out = svg.data();
  EXPECT_TRUE(out.contains("<svg")) << out.left(200).toStdString();
  EXPECT_TRUE(out.contains("candidate times"));
}

} // namespace
