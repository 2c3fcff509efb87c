// The worker's confinement; see confine.hpp.
#include "tuner/measure/confine.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

namespace beamlab::tuner {
namespace {

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "beamlab-worker: error: %s\n", why.c_str());
  std::_Exit(2);
}

std::string error_text(const char* what) { return fmt::format("{}: {}", what, strerror(errno)); }

// Writes `text` to a /proc file (the user namespace's id maps).
bool write_file(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

void set_limit(int resource, rlim_t soft, rlim_t hard, const char* name) {
  rlimit r{soft, hard};
  if (::setrlimit(resource, &r) != 0) die(error_text(name));
}

rlim_t cpu_used() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<rlim_t>(u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1);
}

// --- the filter ------------------------------------------------------------------------------

// One rule: a syscall by name and the comparisons its arguments must pass (all of them).
struct Rule {
  const char* name;
  std::vector<scmp_arg_cmp> args;
};

scmp_arg_cmp arg(unsigned i, scmp_compare op, uint64_t a, uint64_t b = 0) {
  return scmp_arg_cmp{i, op, a, b};
}

// The worker's whole syscall surface after the warm-up: reading requests and writing replies
// on its pipes, memory for buffers and JIT code (never writable and executable at once), its
// OpenMP threads, time, signals to itself, its CPU budget. Nothing that names a path, a
// socket, another process or a new namespace.
std::vector<Rule> rules() {
  const uint64_t wx = PROT_WRITE | PROT_EXEC;
  const auto self = static_cast<uint64_t>(::getpid());
  std::vector<Rule> r;
  auto allow = [&](std::initializer_list<const char*> names) {
    for (const char* name : names) r.push_back({name, {}});
  };
  allow({"read", "write", "readv", "writev", "close", "fstat"}); // its pipes and fds
  r.push_back({"newfstatat", {arg(3, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH)}});
  for (const char* name : {"mmap", "mprotect"}) // never PROT_WRITE and PROT_EXEC together
    for (uint64_t prot : {uint64_t{0}, uint64_t{PROT_WRITE}, uint64_t{PROT_EXEC}})
      r.push_back({name, {arg(2, SCMP_CMP_MASKED_EQ, wx, prot)}});
  allow({"munmap", "mremap", "madvise", "brk"});
  r.push_back({"clone", {arg(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)}}); // threads
  allow({"futex", "set_robust_list", "rseq", "set_tid_address", "sched_yield", "sched_getaffinity",
         "exit", "exit_group"});
  allow({"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall"});
  r.push_back({"tgkill", {arg(0, SCMP_CMP_EQ, self)}}); // its own threads (abort, raise)
  allow({"getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "uname",
         "getrandom", "clock_gettime", "clock_getres", "gettimeofday", "clock_nanosleep",
         "nanosleep", "getrusage", "getrlimit"});
  // Its limits: read any; move the CPU soft limit (never past the hard one: no capabilities).
  r.push_back({"prlimit64", {arg(0, SCMP_CMP_EQ, 0), arg(2, SCMP_CMP_EQ, 0)}});
  r.push_back({"prlimit64", {arg(0, SCMP_CMP_EQ, 0), arg(1, SCMP_CMP_EQ, RLIMIT_CPU)}});
  r.push_back({"setrlimit", {arg(0, SCMP_CMP_EQ, RLIMIT_CPU)}});
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
  allow({"pipe2"}); // AddressSanitizer probes whether memory is readable through a pipe
#endif
  return r;
}

void install_filter() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (!ctx) die("seccomp_init failed");
  int rc = 0;
  for (const Rule& rule : rules()) {
    int nr = seccomp_syscall_resolve_name(rule.name);
    if (nr == __NR_SCMP_ERROR) continue; // not on this architecture
    rc |= seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, static_cast<unsigned>(rule.args.size()),
                                 rule.args.data());
  }
  // clone3's flags sit behind a pointer the filter can't read: glibc falls back to clone.
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (rc != 0) die("building the seccomp filter failed");
  if (seccomp_load(ctx) != 0) die(error_text("loading the seccomp filter"));
  seccomp_release(ctx);
}

// Empties the bounding and ambient sets (needs CAP_SETPCAP, so before anything else drops).
void drop_bounding_set() {
  for (int cap = 0; ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      die(error_text("dropping the capability bounding set"));
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

// Drops every capability the process still holds (in the user namespace it is in).
void drop_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &header, none) != 0) die(error_text("dropping capabilities"));
}

