// The kernel view; see kernel_view.hpp.
#include "gui/kernel_view.hpp"

#include <limits>

#include <QCategoryAxis>
#include <QChart>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSplitter>
#include <QVBoxLayout>
#include <QValueAxis>

#include "engine/support/statistics.hpp"
#include "gui/async.hpp"
#include "gui/style.hpp"
#include "tuner/store/journal.hpp"

namespace beamlab::gui {

namespace {
const char* const kNoKernelText = "Open a kernel from the Runs view (Enter or double-click).";
} // namespace

KernelView::KernelView(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(kNoKernelText);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  axes_ = new QLabel;
  axes_->setTextFormat(Qt::RichText);
  axes_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  result_ = new QLabel;
  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  list_ = new QListWidget;
  list_->setToolTip("The Opts applied, in order (Delete removes the selected one)");
  op_ = new QComboBox;
  for (OptOp o : {OptOp::Upcast, OptOp::Unroll, OptOp::Thread, OptOp::Group, OptOp::Tile,
                  OptOp::Swap, OptOp::Padto, OptOp::Pack})
    op_->addItem(qstr(std::string(opt_op_name(o))), static_cast<int>(o));
  axis_ = new QSpinBox;
  axis_->setRange(0, 16);
  axis_->setPrefix("axis ");
  axis_->setToolTip("The axis the Opt applies to: the n of n:extent in the axes line above "
                    "(loop and reduce axes, in nesting order, after the Opts so far); for "
                    "PACK, the input buffer");
  amount_ = new QSpinBox;
  amount_->setToolTip("How many iterations become lanes, chunks or blocks (SWAP: the other "
                      "axis; PACK: 0)");
  amount_->setRange(0, 1024); // PACK(input, 0)
  amount_->setValue(4);
  // PACK addresses an input buffer, not an axis.
  connect(op_, &QComboBox::currentIndexChanged, this, [this] {
    bool pack = static_cast<OptOp>(op_->currentData().toInt()) == OptOp::Pack;
    axis_->setPrefix(pack ? "input " : "axis ");
    if (pack) amount_->setValue(0);
  });
  auto* add = new QPushButton("Add");
  auto* remove = new QPushButton("Remove");
  auto* winner = new QPushButton("Winner");
  auto* heuristic = new QPushButton("Heuristic");
  auto* none = new QPushButton("None");
  text_ = new QLineEdit;
  text_->setPlaceholderText("Opts as text, e.g. UPCAST(1,8) THREAD(0,2); Enter measures");
  connect(add, &QPushButton::clicked, this, &KernelView::add_opt);
  connect(remove, &QPushButton::clicked, this, &KernelView::remove_opt);
  auto reset_to = [this](auto which) {
    return [this, which] {
      if (!task_) return;
      auto o = parse_opts(which(detail_.row.tuning));
      if (o) try_opts(*o);
    };
  };
  connect(winner, &QPushButton::clicked, this,
          reset_to([](const db::Tuning& t) { return t.winner_opts; }));
  connect(heuristic, &QPushButton::clicked, this,
          reset_to([](const db::Tuning& t) { return t.heuristic_opts; }));
  connect(none, &QPushButton::clicked, this, [this] { try_opts({}); });
  connect(text_, &QLineEdit::returnPressed, this, [this] {
    auto o = parse_opts(text_->text().toStdString());
    if (!o) {
      result_->setText("<span style='color:#d62728'>" + qstr(o.error()).toHtmlEscaped() +
                       "</span>");
      return;
    }
    try_opts(*o);
  });
  auto* del = new QAction(list_);
  del->setShortcut(QKeySequence::Delete);
  del->setShortcutContext(Qt::WidgetShortcut);
  list_->addAction(del);
  connect(del, &QAction::triggered, this, &KernelView::remove_opt);

  auto* editor = new QWidget;
  auto* ev = new QVBoxLayout(editor);
  ev->setContentsMargins(0, 0, 0, 0);
  ev->addWidget(new QLabel("Opts"));
  ev->addWidget(list_, 1);
  auto* adder = new QHBoxLayout;
  adder->addWidget(op_);
  adder->addWidget(axis_);
  adder->addWidget(amount_);
  adder->addWidget(add);
  ev->addLayout(adder);
  auto* resets = new QHBoxLayout;
  resets->addWidget(remove);
  resets->addWidget(winner);
  resets->addWidget(heuristic);
  resets->addWidget(none);
  ev->addLayout(resets);
  ev->addWidget(text_);
  ev->addWidget(result_);

  // A read-only code pane, highlighted for `language`.
  auto code_pane = [](CodeHighlighter::Language language) {
    auto* e = new QPlainTextEdit;
    e->setReadOnly(true);
    e->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    e->setLineWrapMode(QPlainTextEdit::NoWrap);
    new CodeHighlighter(e->document(), language);
    return e;
  };
  ir_ = code_pane(CodeHighlighter::Language::llvm_ir);
  asm_ = code_pane(CodeHighlighter::Language::assembly);
  // Side by side: IR and assembly, each following the other's cursor to the same IR block
  // (LLVM's verbose assembly names it), under the assembly's loops with what each does.
  side_ir_ = code_pane(CodeHighlighter::Language::llvm_ir);
  side_asm_ = code_pane(CodeHighlighter::Language::assembly);
  connect(side_ir_, &QPlainTextEdit::cursorPositionChanged, this,
          [this] { follow(side_ir_, side_asm_, true); });
  connect(side_asm_, &QPlainTextEdit::cursorPositionChanged, this,
          [this] { follow(side_asm_, side_ir_, false); });
  loops_ = new QListWidget;
  loops_->setToolTip("The assembly's loops (click one to show it in both panes)");
  loops_->setMaximumHeight(110);
  connect(loops_, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row < 0 || row >= static_cast<int>(loop_data_.size())) return;
    const AsmLoop& l = loop_data_[static_cast<size_t>(row)];
    QTextCursor c(side_asm_->document()->findBlockByNumber(l.first_line));
    side_asm_->setTextCursor(c); // the IR pane follows
    side_asm_->centerCursor();
  });
  candidates_ = make_candidates_model(this);
  table_ = new QTableView;
  auto* proxy = make_proxy(candidates_, candidates_col::opts, this);
  table_->setModel(proxy);
  table_->setSortingEnabled(true);
  table_->sortByColumn(candidates_col::seq, Qt::AscendingOrder);
  make_reading_table(table_);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  connect(table_, &QTableView::activated, this, [this, proxy](const QModelIndex& i) {
    const db::CandidateRow& c = candidates_->row(proxy->mapToSource(i).row());
    if (auto o = parse_opts(c.opts)) try_opts(*o);
    Q_EMIT candidate_activated(c.seq);
  });
  // Under the table, the samples behind its numbers: a best and a median of the same runs can
  // tell different stories (two modes), and the strip shows which.
  samples_ = new QChartView(new QChart);
  samples_->setRenderHint(QPainter::Antialiasing);
  samples_->setMinimumHeight(230);
  samples_->chart()->legend()->hide(); // the title names the marks
  samples_->chart()->setMargins(QMargins(4, 2, 4, 2));
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this, proxy](const QModelIndex& i) {
            if (i.isValid()) show_samples_of(candidates_->row(proxy->mapToSource(i).row()).seq);
          });
  auto* candidates_page = new QSplitter(Qt::Vertical);
  candidates_page->addWidget(table_);
  candidates_page->addWidget(samples_);
  candidates_page->setStretchFactor(0, 2);
  candidates_page->setStretchFactor(1, 1);
  history_ = new QChartView(new QChart);
  history_->setRenderHint(QPainter::Antialiasing);
  tabs_ = new QTabWidget;
  tabs_->addTab(ir_, "LLVM IR");
  tabs_->addTab(asm_, "Assembly");
  auto* side = new QWidget;
  auto* sv = new QVBoxLayout(side);
  sv->setContentsMargins(0, 0, 0, 0);
  auto* panes = new QSplitter;
  panes->addWidget(side_ir_);
  panes->addWidget(side_asm_);
  sv->addWidget(loops_);
  sv->addWidget(panes, 1);
  tabs_->addTab(side, "Side by side");
  tabs_->addTab(candidates_page, "Candidates");
  tabs_->addTab(history_, "Timing history");

  auto* split = new QSplitter;
  split->addWidget(editor);
  split->addWidget(tabs_);
  split->setStretchFactor(1, 3);
  auto* v = new QVBoxLayout(this);
  v->addWidget(title_);
  v->addWidget(axes_);
  v->addWidget(split, 1);
}

