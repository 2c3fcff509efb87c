// Ctrl-C and kill during a long command (tune). The first SIGINT or SIGTERM asks the work to
// stop as at a budget's end: the command then marks its run interrupted, clears its progress
// line and exits with 128 + the signal (130, 143), and `--resume` finishes the run. A second
// one ends the process at once (the run stays `running`, and --resume takes it all the same).
#pragma once

#include <atomic>
#include <functional>
#include <signal.h>
#include <thread>

namespace beamlab::cli {

class Interrupts {
public:
  /// Blocks SIGINT and SIGTERM in this thread and so in every thread started from now on (make
  /// it before any), and watches for them on a thread of its own, which calls `on_first` at the
  /// first one.
  explicit Interrupts(std::function<void()> on_first);
  ~Interrupts();
  Interrupts(const Interrupts&) = delete;
  Interrupts& operator=(const Interrupts&) = delete;

  /// The signal that arrived first (0: none).
  int signal() const { return signal_; }

private:
  void watch();

  std::function<void()> on_first_;
  sigset_t watched_{}, old_mask_{};
  std::atomic<int> signal_{0};
  std::atomic<bool> done_{false};
  std::thread watcher_;
};

} // namespace beamlab::cli
