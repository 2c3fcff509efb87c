// SVG charts for the performance reports (see svg.hpp): string building with fixed-precision
// numbers and estimated text widths (no font metrics), so the same input gives the same bytes
// on every machine.
#include "reports/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <utility>

#include <fmt/format.h>

namespace beamlab::reports::svg {
namespace {

// Average advance of an 11px character, generous for DejaVu Sans (the widest common default
// sans-serif) so that labels never spill out of their column.
constexpr double char_px = 7;
constexpr size_t max_label_chars = 40;
constexpr double pad = 8;
constexpr double title_px = 22;
constexpr double row_px = 20;
constexpr double bar_px = 12;
constexpr double min_plot_px = 120;
constexpr const char* grid_color = "#e5e5e5";
constexpr const char* axis_color = "#555";
constexpr const char* text_color = "#222";
constexpr const char* band_color = "#e8e8e8";
constexpr const char* default_color = "#4c78a8";
constexpr const char* ellipsis = "\xE2\x80\xA6"; // U+2026 in UTF-8

/// Fixed precision, never "-0.0".
std::string num(double v, int decimals = 1) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  bool zero = s.find_first_not_of("-0.") == std::string::npos;
  if (zero && s.starts_with('-')) s.erase(0, 1);
  return s;
}

/// Whole pixels for the root's size, so width, height and viewBox agree.
std::string whole(double v) { return fmt::format("{:.0f}", std::ceil(v)); }

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// Characters (UTF-8 code points) in `s`.
size_t char_count(std::string_view s) {
  return static_cast<size_t>(std::ranges::count_if(s, [](char c) { return !is_continuation(c); }));
}

double text_px(std::string_view s) { return static_cast<double>(char_count(s)) * char_px; }

/// At most `max_chars` characters, the last an ellipsis when cut (never inside a code point).
std::string truncate(std::string_view s, size_t max_chars) {
  if (char_count(s) <= max_chars) return std::string(s);
  size_t chars = 0, end = 0;
  for (; end < s.size(); ++end)
    if (!is_continuation(s[end]) && chars++ == max_chars - 1) break;
  return std::string(s.substr(0, end)) + ellipsis;
}

std::string color_or_default(const std::string& color) {
  return escape(color.empty() ? default_color : color);
}

std::string open_svg(double width, double height, std::string_view label) {
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                     "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"11\" "
                     "role=\"img\" aria-label=\"{2}\">\n",
                     whole(width), whole(height), escape(label));
}

/// A <text> element; `attrs` are further attributes, already escaped, each after a space.
std::string text(double x, double y, std::string_view content, std::string_view attrs = "") {
  return fmt::format("<text x=\"{}\" y=\"{}\"{}>{}</text>\n", num(x), num(y), attrs,
                     escape(content));
}

std::string line(double x1, double y1, double x2, double y2, std::string_view attrs) {
  return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", num(x1), num(y1),
                     num(x2), num(y2), attrs);
}

std::string rect(double x, double y, double w, double h, std::string_view attrs) {
  return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {}/>\n", num(x), num(y),
                     num(w), num(h), attrs);
}

std::string title_text(std::string_view title) {
  if (title.empty()) return "";
  return text(pad, pad + 12, title,
              fmt::format(" font-size=\"12\" font-weight=\"bold\" fill=\"{}\"", text_color));
}

std::string no_data(double width, std::string_view title) {
  double top = title.empty() ? 0 : title_px;
  return open_svg(width, top + 40, title) + title_text(title) +
         text(width / 2, top + 24, "no data",
              fmt::format(" text-anchor=\"middle\" fill=\"{}\"", axis_color)) +
         "</svg>\n";
}

/// Where v lies in [lo, hi], from 0 to 1; halved so that huge ranges don't overflow.
double fraction(double v, double lo, double hi) { return (v / 2 - lo / 2) / (hi / 2 - lo / 2); }

double sane_width(double w, double fallback) { return std::isfinite(w) && w > 0 ? w : fallback; }

