// The tuning cache's table; see database.hpp.
#include "db/database.hpp"
#include "db/database_internal.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "db/sqlite.hpp"
#include "db/table.hpp"
#include "engine/support/error.hpp"

namespace beamlab::db {

// --- the cache -------------------------------------------------------------------------------

// The cache table: an entry's identity, then its plan and provenance.
const Columns<CacheEntry> kCacheEntry = {column("kernel_hash", &CacheEntry::kernel_hash),
                                         column("device", &CacheEntry::device),
                                         column("compiler", &CacheEntry::compiler),
                                         column("settings_key", &CacheEntry::settings_key),
                                         column("threads", &CacheEntry::threads),
                                         column("kernel_name", &CacheEntry::kernel_name),
                                         column("opts", &CacheEntry::opts),
                                         column("optimized_hash", &CacheEntry::optimized_hash),
                                         column("actions", &CacheEntry::actions),
                                         column("ms", &CacheEntry::ms),
                                         column("heuristic_ms", &CacheEntry::heuristic_ms),
                                         column("source", &CacheEntry::source),
                                         column("run_id", &CacheEntry::run_id),
                                         column("created_at", &CacheEntry::created_at),
                                         column("stale", &CacheEntry::stale),
                                         column("stale_reason", &CacheEntry::stale_reason)};
const Columns<CacheEntry> kCacheAll =
    Columns<CacheEntry>{column("id", &CacheEntry::id)} + kCacheEntry;
namespace {
std::string select_cache() { return "SELECT " + names(kCacheAll, "c.") + " FROM cache c"; }
} // namespace

std::vector<CacheEntry> Database::cache_lookup(const std::string& kernel_hash,
                                               const std::string& device,
                                               const std::string& compiler, int threads) {
  Statement st =
      conn_->prepare(select_cache() + " WHERE kernel_hash = ? AND device = ? AND compiler = ? AND "
                                      "threads = ? ORDER BY stale, ms, id");
  st.bind_all(kernel_hash, device, compiler, threads);
  std::vector<CacheEntry> out;
  while (st.step()) out.push_back(read_row(kCacheAll, st));
  return out;
}

/// cache_put inside the caller's transaction.
bool put_entry(Connection& conn, const CacheEntry& e) {
  Statement old = conn.prepare("SELECT ms, stale FROM cache WHERE kernel_hash = ? AND device = ? "
                               "AND compiler = ? AND settings_key = ? AND threads = ?");
  old.bind_all(e.kernel_hash, e.device, e.compiler, e.settings_key, e.threads);
  if (old.step() && old.i64(1) == 0 && old.f64(0) <= e.ms) return false;
  CacheEntry fresh = e; // stored fresh (not stale), dated now unless it has a date
  fresh.stale = false;
  fresh.stale_reason.clear();
  if (fresh.created_at.empty()) fresh.created_at = now_utc();
  Statement st = conn.prepare("INSERT OR REPLACE INTO cache (" + names(kCacheEntry) + ") VALUES (" +
                              placeholders(kCacheEntry) + ")");
  bind_columns(kCacheEntry, fresh, st, 1);
  st.run();
  return true;
}

bool Database::cache_put(const CacheEntry& e) {
  Transaction t(*conn_);
  bool stored = put_entry(*conn_, e);
  t.commit();
  return stored;
}

void Database::cache_mark_stale(int64_t id, const std::string& reason) {
  conn_->prepare("UPDATE cache SET stale = 1, stale_reason = ? WHERE id = ?")
      .bind_all(reason, id)
      .run();
}

std::vector<CacheEntry> Database::cache_entries() {
  Statement st =
      conn_->prepare(select_cache() + " ORDER BY kernel_name, kernel_hash, device, threads, ms");
  std::vector<CacheEntry> out;
  while (st.step()) out.push_back(read_row(kCacheAll, st));
  return out;
}

std::vector<Database::EntryWithKernel>
Database::cache_by_structure(const std::string& structure, int version, const std::string& device,
                             const std::string& compiler, int threads,
                             const std::string& except_hash) {
  Statement st =
      conn_->prepare("SELECT " + names(kCacheAll, "c.") + ", " + names(kKernelAll, "k.") +
                     " FROM cache c JOIN kernels k ON k.hash = c.kernel_hash WHERE c.stale = 0 AND "
                     "c.device = ? AND c.compiler = ? AND c.threads = ? AND c.kernel_hash <> ? AND "
                     "((k.structure = ? AND k.structure_version = ?) OR k.structure_version <> ?) "
                     "ORDER BY c.id");
  st.bind_all(device, compiler, threads, except_hash, structure, static_cast<int64_t>(version),
              static_cast<int64_t>(version));
  std::vector<EntryWithKernel> out;
  while (st.step())
    out.push_back(
        {read_row(kCacheAll, st), read_row(kKernelAll, st, static_cast<int>(kCacheAll.size()))});
  return out;
}

} // namespace beamlab::db
