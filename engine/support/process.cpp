// Starting child processes; see process.hpp.
#include "engine/support/process.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace beamlab {

Expected<pid_t> spawn_process(const std::vector<std::string>& args, const SpawnOptions& options) {
  if (args.empty()) return make_unexpected(std::string("no program to start"));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  int err = 0;
  if (options.stdin_fd >= 0)
    err = posix_spawn_file_actions_adddup2(&actions, options.stdin_fd, STDIN_FILENO);
  if (err == 0 && options.stdout_fd >= 0)
    err = posix_spawn_file_actions_adddup2(&actions, options.stdout_fd, STDOUT_FILENO);
  if (err == 0 && options.stderr_fd >= 0)
    err = posix_spawn_file_actions_adddup2(&actions, options.stderr_fd, STDERR_FILENO);
  if (err == 0 && !options.log.empty()) {
    int flags = O_WRONLY | O_CREAT | (options.truncate_log ? O_TRUNC : O_APPEND);
    err =
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.log.c_str(), flags, 0644);
    if (err == 0) err = posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (options.own_process_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  char* no_environment[] = {nullptr};
  pid_t pid = -1;
  if (err == 0)
    err = posix_spawn(&pid, args[0].c_str(), &actions, &attr, argv.data(),
                      options.empty_environment ? no_environment : environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return make_unexpected(std::string(std::strerror(err)));
  return pid;
}

Expected<int> wait_process(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return make_unexpected(std::string("waitpid: ") + std::strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace beamlab