void KernelView::set_tuning(const TuningDetail& detail, const std::string& db_path) {
  bool same_kernel = task_ && detail.row.kernel.hash == detail_.row.kernel.hash;
  detail_ = detail;
  candidates_->set_rows(detail.candidates);
  if (bench_path_ != db_path) {
    bench_ = std::make_shared<HandBench>(db_path);
    bench_path_ = db_path;
  }
  const db::Kernel& k = detail.row.kernel;
  const db::Tuning& t = detail.row.tuning;
  title_->setText(QString("<b>%1</b> &nbsp; %2 &nbsp; run %3 (%4) &nbsp; %5 FLOP, %6 bytes "
                          "&nbsp; heuristic %7 &rarr; tuned %8 (medians of the final rounds)")
                      .arg(qstr(k.name), qstr(k.hash))
                      .arg(detail.run.id)
                      .arg(qstr(detail.run.started_at))
                      .arg(k.flops)
                      .arg(k.bytes)
                      .arg(ms_text(t.heuristic_ms.value_or(0)), ms_text(t.winner_ms.value_or(0))));
  update_history();
  show_samples_of(same_kernel ? samples_selected_ : -1); // a live reload keeps the selected row
  if (same_kernel) return; // a live reload: keep the plan being edited
  auto task = tuner::task_from_record(k);
  if (!task) {
    task_.reset();
    result_->setText("<span style='color:#d62728'>" + qstr(task.error()).toHtmlEscaped() +
                     "</span>");
    return;
  }
  task_ = *task;
  auto o = parse_opts(t.winner_opts.empty() ? t.heuristic_opts : t.winner_opts);
  opts_ = o ? *o : std::vector<Opt>{};
  result_->clear();
  show_opts();
  refresh_code();
}

