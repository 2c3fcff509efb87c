// What the commands write: text or JSON (`--format json`), to stdout or a file ("-" is stdout).
//
// A command's JSON is one document on stdout, an object whose first key names its shape,
// "schema": "beamlab-<command>/1" (the report's "beamlab-report/1" is the model), with its
// table's rows as a list of objects named like the table's columns; numbers are numbers, unknown
// ones null. Progress, notes and warnings go to stderr, so stdout stays one parseable document.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "engine/support/roofline.hpp"

namespace beamlab::cli {

/// Ordered, so "schema" comes first and fields stay in the order the table shows them.
using Json = nlohmann::ordered_json;

/// How a command prints its table or summary.
enum class OutputFormat { Text, Json };

/// Adds `--format text|json` to `cmd` (text by default).
void add_format_option(CLI::App* cmd, OutputFormat& format);

/// The start of a command's JSON document: {"schema": "beamlab-<command>/1"}.
Json json_document(const std::string& command);

/// A finite number, or null (JSON has no NaN or infinity).
Json json_number(double x);
Json json_number(const std::optional<double>& x);

/// A device's measured limits, named like `beamlab device`'s table.
Json limits_json(const MachineLimits& limits);

/// A run as `beamlab cache list --runs` and `beamlab report --list` show it, named like the
/// report's run objects (beamlab-report/1).
Json run_json(const db::Run& r);

/// Opens the database of --db `flag` (else the default) read-only, for a command that only
/// reads: a UserError naming the path, and how to record a run, when there is none.
db::Database open_existing_database(const std::string& flag);

/// Writes `text` to `path` whole (atomically), or to stdout when `path` is "-". A UserError
/// introduced by `what` (the option, e.g. "--json") when it cannot.
void write_output(const std::string& path, const std::string& text, const std::string& what);

/// `doc` as indented JSON with a final newline; names are the users' bytes, so invalid UTF-8
/// becomes U+FFFD rather than an error.
std::string json_text(const Json& doc);

/// Prints `doc` to stdout as one document.
void print_json(const Json& doc);

/// " (this process may use 1 of the machine's 2 CPUs: 1)" when its CPU affinity (a Slurm
/// allocation, taskset, a cpuset) allows fewer than the machine has; else empty.
std::string allocation_note();

} // namespace beamlab::cli
