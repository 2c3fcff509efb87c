// The live tuning view; see live_view.hpp.
#include "gui/live_view.hpp"

#include <algorithm>
#include <cmath>

#include <QDateTime>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPainter>
#include <QSplitter>
#include <QVBoxLayout>

#include "engine/support/statistics.hpp"

namespace beamlab::gui {

namespace {
constexpr qint64 kRestartShownMs = 1000;
} // namespace

SandboxStrip::SandboxStrip(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(28);
  setToolTip("Each sandbox: compiling (blue), timing (green), idle (grey), restarting (red)");
}

void SandboxStrip::set_activity(const std::vector<tuner::SlotActivity>& a) {
  qint64 now = QDateTime::currentMSecsSinceEpoch();
  restarts_.resize(a.size(), 0);
  restarted_at_.resize(a.size(), -kRestartShownMs);
  states_.clear();
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].restarts > restarts_[i]) restarted_at_[i] = now;
    restarts_[i] = a[i].restarts;
    if (now - restarted_at_[i] < kRestartShownMs)
      states_ << "restarting";
    else if (a[i].state == tuner::SlotState::shared)
      states_ << "compiling";
    else if (a[i].state == tuner::SlotState::exclusive)
      states_ << "timing";
    else
      states_ << "idle";
  }
  update();
}

void SandboxStrip::paintEvent(QPaintEvent*) {
  QPainter p(this);
  int n = static_cast<int>(states_.size());
  if (n == 0) {
    p.drawText(rect(), Qt::AlignVCenter, "no sandboxes running");
    return;
  }
  int w = width() / n;
  for (int i = 0; i < n; ++i) {
    const QString& s = states_[i];
    QColor c = s == "compiling"    ? QColor(0x1f, 0x6f, 0xd0)
               : s == "timing"     ? QColor(0x2e, 0x9d, 0x4a)
               : s == "restarting" ? QColor(0xd6, 0x27, 0x28)
                                   : QColor(0xc8, 0xc8, 0xc8);
    QRect r(i * w + 2, 2, w - 4, height() - 4);
    p.fillRect(r, c);
    p.setPen(s == "idle" ? Qt::black : Qt::white);
    p.drawText(r, Qt::AlignCenter,
               QString("sandbox %1: %2 (%3 restarts)").arg(i).arg(s).arg(restarts_[size_t(i)]));
  }
}

