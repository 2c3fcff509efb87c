// `beamlab run <workload> [--PARAM VALUE ...]`: realize a built-in workload and print a
// per-kernel table (time, GFLOP/s, GB/s, Opts).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace beamlab::cli {

void add_run_command(CLI::App& app);

/// A workload's "--NAME VALUE" (or "--NAME=VALUE") parameters; a UserError naming `command`
/// and the bad word otherwise.
std::map<std::string, int64_t> parse_params(const std::string& command,
                                            const std::vector<std::string>& words);

} // namespace beamlab::cli
