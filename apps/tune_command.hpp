// `beamlab tune <workload> --beam W [--PARAM VALUE ...]`: BEAM-search every kernel of a
// built-in workload in sandboxed workers, with a live progress line, and print per kernel the
// heuristic and tuned times, the speedup, the winning Opts, candidates by status and the
// search's wall time and rate.
#pragma once

#include <CLI/CLI.hpp>

namespace beamlab::cli {

void add_tune_command(CLI::App& app);

} // namespace beamlab::cli
