// The sandbox probe; see probe.hpp.
#include "tuner/measure/probe.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <map>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>
#include <unistd.h>

namespace beamlab::tuner {
namespace {

long sys(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
  return ::syscall(nr, a, b, c, d, e, f);
}

// Each action returns the syscall's result (>= 0: it worked; -1 with errno: it was refused).
const std::map<std::string, std::function<long()>>& actions() {
  static const std::map<std::string, std::function<long()>> table = {
      {"open_file", [] { return long{::open("/etc/hostname", O_RDONLY)}; }},
      {"io_uring_setup",
       [] {
         io_uring_params p{};
         return sys(SYS_io_uring_setup, 4, reinterpret_cast<long>(&p));
       }},
      {"open_by_handle_at",
       [] {
         alignas(8) char handle[sizeof(unsigned) * 2 + 8] = {};
         reinterpret_cast<unsigned*>(handle)[0] = 8;
         return sys(SYS_open_by_handle_at, AT_FDCWD, reinterpret_cast<long>(handle), O_RDONLY);
       }},
      {"pidfd_open", [] { return sys(SYS_pidfd_open, ::getppid(), 0); }},
      {"pidfd_getfd",
       [] {
         long pidfd = sys(SYS_pidfd_open, ::getppid(), 0);
         return pidfd < 0 ? pidfd : sys(SYS_pidfd_getfd, pidfd, 0, 0);
       }},
      {"process_vm_readv",
       [] {
         char byte = 0;
         iovec local{&byte, 1}, remote{reinterpret_cast<void*>(&byte), 1};
         return long{::process_vm_readv(::getppid(), &local, 1, &remote, 1, 0)};
       }},
      {"process_vm_writev",
       [] {
         char byte = 0;
         iovec local{&byte, 1}, remote{reinterpret_cast<void*>(&byte), 1};
         return long{::process_vm_writev(::getppid(), &local, 1, &remote, 1, 0)};
       }},
      {"kill_other", [] { return long{::kill(::getppid(), 0)}; }},
      {"tgkill_other", [] { return sys(SYS_tgkill, ::getppid(), ::getppid(), 0); }},
      {"ptrace_attach", [] { return ::ptrace(PTRACE_ATTACH, ::getppid(), nullptr, nullptr); }},
      {"truncate", [] { return long{::truncate("/etc/hostname", 0)}; }},
      {"chmod", [] { return long{::chmod("/etc/hostname", 0777)}; }},
      {"link", [] { return long{::link("/etc/hostname", "/etc/hostname.beamlab")}; }},
      {"rmdir", [] { return long{::rmdir("/tmp")}; }},
      {"unshare_user", [] { return long{::unshare(CLONE_NEWUSER)}; }},
      {"mount", [] { return long{::mount("none", "/mnt", "tmpfs", 0, nullptr)}; }},
      {"chroot", [] { return long{::chroot("/")}; }},
      {"perf_event_open",
       [] {
         perf_event_attr a{};
         a.size = sizeof a;
         a.type = PERF_TYPE_SOFTWARE;
         a.config = PERF_COUNT_SW_CPU_CLOCK;
         return sys(SYS_perf_event_open, reinterpret_cast<long>(&a), 0, -1, -1, 0);
       }},
      {"userfaultfd", [] { return sys(SYS_userfaultfd, 0); }},
      {"keyctl", [] { return sys(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0); }},
      {"raise_cpu_hard_limit",
       [] {
         rlimit r{RLIM_INFINITY, RLIM_INFINITY};
         return long{::setrlimit(RLIMIT_CPU, &r)};
       }},
      {"write_inherited_fd",
       [] {
         // Every fd past stdin/stdout/stderr: none may be open (the tuner's files, sockets).
         for (int fd = 3; fd < 1024; ++fd)
           if (::write(fd, "x", 1) >= 0) return long{fd};
         errno = EBADF;
         return -1L;
       }},
      {"socket", [] { return long{::socket(AF_INET, SOCK_STREAM, 0)}; }},
      {"execve",
       [] {
         char* argv[] = {nullptr};
         return long{::execve("/bin/true", argv, argv)};
       }},
      {"fork", [] { return sys(SYS_fork); }},
      {"mmap_write_exec",
       [] {
         void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
         return p == MAP_FAILED ? -1L : 0L;
       }},
      {"mprotect_write_exec",
       [] {
         void* p =
             ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
         return p == MAP_FAILED ? -1L
                                : long{::mprotect(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC)};
       }},
      {"ioctl_tiocsti",
       [] {
         char c = 'x';
         return long{::ioctl(STDERR_FILENO, TIOCSTI, &c)};
       }},
      {"memfd_create", [] { return sys(SYS_memfd_create, reinterpret_cast<long>("x"), 0); }},
      {"bpf", [] { return sys(SYS_bpf, 0, 0, 0); }},
      {"setuid_root", [] { return long{::setuid(0)}; }},
  };
  return table;
}

} // namespace

nlohmann::json probe_forbidden(const std::string& action) {
  auto it = actions().find(action);
  if (it == actions().end()) return {{"action", action}, {"result", "unknown action"}};
  errno = 0;
  long r = it->second();
  if (r >= 0) return {{"action", action}, {"result", "succeeded"}};
  const char* name = strerrorname_np(errno);
  return {{"action", action}, {"result", std::string("refused: ") + (name ? name : "?")}};
}

std::vector<std::string> probe_actions() {
  std::vector<std::string> out;
  for (const auto& [name, _] : actions()) out.push_back(name);
  return out;
}

} // namespace beamlab::tuner
