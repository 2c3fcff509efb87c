// The SVG charts of the reports: every chart is parsed back with QXmlStreamReader (so it must be
// well-formed XML with an <svg> root), and the tests check the parsed elements: one bar or circle
// per valid input, bands only where given, geometry around the zero line, escaping, skipped
// non-finite values, byte-identical output, and the nice-ticks algorithm on random ranges.
#include "reports/svg.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <QByteArray>
#include <QString>
#include <QXmlStreamReader>
#include <gtest/gtest.h>

namespace beamlab::reports::svg {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

/// An element of a parsed chart with its attributes and its own (not its children's) text.
struct Element {
  std::string name, ns;
  std::map<std::string, std::string> attrs;
  std::string text;

  double number(const std::string& attr) const { return std::stod(attrs.at(attr)); }
  bool has_class(const std::string& c) const {
    auto it = attrs.find("class");
    return it != attrs.end() && it->second == c;
  }
};

/// A chart parsed with QXmlStreamReader, its elements in document order (the root first).
struct Doc {
  std::string error; ///< empty when the chart is well-formed
  std::vector<Element> elements;

  std::vector<const Element*> all(const std::string& name, const std::string& cls = "") const {
    std::vector<const Element*> out;
    for (const Element& e : elements)
      if (e.name == name && (cls.empty() || e.has_class(cls))) out.push_back(&e);
    return out;
  }
  std::vector<std::string> texts(const std::string& name) const {
    std::vector<std::string> out;
    for (const Element* e : all(name)) out.push_back(e->text);
    return out;
  }
};

Doc parse(const std::string& svg) {
  Doc doc;
  QXmlStreamReader reader(QByteArray::fromStdString(svg));
  std::vector<size_t> open;
  while (!reader.atEnd()) {
    reader.readNext();
    if (reader.isStartElement()) {
      Element e{reader.name().toString().toStdString(),
                reader.namespaceUri().toString().toStdString(),
                {},
                ""};
      for (const QXmlStreamAttribute& a : reader.attributes())
        e.attrs[a.qualifiedName().toString().toStdString()] = a.value().toString().toStdString();
      open.push_back(doc.elements.size());
      doc.elements.push_back(std::move(e));
    } else if (reader.isEndElement()) {
      open.pop_back();
    } else if (reader.isCharacters() && !open.empty()) {
      doc.elements[open.back()].text += reader.text().toString().toStdString();
    }
  }
  if (reader.hasError()) doc.error = reader.errorString().toStdString();
  return doc;
}

/// Parses `svg` and checks what every chart must be: well-formed, one <svg> root in the SVG
/// namespace with a size and a sans-serif font, no XML declaration, no non-finite number.
Doc parse_chart(const std::string& svg) {
  Doc doc = parse(svg);
  EXPECT_EQ(doc.error, "") << svg;
  EXPECT_TRUE(svg.starts_with("<svg ")) << svg;
  if (doc.elements.empty()) {
    ADD_FAILURE() << "no elements in " << svg;
    return doc;
  }
  const Element& root = doc.elements.front();
  EXPECT_EQ(root.name, "svg");
  EXPECT_EQ(root.attrs.count("width") + root.attrs.count("height") + root.attrs.count("viewBox"),
            3u);
  EXPECT_EQ(root.ns, "http://www.w3.org/2000/svg");
  EXPECT_EQ(root.attrs.count("font-family") ? root.attrs.at("font-family") : "", "sans-serif");
  for (const char* bad : {"nan", "inf"}) EXPECT_EQ(svg.find(bad), std::string::npos) << svg;
  return doc;
}

Bar bar(const std::string& label, double value, std::optional<double> band = std::nullopt) {
  return Bar{label, value, band, "#d62728", label + " changed"};
}

BarChartOptions bar_options() {
  return BarChartOptions{"Kernel times", "change of the median, %", "%", true, 720};
}

ScatterOptions scatter_options(bool log_axes = true) {
  return ScatterOptions{"Times", "baseline, ms", "candidate, ms", log_axes, true, 480, 480};
}

TEST(SvgEscape, EscapesMarkupAndControlCharacters) {
  EXPECT_EQ(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(escape("tab\tline\nbell\a"), "tab\tline\nbell ");
  EXPECT_EQ(escape("caf\xC3\xA9 \xE2\x80\xA6"), "caf\xC3\xA9 \xE2\x80\xA6"); // valid UTF-8 stays
  EXPECT_EQ(escape("bad\xFF"), "bad\xEF\xBF\xBD"); // invalid becomes U+FFFD
}

TEST(SvgNiceTicks, CoverRandomRangesWithNiceSteps) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::uniform_int_distribution<int> exponent(-4, 6);
  for (int trial = 0; trial < 2000; ++trial) {
    double scale = std::pow(10.0, exponent(rng));
    double a = unit(rng) * scale, b = unit(rng) * scale;
    double lo = std::min(a, b), hi = std::max(a, b);
    std::vector<double> ticks = nice_ticks(lo, hi, 6);
    ASSERT_GE(ticks.size(), 4u) << lo << " " << hi;
    ASSERT_LE(ticks.size(), 9u) << lo << " " << hi;
    double step = ticks[1] - ticks[0];
    double slack = 1e-6 * step;
    EXPECT_LE(ticks.front(), lo + slack) << lo << " " << hi;
    EXPECT_GE(ticks.back(), hi - slack) << lo << " " << hi;
    double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    bool nice = std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 ||
                std::abs(mantissa - 5) < 1e-6;
    EXPECT_TRUE(nice) << "step " << step << " for " << lo << " " << hi;
    for (size_t i = 1; i < ticks.size(); ++i)
      EXPECT_NEAR(ticks[i] - ticks[i - 1], step, slack) << lo << " " << hi;
    if (lo < 0 && hi > 0)
      EXPECT_TRUE(std::ranges::any_of(ticks, [&](double t) { return std::abs(t) < slack; }))
          << "no 0 tick for " << lo << " " << hi;
  }
}

TEST(SvgNiceTicks, KnownRangesAndDegenerateInput) {
  EXPECT_EQ(nice_ticks(0, 10, 6), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(-12, 23, 6), (std::vector<double>{-20, -10, 0, 10, 20, 30}));
  std::vector<double> point = nice_ticks(5, 5, 6);
  ASSERT_GE(point.size(), 2u);
  EXPECT_LT(point.front(), 5);
  EXPECT_GT(point.back(), 5);
  EXPECT_GE(nice_ticks(0, 0, 6).size(), 2u);
  EXPECT_TRUE(nice_ticks(nan, 1, 6).empty());
  EXPECT_TRUE(nice_ticks(0, inf, 6).empty());
}

TEST(SvgBarChart, OneBarPerFiniteValueAndBandsOnlyWhereGiven) {
  std::vector<Bar> bars = {bar("r_64_64", 20.3, 2.1), bar("E_4096", -7.5), bar("r_nan", nan, 1.0),
                           bar("r_inf", inf), bar("r_zero", 0, 0.5)};
  Doc doc = parse_chart(bar_chart(bars, bar_options()));
  EXPECT_EQ(doc.all("rect", "bar").size(), 3u);
  EXPECT_EQ(doc.all("rect", "band").size(), 2u);
  std::vector<std::string> labels = doc.texts("text");
  EXPECT_NE(std::ranges::find(labels, "+20.3%"), labels.end());
  EXPECT_NE(std::ranges::find(labels, "-7.5%"), labels.end());
  EXPECT_EQ(std::ranges::find(labels, "r_nan"), labels.end());
  EXPECT_EQ(std::ranges::find(labels, "r_inf"), labels.end());
}

TEST(SvgBarChart, ValueLabelsNeverShowASignedZero) {
  std::vector<Bar> bars = {bar("a", 25), bar("tiny_up", 0.01), bar("tiny_down", -0.01)};
  std::vector<std::string> texts = parse_chart(bar_chart(bars, bar_options())).texts("text");
  EXPECT_EQ(std::ranges::count(texts, "0.0%"), 2) << ::testing::PrintToString(texts);
  EXPECT_NE(std::ranges::find(texts, "+25.0%"), texts.end());
  BarChartOptions unsigned_options = bar_options();
  unsigned_options.signed_values = false;
  texts = parse_chart(bar_chart(bars, unsigned_options)).texts("text");
  EXPECT_NE(std::ranges::find(texts, "25.0%"), texts.end());
}

TEST(SvgBarChart, NegativeBarsGoLeftOfTheZeroLine) {
  Doc doc = parse_chart(bar_chart({bar("slower", 12), bar("faster", -30, 5)}, bar_options()));
  std::vector<const Element*> zero = doc.all("line", "zero"), bars = doc.all("rect", "bar");
  ASSERT_EQ(zero.size(), 1u);
  ASSERT_EQ(bars.size(), 2u);
  double zero_x = zero[0]->number("x1");
  EXPECT_NEAR(bars[0]->number("x"), zero_x, 0.06);
  EXPECT_GT(bars[0]->number("width"), 0);
  EXPECT_LT(bars[1]->number("x"), zero_x - 1);
  EXPECT_NEAR(bars[1]->number("x") + bars[1]->number("width"), zero_x, 0.11);
  // The band is centred on the zero line.
  std::vector<const Element*> band = doc.all("rect", "band");
  ASSERT_EQ(band.size(), 1u);
  EXPECT_NEAR(band[0]->number("x") + band[0]->number("width") / 2, zero_x, 0.11);
}

TEST(SvgBarChart, AxisCoversEveryValueAndBand) {
  std::vector<Bar> bars = {bar("a", 47), bar("b", -3, 61), bar("c", 0.4)};
  Doc doc = parse_chart(bar_chart(bars, bar_options()));
  std::vector<double> grid;
  for (const Element* g : doc.all("line", "grid")) grid.push_back(g->number("x1"));
  ASSERT_GE(grid.size(), 4u);
  ASSERT_LE(grid.size(), 9u);
  auto [first, last] = std::ranges::minmax(grid);
  std::vector<const Element*> rects = doc.all("rect");
  for (const Element* r : rects) {
    EXPECT_GE(r->number("x"), first - 0.11);
    EXPECT_LE(r->number("x") + r->number("width"), last + 0.11);
  }
}

TEST(SvgBarChart, EscapesLabelsIntoTitles) {
  std::string nasty = "r_<&>\"'_1";
  Bar b{nasty, 3, std::nullopt, "#1f77b4", ""};
  std::string svg = bar_chart({b}, bar_options());
  EXPECT_EQ(svg.find(nasty), std::string::npos);
  Doc doc = parse_chart(svg);
  std::vector<std::string> titles = doc.texts("title");
  EXPECT_NE(std::ranges::find(titles, nasty), titles.end());
  std::vector<std::string> texts = doc.texts("text");
  EXPECT_NE(std::ranges::find(texts, nasty), texts.end());
}

TEST(SvgBarChart, TruncatesLongLabelsWithTheFullTextOnHover) {
  std::string long_label(70, 'k');
  Doc doc = parse_chart(bar_chart({bar(long_label, 1.5)}, bar_options()));
  std::string shown = std::string(39, 'k') + "\xE2\x80\xA6";
  std::vector<std::string> texts = doc.texts("text");
  EXPECT_NE(std::ranges::find(texts, shown), texts.end());
  std::vector<std::string> titles = doc.texts("title");
  EXPECT_NE(std::ranges::find(titles, long_label), titles.end());
}

TEST(SvgBarChart, HeightGrowsWithTheRows) {
  auto height = [](int rows) {
    std::vector<Bar> bars;
    for (int i = 0; i < rows; ++i) bars.push_back(bar("k" + std::to_string(i), i));
    return parse_chart(bar_chart(bars, bar_options())).elements.front().number("height");
  };
  double per_row = (height(11) - height(1)) / 10;
  EXPECT_GE(per_row, 18);
  EXPECT_LE(per_row, 22);
}

TEST(SvgBarChart, NoDataWhenNothingIsFinite) {
  for (const std::vector<Bar>& bars : {std::vector<Bar>{}, std::vector<Bar>{bar("x", nan)}}) {
    Doc doc = parse_chart(bar_chart(bars, bar_options()));
    EXPECT_TRUE(doc.all("rect", "bar").empty());
    std::vector<std::string> texts = doc.texts("text");
    EXPECT_NE(std::ranges::find(texts, "no data"), texts.end());
  }
}

TEST(SvgBarChart, HostileInputStaysWellFormed) {
  std::vector<Bar> bars = {Bar{"ctl\x01\x1f bad\xC3 \xED\xA0\x80", 1e308, -1e308, "\"red", "<t>"},
                           Bar{std::string(80, '\xE2'), -1e308, std::nullopt, "", ""},
                           Bar{"\xE2\x80\xA6\xE2\x80\xA6", 1e-300, 1e-300, "", ""}};
  BarChartOptions options{"<title & more>", "\"axis\"", "'", false, nan};
  parse_chart(bar_chart(bars, options));
}

TEST(SvgScatter, OneCirclePerValidPointInsideThePlot) {
  std::vector<Point> points = {{0.5, 0.55, "#2ca02c", "k1"}, {12, 9, "", ""},
                               {0, 3, "", "zero x"},         {4, -1, "", "negative y"},
                               {nan, 1, "", "nan"},          {300, 310, "#d62728", "k <3>"}};
  Doc doc = parse_chart(scatter(points, scatter_options()));
  std::vector<const Element*> circles = doc.all("circle");
  ASSERT_EQ(circles.size(), 3u);
  const Element& root = doc.elements.front();
  for (const Element* c : circles) {
    EXPECT_GT(c->number("cx"), 0);
    EXPECT_LT(c->number("cx"), root.number("width"));
    EXPECT_GT(c->number("cy"), 0);
    EXPECT_LT(c->number("cy"), root.number("height"));
  }
  // Larger y is higher up.
  EXPECT_GT(circles[0]->number("cy"), circles[2]->number("cy"));
  std::vector<std::string> titles = doc.texts("title");
  EXPECT_NE(std::ranges::find(titles, "k <3>"), titles.end());
  EXPECT_EQ(std::ranges::find(titles, "zero x"), titles.end());
  // y = x dashed, and the two 10% lines.
  EXPECT_EQ(doc.all("line").size() - doc.all("line", "grid").size(), 3u);
}

TEST(SvgScatter, LinearAxesKeepNonPositivePoints) {
  std::vector<Point> points = {{0, 3, "", ""}, {4, -1, "", ""}, {2, 2, "", ""}, {inf, 1, "", ""}};
  Doc doc = parse_chart(scatter(points, scatter_options(false)));
  EXPECT_EQ(doc.all("circle").size(), 3u);
}

TEST(SvgScatter, NarrowAndSinglePointRanges) {
  for (const std::vector<Point>& points :
       {std::vector<Point>{{1.2, 1.5, "", ""}}, std::vector<Point>{{7, 7, "", ""}},
        std::vector<Point>{{1e-5, 2e-5, "", ""}, {1e5, 3e4, "", ""}}}) {
    Doc doc = parse_chart(scatter(points, scatter_options()));
    EXPECT_EQ(doc.all("circle").size(), points.size());
    EXPECT_GE(doc.all("line", "grid").size(), 4u); // at least two ticks on each axis
  }
}

TEST(SvgScatter, NoDataWithoutValidPoints) {
  for (const std::vector<Point>& points :
       {std::vector<Point>{}, std::vector<Point>{{-1, 2, "", ""}, {nan, nan, "", ""}}}) {
    Doc doc = parse_chart(scatter(points, scatter_options()));
    EXPECT_TRUE(doc.all("circle").empty());
    std::vector<std::string> texts = doc.texts("text");
    EXPECT_NE(std::ranges::find(texts, "no data"), texts.end());
  }
}

TEST(SvgLegend, OneSquareAndLabelPerItem) {
  Doc doc = parse_chart(legend({{"slower", "#d62728"}, {"faster & <fine>", "#2ca02c"}}));
  EXPECT_EQ(doc.all("rect").size(), 2u);
  EXPECT_EQ(doc.texts("text"), (std::vector<std::string>{"slower", "faster & <fine>"}));
  EXPECT_TRUE(parse_chart(legend({})).all("rect").empty());
}

TEST(SvgCharts, SameInputGivesIdenticalBytes) {
  std::vector<Bar> bars = {bar("a", 1.0 / 3, 0.2), bar("b", -2.0 / 3)};
  std::vector<Point> points = {{1.0 / 3, 2.0 / 7, "", ""}, {5, 6, "", "p"}};
  std::vector<Legend> items = {{"a", "#111"}};
  EXPECT_EQ(bar_chart(bars, bar_options()), bar_chart(bars, bar_options()));
  EXPECT_EQ(scatter(points, scatter_options()), scatter(points, scatter_options()));
  EXPECT_EQ(legend(items), legend(items));
}

} // namespace
} // namespace beamlab::reports::svg
