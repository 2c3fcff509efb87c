// Pausing and cancelling a running search from another thread.
#pragma once

#include <condition_variable>
#include <mutex>

namespace beamlab::tuner {

/// Lets another thread pause, resume or cancel a running search (the GUI's buttons). A paused
/// search waits before its next compile batch or timing; a cancelled one stops like one whose
/// budget ended: what it measured is kept, untimed candidates are skipped, and the best so far
/// is re-measured as usual.
class SearchControl {
public:
  void pause();
  void resume();
  void cancel();
  bool paused() const;
  bool cancelled() const;
  /// Blocks while paused and not cancelled.
  void wait_while_paused() const;

private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool paused_ = false, cancelled_ = false;
};

} // namespace beamlab::tuner
