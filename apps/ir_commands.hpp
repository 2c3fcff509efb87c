// `beamlab demo` and `beamlab ir ...`: the IR core from the command line.
#pragma once

#include <CLI/CLI.hpp>

namespace beamlab::cli {

/// Registers `demo` and `ir {print,simplify,verify,hash}` on the app.
void add_ir_commands(CLI::App& app);

} // namespace beamlab::cli
