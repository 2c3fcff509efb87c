// `beamlab run <workload> [--PARAM VALUE ...]`: realize a built-in workload and print a
// per-kernel table (time, GFLOP/s, GB/s, Opts).
#pragma once

#include <CLI/CLI.hpp>

namespace beamlab::cli {

void add_run_command(CLI::App& app);

} // namespace beamlab::cli
