// Colours, highlighting and formats; see style.hpp.
#include "gui/style.hpp"

#include <algorithm>

#include <QHeaderView>
#include <QProxyStyle>
#include <QStyleOptionHeader>
#include <QTableView>

#include "engine/support/statistics.hpp"
#include "gui/program.hpp"

namespace beamlab::gui {

StatusClass status_class(const std::string& s) {
  if (s == "ok") return StatusClass::ok;
  if (s == "slow") return StatusClass::slow;
  if (s == "wrong_result") return StatusClass::wrong;
  if (s == "crashed" || s == "limit" || s == "violation") return StatusClass::crashed;
  if (s == "timeout") return StatusClass::timeout;
  return StatusClass::other;
}

const char* status_class_name(StatusClass c) {
  static const char* names[] = {"ok", "slow", "wrong result", "crashed", "timed out", "other"};
  return names[static_cast<int>(c)];
}

QColor status_color(StatusClass c) {
  switch (c) {
  case StatusClass::ok: return QColor(0x2e, 0x9d, 0x4a);
  case StatusClass::slow: return QColor(0x9a, 0xa5, 0xb1);
  case StatusClass::wrong: return QColor(0xd6, 0x27, 0x28);
  case StatusClass::crashed: return QColor(0x7b, 0x1f, 0xa2);
  case StatusClass::timeout: return QColor(0xff, 0x8c, 0x00);
  case StatusClass::other: return QColor(0x60, 0x60, 0x60);
  }
  return Qt::black;
}

QColor axis_color(LoopKind kind) {
  switch (kind) {
  case LoopKind::Parallel: return QColor(0x1f, 0x6f, 0xd0);
  case LoopKind::Loop: return QColor(0x00, 0x9c, 0xa6);
  case LoopKind::Reduce: return QColor(0xd6, 0x27, 0x28);
  case LoopKind::Upcast: return QColor(0xc9, 0xa2, 0x00);
  case LoopKind::Unroll: return QColor(0xb0, 0x2d, 0xb3);
  }
  return Qt::black;
}

QString axes_html(const std::vector<Axis>& axes) {
  // An Opt addresses the loop and reduce axes by their position among them, in nesting order
  // (opt.hpp): those carry their number, "1:64"; lanes (upcast, unroll) are extents only.
  QString out;
  int addressable = 0;
  for (const Axis& a : axes) {
    bool lanes = is_lane(a.kind);
    QString label =
        lanes ? QString::number(a.extent) : QString("%1:%2").arg(addressable++).arg(a.extent);
    out += QString("<span style='color:%1; font-weight:bold' title='%2'>%3</span> ")
               .arg(axis_color(a.kind).name(),
                    QString::fromStdString(std::string(to_string(a.kind))), label);
  }
  QString legend;
  for (LoopKind k :
       {LoopKind::Parallel, LoopKind::Loop, LoopKind::Reduce, LoopKind::Upcast, LoopKind::Unroll})
    legend += QString(" <span style='color:%1'>%2</span>")
                  .arg(axis_color(k).name(), QString::fromStdString(std::string(to_string(k))));
  return out.trimmed() +
         QString(" &nbsp; <span style='color:#666'>(n:extent is the axis an Opt's first "
                 "number names;%1)</span>")
             .arg(legend);
}

QString ms_text(double ms) { return ms <= 0 ? QString("-") : qstr(format_ms(ms)); }

double relative_spread(const std::vector<double>& samples_ms) {
  if (samples_ms.size() < 2) return 0;
  double median = quantile(samples_ms, 0.5);
  return median > 0 ? (quantile(samples_ms, 0.75) - quantile(samples_ms, 0.25)) / median : 0;
}

double fast_mode(const std::vector<double>& samples_ms) {
  if (samples_ms.size() < 3) return 0;
  double median = quantile(samples_ms, 0.5),
         best = *std::min_element(samples_ms.begin(), samples_ms.end());
  if (best <= 0 || median < 1.5 * best) return 0;
  return median - best > 3 * relative_spread(samples_ms) * median ? median / best : 0;
}

bool unsteady(const std::vector<double>& samples_ms) {
  return relative_spread(samples_ms) > kNoisySpread || fast_mode(samples_ms) > 0;
}

QString spread_text(const std::vector<double>& samples_ms) {
  if (samples_ms.size() < 2) return {};
  QString s = QString("±%1% (%2)")
                  .arg(100 * relative_spread(samples_ms) / 2, 0, 'f', 1)
                  .arg(samples_ms.size());
  if (double r = fast_mode(samples_ms); r > 0) s += QString(", best %1x below").arg(r, 0, 'f', 1);
  return s;
}

QString time_with_spread(const std::vector<double>& samples_ms) {
  if (samples_ms.empty()) return "-";
  QString t = ms_text(quantile(samples_ms, 0.5));
  if (samples_ms.size() < 2) return t + " (1 run)";
  QString s = QString("%1 ±%2% (%3 runs)")
                  .arg(t)
                  .arg(100 * relative_spread(samples_ms) / 2, 0, 'f', 1)
                  .arg(samples_ms.size());
  if (double r = fast_mode(samples_ms); r > 0)
    s += QString(", two modes: best %1, %2x below")
             .arg(ms_text(*std::min_element(samples_ms.begin(), samples_ms.end())))
             .arg(r, 0, 'f', 1);
  return s;
}

QString p_text(double p) { return p < 0.001 ? QString("<0.001") : QString::number(p, 'f', 3); }

namespace {

// Qt's headers draw ascending order as a down arrow; this style draws the arrow the way the
// rows run: up for ascending (smallest first), down for descending.
class SortArrowStyle : public QProxyStyle {
public:
  void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                     const QWidget* widget) const override {
    if (element == PE_IndicatorHeaderArrow)
      if (const auto* h = qstyleoption_cast<const QStyleOptionHeader*>(option)) {
        QStyleOptionHeader flipped = *h;
        if (h->sortIndicator == QStyleOptionHeader::SortDown)
          flipped.sortIndicator = QStyleOptionHeader::SortUp;
        else if (h->sortIndicator == QStyleOptionHeader::SortUp)
          flipped.sortIndicator = QStyleOptionHeader::SortDown;
        return QProxyStyle::drawPrimitive(element, &flipped, painter, widget);
      }
    QProxyStyle::drawPrimitive(element, option, painter, widget);
  }
};

} // namespace