LiveView::LiveView(QWidget* parent) : QWidget(parent) {
  beam_ = new QSpinBox;
  beam_->setRange(1, 64);
  beam_->setValue(4);
  budget_ = new QDoubleSpinBox;
  budget_->setRange(1, 86400);
  budget_->setValue(60);
  budget_->setSuffix(" s");
  corpus_ = new QLineEdit;
  corpus_->setPlaceholderText("corpus file (JSON), e.g. corpora/quick.json");
  auto* browse = new QPushButton("...");
  connect(browse, &QPushButton::clicked, this, [this] {
    QString f = QFileDialog::getOpenFileName(this, "Corpus", {}, "Corpus (*.json)");
    if (!f.isEmpty()) corpus_->setText(f);
  });
  start_kernel_ = new QPushButton("Tune selected kernel");
  start_kernel_->setEnabled(false);
  start_corpus_ = new QPushButton("Tune corpus");
  pause_ = new QPushButton("Pause");
  cancel_ = new QPushButton("Cancel");
  pause_->setEnabled(false);
  cancel_->setEnabled(false);
  connect(start_kernel_, &QPushButton::clicked, this, [this] { start(false); });
  connect(start_corpus_, &QPushButton::clicked, this, [this] { start(true); });
  connect(pause_, &QPushButton::clicked, this, &LiveView::pause_or_resume);
  connect(cancel_, &QPushButton::clicked, this, &LiveView::cancel);
  status_ = new QLabel("Pick a kernel in the Runs view, or a corpus, and start.");

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel("Beam"));
  controls->addWidget(beam_);
  controls->addWidget(new QLabel("Budget"));
  controls->addWidget(budget_);
  controls->addWidget(start_kernel_);
  controls->addWidget(corpus_, 1);
  controls->addWidget(browse);
  controls->addWidget(start_corpus_);
  controls->addWidget(pause_);
  controls->addWidget(cancel_);

  auto* chart = new QChart;
  chart->setTitle("Candidates as they settle");
  ax_ = new QValueAxis;
  ax_->setTitleText("wall time (s)");
  ay_ = new QLogValueAxis;
  ay_->setTitleText("best sample (ms, log scale)");
  ay_->setLabelFormat("%g");
  ay_->setMinorTickCount(-1);
  chart->addAxis(ax_, Qt::AlignBottom);
  chart->addAxis(ay_, Qt::AlignLeft);
  for (int i = 0; i < kStatusClassCount; ++i) {
    auto c = static_cast<StatusClass>(i);
    auto* s = new QScatterSeries;
    s->setName(status_class_name(c));
    s->setColor(status_color(c));
    s->setBorderColor(status_color(c));
    s->setMarkerSize(7);
    chart->addSeries(s);
    s->attachAxis(ax_);
    s->attachAxis(ay_);
    series_[c] = s;
    connect(s, &QScatterSeries::clicked, this, [this, c](const QPointF& p) { pick_point(c, p); });
  }
  best_ = new QLineSeries;
  best_->setName("best so far");
  best_->setColor(Qt::black);
  chart->addSeries(best_);
  best_->attachAxis(ax_);
  best_->attachAxis(ay_);
  chart_view_ = new QChartView(chart);
  chart_view_->setRenderHint(QPainter::Antialiasing);

  tree_ = new QTreeWidget;
  tree_->setHeaderLabels({"Beam (iteration x rank)", "ms", "Opts"});
  tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  tree_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  tree_->header()->setStretchLastSection(true);
  tree_->setTabKeyNavigation(false);
  details_ = new QLabel("Click a beam candidate for its details; Enter or a double-click opens "
                        "its plan in the Kernel view.");
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    if (!item || item->data(0, Qt::UserRole).isNull()) return;
    auto& cands = candidates_[item->data(0, Qt::UserRole + 1).toString().toStdString()];
    int id = item->data(0, Qt::UserRole).toInt();
    QString text;
    // The candidate and its ancestry: how the beam reached it.
    for (int at = id; at >= 0 && cands.count(at);) {
      const LiveEvent& e = cands[at];
      text += QString("#%1 [%2] %3 %4<br>")
                  .arg(e.id)
                  .arg(qstr(e.status))
                  .arg(ms_text(e.ms), qstr(e.opts.empty() ? "(no Opts)" : e.opts).toHtmlEscaped());
      at = e.parent;
    }
    details_->setText("<b>candidate and its parents</b><br>" + text);
  });
  connect(tree_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    if (!item || item->data(0, Qt::UserRole).isNull()) return;
    Q_EMIT candidate_picked(item->data(0, Qt::UserRole + 2).toString(), item->text(2));
  });
  steps_ = new QTableWidget(0, 5);
  steps_->setHorizontalHeaderLabels({"Step", "Tried", "Faster", "Median gain", "Best gain"});
  steps_->setToolTip("What each kind of Opt step gained: a candidate against the parent it "
                     "extends, by their best samples (gain = parent ms / child ms)");
  steps_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  steps_->verticalHeader()->hide();
  steps_->setSortingEnabled(true);
  make_reading_table(steps_);
  auto* side = new QSplitter(Qt::Vertical);
  side->addWidget(tree_);
  side->addWidget(details_);
  side->addWidget(steps_);
  auto* split = new QSplitter;
  split->addWidget(chart_view_);
  split->addWidget(side);
  // The beam's Opts and the steps' gains need room: about 3:2 for chart and side.
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  strip_ = new SandboxStrip;

  auto* v = new QVBoxLayout(this);
  v->addLayout(controls);
  v->addWidget(status_);
  v->addWidget(split, 1);
  budget_bar_ = new QProgressBar;
  budget_bar_->setFormat("%v of %m s of the budget");
  budget_bar_->setRange(0, static_cast<int>(std::ceil(budget_->value())));
  budget_bar_->setValue(0);
  // Before a run the bar shows the budget it would have.
  connect(budget_, &QDoubleSpinBox::valueChanged, this, [this](double s) {
    if (running()) return;
    budget_bar_->setFormat("%v of %m s of the budget");
    budget_bar_->setRange(0, static_cast<int>(std::ceil(s)));
    budget_bar_->setValue(0);
  });
  v->addWidget(budget_bar_);
  v->addWidget(strip_);
  timer_.setInterval(100);
  connect(&timer_, &QTimer::timeout, this, &LiveView::poll);
}

