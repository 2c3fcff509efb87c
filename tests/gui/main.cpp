// The GUI tests' main: one QApplication for every test, on the offscreen platform unless the
// environment picks one (CI also runs them under Xvfb), with settings kept out of the user's.
#include <cstdlib>

#include <QApplication>
#include <QStandardPaths>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QStandardPaths::setTestModeEnabled(true);
  QApplication app(argc, argv);
  QApplication::setOrganizationName("beamlab-tests");
  QApplication::setApplicationName("beamlab-gui-tests");
  return RUN_ALL_TESTS();
}
