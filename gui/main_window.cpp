// The workbench window; see main_window.hpp.
#include "gui/main_window.hpp"

#include <filesystem>

#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QMenuBar>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QShortcut>
#include <QSplitter>
#include <QStatusBar>
#include <QVBoxLayout>

#include "gui/async.hpp"
#include "gui/export.hpp"
#include "gui/program.hpp"
#include "gui/style.hpp"
#include "tuner/batch/policy.hpp"
#include "tuner/store/journal.hpp"
#include <beamlab/workloads.hpp>

namespace beamlab::gui {

namespace {

// A sortable table of `model`; column `stretch` takes the room the others leave, the others fit
// their contents (up to a third of the window, the rest in the tooltip).
QTableView* table(QAbstractItemModel* model, int stretch) {
  auto* t = new QTableView;
  t->setModel(model);
  t->setSortingEnabled(true);
  make_reading_table(t);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->setWordWrap(false);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setSectionResizeMode(stretch, QHeaderView::Stretch);
  t->horizontalHeader()->setMaximumSectionSize(420);
  t->verticalHeader()->hide();
  return t;
}

} // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("beamlab workbench");
  message_ = new QLabel;
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  // Runs and kernels.
  runs_ = make_runs_model(this);
  runs_proxy_ = make_proxy(runs_, runs_col::command, this);
  runs_view_ = table(runs_proxy_, runs_col::command);
  runs_view_->sortByColumn(runs_col::id, Qt::DescendingOrder);
  kernels_ = make_kernels_model(this);
  kernels_proxy_ = make_proxy(kernels_, kernels_col::name, this);
  kernels_view_ = table(kernels_proxy_, kernels_col::opts);
  kernels_view_->sortByColumn(kernels_col::speedup, Qt::DescendingOrder);
  measurements_ = make_measurements_model(this);
  measurements_proxy_ = make_proxy(measurements_, measurements_col::name, this);
  measurements_view_ = table(measurements_proxy_, measurements_col::plan);
  measurements_view_->hide(); // until a bench run is selected
  filter_ = new QLineEdit;
  filter_->setPlaceholderText("filter kernels by name, workload, plan or any column (Ctrl+F)");
  filter_->setClearButtonEnabled(true);
  for (QSortFilterProxyModel* p : {kernels_proxy_, measurements_proxy_}) {
    p->setFilterKeyColumn(-1); // a row matches where any of its cells does
    connect(filter_, &QLineEdit::textChanged, p, &QSortFilterProxyModel::setFilterFixedString);
  }
  // Enter on a bench run's kernel opens its newest search, as the Schedule and Timing views
  // do; on a workload or a suite entry, its trend across the device's bench runs (the context
  // menu has the trend for kernels too).
  connect(measurements_view_, &QTableView::activated, this, [this](const QModelIndex& i) {
    if (!i.isValid()) return;
    const reports::Measurement& m = measurements_->row(measurements_proxy_->mapToSource(i).row());
    if (m.section == reports::Section::kernel)
      open_kernel_by_hash(qstr(m.key));
    else
      show_trend(m.section, m.key);
  });
  auto* trend = new QAction("Trend across bench runs", measurements_view_);
  connect(trend, &QAction::triggered, this, [this] {
    QModelIndex i = measurements_view_->currentIndex();
    if (!i.isValid()) return;
    const reports::Measurement& m = measurements_->row(measurements_proxy_->mapToSource(i).row());
    show_trend(m.section, m.key);
  });
  measurements_view_->addAction(trend);
  measurements_view_->setContextMenuPolicy(Qt::ActionsContextMenu);
  connect(runs_view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& i) {
            if (i.isValid()) select_run(i.data(kIdRole).toLongLong());
          });
  // Enter on a run compares it with the one before it of its kind (Compare's default).
  connect(runs_view_, &QTableView::activated, this, [this](const QModelIndex& i) {
    if (!i.isValid()) return;
    compare_view_->pick_run(i.data(kIdRole).toLongLong());
    auto [a, b] = compare_view_->picked_runs();
    if (a != 0 && a != b) compare_view_->compare_runs(a, b);
    tabs_->setCurrentWidget(compare_view_);
  });
  // A tuning run that was interrupted (or failed) resumes in Live tuning, whichever door began
  // it: the CLI, Python or this window.
  auto* resume = new QAction("Resume this run in Live tuning", runs_view_);
  connect(resume, &QAction::triggered, this, [this] {
    QModelIndex i = runs_view_->currentIndex();
    if (i.isValid()) resume_run(i.data(kIdRole).toLongLong());
  });
  runs_view_->addAction(resume);
  runs_view_->setContextMenuPolicy(Qt::ActionsContextMenu);
  auto open_current_kernel = [this](const QModelIndex& i) {
    if (i.isValid()) open_tuning(i.data(kIdRole).toLongLong());
  };
  connect(kernels_view_, &QTableView::activated, this, open_current_kernel);
  connect(kernels_view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& i) {
            if (!i.isValid()) return;
            const KernelRow& r = kernels_->row(kernels_proxy_->mapToSource(i).row());
            auto task = tuner::task_from_record(r.kernel);
            live_view_->set_kernel(task ? std::optional<KernelTask>(*task) : std::nullopt);
          });
  // T (or the context menu) on a kernel row tunes it now in Live tuning: one action, no
  // corpus file.
  auto* tune = new QAction("Tune this kernel now (T)", kernels_view_);
  connect(tune, &QAction::triggered, this, &MainWindow::tune_selected_kernel);
  kernels_view_->addAction(tune);
  kernels_view_->setContextMenuPolicy(Qt::ActionsContextMenu);
  kernels_view_->installEventFilter(this); // T: an item view takes letters for its search
  auto* runs_page = new QSplitter(Qt::Vertical);
  runs_page->setObjectName("runs_split");
  runs_page->addWidget(runs_view_);
  auto* lower = new QWidget;
  auto* lv = new QVBoxLayout(lower);
  lv->setContentsMargins(0, 0, 0, 0);
  run_note_ = new QLabel;
  run_note_->setWordWrap(true);
  lv->addWidget(run_note_);
  lv->addWidget(filter_);
  lv->addWidget(kernels_view_);
  lv->addWidget(measurements_view_);
  runs_page->addWidget(lower);

  kernel_view_ = new KernelView;
  live_view_ = new LiveView;
  schedule_view_ = new ScheduleView;
  timing_view_ = new TimingView;
  roofline_view_ = new RoofLineView;
  compare_view_ = new CompareView;
  connect(live_view_, &LiveView::session_finished, this, &MainWindow::reload);
  connect(schedule_view_, &ScheduleView::kernel_activated, this, &MainWindow::open_kernel_by_hash);
  connect(schedule_view_, &ScheduleView::tune_requested, this, &MainWindow::tune_program_kernel);
  connect(timing_view_, &TimingView::kernel_activated, this, &MainWindow::open_kernel_by_hash);
  connect(timing_view_, &TimingView::tune_requested, this, &MainWindow::tune_program_kernels);
  // A point of the roofline opens: a candidate's plan in the Kernel view, a kernel's search.
  connect(roofline_view_, &RoofLineView::candidate_clicked, this, [this](int seq) {
    for (const db::CandidateRow& c : kernel_view_->detail().candidates)
      if (c.seq == seq)
        if (auto o = parse_opts(c.opts)) kernel_view_->show_plan(*o);
    tabs_->setCurrentIndex(kernel_tab);
  });
  connect(roofline_view_, &RoofLineView::tuning_clicked, this,
          [this](qint64 id) { open_tuning(id); });
  // A beam candidate picked in Live tuning opens in the Kernel view with its plan.
  connect(live_view_, &LiveView::candidate_picked, this,
          [this](const QString& hash, const QString& opts) { open_candidate(hash, opts); });

  // A program for the Schedule and Timing views.
  program_ = new QComboBox;
  program_->setEditable(true);
  for (const WorkloadInfo& w : workloads()) {
    QString spec = qstr(w.name);
    for (const auto& [k, v] : w.defaults) spec += QString(" %1=%2").arg(qstr(k)).arg(v);
    program_->addItem(spec);
  }
  program_->setToolTip(
      "What to profile, with the cache's plans (Enter):\n"
      "  a workload and its parameters: matmul M=64 N=64 K=64 dtype=float16\n"
      "  an ONNX model, with shapes for symbolic dims: resnet18.onnx input=1x3x224x224\n"
      "  a kernel in IR text (beamlab run --save-kernels): r_64_64_64_0123abcd.ir\n"
      "  an expression and its inputs' shapes: (a.matmul(w) + b).relu(); a=64x128 w=128x256 "
      "b=256");
  auto* profile_button = new QPushButton("Profile");
  connect(profile_button, &QPushButton::clicked, this,
          [this] { profile(program_->currentText()); });
  connect(program_->lineEdit(), &QLineEdit::returnPressed, this,
          [this] { profile(program_->currentText()); });
  auto program_page = [&](QWidget* view) {
    auto* page = new QWidget;
    auto* v = new QVBoxLayout(page);
    v->addWidget(view, 1);
    return page;
  };
  auto* program_bar = new QHBoxLayout;
  program_bar->addWidget(new QLabel("Program"));
  program_bar->addWidget(program_, 1);
  program_bar->addWidget(profile_button);

  tabs_ = new QTabWidget;
  tabs_->addTab(runs_page, "&Runs");
  tabs_->addTab(kernel_view_, "&Kernel");
  tabs_->addTab(live_view_, "&Live tuning");
  tabs_->addTab(program_page(schedule_view_), "&Schedule graph");
  tabs_->addTab(program_page(timing_view_), "&Timing");
  tabs_->addTab(roofline_view_, "R&oofline");
  tabs_->addTab(compare_view_, "&Compare");
  auto* central = new QWidget;
  auto* v = new QVBoxLayout(central);
  v->addWidget(message_);
  v->addLayout(program_bar);
  v->addWidget(tabs_, 1);
  setCentralWidget(central);

  // Keyboard: Ctrl+1..7 the tabs, Ctrl+O open, F5 reload, Ctrl+F filter, Ctrl+Q quit.
  QMenu* file = menuBar()->addMenu("&File");
  file->addAction("&Open database...", QKeySequence::Open, this, [this] {
    QString f = QFileDialog::getOpenFileName(this, "Open a beamlab database", qstr(db_path_),
                                             "beamlab database (*.db);;All files (*)");
    if (!f.isEmpty()) open_database(f);
  });
  file->addAction("&New database...", QKeySequence::New, this, [this] {
    QString f = QFileDialog::getSaveFileName(this, "Create a beamlab database", {},
                                             "beamlab database (*.db)");
    if (!f.isEmpty()) open_database(f, OpenMode::create);
  });
  file->addAction("Open &model or kernel...", QKeySequence(Qt::CTRL | Qt::Key_M), this, [this] {
    QString f = QFileDialog::getOpenFileName(this, "Profile an ONNX model or an IR kernel", {},
                                             "Models and kernels (*.onnx *.ir);;All files (*)");
    if (f.isEmpty()) return;
    tabs_->setCurrentIndex(schedule_tab);
    profile(f);
  });
  file->addAction("&Export table or chart...", QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
    QWidget* what = exportable_on(tabs_->currentWidget());
    if (!what) return show_error("this view has no table or chart to export", Cause::action);
    QString f = QFileDialog::getSaveFileName(
        this, "Export " + tabs_->tabText(tabs_->currentIndex()).remove('&'), {},
        exports_as_table(what) ? "CSV (*.csv);;JSON (*.json)" : "PNG image (*.png);;SVG (*.svg)");
    if (!f.isEmpty()) export_current(f);
  });
  file->addAction("&Reload", QKeySequence::Refresh, this, &MainWindow::reload);
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
  QMenu* view = menuBar()->addMenu("&View");
  for (int i = 0; i < tabs_->count(); ++i)
    view->addAction(tabs_->tabText(i).remove('&'), QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)),
                    this, [this, i] { tabs_->setCurrentIndex(i); });
  view->addAction("&Filter kernels", QKeySequence::Find, this, [this] {
    tabs_->setCurrentIndex(runs_tab);
    filter_->setFocus();
  });

  poll_timer_.setInterval(1000);
  connect(&poll_timer_, &QTimer::timeout, this, &MainWindow::poll_changes);
  QSettings settings;
  // The first launch: a window that shows the tables' columns whole (1280x800, or the screen
  // less a margin when it is smaller).
  if (!restoreGeometry(settings.value("window/geometry").toByteArray())) {
    QSize want(1280, 800);
    if (QScreen* screen = QGuiApplication::primaryScreen())
      want = want.boundedTo(screen->availableSize() * 0.95);
    resize(want);
  }
  restoreState(settings.value("window/state").toByteArray());
  runs_page->restoreState(settings.value("window/runs_split").toByteArray());
  tabs_->setCurrentIndex(settings.value("window/tab", 0).toInt());
  statusBar()->showMessage("Ctrl+1..7 switch views; Enter opens; F5 reloads");
}