void KernelView::follow(QPlainTextEdit* from, QPlainTextEdit* to, bool from_ir) {
  if (following_) return;
  std::string from_text = from->toPlainText().toStdString();
  std::string to_text = to->toPlainText().toStdString();
  int line = from->textCursor().blockNumber();
  std::string block = from_ir ? ir_block_at(from_text, line) : asm_block_at(from_text, line);
  int target = block.empty() ? -1
               : from_ir     ? asm_block_line(to_text, block)
                             : ir_block_line(to_text, block);
  // Both panes mark the block's first line.
  auto mark = [](QPlainTextEdit* e, int at) {
    QList<QTextEdit::ExtraSelection> marks;
    if (at >= 0) {
      QTextEdit::ExtraSelection m;
      m.format.setBackground(QColor(0xff, 0xf3, 0xb0));
      m.format.setProperty(QTextFormat::FullWidthSelection, true);
      m.cursor = QTextCursor(e->document()->findBlockByNumber(at));
      marks << m;
    }
    e->setExtraSelections(marks);
  };
  int own = block.empty() ? -1
            : from_ir     ? ir_block_line(from_text, block)
                          : asm_block_line(from_text, block);
  mark(from, own);
  mark(to, target);
  if (target < 0) return;
  following_ = true;
  to->setTextCursor(QTextCursor(to->document()->findBlockByNumber(target)));
  to->centerCursor();
  following_ = false;
}

QStringList KernelView::loop_annotations() const {
  QStringList out;
  for (int i = 0; i < loops_->count(); ++i) out << loops_->item(i)->text().trimmed();
  return out;
}

void KernelView::follow_ir_line(int line) {
  side_ir_->setTextCursor(QTextCursor(side_ir_->document()->findBlockByNumber(line)));
}

