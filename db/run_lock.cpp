// Runs' liveness locks; see run_lock.hpp.
#include "db/run_lock.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace beamlab::db {
namespace {

// The lock of run `id`: its byte of the lock file (the file stays empty; a lock may lie past
// the end).
struct flock byte_of(int64_t id, short type) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = static_cast<off_t>(id);
  l.l_len = 1;
  return l; // l_pid stays 0, as OFD locks require
}

std::string reason(const std::string& path, const char* what) {
  return "cannot " + std::string(what) + " '" + path + "': " + std::strerror(errno);
}

} // namespace

std::string run_lock_path(const std::string& db_path) { return db_path + "-runs.lock"; }

Liveness run_liveness(const std::string& db_path, int64_t run_id, std::string* why) {
  std::string path = run_lock_path(db_path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (why) *why = reason(path, "open");
    return Liveness::unknown;
  }
  struct flock l = byte_of(run_id, F_RDLCK); // conflicts with the runner's write lock only
  int rc = ::fcntl(fd, F_OFD_GETLK, &l);
  if (rc != 0 && why) *why = reason(path, "ask the lock of");
  ::close(fd);
  if (rc != 0) return Liveness::unknown;
  return l.l_type == F_UNLCK ? Liveness::dead : Liveness::alive;
}

RunLock RunLock::take(const std::string& db_path, int64_t run_id) {
  RunLock lock;
  std::string path = run_lock_path(db_path);
  lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.fd_ < 0) {
    lock.why_ = reason(path, "create");
    return lock;
  }
  struct flock l = byte_of(run_id, F_WRLCK);
  if (::fcntl(lock.fd_, F_OFD_SETLK, &l) == 0) {
    lock.outcome_ = Outcome::taken;
    return lock;
  }
  int error = errno;
  lock.outcome_ =
      error == EAGAIN || error == EACCES ? Outcome::held_elsewhere : Outcome::unavailable;
  if (lock.outcome_ == Outcome::unavailable) lock.why_ = reason(path, "lock");
  ::close(std::exchange(lock.fd_, -1));
  return lock;
}

RunLock::RunLock(RunLock&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), outcome_(o.outcome_), why_(std::move(o.why_)) {}

RunLock& RunLock::operator=(RunLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    outcome_ = o.outcome_;
    why_ = std::move(o.why_);
  }
  return *this;
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);
}

} // namespace beamlab::db
