// A run's life in the database; see run.hpp.
#include "tuner/store/run.hpp"

#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "tuner/store/records.hpp"

namespace beamlab::tuner {

namespace {

// Where the lock can't be had, the run goes on; others tell whether it's alive by its pid.
void warn_unlocked(const db::RunLock& lock, int64_t id) {
  if (lock.outcome() == db::RunLock::Outcome::unavailable)
    std::fprintf(stderr,
                 "beamlab: warning: no lock for run %lld (%s); other processes can tell it is "
                 "alive only by its process id on this host\n",
                 static_cast<long long>(id), lock.why().c_str());
}

} // namespace

ActiveRun::ActiveRun(db::Database& db, int64_t id, int64_t device_id, db::RunLock lock)
    : db_(&db), id_(id), device_id_(device_id),
      source_(fmt::format("run {} on {} ({})", id, db::host_name(), db::now_utc())),
      lock_(std::move(lock)) {}

ActiveRun::ActiveRun(ActiveRun&& o) noexcept
    : db_(o.db_), id_(o.id_), device_id_(o.device_id_), source_(std::move(o.source_)),
      lock_(std::move(o.lock_)), open_(std::exchange(o.open_, false)) {}

ActiveRun ActiveRun::begin(db::Database& db, const RunSpec& spec) {
  int64_t device = db.upsert_device(this_device());
  db::NewRun r;
  r.device_id = device;
  r.kind = spec.kind;
  r.label = spec.label;
  r.command = spec.command;
  r.settings = spec.settings;
  r.git_revision = spec.git_revision;
  r.host = db::host_name();
  db::RunLock lock;
  int64_t id = db.begin_run(r, &lock);
  warn_unlocked(lock, id);
  return ActiveRun(db, id, device, std::move(lock));
}

ActiveRun ActiveRun::resume(db::Database& db, int64_t id, const std::string& what) {
  std::optional<db::Run> run = db.run(id);
  internal_assert(run) << "resuming run " << id << ", which is not in the database";
  db::RunLock lock = db::RunLock::take(db.path(), id);
  user_assert(lock.outcome() != db::RunLock::Outcome::held_elsewhere)
      << what << " " << id << ": run " << id << " is running in another process (it holds the "
      << "run's lock in '" << db::run_lock_path(db.path()) << "')";
  warn_unlocked(lock, id);
  db.reopen_run(id);
  return ActiveRun(db, id, run->device_id, std::move(lock));
}

void ActiveRun::finish(bool cancelled, bool failed) {
  if (!open_) return;
  db_->end_run(id_, cancelled ? db::RunStatus::interrupted
                    : failed  ? db::RunStatus::failed
                              : db::RunStatus::done);
  open_ = false; // only now: a failed end leaves the destructor to record the run failed
}

ActiveRun::~ActiveRun() {
  if (!open_) return;
  try {
    db_->end_run(id_, db::RunStatus::failed);
  } catch (const std::exception&) {
    // The database itself is the trouble (the error on its way out says so).
  }
}

db::Run run_to_resume(db::Database& db, int64_t id, const std::string& what) {
  std::optional<db::Run> run;
  if (id > 0) {
    run = db.run(id);
    user_assert(run) << what << " " << id << ": no run " << id << " in '" << db.path()
                     << "' (see 'beamlab cache list --runs')";
  } else {
    for (const db::Run& r : db.runs())
      if (r.kind == db::RunKind::tune && r.status != db::RunStatus::done) {
        run = r;
        break;
      }
    user_assert(run) << what << ": no unfinished tuning run in '" << db.path() << "'";
  }
  user_assert(run->kind == db::RunKind::tune)
      << what << " " << run->id << ": run " << run->id << " is a " << to_string(run->kind)
      << " run, not a tuning run";
  user_assert(run->status != db::RunStatus::done)
      << what << " " << run->id << ": run " << run->id << " finished already";
  // A run recorded running whose process is gone reads as interrupted (Database::run); `why`
  // is set only when the lock of a running one couldn't tell.
  std::string why;
  db::Liveness alive = db.liveness(*run, &why);
  if (!why.empty())
    std::fprintf(stderr,
                 "beamlab: warning: run %lld's lock can't tell whether it is alive (%s); "
                 "deciding by its process id on this host\n",
                 static_cast<long long>(run->id), why.c_str());
  user_assert(alive != db::Liveness::alive)
      << what << " " << run->id << ": run " << run->id << " is still running (process " << run->pid
      << " on " << run->host << " holds it)";
  return *run;
}

} // namespace beamlab::tuner
