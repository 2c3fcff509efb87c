// What the GUI reads from the database, as plain snapshots.
//
// Every function here opens its own read-only connection and returns a value (or the one-line
// reason it couldn't): they run on worker threads (see async.hpp), never on the UI thread, and a
// tuning process may be writing the same file meanwhile (WAL). A missing, foreign or damaged
// file is an error value, never an exception escaping into Qt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "engine/support/error.hpp"
#include "gui/program.hpp"
#include "reports/compare.hpp"
#include "reports/summary.hpp"

namespace beamlab::gui {

struct RunRow {
  db::Run run;
  std::string device; ///< "AMD EPYC 7B13, 2 cores"
  int kernels = 0;
  int64_t candidates = 0;
  int64_t measurements = 0; ///< a bench run's
  bool by_hand = false;     ///< every tuning of it holds plans tried by hand, not a search
};

/// A kernel's search in a run, with what the tables derive from it: the reports' shape, and
/// the name the tables show.
struct KernelRow : reports::TunedKernel {
  /// The kernel's name, with a short AST hash where another kernel of the run shares the name
  /// (two convolutions of one shape in different places): "r_64_56_56 #1a2b3c".
  std::string label;
};

struct RunDetail {
  db::Run run;
  std::optional<db::Device> device;
  std::vector<KernelRow> kernels; ///< a tuning run's searches
  /// A bench run's measurements (workloads, kernels, suite entries), as reports read them.
  std::vector<reports::Measurement> measured;
};

/// One measurement (a workload, a kernel or a suite entry) across the bench runs of one device,
/// oldest first: each run's samples (a kernel's pooled over its workloads, as the reports read
/// a run) and, against the run before, the reports' verdict: a change point where it is a
/// regression or an improvement.
struct TrendPoint {
  int64_t run_id = 0;
  std::string when; ///< "2026-11-21 10:00" (UTC)
  std::vector<double> samples_ms;
  reports::Verdict change = reports::Verdict::unknown;
};

struct TuningDetail {
  KernelRow row;
  db::Run run;
  std::optional<db::Device> device;
  std::vector<db::CandidateRow> candidates; ///< by seq
  /// The kernel's other searches (every run), oldest first: its timing history.
  std::vector<db::Tuning> history;
  /// Plans tried by hand on the kernel (every "by hand" tuning's, the reference and the
  /// heuristic measured beside them left out), oldest first.
  struct HandTry {
    std::string opts;
    std::vector<double> samples_ms;
    int after_searches = 0; ///< how many of `history`'s searches came before it
  };
  std::vector<HandTry> hand_tries;
  /// The kernel as bench runs timed it (inside their workloads), oldest first: its trend
  /// (load_trend), each point placed among the searches.
  struct BenchPoint : TrendPoint {
    int after_searches = 0; ///< how many of `history`'s searches came before its run
  };
  std::vector<BenchPoint> bench_points;
};

struct Trend {
  std::string name;   ///< readable: "matmul M=256 N=256 K=256"
  std::string device; ///< "AMD EPYC, 2 cores"
  std::vector<TrendPoint> points;
};
/// The trend of `key` in `section` over the bench runs on run `run_id`'s device.
Expected<Trend> load_trend(const std::string& path, int64_t run_id, reports::Section section,
                           const std::string& key);

/// The runs, newest first.
Expected<std::vector<RunRow>> load_runs(const std::string& path);
Expected<RunDetail> load_run(const std::string& path, int64_t run_id);
Expected<TuningDetail> load_tuning(const std::string& path, int64_t tuning_id);

/// Runs `a` (baseline) and `b` (candidate) compared as `beamlab report` compares them: every
/// workload, kernel and suite benchmark both measured, with the report's verdict rule.
Expected<reports::Comparison> compare_stored_runs(const std::string& path, int64_t a, int64_t b);

/// `program` with what the database at `path` says of each kernel: its newest search's gain
/// and whether the plan that ran is that search's winner, and its roof under this device's
/// stored limits (ProgramKernel::gain, tie, tuned, roof, bound).
Expected<ProgramProfile> note_standing(const std::string& path, ProgramProfile program);

/// The newest search of the kernel with AST hash `hash` (none: never tuned).
Expected<std::optional<int64_t>> latest_tuning(const std::string& path, const std::string& hash);

/// A candidate's ranking time: its fastest sample (0: none).
double best_ms(const db::CandidateRow& c);
double median_ms(const db::CandidateRow& c);

/// Reads the file's data_version on a connection it keeps (PRAGMA data_version only sees other
/// connections' commits on one long-lived connection): changes mean "reload".
class ChangeWatch {
public:
  explicit ChangeWatch(std::string path) : path_(std::move(path)) {}
  /// True when another connection committed since the last call (and on the first call).
  Expected<bool> changed();

private:
  std::string path_;
  std::unique_ptr<db::Database> db_;
  int64_t last_ = -1;
};

} // namespace beamlab::gui
