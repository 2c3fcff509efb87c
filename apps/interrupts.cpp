// Signals during a long command; see interrupts.hpp.
#include "apps/interrupts.hpp"

#include <cstdio>
#include <pthread.h>
#include <unistd.h>

namespace beamlab::cli {

Interrupts::Interrupts(std::function<void()> on_first) : on_first_(std::move(on_first)) {
  sigemptyset(&watched_);
  sigaddset(&watched_, SIGINT);
  sigaddset(&watched_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &watched_, &old_mask_);
  watcher_ = std::thread([this] { watch(); });
}

Interrupts::~Interrupts() {
  done_ = true;
  pthread_kill(watcher_.native_handle(), SIGTERM); // wakes its sigwait
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void Interrupts::watch() {
  for (;;) {
    int sig = 0;
    if (sigwait(&watched_, &sig) != 0 || done_) return;
    if (signal_ == 0) {
      signal_ = sig;
      on_first_();
      continue;
    }
    // Again: stop now (main released libomp's /dev/shm file: _exit leaves nothing there).
    const char msg[] = "\r\033[Kbeamlab: interrupted again: stopping now\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(128 + sig);
  }
}

} // namespace beamlab::cli
