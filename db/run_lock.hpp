// Whether a run is alive, decided by a lock its process holds rather than by a process id.
//
// A running run (tune or bench) holds an open-file-description lock (fcntl F_OFD_SETLK, a write
// lock on byte `run id`) on a lock file beside its database, "<db>-runs.lock". The kernel drops
// the lock when the last descriptor of that open file is closed: at exit, on a crash or a
// SIGKILL (before the dead process is even reaped, so a zombie holds nothing), and never for a
// process that merely got the old pid. Any process, this one included (OFD locks conflict
// between open files, not between processes), asks by F_OFD_GETLK.
//
// On NFS the lock is the server's (NFSv4 natively, v3 through lockd), so another node sees it;
// a crashed node's locks go when its lease ends (about 90 s). A mount with `nolock`, or a
// filesystem that refuses locks, keeps them local: then a run on another node looks dead.
// Where there is no lock file (a database from before locks, or copied from elsewhere) or
// locks are refused, the caller falls back to the run's host and pid.
#pragma once

#include <cstdint>
#include <string>

namespace beamlab::db {

/// The lock file of the database at `db_path`.
std::string run_lock_path(const std::string& db_path);

enum class Liveness {
  alive,  ///< a process holds the run's lock
  dead,   ///< nobody does
  unknown ///< no lock file, or locks don't work there: ask the pid (Run::pid, Run::host)
};

/// Whether a process holds run `run_id`'s lock in the database at `db_path`. Sets `why` (if
/// given) when unknown.
Liveness run_liveness(const std::string& db_path, int64_t run_id, std::string* why = nullptr);

/// A run's lock, held from take() until destroyed (or the process ends).
class RunLock {
public:
  enum class Outcome {
    taken,          ///< held now, by this object
    held_elsewhere, ///< another process (or open file) holds it: the run is alive there
    unavailable     ///< no lock could be had here (see why()): nothing is held
  };
  RunLock() = default;
  /// Takes run `run_id`'s lock, creating the lock file when needed.
  static RunLock take(const std::string& db_path, int64_t run_id);
  RunLock(RunLock&& o) noexcept;
  RunLock& operator=(RunLock&& o) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

  Outcome outcome() const { return outcome_; }
  /// What refused the lock (the file and the system's reason), for unavailable.
  const std::string& why() const { return why_; }

private:
  int fd_ = -1;
  Outcome outcome_ = Outcome::unavailable;
  std::string why_;
};

} // namespace beamlab::db