/// Decimals that print every multiple of `step` (a 1, 2, 5 x 10^k) exactly.
int step_decimals(double step) {
  if (!std::isfinite(step) || step <= 0) return 0;
  return std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
}

// Ticks at multiples of `step` are within this fraction of a step of their exact values.
constexpr double tick_slack = 1e-9;

int tick_count(double lo, double hi, double step) {
  double first = std::floor(lo / step + tick_slack), last = std::ceil(hi / step - tick_slack);
  return static_cast<int>(last - first) + 1;
}

/// The 1, 2, 5 x 10^k step whose tick count is closest to `target` (the larger step on ties).
double nice_step(double lo, double hi, int target) {
  double raw = (hi - lo) / (target - 1);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  auto miss = [&](double step) { return std::abs(tick_count(lo, hi, step) - target); };
  double best = 10 * mag;
  for (double m : {5.0, 2.0, 1.0, 0.5})
    if (miss(m * mag) < miss(best)) best = m * mag;
  return best;
}

constexpr const char* replacement = "\xEF\xBF\xBD"; // U+FFFD in UTF-8

/// A control character XML 1.0 cannot carry, even as a character reference.
bool is_xml_control(char c) {
  return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
}

/// The length of the valid UTF-8 sequence `s` starts with (a character XML allows), or 0.
size_t utf8_length(std::string_view s) {
  auto byte = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  auto cont = [&](size_t i) { return (byte(i) & 0xC0) == 0x80; };
  unsigned lead = byte(0), second = byte(1);
  if (lead >= 0xC2 && lead <= 0xDF) return cont(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    bool overlong = lead == 0xE0 && second < 0xA0, surrogate = lead == 0xED && second >= 0xA0;
    bool noncharacter = lead == 0xEF && second == 0xBF && byte(2) >= 0xBE; // U+FFFE, U+FFFF
    return cont(1) && cont(2) && !overlong && !surrogate && !noncharacter ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    bool out_of_range = (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second >= 0x90);
    return cont(1) && cont(2) && cont(3) && !out_of_range ? 4 : 0;
  }
  return 0;
}

} // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      size_t n = utf8_length(text.substr(i));
      out += n == 0 ? replacement : text.substr(i, n);
      i += std::max<size_t>(n, 1);
      continue;
    }
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += is_xml_control(c) ? ' ' : c;
    }
    ++i;
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (lo > hi) std::swap(lo, hi);
  if (lo == hi) {
    double widen = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= widen, hi += widen;
  }
  if (!std::isfinite(hi - lo)) return {};
  double step = nice_step(lo, hi, std::max(target, 2));
  double first = std::floor(lo / step + tick_slack);
  std::vector<double> ticks;
  // Counting with an int: far from 0, ++ on a double can leave it unchanged.
  for (int i = 0, n = tick_count(lo, hi, step); i < n; ++i)
    ticks.push_back((first + i) * step + 0.0); // + 0.0: no -0
  return ticks;
}

// --- bar chart -------------------------------------------------------------------------------

namespace {

/// A bar with a finite value, and its band if that is finite too.
struct Row {
  const Bar* bar;
  std::optional<double> band;
  std::string label;       ///< truncated
  std::string value_label; ///< with sign and suffix
};

/// Where everything of a bar chart goes.
struct BarLayout {
  double width = 0, height = 0;
  double top = 0, bottom = 0; ///< of the rows
  double label_right = 0;     ///< the row labels are right-aligned here
  double left = 0, right = 0; ///< x of the axis range's ends
  std::vector<double> ticks;  ///< the first and last are the axis range
  int tick_decimals = 0;

