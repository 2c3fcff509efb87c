// The sandbox probe (tests only): from inside a real, shut-in worker, one forbidden action at a
// time, as a hostile kernel would try it: reading a file (open, io_uring, open_by_handle_at),
// reaching the tuner (pidfd_getfd, process_vm_readv/writev, ptrace, signals), changing files
// (truncate, chmod, link, rmdir), new namespaces and mounts, chroot, perf_event_open,
// userfaultfd, keyctl, raising its CPU limit, writing to an inherited fd, sockets, exec, fork,
// writable-and-executable memory, injecting terminal input, memfd, bpf, setuid(0).
// An action either kills the worker (the filter: SIGSYS) or comes back refused; "succeeded" is
// a hole in the sandbox.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace beamlab::tuner {

/// Tries `action`: {"action": A, "result": "succeeded" | "refused: EPERM" | "unknown action"}.
nlohmann::json probe_forbidden(const std::string& action);

/// Every action probe_forbidden knows.
std::vector<std::string> probe_actions();

} // namespace beamlab::tuner