MainWindow::~MainWindow() = default;

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (watched == kernels_view_ && event->type() == QEvent::KeyPress &&
      static_cast<QKeyEvent*>(event)->key() == Qt::Key_T &&
      static_cast<QKeyEvent*>(event)->modifiers() == Qt::NoModifier) {
    tune_selected_kernel();
    return true;
  }
  return QMainWindow::eventFilter(watched, event);
}

void MainWindow::tune_selected_kernel() {
  QModelIndex i = kernels_view_->currentIndex();
  if (!i.isValid()) return;
  const KernelRow& r = kernels_->row(kernels_proxy_->mapToSource(i).row());
  auto task = tuner::task_from_record(r.kernel);
  if (!task) return show_error(qstr(task.error()), Cause::action);
  live_view_->set_kernel(*task);
  tabs_->setCurrentIndex(live_tab);
  live_view_->start(false);
}

bool MainWindow::resume_run(int64_t run_id) {
  if (live_view_->running()) {
    show_error("A search is running in Live tuning; cancel it first.", Cause::action);
    return false;
  }
  tabs_->setCurrentIndex(live_tab);
  return live_view_->resume_run(run_id);
}

void MainWindow::closeEvent(QCloseEvent* e) {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  if (auto* split = findChild<QSplitter*>("runs_split"))
    settings.setValue("window/runs_split", split->saveState());
  settings.setValue("window/tab", tabs_->currentIndex());
  if (live_view_->running()) live_view_->cancel();
  QMainWindow::closeEvent(e);
}

