// Batch tuning: every kernel of a corpus, searched once, journaled, and stored in the cache.
//
// A batch first builds each corpus entry and times its kernels with the heuristic's plans in
// this process (their share of the corpus's runtime and their distance from the device's
// roofline). The distinct kernels (by stable key) are sorted by key; shard i of N takes every
// N-th, so N machines split the work deterministically. Kernels with a valid cache entry (for
// these search settings) are done; the rest are searched, most promising first. With a time
// budget, each kernel gets the remaining time in proportion to its expected gain (runtime share
// x distance from the roofline), so time a kernel doesn't use flows to the next and the run ends
// on time. --jobs J searches J kernels at once, each in its own pool of sandboxes, with one gate
// keeping timing exclusive across them.
#pragma once

#include <string>
#include <vector>

#include "tuner/batch/corpus.hpp"
#include "tuner/store/device.hpp"
#include "tuner/store/journal.hpp"

namespace beamlab::tuner {

struct BatchOptions {
  SearchSettings settings; ///< time_budget_s: per kernel when budget_s is 0
  double budget_s = 0;     ///< the whole run's (0: none)
  int shard = 0, shards = 1;
  int jobs = 1;    ///< kernels searched at once
  int workers = 0; ///< sandboxes per job (0: cores / jobs)
  int threads = 1; ///< cores each kernel runs on
  CacheMode cache = CacheMode::use;
  /// Seed each kernel searched with the plans of the nearest tuned kernels of its structure
  /// (tuner/store/warm_start.hpp); its cache lookups also take the cold search's entries.
  bool warm_start = false;
};

/// One distinct kernel of the batch and what became of it.
struct BatchKernel {
  enum class Outcome { pending, cached, tuned, resumed, failed };
  int index = 0;
  KernelTask task;
  std::string workloads; ///< the corpus entries it occurs in
  int occurrences = 0;   ///< in the corpus's programs
  double profile_ms = 0; ///< the heuristic's time in this process, summed over occurrences
  double roofline = 0;   ///< the heuristic's fraction of the device's roofline
  double weight = 0;     ///< expected gain: runtime share x distance from the roofline
  double budget_s = 0;   ///< what its search was given
  Outcome outcome = Outcome::pending;
  /// What became of it, as its tuning records it: the plan used (`winner_opts`, searched now,
  /// from the cache or from the journal of a resumed run), its time and the heuristic's, the
  /// tie with the heuristic, the search's wall time; `error` when it failed.
  db::Tuning result;
  int candidates = 0;
  std::string status_counts; ///< "ok 120, slow 40"
  int warm_seeds = 0;        ///< plans a warm start seeded its search with
  double compile_cpu_s = 0;  ///< its candidates' compile times summed (searched now only)
  /// The plan's time (0 unknown), and the heuristic's.
  double tuned_ms() const { return result.winner_ms.value_or(0); }
  double heuristic_ms() const { return result.heuristic_ms.value_or(0); }
};
const char* to_string(BatchKernel::Outcome o);

/// What a batch reports as it goes; calls may come from several job threads at once.
class BatchListener {
public:
  virtual ~BatchListener() = default;
  virtual void planned(const std::vector<BatchKernel>& /*kernels*/, double /*budget_s*/) {}
  virtual void started(const BatchKernel& /*k*/) {}
  virtual void event(const BatchKernel& /*k*/, const Event& /*e*/) {}
  virtual void finished(const BatchKernel& /*k*/) {}
  /// A job's pool of sandboxes, before its first kernel and after its last (a live view
  /// polls WorkerPool::activity in between).
  virtual void pool_started(WorkerPool& /*pool*/) {}
  virtual void pool_stopping(WorkerPool& /*pool*/) {}
};

/// One program of the corpus timed whole with the batch's plans (tuner/batch/whole_program.hpp).
struct ProgramCheck {
  std::string label;   ///< the corpus entry
  int kernels = 0;     ///< its kernels
  int plans = 0;       ///< of them, with a plan other than the heuristic's from this batch
  PairedRatio speedup; ///< the heuristic's whole time over the tuned one's, as kept
  double heuristic_ms = 0, tuned_ms = 0; ///< medians of the rounds, as kept
  std::vector<std::string> reverted;     ///< kernels whose plan was not kept
  std::string note;                      ///< why a program was not checked
};

struct BatchReport {
  std::vector<BatchKernel> kernels; ///< this shard's, in key order
  int total_kernels = 0;            ///< over every shard
  double prepare_s = 0, wall_s = 0;
  MachineLimits limits;    ///< the device's, for the rooflines
  bool warm_start = false; ///< searches were seeded by warm starts (BatchOptions::warm_start)
  int sandboxes = 0;       ///< the worker sandboxes the searches spread their compiles over
  std::vector<ProgramCheck> programs; ///< each program whole, tuned against the heuristic
  double programs_s = 0;              ///< the time those checks took
  int count(BatchKernel::Outcome o) const;
  /// Kernels whose search a warm start seeded.
  int warm_started() const;
};

/// Where a batch journals: the database file (each job opens its own connection), the run.
struct BatchStore {
  std::string db_path;
  int64_t run_id = 0;
  int64_t device_id = 0;
  std::string source; ///< cache provenance
};

/// Runs the batch. Kernels whose search fails are reported, not thrown. A cancel through
/// `options.settings.control` ends the current searches and starts no more.
BatchReport run_batch(const Corpus& corpus, const BatchOptions& options, const BatchStore& store,
                      BatchListener& listener);
/// Runs a batch of the given kernels (the GUI's "tune this kernel"), as occurring once each in
/// `workload`: no profiling, each kernel weighted alike.
BatchReport run_batch(const std::vector<KernelTask>& tasks, const std::string& workload,
                      const BatchOptions& options, const BatchStore& store,
                      BatchListener& listener);

/// Shard i of N from "i/N", 0 <= i < N; a UserError naming `what` when malformed.
std::pair<int, int> parse_shard(const std::string& text, const std::string& what);

} // namespace beamlab::tuner
