// What a run measured, read back from the database for reports: every kernel, workload and
// benchmark-suite entry with all its timing samples, whichever way the run was made.
//
// A `beamlab bench` run stores one benchmarks row per measurement (see to_benchmark); a
// `beamlab tune` run's kernels are its tunings, measured by the winner's samples (the search's
// and the re-measurement's). Kernels are keyed by their AST hash, so the same kernel matches
// across runs, workloads and machines.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/database.hpp"

namespace beamlab::reports {

enum class Section { workload, kernel, suite };
const char* to_string(Section s);
/// "workloads", "kernels", "benchmark suite": a report's heading for the section.
const char* heading(Section s);

/// One thing a run timed.
struct Measurement {
  Section section = Section::kernel;
  std::string key;  ///< kernel: the AST hash (hex); workload: its label; suite: the name
  std::string name; ///< readable: "r_256_256_256", "matmul M=256 N=256 K=256", "BM_Sgemm/512"
  std::vector<std::string> workloads; ///< kernel: the workloads it ran in
  std::string plan;                   ///< kernel: its Opts; suite: the benchmark's label
  std::string source;                 ///< kernel: "cache", "heuristic" or "tuned"
  int64_t flops = 0, bytes = 0;       ///< kernel: per run
  std::vector<double> samples_ms;     ///< every timed run, in order
};

/// A benchmarks row for `m` in run `run_id` (params and metrics as JSON).
db::Benchmark to_benchmark(int64_t run_id, const Measurement& m);
/// And back; a UserError naming `where` (a database or file) when the row does not read.
Measurement from_benchmark(const db::Benchmark& b, const std::string& where);

/// A run with its device and what it measured.
struct RunData {
  db::Run run;
  std::optional<db::Device> device;
  /// One per (section, key), workloads then kernels then suite entries, each in the order the
  /// run first measured it; a kernel measured in several workloads pools its samples.
  std::vector<Measurement> items;
  std::string title() const; ///< "run 4 'nightly' (bench, a1b2c3d, 2026-11-21 10:00)"
  std::string when() const;  ///< "2026-11-21 10:00" (UTC)
};

/// Reads run `run_id`; a UserError naming `path` when a benchmarks row does not parse.
RunData load_run_data(db::Database& db, int64_t run_id);

/// What earlier runs measured: what sets each measurement's drift floor (stats.hpp).
struct History {
  int runs = 0; ///< the earlier runs read
  /// Per (section, key), in run order: each run's median and the plan it ran.
  std::map<std::pair<Section, std::string>, std::vector<std::pair<double, std::string>>> entries;
  /// The medians of `m` in the runs that ran it as `m` did (a kernel: with the same plan; a
  /// plan change is a real change, not drift).
  std::vector<double> medians_of(const Measurement& m) const;
};

/// The history a comparison judging `candidate` uses: the newest `window` finished bench runs
/// on the candidate's device before it, made with its settings (threads, cache). None for a
/// tuning run (it times its kernels another way), without a device, or with window 0.
History load_history(db::Database& db, const RunData& candidate, int window);

/// The run a user named with `spec`: an id, "latest" (the newest run), "latest~N" (N before
/// it) or a label (the newest run carrying it). A UserError naming `flag` and listing what
/// exists when there is no such run or no runs at all.
db::Run resolve_run(db::Database& db, const std::string& spec, const std::string& flag);

} // namespace beamlab::reports
