// beamlab-gui [DB]: the workbench window on a beamlab database (the argument, which must exist,
// else the last one opened, else the CLI's default database, created when missing as the CLI
// does). --screenshots DIR saves every view of DB as a PNG and exits (docs, reviews, CI;
// scripts/docs-pictures makes the README's pictures with it).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <tuple>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QSettings>
#include <QTimer>

#include "db/database.hpp"
#include "engine/runtime/openmp.hpp"
#include "gui/compare_view.hpp"
#include "gui/live_view.hpp"
#include "gui/main_window.hpp"

namespace {

// Waits in the event loop until `ready` holds or `ms` pass. It sleeps between checks: a
// spinning wait would take a core from the kernels a profile times.
template <class F>
bool wait_until(F ready, int ms) {
  QElapsedTimer t;
  t.start();
  while (!ready() && t.elapsed() < ms) {
    QEventLoop loop;
    QTimer::singleShot(20, &loop, &QEventLoop::quit);
    loop.exec();
  }
  return ready();
}

/// What --screenshots shows beyond the window as it opens.
struct ShotOptions {
  QString program;   ///< profiled for Schedule and Timing
  QString kernel;    ///< opened instead of the most improved kernel
  double live_s = 0; ///< > 0: a search of the open kernel in Live tuning, this budget
};

// Selects the newest search run in the Runs view (the newest run may be a bench), so the
// highlighted run is the one whose kernels are listed.
void select_newest_search(beamlab::gui::MainWindow& w, bool& loaded) {
  for (const beamlab::gui::RunRow& r : w.runs_model()->rows()) {
    if (r.kernels == 0 || r.by_hand) continue;
    QAbstractItemModel* runs = w.runs_view()->model();
    for (int row = 0; row < runs->rowCount(); ++row) {
      QModelIndex i = runs->index(row, 0);
      if (i.data(beamlab::gui::kIdRole).toLongLong() != r.run.id) continue;
      if (i.row() == w.runs_view()->currentIndex().row()) return; // shown already
      loaded = false;
      w.runs_view()->setCurrentIndex(i);
      wait_until([&] { return loaded; }, 20000);
      return;
    }
  }
}

// The row of kernel `name` in the run's kernels (the most improved when `name` is empty).
std::optional<int> kernel_row(beamlab::gui::MainWindow& w, const QString& name) {
  auto* kernels = w.kernels_proxy();
  for (int row = 0; row < kernels->rowCount(); ++row)
    if (name.isEmpty() || kernels->index(row, 0).data().toString() == name) return row;
  return std::nullopt;
}

// Starts `compare` (a call that ends in CompareView::compared) and waits for it.
template <class F>
void compare_and_wait(beamlab::gui::CompareView* view, F compare) {
  bool done = false;
  auto c = QObject::connect(view, &beamlab::gui::CompareView::compared, [&] { done = true; });
  compare();
  wait_until([&] { return done; }, 60000);
  QObject::disconnect(c);
}

// Every view with the newest search's most improved kernel (or o.kernel) open, as PNGs in
// `dir` (the Kernel view's code side by side and candidates too); Compare twice: the default runs
// (compare.png) and the kernel's heuristic against its winner (compare_kernel.png). 0 when all
// saved.
int save_screenshots(beamlab::gui::MainWindow& w, const QString& dir, const ShotOptions& o) {
  using beamlab::gui::MainWindow;
  bool loaded = false, tuned = false, profiled = o.program.isEmpty();
  QObject::connect(&w, &MainWindow::run_loaded, [&] { loaded = true; });
  QObject::connect(&w, &MainWindow::tuning_loaded, [&] { tuned = true; });
  QObject::connect(&w, &MainWindow::program_loaded, [&] { profiled = true; });
  wait_until([&] { return loaded; }, 20000);
  select_newest_search(w, loaded);
  std::optional<int> row = kernel_row(w, o.kernel);
  if (!row && !o.kernel.isEmpty()) {
    std::fprintf(stderr, "beamlab-gui: --kernel %s: the newest search run has no such kernel\n",
                 qPrintable(o.kernel));
    return 1;
  }
  if (row) {
    QModelIndex i = w.kernels_proxy()->index(*row, 0);
    w.kernels_view()->setCurrentIndex(i);
    w.open_tuning(i.data(beamlab::gui::kIdRole).toLongLong());
    wait_until([&] { return tuned; }, 20000);
  }
  if (!o.program.isEmpty()) {
    w.profile(o.program);
    wait_until([&] { return profiled; }, 60000);
  }
  QDir().mkpath(dir);
  auto save = [&](const char* name) {
    wait_until([] { return false; }, 300); // let charts and code settle
    return w.grab().save(QDir(dir).filePath(QString(name) + ".png"));
  };
  const char* names[] = {"runs", "kernel", "live", "schedule", "timing", "roofline", "compare"};
  beamlab::gui::CompareView* compare = w.compare_view();
  int failed = 0;
  for (int i = 0; i < w.tabs()->count(); ++i) {
    w.tabs()->setCurrentIndex(i);
    if (i == MainWindow::live_tab && o.live_s > 0) {
      bool finished = false;
      auto c = QObject::connect(w.live_view(), &beamlab::gui::LiveView::session_finished,
                                [&] { finished = true; });
      w.live_view()->set_beam(2);
      w.live_view()->set_budget(o.live_s);
      if (w.live_view()->start(false))
        wait_until([&] { return finished; }, static_cast<int>(1000 * (o.live_s + 120)));
      QObject::disconnect(c);
    }
    if (i == MainWindow::compare_tab) {
      auto [a, b] = compare->picked_runs();
      if (a != 0 && a != b) compare_and_wait(compare, [&] { compare->compare_runs(a, b); });
    }
    failed += !save(names[i]);
    if (i == MainWindow::kernel_tab) { // and its IR and assembly side by side, its candidates
      w.kernel_view()->tabs()->setCurrentIndex(2);
      failed += !save("kernel_code");
      w.kernel_view()->tabs()->setCurrentIndex(3);
      failed += !save("kernel_candidates");
    }
    if (i == MainWindow::compare_tab && row) {
      auto [a, b] = compare->picked_candidates();
      compare_and_wait(compare, [&] { compare->compare_candidates(a, b); });
      failed += !save("compare_kernel");
    }
  }
  return failed == 0 ? 0 : 1;
}

} // namespace

