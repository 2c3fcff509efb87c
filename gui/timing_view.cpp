// Kernel timing; see timing_view.hpp.
#include "gui/timing_view.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyledItemDelegate>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>

#include <fmt/format.h>

#include "gui/style.hpp"

namespace beamlab::gui {
namespace {

// Tableau's ten categorical colours: neighbouring kernels stay tellable apart.
QColor kernel_color(int kernel) {
  static const QColor palette[] = {{78, 121, 167}, {242, 142, 43}, {225, 87, 89},   {118, 183, 178},
                                   {89, 161, 79},  {237, 201, 72}, {176, 122, 161}, {255, 157, 167},
                                   {156, 117, 95}, {186, 176, 172}};
  return palette[static_cast<size_t>(kernel) % std::size(palette)];
}

// A tick step of 1, 2 or 5 times a power of ten giving at most `max_ticks` ticks over `range`.
double tick_step(double range, int max_ticks) {
  if (range <= 0) return 1;
  double raw = range / max_ticks;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

constexpr int kLeft = 78, kRight = 14, kTop = 22, kRowHeight = 22, kRowGap = 4;

} // namespace

// The timeline across cores: a row for the kernels' whole launches, then one per thread.
class TimelineWidget : public QWidget {
public:
  explicit TimelineWidget(std::function<void(int)> on_click) : on_click_(std::move(on_click)) {
    setMouseTracking(true);
    setBackgroundRole(QPalette::Base);
    setAutoFillBackground(true);
  }

  void set_program(const ProgramProfile& program) {
    program_ = program;
    spans_.clear();
    rows_ = std::max(1, program.threads);
    for (size_t k = 0; k < program.kernels.size(); ++k) {
      const ProgramKernel& kernel = program.kernels[k];
      spans_.push_back({static_cast<int>(k), 0, kernel.begin_ns, kernel.end_ns});
      for (const ThreadSpan& s : kernel.spans) {
        spans_.push_back({static_cast<int>(k), s.thread + 1, s.begin_ns, s.end_ns});
        rows_ = std::max(rows_, s.thread + 1);
      }
    }
    end_ns_ = std::max<int64_t>(1, program.traced_ns);
    setMinimumHeight(kTop + (rows_ + 1) * (kRowHeight + kRowGap) + 8);
    update();
  }
  void clear() { set_program({}); }

  int thread_span_count() const {
    return static_cast<int>(
        std::count_if(spans_.begin(), spans_.end(), [](const Span& s) { return s.row > 0; }));
  }

protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    draw_axis(p);
    for (int r = 0; r <= rows_; ++r) {
      QRectF row = row_rect(r);
      p.setPen(palette().color(QPalette::Text));
      p.drawText(QRectF(4, row.top(), kLeft - 10, row.height()), Qt::AlignRight | Qt::AlignVCenter,
                 r == 0 ? tr("kernels") : tr("thread %1").arg(r - 1));
      p.fillRect(QRectF(kLeft, row.top(), plot_width(), row.height()), QColor(244, 244, 244));
    }
    for (const Span& s : spans_) {
      QRectF box = span_rect(s);
      QColor c = kernel_color(s.kernel);
      p.fillRect(box, s.row == 0 ? c.lighter(125) : c);
      p.setPen(c.darker(140));
      p.drawRect(box);
      if (s.row != 0) continue;
      QString name = QString::fromStdString(program_.kernels[static_cast<size_t>(s.kernel)].name);
      if (p.fontMetrics().horizontalAdvance(name) + 4 > box.width()) continue;
      p.setPen(Qt::black);
      p.drawText(box, Qt::AlignCenter, name);
    }
  }

  bool event(QEvent* e) override {
    if (e->type() != QEvent::ToolTip) return QWidget::event(e);
    auto* help = static_cast<QHelpEvent*>(e);
    const Span* s = span_at(help->pos());
    if (!s) {
      QToolTip::hideText();
      e->ignore();
      return true;
    }
    const ProgramKernel& k = program_.kernels[static_cast<size_t>(s->kernel)];
    std::string where = s->row == 0 ? "whole launch" : fmt::format("thread {}", s->row - 1);
    QToolTip::showText(help->globalPos(),
                       QString::fromStdString(fmt::format(
                           "#{} {}\n{}: {} (from {:.4g} to {:.4g} ms)\nmedian {}", s->kernel,
                           k.name, where, format_ms(ms(s->end_ns - s->begin_ns)), ms(s->begin_ns),
                           ms(s->end_ns), format_ms(k.ms))),
                       this);
    return true;
  }

  void mousePressEvent(QMouseEvent* e) override {
    if (const Span* s = span_at(e->position().toPoint()); s && e->button() == Qt::LeftButton)
      on_click_(s->kernel);
  }

private:
  struct Span {
    int kernel;
    int row; // 0: the kernel's whole launch; t + 1: thread t
    int64_t begin_ns, end_ns;
  };

