// Bad command lines: exit code 2, a one-line message, and a suggestion where a close name exists.
//
// CLI11 refuses most bad command lines while parsing (unknown options and subcommands, option
// values its validators reject). What can only be checked later (a workload parameter, options
// that exclude each other) is a UsageError, raised like user_assert:
//   usage_assert(a.empty() || b.empty()) << "give --a or --b, not both";
// main() maps both to exit code 2; the table of exit codes is kExitCodes.
#pragma once

#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "engine/support/error.hpp"

namespace beamlab::cli {

/// The command line was wrong (exit code 2); a UserError, so code that reports user errors
/// reports it as one.
class UsageError : public UserError {
public:
  using UserError::UserError;
};

/// Collects a message by streaming and throws a UsageError at the end of the statement.
class UsageReport {
public:
  UsageReport() = default;
  UsageReport(const UsageReport&) = delete;
  UsageReport& operator=(const UsageReport&) = delete;
  ~UsageReport() noexcept(false);

  template <class T>
  UsageReport& operator<<(const T& value) {
    msg_ << value;
    return *this;
  }

private:
  std::ostringstream msg_;
};

/// Runs `work`, which only reads the command line: its UserErrors are UsageErrors.
template <class Work>
auto usage_errors(Work work) {
  try {
    return work();
  } catch (const UsageError&) {
    throw;
  } catch (const UserError& e) {
    throw UsageError(e.what());
  }
}

/// Exit codes, as `beamlab --help` ends (and so the man page help2man makes from it) and the
/// README lists them.
inline constexpr const char* kExitCodes =
    "Exit codes:\n"
    "  0        success\n"
    "  1        bad input: a file, an expression, a database, or data a command cannot use\n"
    "  2        bad command line: an unknown subcommand, option, workload or parameter, or a\n"
    "           bad option value\n"
    "  3        internal error, or a failure of the machine (I/O, JIT, a kernel that could not\n"
    "           be tuned)\n"
    "  4        'beamlab report --fail-above' found a regression above its threshold\n"
    "  130/143  'beamlab tune' stopped by SIGINT/SIGTERM (its run kept as interrupted)";

/// The one-line message for a CLI11 parse error, with " (did you mean '--beam'?)" when an
/// unknown option or subcommand is close to one the command has, and the help to read.
std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& e);

/// " (see 'beamlab tune --help')": the help of the deepest subcommand the command line reached.
std::string help_hint(const CLI::App& app);

/// " (did you mean '--beam'?)" when `word` (an unknown "--name" a command took as a workload
/// parameter) is close to one of `cmd`'s options, else "".
std::string option_suggestion(const CLI::App& cmd, const std::string& word);

} // namespace beamlab::cli

// The `if (c) {} else` form keeps these safe inside unbraced if/else.
#define usage_assert(c)                                                                            \
  if (c) {                                                                                         \
  } else                                                                                           \
    ::beamlab::cli::UsageReport()
#define usage_error ::beamlab::cli::UsageReport()
