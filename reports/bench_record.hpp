// The benchmark record (`beamlab bench`): runs a corpus's workloads with the plans a user would
// get (the tuning cache's, else the heuristic's) and the beamlab-bench Google Benchmark suite,
// and stores everything as one run of kind "bench" in the database: the device's fingerprint,
// the git revision, the settings, and every timing sample of every workload, kernel and suite
// benchmark, so reports can judge changes against the noise the samples show.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "reports/run_data.hpp"
#include "tuner/batch/corpus.hpp"

namespace beamlab::reports {

/// The suite benchmarks a bench run includes by default: all but the ones that tune (beam4,
/// BM_Search) or build a GUI (BM_Gui), which take minutes.
inline constexpr const char* kDefaultSuiteFilter = "-beam4|BM_Search|BM_Gui|BM_Model";

struct BenchOptions {
  tuner::Corpus corpus;
  int runs = 12; ///< samples per workload, kernel and suite benchmark, over all processes
  /// The workloads and the suite are measured this many times, each time in a fresh process
  /// (with `child_command`; without one, again in this process), runs / processes samples
  /// each: a process's memory and thread placement is noise a single process never shows.
  int processes = 3;
  /// The command that measures the corpus in a child process; it is given "--runs N
  /// --measure-into FILE" and writes measurements_json() to FILE.
  std::vector<std::string> child_command;
  int threads = 0; ///< cores per launch (0: all)
  /// Each workload and kernel sample is the mean of as many back-to-back runs as take this long.
  double min_sample_ms = 5;
  bool use_cache = true; ///< plans from the tuning cache in the database (else the heuristic's)
  bool suite = true;
  std::string suite_filter = kDefaultSuiteFilter; ///< Google Benchmark's --benchmark_filter
  std::string suite_binary;                       ///< empty: beamlab-bench beside this executable
  double suite_min_time = 0.05;                   ///< seconds per repetition
  std::string label, command, git_revision;
};

/// Records a bench run in `db` and returns its id. `progress` hears one line per step. The run
/// is marked failed (and the error rethrown) when a workload or the suite fails.
int64_t record_bench(db::Database& db, const BenchOptions& options,
                     const std::function<void(const std::string&)>& progress = {});

/// The corpus measured in this process, `runs` samples each, with the plans of the tuning cache
/// at `cache_path` (when options.use_cache), else the heuristic's.
std::vector<Measurement> measure_corpus(const BenchOptions& options, const std::string& cache_path,
                                        int runs);
/// Measurements as a child process reports them (rows like the benchmarks table's).
std::string measurements_json(const std::vector<Measurement>& items);

/// beamlab-bench beside this executable (BEAMLAB_BENCH overrides).
std::string default_suite_binary();

} // namespace beamlab::reports
