// beamlab-gui [DB]: the workbench window on a beamlab database (the argument, else the last
// one opened, else the CLI's default database).
#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

#include "db/database.hpp"
#include "engine/runtime/openmp.hpp"
#include "gui/main_window.hpp"

int main(int argc, char** argv) {
  beamlab::release_openmp_registration(); // nothing left in /dev/shm, however this ends
  QApplication app(argc, argv);
  QApplication::setOrganizationName("beamlab");
  QApplication::setApplicationName("beamlab-gui");
  QCommandLineParser args;
  args.setApplicationDescription("The beamlab workbench: tune kernels by hand and by BEAM search, "
                                 "and explore a tuning database.");
  args.addHelpOption();
  args.addPositionalArgument("DB", "the database (default: the last one opened, else "
                                   "BEAMLAB_DB or ~/.cache/beamlab/beamlab.db)");
  args.process(app);
  QString path = args.positionalArguments().value(0);
  if (path.isEmpty()) path = QSettings().value("database").toString();
  if (path.isEmpty()) path = QString::fromStdString(beamlab::db::Database::default_path());
  beamlab::gui::MainWindow window;
  window.show();
  window.open_database(path);
  return QApplication::exec();
}