int KernelView::side_assembly_line() const { return side_asm_->textCursor().blockNumber(); }

void KernelView::clear() {
  detail_ = {};
  task_.reset();
  opts_.clear();
  ++code_serial_; // a compile still running belongs to the kernel that was shown
  title_->setText(kNoKernelText);
  axes_->clear();
  result_->clear();
  list_->clear();
  text_->clear();
  ir_->clear();
  asm_->clear();
  side_ir_->clear();
  side_asm_->clear();
  loops_->clear();
  loop_data_.clear();
  candidates_->set_rows({});
  clear_chart(history_->chart());
  show_samples_of(-1);
}

void KernelView::show_plan(const std::vector<Opt>& opts) {
  if (!task_) return;
  opts_ = opts;
  show_opts();
  refresh_code();
  result_->setText("a candidate's plan, not measured here: Enter in the Opts text measures it");
}

void KernelView::try_opts(const std::vector<Opt>& opts) {
  if (!task_) return;
  opts_ = opts;
  show_opts();
  refresh_code();
  measure();
}

void KernelView::show_opts() {
  list_->clear();
  for (const Opt& o : opts_) list_->addItem(qstr(to_string(o)));
  text_->setText(qstr(to_string(opts_)));
}

void KernelView::add_opt() {
  Opt o{static_cast<OptOp>(op_->currentData().toInt()), axis_->value(), amount_->value()};
  std::vector<Opt> next = opts_;
  next.push_back(o);
  try_opts(next);
}

void KernelView::remove_opt() {
  int row = list_->currentRow();
  if (row < 0 || row >= static_cast<int>(opts_.size())) return;
  std::vector<Opt> next = opts_;
  next.erase(next.begin() + row);
  try_opts(next);
}

void KernelView::refresh_code() {
  int serial = ++code_serial_;
  std::string ast = task_->ast, name = task_->name;
  std::vector<Opt> opts = opts_;
  run_async(
      this, [ast, opts, name] { return kernel_code(ast, opts, name); },
      [this, serial](const Expected<KernelCode>& code) {
        if (serial != code_serial_) return; // an older edit's code
        if (!code) {
          axes_->setText("<span style='color:#d62728'>" + qstr(code.error()).toHtmlEscaped() +
                         "</span>");
          ir_->setPlainText(qstr(code.error()));
          asm_->clear();
          side_ir_->setPlainText(qstr(code.error()));
          side_asm_->clear();
          loops_->clear();
          loop_data_.clear();
        } else {
          axes_->setText("axes: " + axes_html(code->axes));
          ir_->setPlainText(qstr(code->llvm_ir));
          asm_->setPlainText(qstr(code->assembly));
          following_ = true;
          side_ir_->setPlainText(qstr(code->llvm_ir));
          side_asm_->setPlainText(qstr(code->assembly));
          following_ = false;
          loop_data_ = asm_loops(code->assembly);
          loops_->clear();
          for (const AsmLoop& l : loop_data_)
            loops_->addItem(QString(l.depth - 1, ' ') + qstr(l.summary()));
        }
        Q_EMIT code_ready();
      });
}