LiveView::~LiveView() = default;

void LiveView::set_kernel(std::optional<KernelTask> task) {
  set_kernels(task ? std::vector<KernelTask>{*task} : std::vector<KernelTask>{});
}

void LiveView::set_kernels(std::vector<KernelTask> tasks) {
  tasks_ = std::move(tasks);
  if (running()) return; // the button names what runs until it ends
  start_kernel_->setEnabled(!tasks_.empty());
  start_kernel_->setText(tune_text());
}

QString LiveView::tune_text() const {
  if (tasks_.empty()) return "Tune selected kernel";
  if (tasks_.size() == 1) return "Tune " + qstr(tasks_[0].name);
  return QString("Tune %1 kernels").arg(tasks_.size());
}

void LiveView::set_corpus(const QString& path) { corpus_->setText(path); }

void LiveView::reset_chart() {
  for (auto& [c, s] : series_) s->clear();
  best_->clear();
  shown_.clear();
  shown_best_.clear();
  tree_->clear();
  candidates_.clear();
  point_plans_.clear();
  steps_->setRowCount(0);
  max_t_ = 1;
  min_ms_ = max_ms_ = 0;
  settled_ = 0;
}

bool LiveView::can_start() {
  if (running()) return false;
  if (db_path_.empty()) status_->setText("No database is open.");
  return !db_path_.empty();
}

bool LiveView::start(bool corpus) {
  if (!can_start()) return false;
  SessionOptions o;
  o.db_path = db_path_;
  o.beam = beam_->value();
  o.budget_s = budget_->value();
  beam_width_ = o.beam;
  budget_s_ = o.budget_s;
  if (corpus) {
    if (corpus_->text().isEmpty()) {
      status_->setText("Choose a corpus file first.");
      return false;
    }
    session_ = std::make_unique<TuningSession>(o, corpus_->text().toStdString());
    running_name_ = QFileInfo(corpus_->text()).fileName();
  } else {
    if (tasks_.empty()) {
      status_->setText("Select a kernel in the Runs view first.");
      return false;
    }
    session_ = std::make_unique<TuningSession>(o, tasks_);
    running_name_ =
        tasks_.size() == 1 ? qstr(tasks_[0].name) : QString("%1 kernels").arg(tasks_.size());
  }
  launch();
  return true;
}

bool LiveView::resume_run(int64_t run_id) {
  if (!can_start()) return false;
  SessionOptions o;
  o.db_path = db_path_;
  session_ = std::make_unique<TuningSession>(o, run_id);
  budget_s_ = 0; // the run's own budget, which this view doesn't know
  running_name_ = QString("run %1").arg(run_id);
  launch();
  status_->setText(QString("resuming run %1...").arg(run_id));
  return true;
}

void LiveView::launch() {
  reset_chart();
  cancelled_ = false;
  since_start_.start();
  update_budget_bar();
  session_->start();
  status_->setText("running...");
  start_kernel_->setText("Tuning " + running_name_);
  start_kernel_->setEnabled(false);
  start_corpus_->setEnabled(false);
  pause_->setEnabled(true);
  pause_->setText("Pause");
  cancel_->setEnabled(true);
  timer_.start();
}

void LiveView::pause_or_resume() {
  if (!running()) return;
  if (session_->paused()) {
    session_->resume();
    pause_->setText("Pause");
    status_->setText("running...");
  } else {
    session_->pause();
    pause_->setText("Resume");
    status_->setText("paused (what is in flight finishes; nothing new starts)");
  }
}

void LiveView::cancel() {
  if (!running()) return;
  session_->cancel();
  cancelled_ = true;
  status_->setText("cancelling: re-measuring the best so far...");
}

int LiveView::points(StatusClass c) const { return series_.at(c)->count(); }