void clear_chart(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) {
    chart->removeAxis(a);
    delete a;
  }
}

void make_reading_table(QAbstractItemView* view) {
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view->setTabKeyNavigation(false);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  if (auto* table = qobject_cast<QTableView*>(view)) {
    auto* style = new SortArrowStyle;
    style->setParent(table->horizontalHeader());
    table->horizontalHeader()->setStyle(style);
  }
}

CodeHighlighter::CodeHighlighter(QTextDocument* doc, Language language) : QSyntaxHighlighter(doc) {
  auto add = [&](const char* pattern, QColor color, bool bold = false) {
    QTextCharFormat f;
    f.setForeground(color);
    if (bold) f.setFontWeight(QFont::Bold);
    rules_.push_back({QRegularExpression(pattern), f});
  };
  if (language == Language::llvm_ir) {
    add(R"(\b(define|declare|ret|br|label|phi|call|load|store|getelementptr|alloca|icmp|fcmp|select|add|sub|mul|fadd|fsub|fmul|fdiv|sdiv|srem|shl|and|or|xor|zext|sext|trunc|bitcast|fptrunc|fpext|sitofp|fptosi|insertelement|extractelement|shufflevector|inbounds|nsw|nuw|fast|contract)\b)",
        QColor(0x00, 0x55, 0xaa), true);
    add(R"(\b(i1|i8|i16|i32|i64|half|bfloat|float|double|ptr|void|<\d+ x [a-z0-9]+>)\b)",
        QColor(0x2e, 0x7d, 0x32));
    add(R"(%[\w.]+)", QColor(0x8e, 0x24, 0xaa));
    add(R"(@[\w.]+)", QColor(0xc6, 0x28, 0x28), true);
  } else {
    add(R"(^\s*[a-z][a-z0-9]*\b)", QColor(0x00, 0x55, 0xaa), true);
    add(R"(%[a-z0-9]+)", QColor(0x8e, 0x24, 0xaa));
    add(R"(^\s*\.[\w]+)", QColor(0x80, 0x80, 0x80));
    add(R"(^[\w.$]+:)", QColor(0xc6, 0x28, 0x28), true);
    add(R"(\$?-?\b0x[0-9a-f]+\b|\$-?\d+)", QColor(0x2e, 0x7d, 0x32));
  }
  add(language == Language::llvm_ir ? R"(;.*$)" : R"(#.*$)", QColor(0x80, 0x80, 0x80));
}

void CodeHighlighter::highlightBlock(const QString& text) {
  for (const Rule& r : rules_)
    for (auto it = r.pattern.globalMatch(text); it.hasNext();) {
      auto m = it.next();
      setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()),
                r.format);
    }
}

} // namespace beamlab::gui
