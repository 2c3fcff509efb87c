// One door to a tuning run. The CLI's `tune`, Python's beamlab.tune() and the GUI's live tuning
// translate their inputs into a TuneRequest and show what comes back; this is the one place a run
// is set up (database, cache mode, device, run record), begun or resumed, searched and finished,
// and TuneSettings is the one shape of what a run stores to be resumed, by any door.
//
//   TuneRequest r;
//   r.settings.what.target = "matmul";       // or r.tasks (Python's program, the GUI's kernel)
//   r.db_path = "tune.db";
//   TuneSession session(std::move(r));       // opens the database, begins (or resumes) the run
//   BatchReport report = session.run(listener); // done, failed, or interrupted when cancelled
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/batch/batch.hpp"

namespace beamlab::tuner {

/// What a run tunes: a target as a command line names it, or kernels stored in the database.
struct TuneTarget {
  std::string target;              ///< a workload, a corpus file, MODEL.onnx or KERNEL.ir
  std::vector<std::string> params; ///< a workload's, as words ("--M", "1024")
  std::string expr;                ///< an expression over `inputs` instead
  std::vector<std::string> inputs; ///< NAME=DIMS
  std::vector<std::string> vars;   ///< NAME=LOW..HIGH: a model's symbolic dims kept symbolic
  std::string dtype = "float32";
  /// AST hashes (hex) of kernels stored in the database: a program given in memory (Python) or
  /// a kernel picked in the GUI, recorded when the run begins so that any door can resume it.
  std::vector<std::string> kernels;
  std::string workload; ///< what those kernels are journaled under ("python", "gui")
};

/// Everything a run needs to be repeated: stored as the run's settings, read back by a resume.
struct TuneSettings {
  TuneTarget what;
  int beam = 4;
  double budget_s = 0;          ///< the whole run's (0: none)
  double kernel_budget_s = 300; ///< per kernel at most
  int max_candidates = 5000;
  double early_stop = 3.0;
  double min_improvement = 0.01;
  double prune = 0;
  int runs = 3;
  int workers = 0; ///< sandboxes per job (0: cores / jobs)
  int threads = 0; ///< cores each kernel runs on (0: all the door's; stored resolved)
  int jobs = 1;
  std::string shard;         ///< "i/N", resolved ("": the whole set)
  std::string cache = "use"; ///< CacheMode's name
  std::string label;
  bool warm_start = false;
  std::string door; ///< who began the run: "cli", "python", "gui"

  nlohmann::json to_json() const;
  /// Reads what any version stored: this shape; the CLI's before it (the same fields, without
  /// kernels, workload and door); and the search settings Python and the GUI stored
  /// (settings_json of SearchSettings: no target, whose kernels the resume takes from the run's
  /// journal).
  static TuneSettings from_json(const nlohmann::json& j);
};

struct TuneRequest {
  TuneSettings settings; ///< a new run's; a resume reads the run's own
  std::string db_path;   ///< the database ("" and cache "off": none)
  /// Resume run N (0: the newest unfinished tuning run) instead of beginning one.
  std::optional<int64_t> resume;
  std::string resume_word = "--resume"; ///< the door's name for resuming, in errors
  std::string command;                  ///< how the door names the run (runs list it)
  std::string git_revision;
  /// The work the door built (its own errors for bad input): a corpus, or kernels (a program
  /// given in memory; none is an empty run). When neither is given, the work is built from
  /// settings.what.
  std::optional<Corpus> corpus;
  std::optional<std::vector<KernelTask>> tasks;
  int all_threads = 0; ///< cores for settings.threads 0 (0: usable_cores())
  const SearchControl* control = nullptr;
};

class TuneSession {
public:
  /// Opens the database (per the cache mode), resolves a resume to its run and settings, builds
  /// the work, and begins or reopens the run. UserErrors name what is wrong.
  explicit TuneSession(TuneRequest request);
  ~TuneSession();
  TuneSession(const TuneSession&) = delete;
  TuneSession& operator=(const TuneSession&) = delete;

  /// The run's settings: the request's, or a resumed run's as stored.
  const TuneSettings& settings() const;
  const BatchOptions& options() const;
  /// The run's id (0: nothing journaled: cache off or read-only).
  int64_t run_id() const;
  /// The database's path ("" with none).
  const std::string& db_path() const;
  /// The resumed run (null for a new one).
  const db::Run* resumed() const;
  /// What is tuned, for headers: the corpus file, the workload or "N kernels (python)".
  std::string target_name() const;
  /// The corpus's entries (0 for a run of kernels).
  int entries() const;
  /// A note for the user about how the run was set up ("" none), e.g. an older run whose
  /// kernels were not recorded.
  const std::string& note() const;

  /// Runs the batch and ends the run: interrupted when the control was cancelled, failed when a
  /// kernel failed, else done (an exception on the way: failed). Once.
  BatchReport run(BatchListener& listener);

private:
  struct State;
  std::unique_ptr<State> s_;
};

} // namespace beamlab::tuner
