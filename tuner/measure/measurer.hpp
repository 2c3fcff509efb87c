// Typed measurement of one kernel's candidates in the worker pool's sandboxes. The search asks
// in plans, check indices and timings and gets typed answers; only this file and the worker
// speak the wire format (protocol.hpp, checked by reply.hpp).
//
// A measurer holds one kernel (a task): its AST, buffers and checks travel to a worker once,
// and again only after that worker restarts. Candidates are then compiled by id and Opts, and
// a candidate is timed on the sandbox that compiled it (compiled again there first if its
// worker died in between).
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <string>
#include <vector>

#include "tuner/measure/check.hpp"

namespace beamlab::tuner {

class WorkerPool;
struct Slot;

/// How a request ended. The worker's own answers (ok, wrong_result, rejected, compile_error,
/// limit, error) and how a call fails (crashed, timeout, limit, violation; a malformed reply
/// is an error).
enum class Verdict {
  ok,
  wrong_result,
  rejected,
  compile_error,
  crashed,
  timeout,
  limit,
  violation,
  error
};

/// Where a compiled candidate lives: its sandbox and the worker generation that holds it.
struct Placement {
  int slot = -1;
  int generation = -1;
};

struct Answer {
  Verdict verdict = Verdict::ok;
  std::string reason;  ///< for a failure: the signal, the limit or the worker's error
  std::string restart; ///< the call failed and the worker is gone: "sandbox 1: crashed (SIGSEGV)"
  Placement at;
  double seconds = 0; ///< wall time of the request(s)
  bool ok() const { return verdict == Verdict::ok; }
};

struct Compiled : Answer {
  double compile_ms = 0;
  uint64_t code_hash = 0;
  int64_t code_bytes = 0;
};

struct Timing {
  std::vector<size_t> checks; ///< check indices to run (empty: the first)
  int warmup = 1;       ///< untimed runs (the first check's run is one, unless it ran at other
                        ///< values of symbolic variables than are timed)
  int runs = 0;         ///< timed runs after the checks
  double cutoff_ms = 0; ///< two runs in a row slower than this stop the candidate (0: none)
  bool drop = true;     ///< free the compiled candidate afterwards
  bool round = false;   ///< a finalists' re-measurement round (not the search's timing)
};

struct Timed : Answer {
  std::vector<double> samples_ms;
  bool early_stop = false; ///< a run passed the cutoff
  double max_error = 0;
};

/// The unoptimized kernel's run on every check: the outputs candidates are checked against.
struct ReferenceRun {
  double compile_ms = 0;
  std::vector<double> check_ms; ///< one per check, each the check's only run
};

/// One check a candidate runs: inputs of a kind, and (for a kernel over symbolic variables)
/// the variables' values.
struct Check {
  InputKind kind;
  VarValues vars;
};
/// Each input kind at each of the task's check_at bindings (kind-major).
std::vector<Check> checks_of(const KernelTask& task, const std::vector<InputKind>& kinds);
/// The unoptimized kernel's time from its reference runs (`check_ms`, one per check): the
/// fastest kind's, as a timed run launches it (at each tune_at binding, summed).
double reference_ms(const KernelTask& task, const std::vector<Check>& checks,
                    const std::vector<double>& check_ms);

/// Where a search measures its candidates: the worker pool's sandboxes (Measurer), or the
/// journal of an earlier search played back (tuner/search/recorded.hpp). The search speaks only
/// to this, so one strategy runs live and offline alike; its clock is the lab's.
class Lab {
public:
  virtual ~Lab() = default;
  /// The sandboxes candidates spread over, and the cores each kernel runs on there.
  virtual int sandboxes() const = 0;
  virtual int threads() const = 0;
  /// Workers restarted (after a crash, hang, violation or malformed reply).
  virtual int restarts() const = 0;
  /// Seconds on the lab's clock: wall time, or a replay's simulated time.
  virtual double now_s() = 0;
  /// Runs the unoptimized kernel (candidate `id`, the empty plan) on every check and keeps its
  /// outputs as the expected ones. Fails when it can't run.
  virtual Expected<ReferenceRun> reference(int id, double run_timeout_s) = 0;
  /// Compiles a candidate (in parallel with other compiles).
  virtual std::future<Compiled> compile(int id, std::vector<Opt> opts) = 0;
  /// The sandboxes busy now (a compile left running): a candidate compiled on one waits for
  /// it before it can be timed there. Empty: none.
  virtual std::vector<bool> busy_sandboxes() const { return {}; }
  /// For a lab that plays a search back: how many iterations after proposing the candidate
  /// with these Opts the recorded search took it in (its compile or its sandbox was late), so
  /// a search played back takes it in as late. 0: as soon as it is in.
  virtual int iterations_late(const std::vector<Opt>& /*opts*/) const { return 0; }
  /// Checks and times a compiled candidate alone on the machine; `at` follows it.
  virtual Timed time(int id, const std::vector<Opt>& opts, Placement& at, const Timing& timing) = 0;
  /// Frees compiled candidates that will not be run.
  virtual void drop(int slot, std::vector<int> ids) = 0;
};

class Measurer : public Lab {
public:
  /// `faults` (tests only, workers started with allow_faults): a fault planted in the
  /// candidate whose Opts print as the key.
  Measurer(const KernelTask& task, WorkerPool& pool, std::vector<InputKind> checks,
           double compile_timeout_s, std::map<std::string, std::string> faults = {});

  int checks() const { return static_cast<int>(checks_.size()); }
  int sandboxes() const override;
  int threads() const override;
  /// Over the pool's life.
  int restarts() const override;
  /// The steady clock.
  double now_s() override;

  /// Runs the unoptimized kernel (candidate `id`, the empty plan) on every check, the checks
  /// spread over the sandboxes, and keeps its outputs as the expected ones. The request's
  /// time limit becomes max(`run_timeout_s`, 20 x its slowest check). Fails when it can't run.
  Expected<ReferenceRun> reference(int id, double run_timeout_s) override;

  /// Compiles a candidate on the first free sandbox (preemptible access: in parallel, and
  /// stopped while a candidate is timed).
  std::future<Compiled> compile(int id, std::vector<Opt> opts) override;
  std::vector<bool> busy_sandboxes() const override;

  /// Runs a compiled candidate on its sandbox alone on the machine (exclusive access),
  /// compiling it there again first if the worker restarted; `at` follows it.
  Timed time(int id, const std::vector<Opt>& opts, Placement& at, const Timing& timing) override;

  /// Frees compiled candidates that will not be run (in the background).
  void drop(int slot, std::vector<int> ids) override;

private:
  Compiled compile_on(Slot& slot, int id, const std::vector<Opt>& opts);
  /// Sends the task (with the expected outputs once they are known) unless the worker has it.
  Answer ensure_task(Slot& slot);

  const KernelTask& task_;
  WorkerPool& pool_;
  std::vector<Check> checks_;
  double compile_timeout_s_;
  std::map<std::string, std::string> faults_;
  std::string key_;      ///< the task's name in the slots ("measure-N", "-ref" before outputs)
  std::string expected_; ///< every check's reference output, concatenated
  double run_timeout_s_ = 10;
};

const char* to_string(Verdict v);

} // namespace beamlab::tuner
