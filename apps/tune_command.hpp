// `beamlab tune <workload|corpus.json> --beam W [...]`: a batch tuning run. Every kernel of a
// built-in workload or of a corpus file is looked up in the tuning cache and, on a miss,
// BEAM-searched in sandboxed workers; every candidate is journaled in the database as it
// finishes, and the run ends with a summary table. `--resume [RUN]` finishes a run that was
// killed or interrupted, without re-measuring what it had measured. SIGINT or SIGTERM ends the
// searches as at a budget's end, marks the run interrupted and exits 130 or 143.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "tuner/store/cache.hpp"

namespace beamlab::cli {

/// `exit_code` gets 128 + the signal when the run was interrupted.
void add_tune_command(CLI::App& app, int& exit_code);

/// --db FILE, else the default path (BEAMLAB_DB, XDG_CACHE_HOME, ~/.cache).
std::string db_path(const std::string& flag);
/// The same where `mode` uses a database; empty for --cache off without --db (no HOME needed).
std::string db_path(const std::string& flag, tuner::CacheMode mode);

/// --cache MODE, else BEAMLAB_CACHE, else "use"; checked.
std::string cache_mode_name(const std::string& flag);

/// Adds `--cache MODE` to `cmd`, checked as it is parsed.
void add_cache_option(
    CLI::App* cmd, std::string& mode,
    const std::string& help =
        "use | ignore (search anyway, still write) | read-only | off (BEAMLAB_CACHE)");

/// `word` as a POSIX shell reads it back: as it is when it holds only safe characters, else in
/// single quotes (a quote inside written '\''). For the command line a run records.
std::string shell_word(const std::string& word);

} // namespace beamlab::cli
