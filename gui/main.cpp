// beamlab-gui [DB]: the workbench window on a beamlab database (the argument, which must exist,
// else the last one opened, else the CLI's default database, created when missing as the CLI
// does). --screenshots DIR saves every view of DB as a PNG and exits (docs, reviews, CI).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QSettings>
#include <QTimer>

#include "db/database.hpp"
#include "engine/runtime/openmp.hpp"
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

// Every view with the newest search's most improved kernel open, as PNGs in `dir`; 0 when all
// saved.
int save_screenshots(beamlab::gui::MainWindow& w, const QString& dir, const QString& program) {
  using beamlab::gui::MainWindow;
  bool loaded = false, tuned = false, profiled = program.isEmpty();
  QObject::connect(&w, &MainWindow::run_loaded, [&] { loaded = true; });
  QObject::connect(&w, &MainWindow::tuning_loaded, [&] { tuned = true; });
  QObject::connect(&w, &MainWindow::program_loaded, [&] { profiled = true; });
  wait_until([&] { return loaded; }, 20000);
  // The newest search run, for the kernel views (the newest run may be a bench).
  for (const beamlab::gui::RunRow& r : w.runs_model()->rows())
    if (r.kernels > 0 && !r.by_hand) {
      loaded = false;
      w.select_run(r.run.id);
      wait_until([&] { return loaded; }, 20000);
      break;
    }
  auto* kernels = w.kernels_proxy();
  if (kernels->rowCount() > 0) {
    w.open_tuning(kernels->index(0, 0).data(beamlab::gui::kIdRole).toLongLong());
    wait_until([&] { return tuned; }, 20000);
  }
  if (!program.isEmpty()) {
    w.profile(program);
    wait_until([&] { return profiled; }, 60000);
  }
  QDir().mkpath(dir);
  const char* names[] = {"runs", "kernel", "live", "schedule", "timing", "roofline", "compare"};
  int failed = 0;
  for (int i = 0; i < w.tabs()->count(); ++i) {
    w.tabs()->setCurrentIndex(i);
    wait_until([] { return false; }, 300); // let charts and code settle
    QString file = QDir(dir).filePath(QString(names[i]) + ".png");
    if (!w.grab().save(file)) ++failed;
    if (i == MainWindow::kernel_tab) { // and its IR and assembly side by side
      w.kernel_view()->tabs()->setCurrentIndex(2);
      wait_until([] { return false; }, 300);
      if (!w.grab().save(QDir(dir).filePath("kernel_code.png"))) ++failed;
    }
  }
  return failed == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  beamlab::release_openmp_registration(); // nothing left in /dev/shm, however this ends
  QApplication app(argc, argv);
  QApplication::setOrganizationName("beamlab");
  QApplication::setApplicationName("beamlab-gui");
  QCommandLineParser args;
  args.setApplicationDescription("The beamlab workbench: tune kernels by hand and by BEAM search, "
                                 "and explore a tuning database.");
  args.addHelpOption();
  args.addPositionalArgument("DB", "the database, which must exist (default: the last one "
                                   "opened, else BEAMLAB_DB or ~/.cache/beamlab/beamlab.db)");
  QCommandLineOption shots("screenshots", "save every view as DIR/VIEW.png and exit", "DIR");
  QCommandLineOption size("size", "the window's size for --screenshots (default 1280x800)", "WxH",
                          "1280x800");
  QCommandLineOption program("program",
                             "a program to profile for the Schedule and Timing "
                             "screenshots (as the Program box takes it)",
                             "SPEC");
  args.addOptions({shots, size, program});
  args.process(app);
  QString path = args.positionalArguments().value(0);
  bool explicit_path = !path.isEmpty();
  if (path.isEmpty()) path = QSettings().value("database").toString();
  if (path.isEmpty()) path = QString::fromStdString(beamlab::db::Database::default_path());
  beamlab::gui::MainWindow window;
  if (args.isSet(shots)) {
    QStringList wh = args.value(size).split('x');
    if (wh.size() != 2 || wh[0].toInt() <= 0 || wh[1].toInt() <= 0) {
      std::fprintf(stderr, "beamlab-gui: --size '%s' is not WxH, e.g. 1280x800\n",
                   qPrintable(args.value(size)));
      return 2;
    }
    window.resize(wh[0].toInt(), wh[1].toInt());
  }
  window.show();
  // A path named on the command line must exist: a typo is an error, never a new database.
  window.open_database(path, explicit_path ? beamlab::gui::MainWindow::OpenMode::existing
                                           : beamlab::gui::MainWindow::OpenMode::create);
  if (args.isSet(shots)) return save_screenshots(window, args.value(shots), args.value(program));
  return QApplication::exec();
}
