// The gate and the worker threads; see pool.hpp.
#include "tuner/measure/pool.hpp"

#include <algorithm>

#include <beamlab/tuning.hpp>

namespace beamlab::tuner {

void Gate::lock(Access a, Sandbox* sandbox) {
  std::unique_lock lock(mutex_);
  if (a != Access::exclusive) {
    changed_.wait(lock, [&] { return !exclusive_ && exclusive_waiting_ == 0; });
    ++shared_;
    if (a == Access::preemptible && sandbox) preemptible_.push_back(sandbox);
    return;
  }
  ++exclusive_waiting_;
  // The preemptible holders stop where they are; the others are waited for.
  for (Sandbox* s : preemptible_)
    if (std::find(paused_.begin(), paused_.end(), s) == paused_.end()) {
      s->pause();
      paused_.push_back(s);
    }
  changed_.wait(lock, [&] { return !exclusive_ && shared_ == static_cast<int>(paused_.size()); });
  --exclusive_waiting_;
  exclusive_ = true;
}

void Gate::unlock(Access a, Sandbox* sandbox) {
  {
    std::lock_guard lock(mutex_);
    if (a == Access::exclusive) {
      exclusive_ = false;
      // The next timing, if one waits, keeps them stopped (it would stop them again at once).
      // That wait is bounded: every timing needs a compile first, so pools taking turns at
      // timing run out of candidates to time and their compiles, these among them, go on.
      if (exclusive_waiting_ == 0) {
        for (Sandbox* s : paused_) s->resume();
        paused_.clear();
      }
    } else {
      --shared_;
      // A holder whose answer was already on its way when it was stopped: running again,
      // for whatever it is asked next.
      if (auto p = std::find(paused_.begin(), paused_.end(), sandbox);
          sandbox && p != paused_.end()) {
        sandbox->resume();
        paused_.erase(p);
      }
      if (auto p = std::find(preemptible_.begin(), preemptible_.end(), sandbox);
          sandbox && p != preemptible_.end())
        preemptible_.erase(p);
    }
  }
  changed_.notify_all();
}

WorkerPool::WorkerPool(const PoolOptions& options)
    : options_(options), gate_(options.gate ? options.gate : std::make_shared<Gate>()) {
  int n = options.workers > 0 ? options.workers : usable_cores();
  own_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) slots_.push_back(std::make_unique<Slot>(i, options.sandbox));
  for (int i = 0; i < n; ++i) threads_.emplace_back([this, i] { serve(*slots_[size_t(i)]); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

int WorkerPool::restarts() const {
  int n = 0;
  for (const auto& s : slots_) n += s->sandbox.restarts();
  return n;
}

std::vector<SlotActivity> WorkerPool::activity() const {
  std::vector<SlotActivity> out;
  for (const auto& s : slots_) out.push_back({s->state.load(), s->restarts.load()});
  return out;
}

void WorkerPool::enqueue(Job job, int slot) {
  {
    std::lock_guard lock(mutex_);
    if (slot >= 0 && slot < size())
      own_[static_cast<size_t>(slot)].push_back(std::move(job));
    else
      any_.push_back(std::move(job));
  }
  work_.notify_all();
}

void WorkerPool::serve(Slot& slot) {
  std::deque<Job>& own = own_[static_cast<size_t>(slot.index)];
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return stopping_ || !own.empty() || !any_.empty(); });
      if (own.empty() && any_.empty()) return; // stopping, and nothing left to do
      std::deque<Job>& from = own.empty() ? any_ : own;
      job = std::move(from.front());
      from.pop_front();
    }
    // Busy from here, waiting at the gate too: a search must not count on this slot for timing.
    slot.state = SlotState::shared;
    gate_->lock(job.access, &slot.sandbox);
    if (job.access == Access::exclusive) slot.state = SlotState::exclusive;
    job.run(slot); // a packaged task: an exception goes to the job's future
    slot.restarts = slot.sandbox.restarts();
    slot.state = SlotState::idle;
    gate_->unlock(job.access, &slot.sandbox);
  }
}

} // namespace beamlab::tuner