void MainWindow::show_error(const QString& text, Cause cause) {
  error_cause_ = cause;
  message_->setText("<span style='color:#d62728'>" + text.toHtmlEscaped() + "</span>");
}

void MainWindow::clear_error(std::initializer_list<Cause> causes) {
  if (!error_cause_ || std::find(causes.begin(), causes.end(), *error_cause_) == causes.end())
    return;
  error_cause_.reset();
  message_->setText(qstr(db_path_));
}

void MainWindow::open_database(const QString& path, OpenMode mode) {
  std::string p = path.toStdString();
  message_->setText("opening " + path.toHtmlEscaped() + "...");
  // Opened (created or migrated, the way the CLI would) before anything switches to it: then
  // every later read is read-only.
  run_async(
      this,
      [p, mode]() -> Expected<void> {
        try {
          if (mode == OpenMode::existing && !std::filesystem::exists(p))
            return make_unexpected("no database at '" + p +
                                   "'; open an existing one (Ctrl+O) or create one "
                                   "(File > New database)");
          db::Database db(p);
          return {};
        } catch (const std::exception& e) {
          return make_unexpected(std::string(e.what()));
        }
      },
      [this, p, path](const Expected<void>& r) {
        if (!r) {
          show_error(qstr(r.error()) +
                         (db_path_.empty() ? QString() : "; still showing " + qstr(db_path_)),
                     Cause::database);
          return;
        }
        db_path_ = p;
        setWindowTitle("beamlab workbench - " + path);
        live_view_->set_database(db_path_);
        compare_view_->set_database(db_path_);
        watch_ = std::make_shared<ChangeWatch>(db_path_);
        poll_failures_ = 0;
        run_id_ = tuning_id_ = 0;
        run_kernels_.clear();
        kernels_->set_rows({});
        measurements_->set_rows({});
        kernel_view_->clear();
        roofline_view_->clear();
        if (trend_view_) trend_view_->hide(); // the other database's trend
        // Absolute: a start from another folder must find this file, not make one there.
        QSettings().setValue("database", QString::fromStdString(std::filesystem::absolute(p)));
        error_cause_.reset();
        message_->setText(qstr(p));
        reload();
        poll_timer_.start();
      });
}

