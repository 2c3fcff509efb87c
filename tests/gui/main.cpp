// The GUI tests' main: one QApplication for every test, on the offscreen platform unless the
// environment picks one (CI also runs them under Xvfb), with settings of its own (not the
// user's, nor another test process's).
#include <chrono>
#include <cstdlib>

#include <QApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <gtest/gtest.h>

#include "db/database.hpp"

namespace {

// The writer process of GuiTest.AWriterProcessNeverMakesTheLiveReaderFail (this binary run
// again with BEAMLAB_TEST_WRITER=DB): commits runs back to back for 4 s, each on a fresh
// read-write connection, as the window's hand bench opens one.
int write_runs_for(const char* path) {
  using namespace beamlab;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  while (std::chrono::steady_clock::now() < end) {
    db::Database db(path);
    int64_t r = db.begin_run({.device_id = 1,
                              .kind = db::RunKind::tune,
                              .label = "by hand",
                              .command = "beamlab-gui",
                              .settings = "{}",
                              .git_revision = "",
                              .host = "test"});
    db.end_run(r, db::RunStatus::done);
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (const char* writer = std::getenv("BEAMLAB_TEST_WRITER")) return write_runs_for(writer);
  ::testing::InitGoogleTest(&argc, argv);
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QStandardPaths::setTestModeEnabled(true);
  QApplication app(argc, argv);
  QApplication::setOrganizationName("beamlab-tests");
  QApplication::setApplicationName("beamlab-gui-tests");
  // Settings of this process only: ctest runs tests in parallel processes, and one test's
  // window remembering its database must not land in another's.
  QTemporaryDir settings;
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings.path());
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings.path());
  return RUN_ALL_TESTS();
}
