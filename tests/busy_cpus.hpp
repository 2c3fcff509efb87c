// Other work on every CPU, for tests of what a measurement does on a busy machine: one child
// process per online CPU spinning until the object goes.
#pragma once

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace beamlab::test_support {

class BusyCpus {
public:
  BusyCpus() {
    for (long i = 0; i < sysconf(_SC_NPROCESSORS_ONLN); ++i) {
      pid_t pid = fork();
      if (pid == 0)
        for (volatile unsigned long n = 0;; n = n + 1) {
        }
      if (pid > 0) children_.push_back(pid);
    }
  }
  ~BusyCpus() {
    for (pid_t pid : children_) kill(pid, SIGKILL);
    for (pid_t pid : children_) waitpid(pid, nullptr, 0);
  }
  BusyCpus(const BusyCpus&) = delete;
  BusyCpus& operator=(const BusyCpus&) = delete;

private:
  std::vector<pid_t> children_;
};

} // namespace beamlab::test_support
