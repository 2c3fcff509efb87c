// `beamlab cache list | show | export | import | merge | verify`: the tuning cache and the run
// journal in the database, for people and for scripts.
#pragma once

#include <CLI/CLI.hpp>

namespace beamlab::cli {

void add_cache_command(CLI::App& app);

} // namespace beamlab::cli