void MainWindow::reload() {
  if (db_path_.empty()) return;
  std::string p = db_path_;
  run_async(
      this, [p] { return load_runs(p); },
      [this, p](const Expected<std::vector<RunRow>>& r) {
        if (p != db_path_) return;
        if (!r) return show_error(qstr(r.error()), Cause::runs);
        clear_error({Cause::database, Cause::runs, Cause::action});
        runs_->set_rows(*r);
        compare_view_->set_runs(*r);
        if (run_id_ == 0 && !r->empty()) {
          QModelIndex first = runs_proxy_->index(0, 0);
          runs_view_->setCurrentIndex(first);
        } else if (run_id_ != 0) {
          select_run(run_id_);
        }
        Q_EMIT runs_loaded();
      });
  if (tuning_id_ != 0) open_tuning(tuning_id_);
}

void MainWindow::poll_changes() {
  if (polling_ || !watch_) return;
  polling_ = true;
  auto watch = watch_;
  run_async(
      this, [watch] { return watch->changed(); },
      [this, watch](const Expected<bool>& changed) {
        polling_ = false;
        if (watch != watch_) return;
        // A failed poll is retried on the next tick (the connection is reopened); only a
        // failure that persists is shown, and the next good read clears it.
        if (!changed) {
          if (++poll_failures_ >= 3) show_error(qstr(changed.error()), Cause::poll);
          return;
        }
        clear_error({Cause::poll}); // the banner its failures put up
        poll_failures_ = 0;
        if (*changed) reload();
      });
}

