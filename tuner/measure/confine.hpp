// How beamlab-worker shuts itself in. A worker runs code derived from a user's model or kernel,
// so everything around that code is a layer of the trust boundary (sandbox.hpp drives it):
//
//   at start (one thread)  every fd but stdin, stdout, stderr closed; new network, IPC and
//                          mount namespaces (through a new user namespace when not root)
//   the warm-up            LLVM and OpenMP set themselves up, reading what files they need
//                          (worker_main then releases libomp's /dev/shm registration)
//   then (shut_in)         stderr to /dev/null;
//                          an empty read-only root (chroot into a private tmpfs); as root the
//                          uid and gid of nobody; every capability dropped, the bounding set
//                          emptied; no_new_privs; not dumpable; hard resource limits; and an
//                          allow-list seccomp filter: any syscall not on the list, or on it
//                          with arguments outside its rule, kills the process (SIGSYS).
//
// A layer the kernel refuses (no user namespaces, say) is skipped and named in Confinement;
// the filter and the limits are never skipped. No pid namespace: the filter lets the worker
// name no process but itself (kill, tgkill, ptrace, pidfd_*, process_vm_* are refused), and a
// worker that were its namespace's init would ignore SIGXCPU, the CPU limit's signal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace beamlab::tuner {

struct ConfineOptions {
  int64_t memory_mb = 0;            ///< address-space limit (0: none; not under AddressSanitizer)
  int64_t cpu_seconds = 0;          ///< CPU time per request (0: none)
  int64_t lifetime_cpu_seconds = 0; ///< the hard limit, from now (0: 8 requests', at least 60)
  bool seccomp = true;              ///< the filter (off only for debugging the worker)
  bool keep_stderr = false;         ///< leave stderr open (debugging); else it becomes /dev/null
};

/// What the worker got: the layers in place and, for those it could not have, why.
struct Confinement {
  std::vector<std::string> layers;
  std::vector<std::string> missing;
  bool own_mounts = false; ///< a private mount namespace (so shut_in may chroot)
};

/// First thing in main, while the process has one thread: closes inherited fds and enters new
/// namespaces (best effort: a refusal is recorded, not fatal).
Confinement enter_namespaces();

/// After the warm-up, before the first request: every other layer (see above). Dies with a
/// one-line error when a layer that must hold (limits, filter) can't be set.
void shut_in(const ConfineOptions& o, Confinement& c);

/// Moves the CPU-time soft limit to what the process has used plus `seconds` (SIGXCPU past
/// it), never past the hard limit shut_in set for the worker's whole life.
void budget_cpu(int64_t seconds);
/// True when less than one more request's `seconds` is left under the hard limit: the worker
/// should retire after its reply (a fresh one takes its place).
bool cpu_runs_low(int64_t seconds);

} // namespace beamlab::tuner
