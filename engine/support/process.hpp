// Starting a child process: posix_spawn (never a bare fork, which a multithreaded process
// can't do safely) with its standard streams redirected, the one way beamlab starts processes
// (the tuner's sandboxed workers, the bench's measuring children).
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "engine/support/error.hpp"

namespace beamlab {

struct SpawnOptions {
  int stdin_fd = -1, stdout_fd = -1; ///< dup'ed onto the child's stdin and stdout (-1: kept)
  int stderr_fd = -1;                ///< dup'ed onto the child's stderr (-1: kept, or the log)
  std::string log;                   ///< stdout and stderr appended to this file ("": kept)
  bool truncate_log = false;         ///< start the log empty
  bool own_process_group = false;    ///< a Ctrl-C at the terminal reaches the parent only
  bool empty_environment = false;    ///< nothing of the parent's environment (else all of it)
};

/// Starts `args[0]` (a path) with arguments `args`: its pid, or why it could not start.
Expected<pid_t> spawn_process(const std::vector<std::string>& args, const SpawnOptions& options);

/// Waits for `pid` (through EINTR): its exit status, or 128 + the signal that ended it.
Expected<int> wait_process(pid_t pid);

} // namespace beamlab