std::optional<QString> MainWindow::export_current(const QString& path) {
  QWidget* what = exportable_on(tabs_->currentWidget());
  std::optional<QString> error =
      what ? export_view(what, path)
           : std::optional<QString>("this view has no table or chart to export");
  if (error) {
    show_error(*error, Cause::action);
    return error;
  }
  clear_error({Cause::action});
  if (!error_cause_) message_->setText("exported to " + path.toHtmlEscaped());
  return std::nullopt;
}

QString MainWindow::run_note(const RunDetail& r) const {
  if (r.run.kind == db::RunKind::bench)
    return QString("Run %1 is a bench run: it timed its workloads with the plans of its cache, "
                   "it searched nothing; below, each measurement's median over its samples, "
                   "timed inside its workload. Enter on a kernel opens its newest search; Enter "
                   "on the run (or the Compare view) compares it with the bench run before it.")
        .arg(r.run.id);
  if (!r.kernels.empty() && std::all_of(r.kernels.begin(), r.kernels.end(), [](const KernelRow& k) {
        return tuner::tried_by_hand(k.tuning);
      }))
    return QString("Run %1 holds plans tried by hand in the Kernel view: no search ran, so it "
                   "has no winners and no speedups.")
        .arg(r.run.id);
  return {};
}

void MainWindow::select_run(int64_t run_id) {
  run_id_ = run_id;
  std::string p = db_path_;
  run_async(
      this, [p, run_id] { return load_run(p, run_id); },
      [this, p, run_id](const Expected<RunDetail>& r) {
        if (p != db_path_ || run_id != run_id_) return; // another run or database
        if (!r) return show_error(qstr(r.error()), Cause::runs);
        clear_error({Cause::runs, Cause::action});
        run_kernels_ = r->kernels;
        kernels_->set_rows(r->kernels);
        measurements_->set_rows(r->measured);
        bool bench = r->run.kind == db::RunKind::bench;
        kernels_view_->setVisible(!bench);
        measurements_view_->setVisible(bench);
        run_note_->setText(run_note(*r));
        run_note_->setVisible(!run_note_->text().isEmpty());
        Q_EMIT run_loaded();
      });
}

