// The tuner's worker threads: one thread per sandbox, each thread the only one that talks to
// its sandbox. Work is submitted as jobs; a job runs on a given slot's thread (a candidate
// compiled there is timed there) or on whichever thread is free.
//
// Compiles and other untimed work enter the pool's gate shared and run in parallel; timing
// enters it exclusive, so one candidate is timed at a time on the machine and nothing else
// the tuner starts runs beside it. A waiting exclusive job holds back new shared ones (timing
// is never starved by a stream of compiles). Compiles enter preemptible: a timing doesn't wait
// for them to end but stops their workers (SIGSTOP) while it runs and lets them go on after,
// so one slow compile never holds the machine's timing, nor the other cores, hostage.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "tuner/measure/sandbox.hpp"

namespace beamlab::tuner {

/// Shared (parallel) or exclusive (alone) access to the machine; preemptible is shared access
/// whose sandbox an exclusive holder stops while it holds the machine.
enum class Access { shared, preemptible, exclusive };

class Gate {
public:
  /// `sandbox`: the preemptible holder's (required for Access::preemptible, else ignored).
  void lock(Access a, Sandbox* sandbox = nullptr);
  void unlock(Access a, Sandbox* sandbox = nullptr);

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int shared_ = 0, exclusive_waiting_ = 0;
  bool exclusive_ = false;
  std::vector<Sandbox*> preemptible_; ///< holding shared access; a subset of shared_
  std::vector<Sandbox*> paused_;      ///< of those, stopped for an exclusive holder
};

/// What a slot's thread is doing: waiting, running shared work (compiling, sending a task) or
/// holding the machine alone (timing).
enum class SlotState { idle, shared, exclusive };

/// A slot as another thread may read it while the pool works (a live view).
struct SlotActivity {
  SlotState state = SlotState::idle;
  int restarts = 0; ///< of its sandbox, as of its last finished job
};

/// A sandbox and what its thread knows of the worker inside it.
struct Slot {
  int index = 0;
  Sandbox sandbox;
  std::string task;         ///< the task the current worker holds ("" none)
  int task_generation = -1; ///< the worker generation that received it
  std::atomic<SlotState> state{SlotState::idle};
  std::atomic<int> restarts{0};
  explicit Slot(int i, const SandboxOptions& o) : index(i), sandbox(o) {}
  /// True when the running worker already holds `key` (a restart loses it).
  bool holds(const std::string& key) const {
    return sandbox.running() && task == key && task_generation == sandbox.generation();
  }
};

struct PoolOptions {
  int workers = 0; ///< sandboxes (and threads); 0: the number of cores
  SandboxOptions sandbox;
  /// Shared by pools that tune at once (a batch's --jobs), so timing stays exclusive across
  /// them; null: the pool's own.
  std::shared_ptr<Gate> gate;
};

class WorkerPool {
public:
  explicit WorkerPool(const PoolOptions& options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(slots_.size()); }
  const SandboxOptions& sandbox_options() const { return options_.sandbox; }
  /// Worker restarts over all sandboxes.
  int restarts() const;
  /// The gate its jobs enter (shared with other pools of a batch): held exclusively, nothing
  /// compiles or times beside the holder.
  Gate& gate() { return *gate_; }
  /// Each slot's state now; safe from any thread.
  std::vector<SlotActivity> activity() const;

  /// Runs `job(slot)` on slot `slot`'s thread (-1: the first free thread) under the gate.
  template <class F>
  auto submit(Access access, F job, int slot = -1) -> std::future<std::invoke_result_t<F, Slot&>> {
    using R = std::invoke_result_t<F, Slot&>;
    auto task = std::make_shared<std::packaged_task<R(Slot&)>>(std::move(job));
    std::future<R> result = task->get_future();
    enqueue({[task](Slot& s) { (*task)(s); }, access}, slot);
    return result;
  }

private:
  struct Job {
    std::function<void(Slot&)> run;
    Access access;
  };
  void enqueue(Job job, int slot);
  void serve(Slot& slot);

  PoolOptions options_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::deque<Job>> own_; ///< per slot
  std::deque<Job> any_;
  std::mutex mutex_;
  std::condition_variable work_;
  bool stopping_ = false;
  std::shared_ptr<Gate> gate_;
  std::vector<std::thread> threads_;
};

} // namespace beamlab::tuner
