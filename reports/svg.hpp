// SVG charts for the performance reports: a horizontal bar chart (one row per kernel, e.g. the
// change of its median time with its noise band), a scatter plot (baseline vs candidate times on
// log axes) and a one-line legend.
//
// Each chart is one self-contained <svg> element without an XML declaration, so the HTML report
// can inline it and the Markdown report can save it as a .svg file. The output is well-formed
// XML (every text and attribute escaped) and deterministic: numbers are printed with fixed
// precision, elements in input order, and non-finite values are skipped, never printed.
// No dependencies beyond fmt and the standard library.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace beamlab::reports::svg {

/// XML-escapes text for element content and attribute values (& < > " '). Control characters
/// XML 1.0 cannot carry (all below U+0020 except tab, newline and carriage return) become spaces,
/// and bytes that aren't valid UTF-8 become U+FFFD, so any input gives well-formed XML.
std::string escape(std::string_view text);

/// Ticks at multiples of a "nice" step (1, 2 or 5 x 10^k) whose count is closest to `target`,
/// from the largest multiple <= lo to the smallest >= hi, so they cover [lo, hi] (and include 0
/// when the range does). An empty range is widened around its value; non-finite bounds give no
/// ticks.
std::vector<double> nice_ticks(double lo, double hi, int target);

/// One row of a bar chart.
struct Bar {
  std::string label;          ///< at the left, e.g. a kernel name; long ones end in an ellipsis
  double value = 0;           ///< e.g. a relative change in percent (+20.3) or a speedup
  std::optional<double> band; ///< half-width of a noise band around zero (2.1 means +-2.1)
  std::string color;          ///< CSS color of the bar, e.g. "#d62728"
  std::string tooltip;        ///< hover text of the row (the full label when empty)
};

struct BarChartOptions {
  std::string title;         ///< drawn at the top
  std::string axis_label;    ///< below the x axis, e.g. "change of the median, %"
  std::string value_suffix;  ///< after each bar's value label, e.g. "%" or "x"
  bool signed_values = true; ///< print "+" on positive values
  double width = 720;        ///< px
};

/// A horizontal bar chart, one row per bar in the given order (rows with a non-finite value are
/// skipped). Bars (class "bar") grow from a vertical zero line, left for negative values; each
/// row's noise band (class "band") is a light grey box around zero behind its bar. The x axis
/// has nice rounded ticks with grid lines and covers 0, every value and every band; each bar
/// ends in its value label (one decimal more than the tick labels, 1 to 3). The height grows
/// with the rows; the label column fits the longest label (at most 40 characters shown).
/// No bars: a small chart saying "no data".
std::string bar_chart(const std::vector<Bar>& bars, const BarChartOptions& options);

/// One point of a scatter plot.
struct Point {
  double x = 0, y = 0; ///< both > 0 on log axes (other points are skipped)
  std::string color;   ///< CSS color of the circle
  std::string tooltip; ///< hover text ("x, y" when empty)
};

struct ScatterOptions {
  std::string title, x_label, y_label;
  bool log_axes = true; ///< log10 axes with decade ticks (and 2, 5 ticks over < 2 decades)
  bool diagonal = true; ///< y = x (dashed) and light lines y = 1.1x and y = x/1.1
  double width = 480, height = 480;
};

/// A scatter plot (e.g. baseline ms on x vs candidate ms on y): one circle with a <title>
/// tooltip per point with finite coordinates (positive ones on log axes), in the given order.
/// The axes range over the data, padded; with `diagonal`, both axes get the same range.
/// No valid points: a small chart saying "no data".
std::string scatter(const std::vector<Point>& points, const ScatterOptions& options);

/// One entry of a legend.
struct Legend {
  std::string label, color;
};

/// A one-line legend (a colored square before each label) as its own small <svg>; an empty
/// one (zero size) for no items.
std::string legend(const std::vector<Legend>& items);

} // namespace beamlab::reports::svg