void MainWindow::show_trend(reports::Section section, const std::string& key) {
  if (!trend_view_) trend_view_ = new TrendView(this);
  std::string p = db_path_;
  int64_t run = run_id_;
  int serial = ++trend_serial_;
  run_async(
      this, [p, run, section, key] { return load_trend(p, run, section, key); },
      [this, p, serial](const Expected<Trend>& t) {
        if (p != db_path_ || serial != trend_serial_) return; // another database, a later trend
        if (t)
          trend_view_->set_trend(*t);
        else
          trend_view_->set_error(qstr(t.error()));
        trend_view_->show();
        trend_view_->raise();
        Q_EMIT trend_loaded();
      });
}

void MainWindow::open_tuning(int64_t tuning_id) {
  bool fresh = tuning_id != tuning_id_;
  tuning_id_ = tuning_id;
  std::string p = db_path_;
  run_async(
      this, [p, tuning_id] { return load_tuning(p, tuning_id); },
      [this, p, tuning_id, fresh](const Expected<TuningDetail>& d) {
        if (p != db_path_ || tuning_id != tuning_id_) return; // another kernel or database
        if (!d) { // no view keeps the kernel shown before under this kernel's error
          kernel_view_->clear();
          roofline_view_->clear();
          if (fresh) tabs_->setCurrentIndex(kernel_tab);
          return show_error(qstr(d.error()), Cause::kernel);
        }
        clear_error({Cause::kernel, Cause::action});
        kernel_view_->set_tuning(*d, db_path_);
        if (pending_opts_) { // a candidate picked elsewhere: its plan, measured as by hand
          if (auto o = parse_opts(pending_opts_->toStdString())) kernel_view_->show_plan(*o);
          pending_opts_.reset();
          tabs_->setCurrentIndex(kernel_tab);
        }
        roofline_view_->set_data(*d, run_kernels_);
        compare_view_->set_tuning(*d);
        auto task = tuner::task_from_record(d->row.kernel);
        live_view_->set_kernel(task ? std::optional<KernelTask>(*task) : std::nullopt);
        if (fresh) tabs_->setCurrentIndex(kernel_tab);
        Q_EMIT tuning_loaded();
      });
}

void MainWindow::open_kernel_by_hash(const QString& hash) {
  std::string p = db_path_, h = hash.toStdString();
  run_async(
      this, [p, h] { return latest_tuning(p, h); },
      [this, hash](const Expected<std::optional<int64_t>>& t) {
        if (!t) return show_error(qstr(t.error()), Cause::kernel);
        if (*t) return open_tuning(**t);
        // Not tuned yet: a kernel of the profiled program waits in Live tuning for Tune (a
        // click is not a request for a search of minutes).
        if (!ready_program_kernel(hash))
          show_error("kernel " + hash + " has not been tuned in this database yet", Cause::kernel);
      });
}