  static double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
  double plot_width() const { return std::max(1, width() - kLeft - kRight); }
  double x_of(int64_t ns) const {
    return kLeft + plot_width() * static_cast<double>(ns) / static_cast<double>(end_ns_);
  }
  QRectF row_rect(int row) const {
    return QRectF(0, kTop + row * (kRowHeight + kRowGap), width(), kRowHeight);
  }
  QRectF span_rect(const Span& s) const {
    QRectF row = row_rect(s.row);
    // At least a pixel wide: a short launch is still visible.
    double x0 = x_of(s.begin_ns), x1 = std::max(x0 + 1, x_of(s.end_ns));
    return QRectF(x0, row.top() + 2, x1 - x0, row.height() - 4);
  }
  const Span* span_at(QPoint pos) const {
    for (const Span& s : spans_)
      if (span_rect(s).adjusted(-1, 0, 1, 0).contains(pos)) return &s;
    return nullptr;
  }

  void draw_axis(QPainter& p) {
    double total = ms(end_ns_);
    double step = tick_step(total, std::max(2, static_cast<int>(plot_width() / 80)));
    p.setPen(palette().color(QPalette::Mid));
    double bottom = row_rect(rows_).bottom();
    for (int i = 0; i * step <= total * (1 + 1e-9); ++i) {
      double x = x_of(static_cast<int64_t>(i * step * 1e6));
      p.drawLine(QPointF(x, kTop - 4), QPointF(x, bottom));
      p.drawText(QRectF(x - 40, 2, 80, kTop - 6), Qt::AlignCenter,
                 QString::fromStdString(fmt::format("{:g} ms", i * step)));
    }
  }

  std::function<void(int)> on_click_;
  ProgramProfile program_;
  std::vector<Span> spans_;
  int rows_ = 1;
  int64_t end_ns_ = 1;
};

// The share column: the kernel's share of the program's time as a bar behind its text.
class ShareBarDelegate : public QStyledItemDelegate {
public:
  using QStyledItemDelegate::QStyledItemDelegate;
  static constexpr int kShareRole = Qt::UserRole + 1; ///< 0..1 of the largest share