void LiveView::poll() {
  if (!session_) return;
  apply(session_->take());
  strip_->set_activity(session_->activity());
  update_budget_bar();
  if (!session_->finished()) return;
  apply(session_->take());
  timer_.stop();
  std::string error = session_->error();
  // As the Runs view will say it: a cancelled run is kept as interrupted.
  QString ended = cancelled_ ? QString("cancelled: %1 candidates kept, run %2 (interrupted; "
                                       "resume it from the Runs view)")
                             : QString("done: %1 candidates, run %2");
  status_->setText(error.empty()
                       ? ended.arg(settled_).arg(session_->run_id())
                       : "<span style='color:#d62728'>" + qstr(error).toHtmlEscaped() + "</span>");
  start_kernel_->setText(tune_text());
  start_kernel_->setEnabled(!tasks_.empty());
  start_corpus_->setEnabled(true);
  pause_->setEnabled(false);
  cancel_->setEnabled(false);
  strip_->set_activity({});
  Q_EMIT session_finished();
}

void LiveView::apply(const std::vector<LiveEvent>& events) {
  if (events.empty()) return;
  std::map<StatusClass, QList<QPointF>> points;
  QList<QPointF> best;
  std::vector<std::pair<std::string, int>> iterated; // kernel, the iteration that ended
  for (const LiveEvent& e : events) {
    max_t_ = std::max(max_t_, e.t);
    switch (e.kind) {
    case LiveEvent::Kind::settled:
      ++settled_;
      candidates_[e.kernel][e.id] = e;
      if (e.ms > 0) {
        points[status_class(e.status)].append({e.t, e.ms});
        point_plans_[status_class(e.status)].emplace_back(e.hash, e.opts);
        max_ms_ = std::max(max_ms_, e.ms);
        min_ms_ = min_ms_ > 0 ? std::min(min_ms_, e.ms) : e.ms;
      }
      break;
    case LiveEvent::Kind::best:
      if (double ms = e.best > 0 ? e.best : e.ms; ms > 0) best.append({e.t, ms}); // log axis
      break;
    case LiveEvent::Kind::iteration: iterated.emplace_back(e.kernel, e.iteration); break;
    case LiveEvent::Kind::kernel_started:
      current_kernel_ = e.kernel;
      status_->setText("tuning " + qstr(e.kernel) + "...");
      break;
    case LiveEvent::Kind::kernel_finished:
      status_->setText(
          QString("%1: %2 %3 %4")
              .arg(qstr(e.kernel), qstr(e.status), ms_text(e.ms), qstr(e.opts + e.detail)));
      break;
    case LiveEvent::Kind::restarted:
      status_->setText("sandbox restarted: " + qstr(e.detail));
      break;
    case LiveEvent::Kind::message: break;
    }
  }
  // One replace per series per batch: QXYSeries::append signals each point, and the chart
  // re-lays out its markers per signal, which is quadratic in a run's candidates.
  for (auto& [c, list] : points) {
    shown_[c] += list;
    series_[c]->replace(shown_[c]);
  }
  if (!best.isEmpty()) {
    shown_best_ += best;
    best_->replace(shown_best_);
  }
  ax_->setRange(0, max_t_ * 1.05);
  ax_->applyNiceNumbers();
  if (max_ms_ > 0) ay_->setRange(min_ms_ / 1.25, max_ms_ * 1.25);
  for (const auto& [k, i] : iterated) update_tree(k, i);
  if (!iterated.empty() || !running()) update_steps();
}

void LiveView::update_budget_bar() {
  double t = since_start_.isValid() ? since_start_.elapsed() / 1000.0 : 0;
  if (budget_s_ <= 0) { // a resumed run: its time, against no budget shown here
    budget_bar_->setRange(0, 0);
    budget_bar_->setFormat(QString("%1 s").arg(static_cast<int>(t)));
    return;
  }
  if (t <= budget_s_) {
    budget_bar_->setFormat("%v of %m s of the budget");
    budget_bar_->setRange(0, static_cast<int>(std::ceil(budget_s_)));
    budget_bar_->setValue(static_cast<int>(t));
    return;
  }
  // The budget bounds the searches; the finalists' re-measurement and the checks of the
  // winners come after it, and the bar says so rather than stand at "15 of 15 s".
  budget_bar_->setFormat(QString("%v s: %1 s past the %2 s budget (re-measuring and checking "
                                 "the winners)")
                             .arg(static_cast<int>(t - budget_s_))
                             .arg(budget_s_, 0, 'g', 4));
  budget_bar_->setRange(0, static_cast<int>(std::ceil(t)));
  budget_bar_->setValue(static_cast<int>(t));
}