void MainWindow::open_candidate(const QString& hash, const QString& opts) {
  std::string p = db_path_, h = hash.toStdString();
  run_async(
      this, [p, h] { return latest_tuning(p, h); },
      [this, hash, opts](const Expected<std::optional<int64_t>>& t) {
        if (!t) return show_error(qstr(t.error()), Cause::kernel);
        if (!*t)
          return show_error("kernel " + hash + " has no search journaled yet", Cause::kernel);
        pending_opts_ = opts;
        open_tuning(**t);
      });
}

const ProgramKernel* MainWindow::program_kernel(const QString& key_hex) const {
  if (program_profile_)
    for (const ProgramKernel& k : program_profile_->kernels)
      if (qstr(k.key) == key_hex) return &k;
  return nullptr;
}

bool MainWindow::ready_program_kernel(const QString& key_hex) {
  const ProgramKernel* k = program_kernel(key_hex);
  if (!k) return false;
  if (!live_view_->running()) live_view_->set_kernel(k->task);
  tabs_->setCurrentIndex(live_tab);
  statusBar()->showMessage(qstr(k->name) + " has not been tuned in this database yet: Tune "
                                           "searches it",
                           15000);
  return true;
}

bool MainWindow::tune_program_kernel(const QString& key_hex) {
  return tune_program_kernels({key_hex});
}

bool MainWindow::tune_program_kernels(const QStringList& keys_hex) {
  std::vector<KernelTask> tasks;
  for (const QString& key : keys_hex) {
    const ProgramKernel* k = program_kernel(key);
    if (!k) {
      show_error("kernel " + key + " is not in the profiled program; profile its program first",
                 Cause::action);
      return false;
    }
    tasks.push_back(k->task);
  }
  live_view_->set_kernels(std::move(tasks));
  tabs_->setCurrentIndex(live_tab);
  return live_view_->start(false);
}

void MainWindow::profile(const QString& spec) {
  tuner::CorpusEntry entry;
  try {
    entry = parse_program(spec.toStdString());
  } catch (const UserError& e) {
    return show_error("program: " + qstr(e.what()), Cause::program);
  }
  program_->setEditText(spec);
  program_profile_.reset();
  std::string p = db_path_;
  schedule_view_->show_message("profiling " + spec + "...");
  timing_view_->show_message("profiling " + spec + "...");
  run_async(
      this,
      [=]() -> Expected<ProgramProfile> {
        // The plans a user's run would get: the cache's where it has them.
        std::unique_ptr<tuner::CachePolicy> policy;
        if (!p.empty())
          policy = std::make_unique<tuner::CachePolicy>(p, tuner::CacheMode::read_only,
                                                        default_policy());
        Expected<ProgramProfile> profiled = profile_program(entry, 0, 5, policy.get());
        if (!profiled || p.empty()) return profiled;
        // Each kernel's search and roof from the database; without them, the times alone.
        Expected<ProgramProfile> noted = note_standing(p, *profiled);
        return noted ? noted : profiled;
      },
      [this, spec](const Expected<ProgramProfile>& r) {
        if (!r) {
          schedule_view_->show_message(qstr(r.error()));
          timing_view_->show_message(qstr(r.error()));
          show_error("program '" + spec + "': " + qstr(r.error()), Cause::program);
          return;
        }
        clear_error({Cause::program, Cause::action});
        program_profile_ = *r;
        schedule_view_->set_program(*r);
        timing_view_->set_program(*r);
        Q_EMIT program_loaded();
      });
}

std::pair<QString, MainWindow::OpenMode> remembered_database() {
  QString last = QSettings().value("database").toString();
  if (!last.isEmpty()) return {last, MainWindow::OpenMode::existing};
  return {QString::fromStdString(db::Database::default_path()), MainWindow::OpenMode::create};
}

} // namespace beamlab::gui