  void paint(QPainter* p, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override {
    double share = index.data(kShareRole).toDouble();
    if (share > 0) {
      QRectF bar = QRectF(option.rect).adjusted(2, 3, -2, -3);
      bar.setWidth(bar.width() * std::min(1.0, share));
      p->fillRect(bar, QColor(78, 121, 167, 110));
    }
    QStyledItemDelegate::paint(p, option, index);
  }
};

namespace {

// "tuned 3.20x", "heuristic's plan won", "tie with the heuristic", "3.20x, not this plan", "not
// searched"; sorted by the gain a search found, unsearched kernels last.
QTableWidgetItem* tuned_item(const ProgramKernel& k) {
  if (k.once) return new NumberItem(QStringLiteral("-"), -1);
  if (!k.gain) return new NumberItem(QObject::tr("not searched"), 0);
  if (k.heuristic_won) return new NumberItem(QObject::tr("heuristic's plan won"), 1.0);
  QString text = k.tie     ? QObject::tr("tie with the heuristic")
                 : k.tuned ? QObject::tr("tuned %1x").arg(*k.gain, 0, 'f', 2)
                           : QObject::tr("%1x, not this plan").arg(*k.gain, 0, 'f', 2);
  auto* item = new NumberItem(text, k.tie ? 1.0 : *k.gain);
  if (!k.tie && !k.tuned)
    item->setToolTip(QObject::tr("a search found a %1x faster plan, but the plan that ran is "
                                 "another (the cache holds none for this thread count, or it is "
                                 "stale)")
                         .arg(*k.gain, 0, 'f', 2));
  return item;
}

} // namespace

TimingView::TimingView(QWidget* parent) : QWidget(parent) {
  summary_ = new QLabel();
  summary_->setWordWrap(true);
  table_ = new QTableWidget(0, kColumns);
  table_->setHorizontalHeaderLabels({tr("#"), tr("kernel"), tr("median"), tr("spread"), tr("share"),
                                     tr("GFLOP/s"), tr("% roof"), tr("tuned"), tr("model nodes"),
                                     tr("opts")});
  table_->horizontalHeaderItem(kRoof)->setToolTip(
      tr("its median's fraction of this device's roof (the FMA peak, or the bandwidth of the "
         "memory level its data fits in), as Runs and the Roofline judge it"));
  table_->horizontalHeaderItem(kTuned)->setToolTip(
      tr("its newest search's speedup over the heuristic (paired), and whether the plan that "
         "ran is that search's winner; 'heuristic's plan won' where the search found none "
         "better; 'not searched' where the database has none"));
  table_->horizontalHeaderItem(kSpread)->setToolTip(
      tr("the interquartile range of its runs over their median"));
  table_->horizontalHeaderItem(kShare)->setToolTip(
      tr("its share of the program's time (the sum of every kernel's median)"));
  make_reading_table(table_);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->setItemDelegateForColumn(kShare, new ShareBarDelegate(table_));
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setMinimumHeight(180);
  connect(table_, &QTableWidget::itemActivated, this, [this](QTableWidgetItem* item) {
    if (QTableWidgetItem* first = table_->item(item->row(), kIndex))
      activate(first->data(Qt::UserRole).toInt());
  });
  // Tuning where the time is: the N costliest kernels no search has tuned, in one session.
  top_n_ = new QSpinBox;
  top_n_->setRange(1, 99);
  top_n_->setValue(5);
  top_n_->setToolTip(tr("how many of the costliest untuned kernels to tune"));
  tune_top_ = new QPushButton;
  tune_top_->setToolTip(tr("one BEAM session in Live tuning over the costliest kernels whose plan "
                           "is no search's winner, sharing its budget"));
  connect(top_n_, &QSpinBox::valueChanged, this, [this] { update_tune_button(); });
  connect(tune_top_, &QPushButton::clicked, this, [this] {
    QStringList keys = costliest_untuned(top_n_->value());
    if (!keys.isEmpty()) Q_EMIT tune_requested(keys);
  });
  auto* head = new QHBoxLayout;
  head->addWidget(summary_, 1);
  head->addWidget(top_n_);
  head->addWidget(tune_top_);
  auto* upper = new QWidget();
  auto* upper_layout = new QVBoxLayout(upper);
  upper_layout->setContentsMargins(6, 6, 6, 0);
  upper_layout->addLayout(head);
  upper_layout->addWidget(table_, 1);
  timeline_ = new TimelineWidget([this](int kernel) { activate(kernel); });
  auto* scroll = new QScrollArea();
  scroll->setWidget(timeline_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  timeline_title_ = new QLabel();
  auto* lower = new QWidget();
  auto* lower_layout = new QVBoxLayout(lower);
  lower_layout->setContentsMargins(6, 0, 6, 0);
  lower_layout->addWidget(timeline_title_);
  lower_layout->addWidget(scroll, 1);
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(upper);
  splitter->addWidget(lower);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  charts_ = splitter;
  message_ = new QLabel();
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(message_);
  stack_->addWidget(charts_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(stack_);
  show_message(tr("No program yet."));
}

int TimingView::span_count() const { return timeline_->thread_span_count(); }

QStringList TimingView::costliest_untuned(int n) const {
  std::vector<const ProgramKernel*> open;
  for (const ProgramKernel& k : program_.kernels)
    if (!k.once && !k.tuned && !k.tie) open.push_back(&k);
  // Costliest first; equal times in program order (the pointers run in it).
  std::sort(open.begin(), open.end(), [](const ProgramKernel* a, const ProgramKernel* b) {
    return a->ms != b->ms ? a->ms > b->ms : a < b;
  });
  QStringList keys;
  for (const ProgramKernel* k : open)
    if (keys.size() < n && !keys.contains(qstr(k->key))) keys << qstr(k->key);
  return keys;
}

void TimingView::tune_costliest(int n) {
  top_n_->setValue(n);
  tune_top_->click();
}

void TimingView::update_tune_button() {
  qsizetype open = costliest_untuned(static_cast<int>(program_.kernels.size())).size();
  int n = static_cast<int>(std::min<qsizetype>(top_n_->value(), open));
  tune_top_->setEnabled(n > 0);
  tune_top_->setText(program_.kernels.empty() ? tr("no program")
                     : open == 0              ? tr("every kernel is tuned")
                     : n == 1                 ? tr("Tune the costliest untuned kernel")
                                              : tr("Tune the %1 costliest untuned kernels").arg(n));
}

QString TimingView::summary() const { return summary_->text(); }

void TimingView::show_message(const QString& message) {
  program_ = {};
  update_tune_button();
  table_->setSortingEnabled(false);
  table_->setRowCount(0);
  summary_->clear();
  keys_.clear();
  timeline_->clear();
  message_->setText(message);
  stack_->setCurrentWidget(message_);
}

void TimingView::set_program(const ProgramProfile& program) {
  show_message({});
  if (program.kernels.empty()) return show_message(tr("The program has no kernels."));
  program_ = program;
  update_tune_button();
  int n = static_cast<int>(program.kernels.size());
  double worst_spread = 0, slowest = 0;
  for (const ProgramKernel& k : program.kernels) slowest = std::max(slowest, k.ms);
  table_->setRowCount(n);
  for (int i = 0; i < n; ++i) {
    const ProgramKernel& k = program.kernels[static_cast<size_t>(i)];
    keys_.push_back(qstr(k.key));
    // Each time with its spread, so a noisy figure never passes for a steady one; a kernel of
    // constants ran once, before the plan's first run, and is no part of the time.
    double spread = k.once ? 0 : relative_spread(k.samples_ms);
    worst_spread = std::max(worst_spread, spread);
    double share = program.total_ms > 0 ? k.ms / program.total_ms : 0;
    // In program order, kernels of constants (run once, before the first run) after the rest:
    // the table opens on the kernels that cost each run.
    auto* index = new NumberItem(QString::number(i), k.once ? n + i : i);
    index->setData(Qt::UserRole, i);
    table_->setItem(i, kIndex, index);
    auto* name = new QTableWidgetItem(qstr(k.name));
    name->setToolTip(qstr(k.key));
    table_->setItem(i, kKernel, name);
    table_->setItem(i, kTime, new NumberItem(qstr(kernel_time_text(k)), k.once ? -1 : k.ms));
    table_->setItem(i, kSpread,
                    new NumberItem(k.once ? QStringLiteral("-")
                                          : QStringLiteral("±%1%").arg(50 * spread, 0, 'f', 0),
                                   spread));
    auto* share_item = new NumberItem(qstr(share_text(k, program.total_ms)), share);
    share_item->setData(ShareBarDelegate::kShareRole, slowest > 0 ? k.ms / slowest : 0);
    table_->setItem(i, kShare, share_item);
    table_->setItem(
        i, kGflops,
        new NumberItem(k.ms > 0 ? QString::number(k.gflops, 'f', 1) : QStringLiteral("-"),
                       k.gflops));
    auto* roof = new NumberItem(
        k.roof ? QStringLiteral("%1 %2").arg(100 * *k.roof, 0, 'f', 1).arg(qstr(k.bound))
               : QStringLiteral("-"),
        k.roof.value_or(-1));
    table_->setItem(i, kRoof, roof);
    table_->setItem(i, kTuned, tuned_item(k));
    auto* nodes = new QTableWidgetItem(qstr(join_names(k.nodes, 2)));
    std::string all;
    for (const std::string& node : k.nodes) all += (all.empty() ? "" : "\n") + node;
    nodes->setToolTip(qstr(all));
    table_->setItem(i, kNodes, nodes);
    table_->setItem(i, kOpts,
                    new QTableWidgetItem(k.opts.empty() ? QStringLiteral("-") : qstr(k.opts)));
  }
  table_->setSortingEnabled(true);
  table_->sortByColumn(kIndex, Qt::AscendingOrder);
  table_->resizeColumnsToContents();
  table_->setColumnWidth(kShare, std::max(table_->columnWidth(kShare), 90));
  table_->setColumnWidth(kNodes, std::min(table_->columnWidth(kNodes), 320));
  auto once = std::count_if(program.kernels.begin(), program.kernels.end(),
                            [](const ProgramKernel& k) { return k.once; });
  summary_->setText(
      tr("%1 (%2): median kernel time of %3 run(s), %4 in all over %5 kernel(s)%6%7")
          .arg(qstr(program.workload), qstr(program.dtype))
          .arg(program.runs)
          .arg(qstr(format_ms(program.total_ms)))
          .arg(n - once)
          .arg(once > 0 ? tr(" (and %1 of constants, run once before the first run)").arg(once)
                        : QString())
          .arg(worst_spread > kNoisySpread
                   ? tr(" - noisy: samples spread up to ±%1%, the machine was likely busy; "
                        "profile again when it is idle")
                         .arg(50 * worst_spread, 0, 'f', 0)
                   : QString()));

  timeline_->set_program(program);
  auto waited = std::count_if(program.kernels.begin(), program.kernels.end(),
                              [](const ProgramKernel& k) { return waited_for_cores(k); });
  timeline_title_->setText(
      tr("One traced execution across %1 thread(s): %2 from the first launch to the last end%3")
          .arg(program.threads)
          .arg(QString::fromStdString(format_ms(static_cast<double>(program.traced_ns) / 1e6)))
          .arg(waited > 0 ? tr(" - in %1 kernel(s) the threads waited for a core far longer "
                               "than they worked: the machine was busy")
                                .arg(waited)
                          : QString()));
  stack_->setCurrentWidget(charts_);
  // The whole timeline when there is room for it, the rest for the bars.
  int timeline_h = timeline_->minimumHeight() + timeline_title_->sizeHint().height() + 8;
  int total = std::max(charts_->height(), height());
  charts_->setSizes({std::max(total - timeline_h, total / 2), std::min(timeline_h, total / 2)});
}

void TimingView::activate(int kernel) {
  if (kernel < 0 || kernel >= static_cast<int>(keys_.size())) return;
  Q_EMIT kernel_activated(keys_[static_cast<size_t>(kernel)]);
}

} // namespace beamlab::gui
