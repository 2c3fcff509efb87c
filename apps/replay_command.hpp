// `beamlab search-replay RUN`: a finished tuning run's searches run again against their own
// journal, compiling and timing nothing (tuner/search/recorded.hpp): first as recorded (its
// winners must come out the same), then with a changed strategy (--beam, --prune), each kernel
// with its best-so-far against simulated time. How a strategy is evaluated cheaply and
// reproducibly before it is tried on a machine.
#pragma once

#include <CLI/CLI.hpp>

namespace beamlab::cli {

void add_replay_command(CLI::App& app);

} // namespace beamlab::cli