void KernelView::measure() {
  result_->setText("measuring " + qstr(to_string(opts_)) + " in a sandbox...");
  auto bench = bench_;
  KernelTask task = *task_;
  std::vector<Opt> opts = opts_;
  run_async(
      this, [bench, task, opts] { return bench->measure(task, opts); },
      [this, opts](const Expected<HandResult>& r) {
        QString plan = qstr(opts.empty() ? "(no Opts)" : to_string(opts));
        if (!r) {
          result_->setText(plan + ": <span style='color:#d62728'>" +
                           qstr(r.error()).toHtmlEscaped() + "</span>");
          Q_EMIT measured("error");
          return;
        }
        const tuner::Candidate& c = r->candidate;
        std::string status = tuner::to_string(c.status);
        if (c.status == tuner::Status::ok) {
          // Both times with their spread, and the ratio flagged when either is noisy: a
          // re-measured plan moves by its spread, which is not a change.
          double ms = c.median_ms();
          double spread =
              std::max(relative_spread(c.samples_ms), relative_spread(r->heuristic_samples_ms));
          QString vs = r->heuristic_ms > 0 ? QString(" (heuristic %1: %2x)")
                                                 .arg(time_with_spread(r->heuristic_samples_ms))
                                                 .arg(r->heuristic_ms / ms, 0, 'f', 2)
                                           : QString();
          QString noisy =
              spread > kNoisySpread
                  ? QString("<br><span style='color:#b86e00'>noisy: the samples spread ±%1%; "
                            "the machine was likely busy. Ratios within that are not changes: "
                            "re-measure when it is idle.</span>")
                        .arg(100 * spread / 2, 0, 'f', 0)
                  : QString();
          result_->setText(plan + ": <b>" + time_with_spread(c.samples_ms) + "</b>" + vs + noisy);
        } else {
          QColor color = status_color(status_class(status));
          result_->setText(
              QString("%1: <span style='color:%2'>%3</span>: %4")
                  .arg(plan, color.name(), qstr(status), qstr(c.error).toHtmlEscaped()));
        }
        Q_EMIT measured(qstr(status));
      });
}

void KernelView::update_history() {
  QChart* chart = history_->chart();
  clear_chart(chart);
  chart->setTitle("Timing history of " + qstr(detail_.row.kernel.name));
  auto* tuned = new QLineSeries;
  tuned->setName("tuned (winner of each search)");
  auto* heuristic = new QLineSeries;
  heuristic->setName("heuristic");
  // Plans tried by hand are their own series, between the searches they followed: never
  // joined to the winners' line, which would read as the tuned time regressing.
  auto* hand = new QScatterSeries;
  hand->setName("tried by hand");
  hand->setColor(QColor(0xc9, 0xa2, 0x00));
  hand->setMarkerSize(9);
  // Bench runs time the kernel inside their workloads, not alone in the sandbox: their own
  // series, never joined to the searches' lines.
  auto* bench = new QScatterSeries;
  bench->setName("bench runs (inside their workloads)");
  bench->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  bench->setColor(QColor(0x8c, 0x56, 0x4b));
  bench->setMarkerSize(9);
  double top = 0;
  int searches = 0;
  for (const db::Tuning& t : detail_.history) {
    if (tuner::tried_by_hand(t)) continue;
    ++searches;
    if (t.winner_ms) tuned->append(searches, *t.winner_ms), top = std::max(top, *t.winner_ms);
    if (t.heuristic_ms)
      heuristic->append(searches, *t.heuristic_ms), top = std::max(top, *t.heuristic_ms);
  }
  for (const TuningDetail::HandTry& h : detail_.hand_tries) {
    double ms = quantile(h.samples_ms, 0.5);
    hand->append(h.after_searches + 0.5, ms);
    top = std::max(top, ms);
  }
  // Where a bench run's time moved beyond noise from the bench run before it (the reports'
  // verdict), a change point, ringed.
  auto* changes = new QScatterSeries;
  changes->setName("change point (bench runs, beyond noise)");
  changes->setMarkerSize(17);
  changes->setColor(Qt::transparent);
  changes->setBorderColor(QColor(0xd6, 0x27, 0x28));
  for (const TuningDetail::BenchPoint& b : detail_.bench_points) {
    double ms = quantile(b.samples_ms, 0.5);
    bench->append(b.after_searches + 0.7, ms);
    if (b.change == reports::Verdict::regression || b.change == reports::Verdict::improvement)
      changes->append(b.after_searches + 0.7, ms);
    top = std::max(top, ms);
  }
  auto* ax = new QValueAxis;
  ax->setTitleText("search, oldest first (plans tried by hand and bench runs sit after the "
                   "search before them)");
  ax->setRange(0.5, searches + 0.5 + (hand->count() + bench->count() > 0 ? 0.5 : 0));
  ax->setTickType(QValueAxis::TicksDynamic);
  ax->setTickAnchor(1);
  ax->setTickInterval(1);
  ax->setLabelFormat("%d");
  auto* ay = new QValueAxis;
  ay->setTitleText("ms (median)");
  ay->setRange(0, top > 0 ? top * 1.15 : 1);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{tuned, heuristic, hand, bench, changes}) {
    chart->addSeries(s);
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  tuned->setPointsVisible(true);
  heuristic->setPointsVisible(true);
}

