// `beamlab device`: this machine as the database knows it (its fingerprint, CPU, cores) and
// its measured limits: the vector FMA peak and each memory level's read and triad bandwidth,
// measured on first use (a few seconds) and stored; `--measure` measures them again.
#pragma once

#include <CLI/CLI.hpp>

namespace beamlab::cli {

void add_device_command(CLI::App& app);

} // namespace beamlab::cli
