// A run's life in the database; see run.hpp.
#include "tuner/store/run.hpp"

#include <csignal>
#include <unistd.h>

#include <fmt/format.h>

#include "tuner/store/records.hpp"

namespace beamlab::tuner {

ActiveRun::ActiveRun(db::Database& db, int64_t id, int64_t device_id)
    : db_(&db), id_(id), device_id_(device_id),
      source_(fmt::format("run {} on {} ({})", id, host_name(), db::now_utc())) {}

ActiveRun::ActiveRun(ActiveRun&& o) noexcept
    : db_(o.db_), id_(o.id_), device_id_(o.device_id_), source_(std::move(o.source_)),
      open_(std::exchange(o.open_, false)) {}

ActiveRun ActiveRun::begin(db::Database& db, const RunSpec& spec) {
  int64_t device = db.upsert_device(this_device());
  db::NewRun r;
  r.device_id = device;
  r.kind = spec.kind;
  r.label = spec.label;
  r.command = spec.command;
  r.settings = spec.settings;
  r.git_revision = spec.git_revision;
  r.host = host_name();
  return ActiveRun(db, db.begin_run(r), device);
}

ActiveRun ActiveRun::resume(db::Database& db, int64_t id) {
  std::optional<db::Run> run = db.run(id);
  internal_assert(run) << "resuming run " << id << ", which is not in the database";
  db.reopen_run(id);
  return ActiveRun(db, id, run->device_id);
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

db::Run run_to_resume(db::Database& db, int64_t id) {
  std::optional<db::Run> run;
  if (id > 0) {
    run = db.run(id);
    user_assert(run) << "--resume " << id << ": no run " << id << " in '" << db.path()
                     << "' (see 'beamlab cache list --runs')";
  } else {
    for (const db::Run& r : db.runs())
      if (r.kind == db::RunKind::tune && r.status != db::RunStatus::done) {
        run = r;
        break;
      }
    user_assert(run) << "--resume: no unfinished tuning run in '" << db.path() << "'";
  }
  user_assert(run->kind == db::RunKind::tune)
      << "--resume " << run->id << ": run " << run->id << " is a " << to_string(run->kind)
      << " run, not a tuning run";
  user_assert(run->status != db::RunStatus::done)
      << "--resume " << run->id << ": run " << run->id << " finished already";
  bool alive = run->status == db::RunStatus::running && run->host == host_name() && run->pid > 0 &&
               run->pid != ::getpid() && ::kill(static_cast<pid_t>(run->pid), 0) == 0;
  user_assert(!alive) << "--resume " << run->id << ": run " << run->id
                      << " is still running (process " << run->pid << ")";
  return *run;
}

} // namespace beamlab::tuner
