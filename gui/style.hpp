// The GUI's shared look: colours for candidate statuses and axis kinds, syntax highlighting
// for LLVM IR and assembly, and number formats.
#pragma once

#include <string>

#include <QColor>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
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
QColor axis_color(AxisKind kind);
/// The axes as coloured extents, e.g. "<span style='color:...'>64</span> ..." (HTML).
QString axes_html(const std::vector<Axis>& axes);

inline QString qstr(const std::string& s) { return QString::fromStdString(s); }

/// format_ms (program.hpp) as a QString; "-" for no time.
QString ms_text(double ms);

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
