// The tuning cache.
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
#include "tuner/store/records.hpp"

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
/// cache key, e.g. "beam=4 lanes=512 ops=65536 checks=random,small_ints,special"; " warm" at the
/// end for a search seeded by a warm start (tuner/store/warm_start.hpp), whose plan may owe
/// something to other kernels' searches. A cold search's key has no such word.
std::string settings_key(const SearchSettings& s, bool warm_started = false);
/// Whether a lookup for `wanted` takes an entry stored under `stored`: the same key, or, for a
/// warm key, the cold search of the same settings (what a warm start aims to reach anyway).
bool settings_key_accepts(const std::string& wanted, const std::string& stored);

/// The actions a search has for `ast` at `threads`, e.g. "GROUP:4,8 SWAP THREAD:2,4,8 ...".
std::string action_space(const UOpPtr& ast, int threads);
/// True when every action in `now` was in `recorded` (a plan searched then is still the best
/// the search could find).
bool action_space_covers(const std::string& recorded, const std::string& now);

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

/// The kernel's cached plan for `threads` (of a key `settings_key` accepts, or of any settings
/// when empty),
/// replayed and validated: an entry whose Opts no longer apply or build another kernel is
/// marked stale (when the mode writes) and skipped; one whose action space doesn't cover
/// today's is skipped. Counts hits, stale entries and misses in `ctx`.
std::optional<CacheHit> cache_lookup(CacheContext& ctx, const KernelTask& task, const UOpPtr& ast,
                                     int threads, const std::string& settings_key);

/// Stores a search's winner (when it passed its checks) in the cache, under the warm key when
/// a warm start seeded it; true when stored.
bool cache_store(CacheContext& ctx, const TuneResult& r, const UOpPtr& ast,
                 const std::string& actions, bool warm_started = false);

} // namespace beamlab::tuner
