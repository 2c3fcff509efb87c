// Other work on every CPU this process may use, for tests of what a measurement does on a busy
// machine: one child process per online CPU spinning until the object goes.
#pragma once

#include <csignal>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace beamlab::test_support {

class BusyCpus {
public:
  BusyCpus() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    int cpus = sched_getaffinity(0, sizeof(allowed), &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
    pid_t parent = getpid();
    for (int i = 0; i < cpus; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        // Gone with the test process, however it ends, and after two minutes at most.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        alarm(120);
        for (volatile unsigned long n = 0;; n = n + 1) {
        }
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
