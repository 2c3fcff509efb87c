// `beamlab run <workload> [--PARAM VALUE ...]`: realize a built-in workload (or a model, an IR
// kernel, an expression) and print a per-kernel table (time, GFLOP/s, GB/s, Opts).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/usage.hpp"
#include "tuner/batch/corpus.hpp"

namespace beamlab::cli {

void add_run_command(CLI::App& app);

/// The entry a command line names: a built-in workload with its parameters, an ONNX model
/// file, an IR kernel file, or --expr, with --input shapes (`inputs`) and a model's symbolic
/// dims' ranges (`vars`, NAME=LOW..HIGH). A UserError names `command`.
tuner::CorpusEntry program_entry(const std::string& command, const std::string& target,
                                 const std::vector<std::string>& params, const std::string& expr,
                                 const std::vector<std::string>& inputs,
                                 const std::string& dtype = "float32",
                                 const std::vector<std::string>& vars = {});

/// Runs `build` on the entry `e` a command line names. A built-in workload's UserErrors (an
/// unknown workload or parameter, a value it refuses) become UsageErrors: those were words on the
/// command line, not a file's contents.
template <class Build>
auto build_command_line(const tuner::CorpusEntry& e, Build build) {
  if (e.workload.empty()) return build(e);
  return usage_errors([&] { return build(e); });
}

/// A UsageError for the first "--NAME" in `params` (words `cmd` took as a workload's parameters)
/// that is no parameter of the workload `target` but close to one of `cmd`'s options:
/// "tune: unknown option '--bem' (did you mean '--beam'?)".
void check_unknown_options(const CLI::App& cmd, const std::string& target,
                           const std::vector<std::string>& params);

} // namespace beamlab::cli