void KernelView::show_samples_of(int seq) {
  samples_selected_ = seq;
  QChart* chart = samples_->chart();
  clear_chart(chart);
  sample_rows_.clear();
  // The heuristic (#1), the winner and the selected candidate, each once, bottom up.
  std::vector<std::pair<const db::CandidateRow*, QString>> shown;
  auto add = [&](const db::CandidateRow* c, const QString& role) {
    if (!c || c->samples_ms.empty()) return;
    for (auto& [other, other_role] : shown)
      if (other == c) {
        other_role += ", " + role;
        return;
      }
    shown.emplace_back(c, role);
  };
  const db::Tuning& t = detail_.row.tuning;
  const db::CandidateRow *heuristic = nullptr, *winner = nullptr, *selected = nullptr;
  for (const db::CandidateRow& c : detail_.candidates) {
    if (c.seq == 1) heuristic = &c;
    if (!winner && !t.winner_opts.empty() && c.opts == t.winner_opts && c.status == "ok")
      winner = &c;
    if (c.seq == seq) selected = &c;
  }
  add(heuristic, "heuristic");
  add(winner, "winner");
  add(selected, "selected");
  if (shown.empty()) {
    chart->setTitle("No timed samples to show: select a candidate that was timed");
    return;
  }
  chart->setTitle("Every timed run (dots), the median (red square) and the best (green diamond)");
  auto* dots = new QScatterSeries;
  dots->setName("timed runs");
  dots->setMarkerSize(7);
  dots->setColor(QColor(0x1f, 0x77, 0xb4, 150));
  dots->setBorderColor(Qt::transparent);
  auto* medians = new QScatterSeries;
  medians->setName("median");
  medians->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  medians->setMarkerSize(14);
  medians->setColor(QColor(0xd6, 0x27, 0x28));
  auto* bests = new QScatterSeries;
  bests->setName("best");
  bests->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
  bests->setMarkerSize(11);
  bests->setColor(QColor(0x2c, 0xa0, 0x2c));
  auto* rows = new QCategoryAxis;
  rows->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (size_t r = 0; r < shown.size(); ++r) {
    const auto& [c, role] = shown[r];
    double y = static_cast<double>(r);
    // Runs spread a little up and down (a fixed pattern, so a reload draws the same strip).
    for (size_t i = 0; i < c->samples_ms.size(); ++i) {
      double jitter = (static_cast<double>((i * 7) % 9) - 4.0) * 0.05;
      dots->append(c->samples_ms[i], y + jitter);
      lo = std::min(lo, c->samples_ms[i]);
      hi = std::max(hi, c->samples_ms[i]);
    }
    medians->append(median_ms(*c), y);
    bests->append(best_ms(*c), y);
    QString label = QString("#%1 %2").arg(c->seq).arg(role);
    sample_rows_ << label;
    rows->append(label, y);
  }
  rows->setRange(-0.6, static_cast<double>(shown.size()) - 0.4);
  auto* ax = new QValueAxis;
  ax->setTitleText("ms per run");
  ax->setLabelFormat("%.4g");
  double pad = std::max((hi - lo) * 0.08, hi * 0.02);
  ax->setRange(std::max(0.0, lo - pad), hi + pad);
  ax->applyNiceNumbers();
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(rows, Qt::AlignLeft);
  for (QScatterSeries* s : {dots, medians, bests}) {
    chart->addSeries(s);
    s->attachAxis(ax);
    s->attachAxis(rows);
  }
}

int KernelView::history_points(const QString& series) const {
  for (QAbstractSeries* s : history_->chart()->series())
    if (s->name().startsWith(series)) return static_cast<QXYSeries*>(s)->count();
  return 0;
}

} // namespace beamlab::gui
