// `beamlab report`: compares two runs kernel by kernel with a noise-aware verdict
// (--baseline RUN --candidate RUN), or summarizes one (--run RUN), as Markdown, HTML or JUnit;
// `--fail-above PCT` turns a regression larger than PCT into exit code 4 for CI. `--list`
// lists the runs a RUN can name.
#pragma once

#include <CLI/CLI.hpp>

namespace beamlab::cli {

/// The exit code when --fail-above finds a regression above its threshold.
inline constexpr int kRegressionExit = 4;

/// `exit_code` receives the command's exit code: kRegressionExit when the gate fails, else 0.
void add_report_command(CLI::App& app, int& exit_code);

} // namespace beamlab::cli