  double x(double v) const {
    return left + fraction(v, ticks.front(), ticks.back()) * (right - left);
  }
  double row_y(size_t i) const { return top + static_cast<double>(i) * row_px; }
};

std::string value_label(double v, int decimals, const BarChartOptions& options) {
  std::string s = num(v, decimals);
  bool shows_zero = s.find_first_not_of("0.") == std::string::npos;
  if (options.signed_values && v > 0 && !shows_zero) s.insert(0, "+");
  return s + options.value_suffix;
}

/// The axis covers 0, every value and every band.
std::vector<double> bar_ticks(const std::vector<Row>& rows) {
  double lo = 0, hi = 0;
  for (const Row& r : rows) {
    double reach = r.band.value_or(0);
    lo = std::min({lo, r.bar->value, -reach});
    hi = std::max({hi, r.bar->value, reach});
  }
  std::vector<double> ticks = nice_ticks(lo, hi, 6);
  if (ticks.size() < 2) return {lo, hi}; // the range overflows a double
  return ticks;
}

std::vector<Row> finite_rows(const std::vector<Bar>& bars) {
  std::vector<Row> rows;
  for (const Bar& b : bars) {
    if (!std::isfinite(b.value)) continue;
    std::optional<double> band;
    if (b.band && std::isfinite(*b.band)) band = std::abs(*b.band);
    rows.push_back({&b, band, truncate(b.label, max_label_chars), ""});
  }
  return rows;
}

/// Space beside the axis range for value labels on that side, and for half a tick label.
double side_margin(const std::vector<Row>& rows, const std::vector<std::string>& tick_labels,
                   bool negative_side) {
  double margin = 0;
  for (const std::string& t : tick_labels) margin = std::max(margin, text_px(t) / 2);
  for (const Row& r : rows)
    if ((r.bar->value < 0) == negative_side) margin = std::max(margin, text_px(r.value_label) + 6);
  return margin;
}

BarLayout layout_bars(std::vector<Row>& rows, const BarChartOptions& options) {
  BarLayout l;
  l.ticks = bar_ticks(rows);
  l.tick_decimals = step_decimals(l.ticks[1] - l.ticks[0]);
  int value_decimals = std::clamp(l.tick_decimals + 1, 1, 3);
  std::vector<std::string> tick_labels;
  for (double t : l.ticks) tick_labels.push_back(num(t, l.tick_decimals));
  double label_px = 0;
  for (Row& r : rows) {
    r.value_label = value_label(r.bar->value, value_decimals, options);
    label_px = std::max(label_px, text_px(r.label));
  }
  l.label_right = pad + label_px;
  l.left = l.label_right + 8 + side_margin(rows, tick_labels, true);
  double right_margin = side_margin(rows, tick_labels, false) + pad;
  l.width = std::max(sane_width(options.width, 720), l.left + min_plot_px + right_margin);
  l.right = l.width - right_margin;
  l.top = pad + (options.title.empty() ? 0 : title_px);
  l.bottom = l.row_y(rows.size());
  l.height = l.bottom + 18 + (options.axis_label.empty() ? 0 : 16) + pad;
  return l;
}

std::string draw_grid(const BarLayout& l) {
  std::string out;
  for (double t : l.ticks) {
    double x = l.x(t);
    out += line(x, l.top, x, l.bottom, fmt::format("class=\"grid\" stroke=\"{}\"", grid_color));
    out += text(x, l.bottom + 14, num(t, l.tick_decimals),
                fmt::format(" text-anchor=\"middle\" fill=\"{}\"", axis_color));
  }
  return out;
}

std::string draw_row(const BarLayout& l, const Row& r, size_t i) {
  const Bar& b = *r.bar;
  double y = l.row_y(i), mid = y + row_px / 2 + 4;
  std::string out = fmt::format("<g class=\"row\"><title>{}</title>\n",
                                escape(b.tooltip.empty() ? b.label : b.tooltip));
  // A cut label shows its full text on hover even when the row's tooltip says something else.
  // (A <g>, not a <title> inside the <text>, which Qt's SVG renderer would draw as text.)
  std::string label = text(l.label_right, mid, r.label,
                           fmt::format(" text-anchor=\"end\" fill=\"{}\"", text_color));
  if (r.label != b.label)
    label = fmt::format("<g><title>{}</title>{}</g>\n", escape(b.label), label);
  out += label;
  if (r.band) {
    double x0 = l.x(-*r.band), x1 = l.x(*r.band);
    out +=
        rect(x0, y + 1, x1 - x0, row_px - 2, fmt::format("class=\"band\" fill=\"{}\"", band_color));
  }
  double zero = l.x(0), end = l.x(b.value);
  out += rect(std::min(zero, end), y + (row_px - bar_px) / 2, std::abs(end - zero), bar_px,
              fmt::format("class=\"bar\" fill=\"{}\"", color_or_default(b.color)));
  bool left = b.value < 0;
  out += text(left ? end - 4 : end + 4, mid, r.value_label,
              fmt::format(" text-anchor=\"{}\" fill=\"{}\"", left ? "end" : "start", text_color));
  return out + "</g>\n";
}

} // namespace

