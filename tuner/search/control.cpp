// Pausing and cancelling a search; see control.hpp.
#include "tuner/search/control.hpp"

namespace beamlab::tuner {

void SearchControl::pause() {
  std::lock_guard lock(mutex_);
  paused_ = true;
}

void SearchControl::resume() {
  {
    std::lock_guard lock(mutex_);
    paused_ = false;
  }
  changed_.notify_all();
}

void SearchControl::cancel() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  changed_.notify_all();
}

bool SearchControl::paused() const {
  std::lock_guard lock(mutex_);
  return paused_;
}

bool SearchControl::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

void SearchControl::wait_while_paused() const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !paused_ || cancelled_; });
}

} // namespace beamlab::tuner
