// The tuner's side of the database: journaling each search as it runs, and the tuning cache.
//
// A TuningJournal records one kernel's search in a run: every candidate is committed the moment
// the search settles it, so a run killed with SIGKILL loses at most the candidates in flight;
// resumed, the journal hands the search a Replay of what was settled, and the search retraces
// its steps without compiling or timing those again.
#pragma once

#include <string>

#include "db/database.hpp"
#include "tuner/measure/pool.hpp"
#include "tuner/search/search.hpp"
#include "tuner/store/cache.hpp"
#include "tuner/store/records.hpp"
#include "tuner/store/warm_start.hpp"

namespace beamlab::tuner {

/// One kernel's search in a run, journaled.
class TuningJournal {
public:
  /// The tuning records `settings` and, seeded by a warm start, where each seed came from
  /// (settings "warm_start", warm_start_json).
  TuningJournal(db::Database& db, int64_t run_id, const KernelTask& task,
                const std::string& workload, int threads, const SearchSettings& settings,
                const std::string& actions, double budget_s,
                const std::vector<WarmSeed>& warm = {});

  const db::Tuning& tuning() const { return tuning_; }
  /// The search already finished in this run (a resume skips it).
  bool finished() const { return tuning_.status == db::TuningStatus::done; }
  /// What an interrupted search of this kernel settled.
  const Replay& replay() const { return replay_; }

  /// The search's event sink: commits each settled candidate and the reference.
  void record(const Event& e);
  /// Commits the whole result (the finalists' extra samples, the summary); status done.
  void finish(const TuneResult& r);
  /// The search could not run; status failed with `error`.
  void fail(const std::string& error);

private:
  db::Database& db_;
  db::Tuning tuning_;
  Replay replay_;
};

/// One kernel's search as a batch runs it: journaled in `ctx.run_id` (when the mode writes and
/// the run is set), its winner stored in the cache, the events passed on to `sink`. A cancel
/// through `settings.control` stops it like a budget's end. `warm`: a warm start's seeds, added
/// to the settings' seeds, recorded with the tuning, and the winner cached under the warm key.
Expected<TuneResult> tune_journaled(const KernelTask& task, const std::string& workload,
                                    WorkerPool& pool, const SearchSettings& settings,
                                    CacheContext& ctx, const EventSink& sink = {},
                                    const std::vector<WarmSeed>& warm = {});

/// A plan tried by hand (`tried`, measured in `r` beside the heuristic), appended to run
/// `run_id`'s "by hand" tuning of the kernel (the reference and the heuristic first, with the
/// first plan), and the tuning summed up: its winner is the fastest plan tried so far.
void journal_hand_tried(db::Database& db, int64_t run_id, const KernelTask& task,
                        const TuneResult& r, const Candidate& tried);

/// The workload name of a tuning journal_hand_tried wrote: plans tried by hand, not a search.
/// Such a tuning's "winner" is the fastest plan tried, never a search result: views show it
/// apart (its own series, no speedup).
inline constexpr const char* kHandTriedWorkload = "by hand";
inline bool tried_by_hand(const db::Tuning& t) { return t.workload == kHandTriedWorkload; }

/// A tuning of a kernel over symbolic variables: where its candidates were timed, and where
/// checked, as its recorded settings say ("seq=512, seq=64"; empty for a fixed shape).
std::string tuned_at(const db::Tuning& t);
std::string checked_at(const db::Tuning& t);

} // namespace beamlab::tuner