// As root: become nobody (no files of the tuner's user are its own).
void become_nobody() {
  const gid_t nobody = 65534;
  if (::setgroups(0, nullptr) != 0 || ::setresgid(nobody, nobody, nobody) != 0 ||
      ::setresuid(nobody, nobody, nobody) != 0)
    die(error_text("switching to the user nobody"));
}

} // namespace

Confinement enter_namespaces() {
  Confinement c;
  if (::close_range(3, ~0U, 0) != 0)
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
  c.layers.push_back("inherited fds closed");
  bool root = ::geteuid() == 0;
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  int flags = CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS | (root ? 0 : CLONE_NEWUSER);
  if (::unshare(flags) != 0) {
    c.missing.push_back(error_text("network, IPC and mount namespaces (unshare)"));
    return c;
  }
  c.own_mounts = true;
  if (!root) { // keep its own ids inside the new user namespace
    write_file("/proc/self/setgroups", "deny");
    write_file("/proc/self/uid_map", fmt::format("{} {} 1", uid, uid));
    write_file("/proc/self/gid_map", fmt::format("{} {} 1", gid, gid));
  }
  c.layers.push_back(root ? "network, IPC and mount namespaces"
                          : "user, network, IPC and mount namespaces");
  return c;
}

void shut_in(const ConfineOptions& o, Confinement& c) {
  if (!o.keep_stderr) {
    int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0 && ::dup2(null, STDERR_FILENO) >= 0) c.layers.push_back("stderr to /dev/null");
    if (null >= 0) ::close(null);
  }
  // An empty read-only root: a tmpfs mounted in the private mount namespace only.
  if (c.own_mounts) {
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("beamlab-worker", "/tmp", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "size=4k,mode=555") != 0 ||
        ::chroot("/tmp") != 0 || ::chdir("/") != 0)
      c.missing.push_back(error_text("an empty root (mount, chroot)"));
    else
      c.layers.push_back("an empty read-only root");
  } else {
    c.missing.push_back("an empty root (no private mount namespace)");
  }
  drop_bounding_set();
  if (::geteuid() == 0) {
    become_nobody(); // (which clears every capability of the process too)
    c.layers.push_back("uid and gid nobody");
  }
  drop_capabilities();
  c.layers.push_back("no capabilities");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die(error_text("no_new_privs"));
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  c.layers.push_back("no_new_privs, not dumpable");

  set_limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
  set_limit(RLIMIT_FSIZE, 0, 0, "RLIMIT_FSIZE");
  set_limit(RLIMIT_MEMLOCK, 0, 0, "RLIMIT_MEMLOCK");
  set_limit(RLIMIT_MSGQUEUE, 0, 0, "RLIMIT_MSGQUEUE");
  set_limit(RLIMIT_NOFILE, 64, 64, "RLIMIT_NOFILE");
#if !defined(__SANITIZE_ADDRESS__) && !__has_feature(address_sanitizer)
  // (AddressSanitizer reserves terabytes of shadow address space up front.)
  if (o.memory_mb > 0) {
    auto bytes = static_cast<rlim_t>(o.memory_mb) << 20;
    set_limit(RLIMIT_AS, bytes, bytes, "RLIMIT_AS");
  }
#endif
  if (o.cpu_seconds > 0) {
    // The hard limit bounds the worker's life: a few requests' worth, then it retires.
    auto life =
        static_cast<rlim_t>(o.lifetime_cpu_seconds > 0 ? o.lifetime_cpu_seconds
                                                       : std::max<int64_t>(8 * o.cpu_seconds, 60));
    rlim_t used = cpu_used();
    set_limit(RLIMIT_CPU, used + std::min(static_cast<rlim_t>(o.cpu_seconds), life), used + life,
              "RLIMIT_CPU");
  }
  c.layers.push_back("hard limits (core, file size, memlock, fds, address space, CPU)");
  if (o.seccomp) {
    install_filter();
    c.layers.push_back("allow-list seccomp filter");
  } else {
    c.missing.push_back("the seccomp filter (--no-seccomp)");
  }
}

void budget_cpu(int64_t seconds) {
  if (seconds <= 0) return;
  rlimit r{};
  ::getrlimit(RLIMIT_CPU, &r);
  r.rlim_cur = std::min(cpu_used() + static_cast<rlim_t>(seconds), r.rlim_max);
  if (::setrlimit(RLIMIT_CPU, &r) != 0) die(error_text("RLIMIT_CPU"));
}

bool cpu_runs_low(int64_t seconds) {
  if (seconds <= 0) return false;
  rlimit r{};
  ::getrlimit(RLIMIT_CPU, &r);
  return r.rlim_max != RLIM_INFINITY && cpu_used() + static_cast<rlim_t>(seconds) > r.rlim_max;
}

} // namespace beamlab::tuner
