// The gate and the worker threads; see pool.hpp.
#include "tuner/measure/pool.hpp"

#include <beamlab/tuning.hpp>

namespace beamlab::tuner {

void Gate::lock(Access a) {
  std::unique_lock lock(mutex_);
  if (a == Access::shared) {
    changed_.wait(lock, [&] { return !exclusive_ && exclusive_waiting_ == 0; });
    ++shared_;
    return;
  }
  ++exclusive_waiting_;
  changed_.wait(lock, [&] { return !exclusive_ && shared_ == 0; });
  --exclusive_waiting_;
  exclusive_ = true;
}

void Gate::unlock(Access a) {
  {
    std::lock_guard lock(mutex_);
    if (a == Access::shared)
      --shared_;
    else
      exclusive_ = false;
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
    gate_->lock(job.access);
    slot.state = job.access == Access::shared ? SlotState::shared : SlotState::exclusive;
    job.run(slot); // a packaged task: an exception goes to the job's future
    slot.restarts = slot.sandbox.restarts();
    slot.state = SlotState::idle;
    gate_->unlock(job.access);
  }
}

} // namespace beamlab::tuner
