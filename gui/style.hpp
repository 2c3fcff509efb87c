// The GUI's shared look: colours for candidate statuses and axis kinds, syntax highlighting
// for LLVM IR and assembly, and number formats.
#pragma once

#include <string>

#include <QAbstractItemView>
#include <QChart>
#include <QColor>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTableWidgetItem>
#include <QTextCharFormat>

#include "engine/opt/opt.hpp"

namespace beamlab::gui {

/// What a live chart groups candidates by: ok, slow, wrong result, crashed, timed out, other.
enum class StatusClass { ok, slow, wrong, crashed, timeout, other };
inline constexpr int kStatusClassCount = 6;
StatusClass status_class(const std::string& status);
const char* status_class_name(StatusClass c);
QColor status_color(StatusClass c);

/// Axis kinds coloured like tinygrad's shapes: parallel blue, loop cyan, reduce red, upcast
/// yellow, unroll magenta.
QColor axis_color(LoopKind kind);
/// The axes as coloured extents, e.g. "<span style='color:...'>64</span> ..." (HTML).
QString axes_html(const std::vector<Axis>& axes);

inline QString qstr(const std::string& s) { return QString::fromStdString(s); }

/// format_ms (program.hpp) as a QString; "-" for no time.
QString ms_text(double ms);

/// A time with its spread over `samples_ms` (median, and the interquartile range as a
/// percentage of it): "0.123 ms ±4% (9 runs)"; "-" with no samples. A figure shown without its
/// spread invites reading noise as a change.
QString time_with_spread(const std::vector<double>& samples_ms);
/// The interquartile range over the median (0 with fewer than 2 samples).
double relative_spread(const std::vector<double>& samples_ms);
/// Above this relative spread a measurement is flagged as noisy wherever it is shown.
inline constexpr double kNoisySpread = 0.10;
/// How many times below the median the fastest sample lies when the samples have two modes
/// (it lies 1.5x or more below, and past three interquartile ranges): a plan that sometimes
/// runs 7x faster, which the interquartile range alone hides when the fast runs are few. 0
/// otherwise, and with fewer than 3 samples.
double fast_mode(const std::vector<double>& samples_ms);
/// The spread as the candidate tables show it: "±2.3% (10)", and ", best 7.8x below" with
/// two modes.
QString spread_text(const std::vector<double>& samples_ms);
/// Whether the samples are flagged wherever shown: noisy, or of two modes.
bool unsteady(const std::vector<double>& samples_ms);

/// A p-value as text: "<0.001" below a thousandth, else three digits ("0.042").
QString p_text(double p);

/// A table the user reads, never edits: no edit triggers, Tab leaves it for the next widget
/// (arrows move inside), whole rows selected, and sort arrows that point the way the rows run
/// (down: largest first).
void make_reading_table(QAbstractItemView* view);

/// Removes `chart`'s series and axes and deletes them (removeAxis alone hands an axis back to
/// the caller, leaking it on every redraw).
void clear_chart(QChart* chart);

/// A table cell showing `text` that sorts by `value` (a time, a ratio, a p-value).
class NumberItem : public QTableWidgetItem {
public:
  NumberItem(const QString& text, double value) : QTableWidgetItem(text), value_(value) {
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  bool operator<(const QTableWidgetItem& other) const override {
    if (const auto* n = dynamic_cast<const NumberItem*>(&other)) return value_ < n->value_;
    return QTableWidgetItem::operator<(other);
  }

private:
  double value_;
};

/// Highlights LLVM IR (keywords, types, %values, @globals, comments) or x86 assembly
/// (mnemonics, registers, directives, comments).
class CodeHighlighter : public QSyntaxHighlighter {
public:
  enum class Language { llvm_ir, assembly };
  CodeHighlighter(QTextDocument* doc, Language language);

protected:
  void highlightBlock(const QString& text) override;

private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };
  std::vector<Rule> rules_;
};

} // namespace beamlab::gui