std::string bar_chart(const std::vector<Bar>& bars, const BarChartOptions& options) {
  std::vector<Row> rows = finite_rows(bars);
  if (rows.empty()) return no_data(sane_width(options.width, 720), options.title);
  BarLayout l = layout_bars(rows, options);
  std::string out = open_svg(l.width, l.height, options.title) + title_text(options.title);
  out += draw_grid(l);
  for (size_t i = 0; i < rows.size(); ++i) out += draw_row(l, rows[i], i);
  // The zero line goes over the bands, which would hide it.
  out += line(l.x(0), l.top - 2, l.x(0), l.bottom + 2,
              fmt::format("class=\"zero\" stroke=\"{}\"", axis_color));
  if (!options.axis_label.empty())
    out += text((l.left + l.right) / 2, l.bottom + 32, options.axis_label,
                fmt::format(" text-anchor=\"middle\" fill=\"{}\"", axis_color));
  return out + "</svg>\n";
}

// --- scatter plot ----------------------------------------------------------------------------

namespace {

/// One axis of a scatter plot. On log axes, `lo` and `hi` are log10 of the range's ends.
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<double> ticks; ///< data values
  std::vector<std::string> labels;

  double coord(double v) const { return log ? std::log10(v) : v; }
  double frac(double c) const { return fraction(c, lo, hi); }
};

constexpr double log_slack = 1e-9;

/// 1, 2, 5 x 10^k (or only 10^k when not `fine`, every `stride`-th decade) within [lo, hi] (log10).
std::vector<double> log_ticks(double lo, double hi, bool fine, int stride) {
  std::vector<double> ticks;
  for (double k = std::floor(lo); k <= std::ceil(hi); ++k) {
    if (std::fmod(k, stride) != 0) continue;
    for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      double c = k + std::log10(m);
      double tick = m * std::pow(10.0, k);
      if (c >= lo - log_slack && c <= hi + log_slack && tick > 0 && std::isfinite(tick))
        ticks.push_back(tick);
    }
  }
  return ticks;
}

/// The nearest 1, 2, 5 x 10^k at or below (`up` false) or at or above 10^c, as its log10.
double snap_log(double c, bool up) {
  double k = std::floor(c);
  std::array<double, 4> marks = {k, k + std::log10(2.0), k + std::log10(5.0), k + 1};
  if (up) return *std::ranges::find_if(marks, [&](double m) { return m >= c - log_slack; });
  return *std::ranges::find_if(marks.rbegin(), marks.rend(),
                               [&](double m) { return m <= c + log_slack; });
}

/// A log axis over [lo, hi] (positive data), padded by 5% of its decades; snapped out to the
/// nearest 1, 2, 5 ticks when fewer than two ticks fall inside.
Axis log_axis(double lo, double hi) {
  Axis a{true, std::log10(lo), std::log10(hi), {}, {}};
  double padding = std::max((a.hi - a.lo) * 0.05, 0.02);
  a.lo -= padding, a.hi += padding;
  bool fine = a.hi - a.lo < 2;
  int stride = std::max(1, static_cast<int>(std::ceil((a.hi - a.lo) / 8)));
  a.ticks = log_ticks(a.lo, a.hi, fine, stride);
  if (a.ticks.size() < 2) {
    a.lo = snap_log(a.lo, false), a.hi = snap_log(a.hi, true);
    a.ticks = log_ticks(a.lo, a.hi, fine, stride);
  }
  for (double t : a.ticks) a.labels.push_back(fmt::format("{:g}", t));
  return a;
}

