// The tuner's side of the database: journaling each search as it runs, and the tuning cache.
//
// A TuningJournal records one kernel's search in a run: every candidate is committed the moment
// the search settles it, so a run killed with SIGKILL loses at most the candidates in flight;
// resumed, the journal hands the search a Replay of what was settled, and the search retraces
// its steps without compiling or timing those again.
//
// The cache keys a plan by kernel hash x device fingerprint x compiler identity x search
// settings x threads. Each entry also records the action space its search had for the kernel
// (the Opts and amounts that applied): a lookup accepts the entry only when every action that
// applies now was in it, so adding an action to the search space re-tunes only the kernels it
// can affect. A hit is replayed (the Opts applied again, and the optimized kernel's hash
// compared with the stored one) before it is used; one that no longer applies is marked stale.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/search/search.hpp"

namespace beamlab::tuner {

/// How a run uses the tuning cache: use (read, search on a miss, write), ignore (don't read;
/// search everything and still write), read_only (read; never write), off (neither).
enum class CacheMode { use, ignore, read_only, off };
const char* to_string(CacheMode m);
/// "use", "ignore", "read-only" or "off"; a UserError naming `what` otherwise.
CacheMode parse_cache_mode(const std::string& text, const std::string& what);
inline bool reads(CacheMode m) { return m == CacheMode::use || m == CacheMode::read_only; }
inline bool writes(CacheMode m) { return m == CacheMode::use || m == CacheMode::ignore; }

/// The search settings that decide which plan a search finds (not its budgets): part of the
/// cache key, e.g. "beam=4 lanes=512 ops=65536 checks=random,small_ints,special".
std::string settings_key(const SearchSettings& s);

/// The actions a search has for `ast` at `threads`, e.g. "GROUP:4,8 SWAP THREAD:2,4,8 ...".
std::string action_space(const UOpPtr& ast, int threads);
/// True when every action in `now` was in `recorded` (a plan searched then is still the best
/// the search could find).
bool action_space_covers(const std::string& recorded, const std::string& now);

/// This machine as the database records it.
db::DeviceInfo this_device();
/// This machine's host name, as runs record it.
std::string host_name();

/// A kernel as the database records it.
db::Kernel kernel_record(const KernelTask& task);
/// And back: the task a search of a stored kernel needs. The reason when the record doesn't
/// read back in this build (a bad AST or shapes, another hash recipe).
Expected<KernelTask> task_from_record(const db::Kernel& k);

/// Where cache lookups and stores go.
struct CacheContext {
  db::Database* db = nullptr;
  CacheMode mode = CacheMode::use;
  std::string device = this_device().fingerprint();
  std::string compiler = compiler_identity();
  int64_t run_id = 0; ///< provenance of stored entries (0: none)
  std::string source; ///< provenance text ("run 3 on host h")
  int hits = 0, stale = 0, misses = 0;
};

struct CacheHit {
  std::vector<Opt> opts;
  db::CacheEntry entry;
};

/// The kernel's cached plan for `threads` (of `settings_key`, or of any settings when empty),
/// replayed and validated: an entry whose Opts no longer apply or build another kernel is
/// marked stale (when the mode writes) and skipped; one whose action space doesn't cover
/// today's is skipped. Counts hits, stale entries and misses in `ctx`.
std::optional<CacheHit> cache_lookup(CacheContext& ctx, const KernelTask& task, const UOpPtr& ast,
                                     int threads, const std::string& settings_key);

/// Stores a search's winner (when it passed its checks) in the cache; true when stored.
bool cache_store(CacheContext& ctx, const TuneResult& r, const UOpPtr& ast,
                 const std::string& actions);

/// One kernel's search in a run, journaled.
class TuningJournal {
public:
  TuningJournal(db::Database& db, int64_t run_id, const KernelTask& task,
                const std::string& workload, int threads, const SearchSettings& settings,
                const std::string& actions, double budget_s);

  const db::Tuning& tuning() const { return tuning_; }
  /// The search already finished in this run (a resume skips it).
  bool finished() const { return tuning_.status == "done"; }
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

/// A search's candidate as the database stores it, and back.
db::CandidateRow candidate_row(const Candidate& c);
Candidate candidate_from_row(const db::CandidateRow& r);
/// A status's name back to the status (error for an unknown one).
Status status_from_string(const std::string& name);

} // namespace beamlab::tuner