void LiveView::pick_point(StatusClass c, const QPointF& p) {
  const QList<QPointF>& pts = shown_[c];
  int best = -1;
  double best_d = 0;
  for (int i = 0; i < pts.size(); ++i) {
    double d = std::abs(pts[i].x() - p.x()) / std::max(max_t_, 1e-9) +
               std::abs(std::log(pts[i].y() / p.y()));
    if (best < 0 || d < best_d) best = i, best_d = d;
  }
  if (best < 0 || static_cast<size_t>(best) >= point_plans_[c].size()) return;
  const auto& [hash, opts] = point_plans_[c][static_cast<size_t>(best)];
  Q_EMIT candidate_picked(qstr(hash), qstr(opts));
}

// For every settled candidate with a time whose parent has one too: the Opt kinds it added,
// and the gain over the parent.
void LiveView::update_steps() {
  struct Gains {
    std::vector<double> gains;
  };
  std::map<std::string, Gains> by_op;
  for (const auto& [kernel, cands] : candidates_)
    for (const auto& [id, e] : cands) {
      auto parent = cands.find(e.parent);
      if (e.ms <= 0 || parent == cands.end() || parent->second.ms <= 0) continue;
      auto mine = parse_opts(e.opts), theirs = parse_opts(parent->second.opts);
      if (!mine || !theirs) continue;
      for (const Opt& o : *mine)
        if (std::find(theirs->begin(), theirs->end(), o) == theirs->end())
          by_op[std::string(opt_op_name(o.op))].gains.push_back(parent->second.ms / e.ms);
    }
  steps_->setSortingEnabled(false);
  steps_->setRowCount(0);
  for (auto& [op, g] : by_op) {
    int row = steps_->rowCount();
    steps_->insertRow(row);
    auto faster = std::count_if(g.gains.begin(), g.gains.end(), [](double x) { return x > 1; });
    double median = quantile(g.gains, 0.5);
    double best = *std::max_element(g.gains.begin(), g.gains.end());
    auto number = [](double v, const QString& text) { return new NumberItem(text, v); };
    steps_->setItem(row, 0, new QTableWidgetItem(qstr(op)));
    steps_->setItem(row, 1, number(double(g.gains.size()), QString::number(g.gains.size())));
    steps_->setItem(row, 2, number(double(faster), QString::number(faster)));
    steps_->setItem(row, 3, number(median, QString("%1x").arg(median, 0, 'f', 2)));
    steps_->setItem(row, 4, number(best, QString("%1x").arg(best, 0, 'f', 2)));
  }
  steps_->setSortingEnabled(true);
}

// The beam after an iteration: the W fastest correct candidates so far (as the search ranks).
void LiveView::update_tree(const std::string& kernel, int iteration) {
  std::vector<const LiveEvent*> ok;
  for (const auto& [id, e] : candidates_[kernel])
    if (e.status == "ok" && e.ms > 0) ok.push_back(&e);
  std::sort(ok.begin(), ok.end(), [](const LiveEvent* a, const LiveEvent* b) {
    return a->ms < b->ms || (a->ms == b->ms && a->id < b->id);
  });
  ok.resize(std::min(ok.size(), size_t(std::max(1, beam_width_))));
  // The iteration that ended, by the search's count: one whose candidates are still compiling
  // (taken in by a later one) is still an iteration of its own.
  auto* top =
      new QTreeWidgetItem(tree_, {QString("%1 iteration %2").arg(qstr(kernel)).arg(iteration),
                                  ok.empty() ? "" : QString::number(ok[0]->ms, 'f', 4)});
  for (size_t r = 0; r < ok.size(); ++r) {
    auto* child = new QTreeWidgetItem(top, {QString("rank %1: #%2").arg(r + 1).arg(ok[r]->id),
                                            QString::number(ok[r]->ms, 'f', 4), qstr(ok[r]->opts)});
    child->setData(0, Qt::UserRole, ok[r]->id);
    child->setData(0, Qt::UserRole + 1, qstr(kernel));
    child->setData(0, Qt::UserRole + 2, qstr(ok[r]->hash));
  }
  top->setExpanded(true);
  tree_->scrollToItem(top);
}

} // namespace beamlab::gui