// The options, described once: --help needs no display, so it is answered by a core
// application before any window system is asked for.
struct Options {
  QCommandLineOption shots{"screenshots", "save every view as DIR/VIEW.png and exit", "DIR"};
  QCommandLineOption size{"size", "the window's size for --screenshots (default 1280x800)", "WxH",
                          "1280x800"};
  QCommandLineOption program{"program",
                             "a program to profile for the Schedule and Timing screenshots (as "
                             "the Program box takes it)",
                             "SPEC"};
  QCommandLineOption kernel{"kernel",
                            "the kernel of the newest search run to open for --screenshots "
                            "(default: the most improved)",
                            "NAME"};
  QCommandLineOption live{"live",
                          "for --screenshots: search the open kernel in Live tuning first, for "
                          "up to SECONDS (journaled in DB like any search)",
                          "SECONDS"};

  void describe(QCommandLineParser& args) const {
    args.setApplicationDescription("The beamlab workbench: tune kernels by hand and by BEAM "
                                   "search, and explore a tuning database.");
    args.addHelpOption();
    args.addPositionalArgument("DB", "the database, which must exist (default: the last one "
                                     "opened, else BEAMLAB_DB or ~/.cache/beamlab/beamlab.db)");
    args.addOptions({shots, size, program, kernel, live});
  }
};

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "-h" || a == "--help" || a == "-?" || a == "--help-all") return true;
  }
  return false;
}

// Whether a window system can be reached: a display, or a platform chosen by hand (Qt's
// offscreen one for --screenshots on a server).
bool has_display() {
  for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
    if (const char* v = std::getenv(name); v && *v) return true;
  return false;
}

int main(int argc, char** argv) {
  beamlab::release_openmp_registration(); // nothing left in /dev/shm, however this ends
  Options o;
  if (asks_for_help(argc, argv)) {
    QCoreApplication core(argc, argv);
    QCommandLineParser args;
    o.describe(args);
    args.process(core); // prints the help and exits
    return 0;
  }
  if (!has_display()) {
    std::fprintf(stderr, "beamlab-gui: no display to open a window on (DISPLAY is unset): run it "
                         "in a desktop session, under Xvfb, or with QT_QPA_PLATFORM=offscreen "
                         "for --screenshots\n");
    return 1;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName("beamlab");
  QApplication::setApplicationName("beamlab-gui");
  QCommandLineParser args;
  o.describe(args);
  args.process(app);
  // A path named on the command line must exist: a typo is an error, never a new database.
  QString path = args.positionalArguments().value(0);
  auto mode = beamlab::gui::MainWindow::OpenMode::existing;
  if (path.isEmpty()) std::tie(path, mode) = beamlab::gui::remembered_database();
  beamlab::gui::MainWindow window;
  if (args.isSet(o.shots)) {
    QStringList wh = args.value(o.size).split('x');
    if (wh.size() != 2 || wh[0].toInt() <= 0 || wh[1].toInt() <= 0) {
      std::fprintf(stderr, "beamlab-gui: --size '%s' is not WxH, e.g. 1280x800\n",
                   qPrintable(args.value(o.size)));
      return 2;
    }
    window.resize(wh[0].toInt(), wh[1].toInt());
  }
  double live_s = 0;
  if (args.isSet(o.live)) {
    bool number = false;
    live_s = args.value(o.live).toDouble(&number);
    if (!number || !std::isfinite(live_s) || live_s <= 0) {
      std::fprintf(stderr, "beamlab-gui: --live '%s' is not a number of seconds, e.g. 20\n",
                   qPrintable(args.value(o.live)));
      return 2;
    }
  }
  window.show();
  window.open_database(path, mode);
  if (args.isSet(o.shots))
    return save_screenshots(window, args.value(o.shots),
                            {args.value(o.program), args.value(o.kernel), live_s});
  return QApplication::exec();
}