/// A linear axis over [lo, hi], padded by 3% (not below 0 for data that isn't), to nice ticks.
Axis linear_axis(double lo, double hi) {
  double padding = (hi - lo) * 0.03;
  double padded_lo = lo >= 0 ? std::max(0.0, lo - padding) : lo - padding;
  std::vector<double> ticks = nice_ticks(padded_lo, hi + padding, 6);
  if (ticks.size() < 2) ticks = {lo, hi}; // the range overflows a double
  Axis a{false, ticks.front(), ticks.back(), ticks, {}};
  int decimals = step_decimals(ticks[1] - ticks[0]);
  for (double t : ticks) a.labels.push_back(num(t, decimals));
  return a;
}

bool plottable(const Point& p, bool log) {
  if (!std::isfinite(p.x) || !std::isfinite(p.y)) return false;
  return !log || (p.x > 0 && p.y > 0);
}

/// The plot area and its two axes.
struct ScatterLayout {
  double width = 0, height = 0;
  double left = 0, right = 0, top = 0, bottom = 0;
  Axis x, y;

  double px(double v) const { return left + x.frac(x.coord(v)) * (right - left); }
  double py(double v) const { return bottom - y.frac(y.coord(v)) * (bottom - top); }
  // The same from axis coordinates (log10 on log axes).
  double cx(double c) const { return left + x.frac(c) * (right - left); }
  double cy(double c) const { return bottom - y.frac(c) * (bottom - top); }
};

ScatterLayout layout_scatter(const std::vector<const Point*>& points,
                             const ScatterOptions& options) {
  auto [xlo, xhi] = std::ranges::minmax(points, {}, [](const Point* p) { return p->x; });
  auto [ylo, yhi] = std::ranges::minmax(points, {}, [](const Point* p) { return p->y; });
  std::pair<double, double> xr{xlo->x, xhi->x}, yr{ylo->y, yhi->y};
  if (options.diagonal) {
    xr = {std::min(xr.first, yr.first), std::max(xr.second, yr.second)};
    yr = xr;
  }
  auto make_axis = [&](std::pair<double, double> r) {
    if (r.first == r.second)
      r = options.log_axes ? std::pair{r.first / 2, r.second * 2}
                           : std::pair{r.first - 1, r.second + 1};
    return options.log_axes ? log_axis(r.first, r.second) : linear_axis(r.first, r.second);
  };
  ScatterLayout l{0, 0, 0, 0, 0, 0, make_axis(xr), make_axis(yr)};
  double ytick_px = 0;
  for (const std::string& s : l.y.labels) ytick_px = std::max(ytick_px, text_px(s));
  double xtick_half = 0;
  for (const std::string& s : l.x.labels) xtick_half = std::max(xtick_half, text_px(s) / 2);
  l.left = pad + (options.y_label.empty() ? 0 : 16) + ytick_px + 6;
  l.top = pad + (options.title.empty() ? 0 : title_px) + 6;
  double right_margin = pad + xtick_half;
  double bottom_margin = 18 + (options.x_label.empty() ? 0 : 16) + pad;
  l.width = std::max(sane_width(options.width, 480), l.left + min_plot_px + right_margin);
  l.height = std::max(sane_width(options.height, 480), l.top + min_plot_px + bottom_margin);
  l.right = l.width - right_margin;
  l.bottom = l.height - bottom_margin;
  return l;
}

