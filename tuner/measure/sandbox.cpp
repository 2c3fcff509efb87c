// The worker process and its pipes; see sandbox.hpp.
#include "tuner/measure/sandbox.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include <beamlab/tuning.hpp>

namespace beamlab::tuner {
namespace {

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// The call's result once the worker is found dead with `status` (from waitpid).
CallResult death(int status, CallResult r) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    r.detail = signal_name(sig);
    r.status = sig == SIGSYS    ? CallStatus::violation
               : sig == SIGXCPU ? CallStatus::limit
                                : CallStatus::crashed;
    if (sig == SIGSYS) r.detail += " (a syscall outside the sandbox's allow-list)";
    if (sig == SIGXCPU) r.detail += " (the sandbox's CPU-time limit)";
  } else if (WIFEXITED(status)) {
    r.status = CallStatus::crashed;
    r.exit_status = WEXITSTATUS(status);
    r.detail = "the worker exited with status " + std::to_string(r.exit_status);
  }
  return r;
}

} // namespace

const char* to_string(CallStatus s) {
  switch (s) {
  case CallStatus::ok: return "ok";
  case CallStatus::crashed: return "crashed";
  case CallStatus::timeout: return "timeout";
  case CallStatus::limit: return "limit";
  case CallStatus::violation: return "violation";
  case CallStatus::lost: return "lost";
  case CallStatus::malformed: return "malformed";
  }
  return "?";
}

std::string this_program() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : self.string();
}

#ifndef BEAMLAB_HELPERS_FROM_BIN // set by cmake/package.cmake from the install layout
#define BEAMLAB_HELPERS_FROM_BIN "../libexec/beamlab"
#define BEAMLAB_HELPERS_FROM_LIB "../libexec/beamlab"
#endif

std::string helper_program(const std::string& name, const char* env) {
  if (const char* path = std::getenv(env); path && *path) return path;
  namespace fs = std::filesystem;
  std::vector<fs::path> places;
  std::string self = this_program();
  fs::path bin = self.empty() ? fs::path(".") : fs::path(self).parent_path();
  places.push_back(bin / name);
  places.push_back(bin / BEAMLAB_HELPERS_FROM_BIN / name);
  // The file this function was loaded from: libbeamlab.so, or the executable it is linked into.
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&helper_program), &info) && info.dli_fname) {
    fs::path lib = fs::absolute(info.dli_fname).parent_path();
    places.push_back(lib / name);
    places.push_back(lib / BEAMLAB_HELPERS_FROM_LIB / name);
    places.push_back(lib / ".." / "bin" / name); // the build tree: lib/ beside bin/
  }
  for (const fs::path& p : places)
    if (::access(p.c_str(), X_OK) == 0) return p.lexically_normal().string();
  return places.front().string();
}

std::string default_worker_path() { return helper_program("beamlab-worker", "BEAMLAB_WORKER"); }

Sandbox::Sandbox(SandboxOptions options) : options_(std::move(options)) {
  if (options_.worker.empty()) options_.worker = default_worker_path();
  // A worker that dies mid-request must cost an error code on write, not the tuner's life.
  std::signal(SIGPIPE, SIG_IGN);
#if !defined(__SANITIZE_ADDRESS__) && !__has_feature(address_sanitizer)
  // Nothing of the tuner's user (a worker that got out, say) may read or write its memory or
  // take its fds (ptrace, process_vm_*, pidfd_getfd need a dumpable target). (Not under
  // AddressSanitizer: its leak checker attaches to the process's own threads.)
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#endif
}

Sandbox::~Sandbox() { stop(CallStatus::lost, ""); }

void Sandbox::start() {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("sandbox: pipe: ") + std::strerror(errno));
  std::vector<std::string> args = {options_.worker,
                                   "--threads",
                                   std::to_string(options_.threads),
                                   "--memory-mb",
                                   std::to_string(options_.memory_mb),
                                   "--cpu-seconds",
                                   std::to_string(options_.cpu_seconds),
                                   "--lifetime-cpu-seconds",
                                   std::to_string(options_.lifetime_cpu_seconds)};
  if (options_.allow_faults) args.push_back("--allow-faults");
  if (!options_.seccomp) args.push_back("--no-seccomp");
  const char* keep = std::getenv("BEAMLAB_WORKER_STDERR");
  bool keep_stderr = keep && *keep == '1';
  if (keep_stderr) args.push_back("--keep-stderr");
  // A clean environment: nothing of the user's (tokens, paths, LD_PRELOAD) reaches the worker.
  // A process group of its own: a Ctrl-C at the terminal reaches the tuner (which stops the
  // search and ends its workers), not the workers mid-candidate.
  // Its stderr, until confinement closes it, comes back through a pipe: a worker that can't
  // start (a shared library missing, a namespace refused) says why there.
  int err[2] = {-1, -1};
  if (!keep_stderr && ::pipe2(err, O_CLOEXEC) != 0) err[0] = err[1] = -1;
  SpawnOptions spawn;
  spawn.stdin_fd = in[0];
  spawn.stdout_fd = out[1];
  spawn.stderr_fd = err[1];
  spawn.own_process_group = true;
  spawn.empty_environment = true;
  Expected<pid_t> pid = spawn_process(args, spawn);
  ::close(in[0]);
  ::close(out[1]);
  if (err[1] >= 0) ::close(err[1]);
  worker_stderr_ = err[0];
  answered_ = false;
  if (worker_stderr_ >= 0) ::fcntl(worker_stderr_, F_SETFL, O_NONBLOCK);
  if (!pid) {
    ::close(in[1]);
    ::close(out[0]);
    throw std::runtime_error("sandbox: cannot start the worker '" + options_.worker +
                             "': " + pid.error() +
                             " (build the beamlab-worker target, or set BEAMLAB_WORKER)");
  }
  {
    std::lock_guard lock(signal_mutex_);
    pid_ = *pid;
    if (paused_) ::kill(pid_, SIGSTOP);
  }
  to_worker_ = in[1];
  from_worker_ = out[0];
  for (int fd : {to_worker_, from_worker_}) {
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    ::fcntl(fd, F_SETPIPE_SZ, 1 << 20); // fewer wake-ups per buffer moved (best effort)
  }
  ++starts_;
}

