// A sandbox: one beamlab-worker child process and the pipes to it, driven by one tuner thread.
//
// The child is started with posix_spawn (never a bare fork of the multithreaded tuner) with an
// empty environment, and shuts itself in (confine.hpp): namespaces, no inherited fds, an empty
// root, no privileges, hard limits, an allow-list seccomp filter. Every request
// has a deadline: a worker that crashes, hangs, breaks a limit or makes a denied syscall is
// killed, its status classified from how it died, and a fresh worker is started on the next
// call. Nothing a candidate does can take the tuner down with it.
#pragma once

#include <algorithm>
#include <mutex>
#include <string>
#include <sys/types.h>

#include "tuner/measure/protocol.hpp"
#include "tuner/measure/reply.hpp"

namespace beamlab::tuner {

struct SandboxOptions {
  std::string worker;               ///< the worker executable; empty: default_worker_path()
  int threads = 1;                  ///< cores each kernel runs on
  int64_t memory_mb = 8192;         ///< address-space limit (not under AddressSanitizer)
  int64_t cpu_seconds = 120;        ///< CPU-time limit per request (SIGXCPU: status limit)
  int64_t lifetime_cpu_seconds = 0; ///< a worker's CPU time before it retires (0: 8 requests')
  bool allow_faults = false;        ///< let requests plant faults (tests)
  bool seccomp = true;
};

/// How a call ended. ok: the worker answered (its header says how the request went);
/// malformed: it answered with something reply.hpp refuses (the worker is killed).
enum class CallStatus { ok, crashed, timeout, limit, violation, lost, malformed };
const char* to_string(CallStatus s);

struct CallResult {
  CallStatus status = CallStatus::ok;
  Message reply;         ///< when ok
  std::string detail;    ///< otherwise: the signal or reason ("SIGSEGV", "no answer in 2.0 s")
  int exit_status = -1;  ///< the worker's exit status, when it exited on its own (no signal)
  double stopped_ms = 0; ///< how long the worker was paused (Sandbox::pause) during the call
};

class Sandbox {
public:
  explicit Sandbox(SandboxOptions options);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  /// Sends `request` and waits up to `timeout_s` for the answer, starting the worker if needed.
  /// The answer is checked (check_reply) before it is returned; `payload_bytes` is the payload
  /// an ok answer to a run that returns outputs carries.
  CallResult call(const Message& request, double timeout_s, uint64_t payload_bytes = 0);

  /// Workers started after the first for a crash, timeout, violation or malformed reply (not
  /// for a worker that retired at its lifetime CPU limit).
  int restarts() const { return std::max(0, starts_ - 1 - retired_); }
  /// Workers that ended at their lifetime CPU limit, each replaced by a fresh one.
  int retirements() const { return retired_; }
  bool running() const { return pid_ > 0; }
  /// The running worker's process id (-1: none).
  pid_t pid() const { return pid_; }
  /// Counts workers started: a request to a later generation finds none of an earlier one's
  /// state (compiled candidates, the task).
  int generation() const { return starts_; }

  /// Stops the worker (SIGSTOP) where it is, mid-request, until resume(): another thread's
  /// timing then has the cores to itself. A call waiting on it meanwhile gets that time added
  /// to its deadline. A worker started while paused starts stopped. Safe from any thread.
  void pause();
  /// Lets a paused worker run on (SIGCONT). Safe from any thread.
  void resume();
  bool paused() const {
    std::lock_guard lock(signal_mutex_);
    return paused_;
  }

private:
  void start();
  /// Kills the worker (if alive), reaps it and closes its pipes. The result is `verdict`, except
  /// that a worker found dead when the verdict is `lost` is reported by how it died.
  CallResult stop(CallStatus verdict, std::string detail);

  /// The last line the worker wrote to stderr before its confinement closed it ("" if none).
  std::string last_words() const;

  SandboxOptions options_;
  mutable std::mutex signal_mutex_; ///< pid_ as pause() and resume() see it, and paused_
  bool paused_ = false;
  StoppedClock stopped_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
  int worker_stderr_ = -1; ///< what the worker wrote before its confinement closed stderr
  bool answered_ = false;  ///< this worker process has replied at least once
  int starts_ = 0;
  int retired_ = 0;
};

/// $BEAMLAB_WORKER, else helper_program("beamlab-worker").
std::string default_worker_path();

/// The running executable's path ("" when the system won't say).
std::string this_program();
/// One of beamlab's helper programs (beamlab-worker, beamlab-bench): the one the environment
/// variable `env` names, else the first that exists of
///   beside the running executable            (the build tree's bin/)
///   its ../libexec/beamlab/                   (an install's bin/beamlab)
///   beside the library this code is in, its ../libexec/beamlab/ and ../bin/
///                                             (libbeamlab.so loaded by Python or another program,
///                                             installed or in the build tree)
/// and when none does, the first, so the error names where it was expected.
std::string helper_program(const std::string& name, const char* env);

} // namespace beamlab::tuner
