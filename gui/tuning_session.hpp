// A tuning run started from the GUI: BEAM on one stored kernel or a whole corpus, on a thread of
// its own, journaled in the database like a CLI run (other readers see it live). The UI polls
// it: take() drains what happened since the last call, activity() reads each sandbox's state.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tuner/batch/batch.hpp"

namespace beamlab::gui {

/// One thing the search reported, reduced to what the live view draws.
struct LiveEvent {
  enum class Kind { settled, iteration, best, kernel_started, kernel_finished, restarted, message };
  Kind kind = Kind::settled;
  std::string kernel;
  std::string hash; ///< the kernel's AST hash, as the database names it
  int id = -1, parent = -1, iteration = 0;
  std::string status, opts, detail;
  double ms = 0;   ///< the candidate's best time (settled, best)
  double best = 0; ///< the incumbent's
  double t = 0;    ///< seconds since the session started
};

struct SessionOptions {
  std::string db_path;
  int beam = 4;
  double budget_s = 60; ///< the whole session's
  int threads = 0;      ///< 0: every core
  int workers = 0;      ///< sandboxes; 0: the cores
};

class TuningSession {
public:
  /// Tunes these kernels (one, or a program's costliest), sharing the session's budget.
  TuningSession(SessionOptions options, std::vector<KernelTask> tasks);
  /// Tunes every kernel of a corpus file.
  TuningSession(SessionOptions options, std::string corpus_path);
  /// Resumes an unfinished tuning run, begun by any door, with its own kernels and settings
  /// (only `options.db_path` is used).
  TuningSession(SessionOptions options, int64_t resume_run);
  ~TuningSession(); ///< cancels and joins

  void start();
  void pause() { control_.pause(); }
  void resume() { control_.resume(); }
  void cancel() { control_.cancel(); }
  bool paused() const { return control_.paused(); }
  bool finished() const { return finished_; }
  int64_t run_id() const { return run_id_; }
  /// The error that ended the session, if one did.
  std::string error() const;

  /// What happened since the last call.
  std::vector<LiveEvent> take();
  /// Each sandbox's state (empty when no pool runs).
  std::vector<tuner::SlotActivity> activity();

private:
  class Listener;
  void run();
  void push(LiveEvent e);
  void push_event(const KernelTask& task, const tuner::Event& e);

  SessionOptions options_;
  std::vector<KernelTask> tasks_;
  std::string corpus_;
  int64_t resume_run_ = 0;
  tuner::SearchControl control_;
  std::thread thread_;
  std::atomic<bool> finished_ = false;
  std::atomic<int64_t> run_id_ = 0;
  double t0_ = 0;
  mutable std::mutex mutex_;
  std::vector<LiveEvent> events_;
  std::string error_;
  tuner::WorkerPool* pool_ = nullptr; ///< under mutex_
};

} // namespace beamlab::gui
