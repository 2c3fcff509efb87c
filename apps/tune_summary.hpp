// The end of `beamlab tune`: the summary table, or the same as one JSON document (schema
// "beamlab-tune/1", also what --json FILE writes), and `--repeat`'s determinism table (JSON:
// "beamlab-tune-repeat/1"). See tune_command.hpp.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/output.hpp"
#include "tuner/batch/batch.hpp"
#include "tuner/batch/repeat.hpp"

namespace beamlab::cli {

/// Where a run's summary is journaled: `db` is the database's path ("" with --cache off),
/// `run_id` 0 when the run is not journaled.
struct SummaryPlace {
  std::string db;
  int64_t run_id = 0;
};

/// The table, a note per kernel that needs one, and the totals, to `out`.
void print_summary(const tuner::BatchReport& r, const SummaryPlace& at, std::FILE* out);

/// The same as JSON: a row per kernel named like the table's columns (the table's "source" is
/// "outcome"), the notes, the totals and the device's limits; `target` is the workload or
/// corpus tuned.
Json summary_json(const tuner::BatchReport& r, const SummaryPlace& at, const std::string& target,
                  bool interrupted);

/// --repeat's table: each kernel's distinct winners timed together.
void print_repeat_study(const tuner::RepeatStudy& study, int repeats);

/// The same as JSON, with each repeat's summary_json in "runs" (those done, when interrupted).
Json repeat_study_json(const tuner::RepeatStudy& study, int repeats, const Json& runs,
                       bool interrupted);

} // namespace beamlab::cli
