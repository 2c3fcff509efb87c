// A run's life in the database, the one place any front-end begins, resumes and ends a run:
// the CLI's `tune` and `bench`, the GUI's live tuning and its plans tried by hand.
//
//   ActiveRun run = ActiveRun::begin(db, {RunKind::tune, "label", "beamlab tune ...", settings});
//   ... journal tunings under run.id() ...
//   run.finish(cancelled, failed);   // interrupted, failed or done: exactly one, once
//
// A run dropped without finish() (an exception on the way) is recorded failed; a cancelled
// run is interrupted, never done.
#pragma once

#include <cstdint>
#include <string>

#include "db/database.hpp"

namespace beamlab::tuner {

/// What a new run records about itself.
struct RunSpec {
  db::RunKind kind = db::RunKind::tune;
  std::string label;        ///< the user's name for it (may be empty)
  std::string command;      ///< how to repeat it
  std::string settings;     ///< JSON: what --resume reads back
  std::string git_revision; ///< of the build that ran it ("" unknown)
};

class ActiveRun {
public:
  /// Begins a run on this machine (its device recorded) owned by this process, holding its
  /// lock (a warning on stderr where locks are refused).
  static ActiveRun begin(db::Database& db, const RunSpec& spec);
  /// Makes run `id` running again, owned by this process: takes its lock first, and refuses
  /// (a UserError naming `what`, the door's word for resuming) when another process holds it.
  static ActiveRun resume(db::Database& db, int64_t id, const std::string& what = "--resume");

  ActiveRun(ActiveRun&& o) noexcept;
  ActiveRun& operator=(ActiveRun&&) = delete;
  ActiveRun(const ActiveRun&) = delete;
  ~ActiveRun();

  int64_t id() const { return id_; }
  int64_t device_id() const { return device_id_; }
  /// Provenance for what the run stores in the cache: "run 3 on host (2026-11-25 01:02:03)".
  const std::string& source() const { return source_; }

  /// Ends the run: interrupted when cancelled, failed when anything failed, else done.
  void finish(bool cancelled, bool failed);

private:
  ActiveRun(db::Database& db, int64_t id, int64_t device_id, db::RunLock lock);
  db::Database* db_;
  int64_t id_ = 0, device_id_ = 0;
  std::string source_;
  db::RunLock lock_; ///< held while this process runs it: what tells others it is alive
  bool open_ = true;
};

/// The run a resume continues: run `id`, or with 0 the newest unfinished tune run. A UserError
/// (naming `what`, the door's word for it: "--resume", "resume=") when there is none, it is
/// another kind, it finished, or it is alive in another process (its lock is held;
/// db::Database::liveness).
db::Run run_to_resume(db::Database& db, int64_t id, const std::string& what = "--resume");

} // namespace beamlab::tuner