std::string draw_scatter_grid(const ScatterLayout& l) {
  std::string out, grid = fmt::format("class=\"grid\" stroke=\"{}\"", grid_color);
  std::string tick_text = fmt::format(" fill=\"{}\" text-anchor=", axis_color);
  for (size_t i = 0; i < l.x.ticks.size(); ++i) {
    double x = l.px(l.x.ticks[i]);
    out += line(x, l.top, x, l.bottom, grid);
    out += text(x, l.bottom + 14, l.x.labels[i], tick_text + "\"middle\"");
  }
  for (size_t i = 0; i < l.y.ticks.size(); ++i) {
    double y = l.py(l.y.ticks[i]);
    out += line(l.left, y, l.right, y, grid);
    out += text(l.left - 4, y + 4, l.y.labels[i], tick_text + "\"end\"");
  }
  return out +
         rect(l.left, l.top, l.right - l.left, l.bottom - l.top, "fill=\"none\" stroke=\"#ccc\"");
}

/// y = k x within the plot (both axes have the same range, so this stays a straight segment).
std::string draw_diagonal(const ScatterLayout& l, double k, std::string_view attrs) {
  const Axis& a = l.x;
  // In axis coordinates, y = k x is a shift by log10(k) on log axes and a slope on linear ones.
  auto y_of = [&](double c) { return a.log ? c + std::log10(k) : c * k; };
  auto x_of = [&](double c) { return a.log ? c - std::log10(k) : c / k; };
  double c0 = std::max(a.lo, x_of(a.lo)), c1 = std::min(a.hi, x_of(a.hi));
  if (!(c0 < c1)) return "";
  return line(l.cx(c0), l.cy(y_of(c0)), l.cx(c1), l.cy(y_of(c1)), attrs);
}

std::string draw_point(const ScatterLayout& l, const Point& p) {
  std::string tip = p.tooltip.empty() ? fmt::format("{:.4g}, {:.4g}", p.x, p.y) : p.tooltip;
  return fmt::format("<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\" "
                     "fill-opacity=\"0.85\"><title>{}</title></circle>\n",
                     num(l.px(p.x)), num(l.py(p.y)), color_or_default(p.color), escape(tip));
}

std::string draw_axis_labels(const ScatterLayout& l, const ScatterOptions& options) {
  std::string out, attrs = fmt::format(" text-anchor=\"middle\" fill=\"{}\"", axis_color);
  if (!options.x_label.empty())
    out += text((l.left + l.right) / 2, l.bottom + 32, options.x_label, attrs);
  if (!options.y_label.empty()) {
    double x = pad + 10, y = (l.top + l.bottom) / 2;
    out += text(x, y, options.y_label,
                attrs + fmt::format(" transform=\"rotate(-90 {} {})\"", num(x), num(y)));
  }
  return out;
}

} // namespace

std::string scatter(const std::vector<Point>& points, const ScatterOptions& options) {
  std::vector<const Point*> valid;
  for (const Point& p : points)
    if (plottable(p, options.log_axes)) valid.push_back(&p);
  if (valid.empty()) return no_data(sane_width(options.width, 480), options.title);
  ScatterLayout l = layout_scatter(valid, options);
  std::string out = open_svg(l.width, l.height, options.title) + title_text(options.title);
  out += draw_scatter_grid(l);
  if (options.diagonal) {
    std::string light = "stroke=\"#bbb\" stroke-width=\"0.75\"";
    out += draw_diagonal(l, 1.1, light) + draw_diagonal(l, 1 / 1.1, light);
    out += draw_diagonal(l, 1, "stroke=\"#888\" stroke-dasharray=\"4 3\"");
  }
  for (const Point* p : valid) out += draw_point(l, *p);
  return out + draw_axis_labels(l, options) + "</svg>\n";
}

// --- legend ----------------------------------------------------------------------------------

std::string legend(const std::vector<Legend>& items) {
  std::string body;
  double x = 4;
  for (const Legend& item : items) {
    body += rect(x, 4, 10, 10, fmt::format("fill=\"{}\"", color_or_default(item.color)));
    body += text(x + 14, 13, item.label, fmt::format(" fill=\"{}\"", text_color));
    x += 14 + text_px(item.label) + 14;
  }
  double width = items.empty() ? 0 : x - 10;
  return open_svg(width, items.empty() ? 0 : 18, "legend") + body + "</svg>\n";
}

} // namespace beamlab::reports::svg