CallResult Sandbox::stop(CallStatus verdict, std::string detail) {
  CallResult r{verdict, {}, std::move(detail)};
  // Kill before closing the pipes: a worker that sees its input close exits on its own, and
  // that exit must not pass for the reason a reply was refused or a request timed out.
  if (pid_ > 0) {
    // Held until the pid is forgotten: pause() and resume() never signal a reaped pid.
    std::lock_guard lock(signal_mutex_);
    int status = 0;
    pid_t got = ::waitpid(pid_, &status, WNOHANG);
    if (got == 0) {
      ::kill(pid_, SIGKILL); // a stopped process dies too
      ::waitpid(pid_, &status, 0);
    } else if (verdict == CallStatus::lost) { // it died first: say how
      r = death(status, std::move(r));
    }
    pid_ = -1;
  }
  if (to_worker_ >= 0) ::close(to_worker_);
  if (from_worker_ >= 0) ::close(from_worker_);
  if (worker_stderr_ >= 0) ::close(worker_stderr_);
  to_worker_ = from_worker_ = worker_stderr_ = -1;
  return r;
}

std::string Sandbox::last_words() const {
  std::string text;
  char buf[4096];
  for (ssize_t n; worker_stderr_ >= 0 && (n = ::read(worker_stderr_, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (size_t nl = text.rfind('\n'); nl != std::string::npos) text = text.substr(nl + 1);
  return text;
}

void Sandbox::pause() {
  std::lock_guard lock(signal_mutex_);
  if (paused_) return;
  paused_ = true;
  stopped_.stopped();
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void Sandbox::resume() {
  std::lock_guard lock(signal_mutex_);
  if (!paused_) return;
  paused_ = false;
  if (pid_ > 0) ::kill(pid_, SIGCONT);
  stopped_.continued();
}

CallResult Sandbox::call(const Message& request, double timeout_s, uint64_t payload_bytes) {
  if (pid_ <= 0) start();
  auto stopped_before = stopped_.total();
  Deadline deadline(std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s)),
                    &stopped_);
  Transfer t = write_message(to_worker_, request, deadline);
  CallResult r;
  if (t == Transfer::ok)
    t = read_message(from_worker_, r.reply, deadline, {kMaxReplyHeaderBytes, payload_bytes});
  r.stopped_ms =
      std::chrono::duration<double, std::milli>(stopped_.total() - stopped_before).count();
  if (t == Transfer::ok) {
    answered_ = true;
    Expected<void> valid = check_reply(request.header, r.reply, payload_bytes);
    if (!valid) return stop(CallStatus::malformed, "a malformed reply: " + valid.error());
    if (r.reply.header.value("retiring", false)) { // its last answer: a fresh worker is next
      stop(CallStatus::ok, "");
      ++retired_;
    }
    return r;
  }
  if (t == Transfer::malformed)
    return stop(CallStatus::malformed,
                fmt::format("a malformed reply: its framing is over the limits (header {} bytes, "
                            "payload {} bytes) or its header is not a JSON object",
                            kMaxReplyHeaderBytes, payload_bytes));
  if (t == Transfer::timeout) {
    char limit[64];
    std::snprintf(limit, sizeof limit, "no answer within %.1f s", timeout_s);
    return stop(CallStatus::timeout, limit);
  }
  // The pipe closed: the worker died. Give it a moment to be reaped with its signal.
  for (int i = 0; i < 200; ++i) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != 0)
      break;
    ::usleep(1000);
  }
  // A worker that exits (no signal) before its first reply never started: the run can't go
  // on, and the worker's own words say why (a shared library the loader could not find: exit
  // status 127).
  bool never_started = !answered_;
  std::string words = never_started ? last_words() : "";
  CallResult dead = stop(CallStatus::lost, "the worker closed its pipe");
  if (never_started && dead.exit_status >= 0)
    throw std::runtime_error(fmt::format("sandbox: the worker '{}' could not start (exited with "
                                         "status {}{})",
                                         options_.worker, dead.exit_status,
                                         words.empty() ? "" : ": " + words));
  return dead;
}

} // namespace beamlab::tuner
