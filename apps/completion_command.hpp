// `beamlab completion bash [-o FILE]`: a bash completion script made from the command tree
// itself (every subcommand, its options, the values of options with a fixed set, and the
// workload names `run` and `tune` take), so it can never fall behind the options. Hidden from
// the help; the build writes it to share/bash-completion/completions/beamlab.
#pragma once

#include <CLI/CLI.hpp>

namespace beamlab::cli {

/// Adds the hidden `completion` subcommand; it describes `app` as it is when it runs.
void add_completion_command(CLI::App& app);

} // namespace beamlab::cli
