// Merging another database into this one, and checking a file; see database.hpp.
#include "db/database.hpp"
#include "db/database_internal.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "db/sqlite.hpp"
#include "db/table.hpp"
#include "engine/support/error.hpp"

namespace beamlab::db {

// --- merging ---------------------------------------------------------------------------------

Database::MergeStats Database::merge_from(const std::string& other_path) {
  user_assert(!read_only()) << "cannot merge into '" << path() << "': it is open read-only";
  // Opening it checks that it is a beamlab database of this schema version.
  std::vector<CacheEntry> theirs;
  {
    Database other(other_path, Access::read_only);
    user_assert(other.schema_version() == kSchemaVersion)
        << "cannot merge '" << other_path << "': schema version " << other.schema_version()
        << ", not " << kSchemaVersion << "; open it once with this beamlab to migrate it";
    // A damaged shard is named before anything is copied (else the errors would name this
    // database, the one being written).
    std::string verdict = quick_check(*other.conn_);
    user_assert(verdict == "ok") << "cannot merge '" << other_path << "': it is damaged ("
                                 << verdict << "); 'beamlab cache verify --db " << other_path
                                 << "' lists the problems";
    theirs = other.cache_entries();
  }
  MergeStats st;
  Statement attach = conn_->prepare("ATTACH DATABASE ? AS src");
  attach.bind(1, other_path).run();
  struct Detach {
    Connection& c;
    ~Detach() { sqlite3_exec(c.handle(), "DETACH DATABASE src", nullptr, nullptr, nullptr); }
  } detach{*conn_};
  Transaction t(*conn_);
  conn_->exec("INSERT INTO devices (fingerprint, " + names(kDeviceInfo) +
              ", peak_gflops, peak_gbps, created_at) SELECT fingerprint, " + names(kDeviceInfo) +
              ", peak_gflops, peak_gbps, created_at FROM src.devices WHERE true ON CONFLICT "
              "(fingerprint) DO UPDATE SET peak_gflops = coalesce(devices.peak_gflops, "
              "excluded.peak_gflops), peak_gbps = coalesce(devices.peak_gbps, excluded.peak_gbps)");
  // The limits of devices this file has none for.
  conn_->exec(
      "DROP TABLE IF EXISTS temp.new_limits; CREATE TEMP TABLE new_limits AS SELECT m.id AS "
      "device_id, s.id AS src_id FROM src.device_limits l JOIN src.devices s ON s.id = "
      "l.device_id JOIN main.devices m ON m.fingerprint = s.fingerprint WHERE NOT EXISTS "
      "(SELECT 1 FROM main.device_limits ml WHERE ml.device_id = m.id)");
  conn_->exec("INSERT INTO device_limits (device_id, " + names(kDeviceLimits) +
              ", measured_at) SELECT n.device_id, " + names(kDeviceLimits, "l.") +
              ", l.measured_at FROM temp.new_limits n JOIN src.device_limits l ON l.device_id = "
              "n.src_id");
  conn_->exec("INSERT INTO device_memory (device_id, idx, " + names(kDeviceMemory) +
              ") SELECT n.device_id, dm.idx, " + names(kDeviceMemory, "dm.") +
              " FROM temp.new_limits n JOIN src.device_memory dm ON dm.device_id = n.src_id");
  conn_->exec(R"sql(
DROP TABLE IF EXISTS temp.run_map;
CREATE TEMP TABLE run_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
)sql");
  conn_->exec("INSERT INTO kernels (" + names(kKernel) + ") SELECT " + names(kKernel) +
              " FROM src.kernels WHERE true ON CONFLICT (hash) DO UPDATE SET structure = "
              "excluded.structure, structure_version = excluded.structure_version WHERE "
              "excluded.structure_version > kernels.structure_version");
  // A run merged before (same uid) is not merged again, unless the copy here is unfinished
  // and the other file's has moved on since (a shard resumed after an earlier merge): then the
  // copy here goes, the newer state comes in below, and the cache entries that named the old
  // copy name the new one.
  std::vector<std::pair<std::string, int64_t>> renamed; // (run uid, cache entry id)
  {
    Statement moved = conn_->prepare(
        "SELECT m.id, m.uid FROM main.runs m JOIN src.runs r ON r.uid = m.uid "
        "WHERE m.status IN ('running', 'interrupted') AND (m.status IS NOT r.status OR "
        "m.ended_at IS NOT r.ended_at OR (SELECT count(*) FROM src.candidates c JOIN "
        "src.tunings t ON t.id = c.tuning_id WHERE t.run_id = r.id) != (SELECT count(*) FROM "
        "main.candidates c JOIN main.tunings t ON t.id = c.tuning_id WHERE t.run_id = m.id))");
    std::vector<int64_t> replaced;
    while (moved.step()) {
      replaced.push_back(moved.i64(0));
      Statement named = conn_->prepare("SELECT id FROM cache WHERE run_id = ?");
      named.bind(1, moved.i64(0));
      while (named.step()) renamed.emplace_back(moved.text(1), named.i64(0));
    }
    for (int64_t id : replaced) conn_->prepare("DELETE FROM runs WHERE id = ?").bind(1, id).run();
    st.refreshed = static_cast<int>(replaced.size());
  }
  Statement unfinished =
      conn_->prepare("SELECT id, status FROM src.runs WHERE status IN ('running', "
                     "'interrupted') ORDER BY id");
  while (unfinished.step())
    st.unfinished.emplace_back(unfinished.i64(0), parse_run_status(unfinished.text(1)));
  Statement runs = conn_->prepare(
      "SELECT r.id, d.fingerprint, r.uid, " + names(kRunFields, "r.") +
      " FROM src.runs r JOIN src.devices d ON d.id = r.device_id WHERE NOT EXISTS (SELECT 1 "
      "FROM main.runs m WHERE m.uid = r.uid) ORDER BY r.id");
  Statement insert =
      conn_->prepare("INSERT INTO runs (device_id, uid, " + names(kRunFields) +
                     ") VALUES ((SELECT id FROM devices WHERE fingerprint = ?), ?, " +
                     placeholders(kRunFields) + ")");
  while (runs.step()) {
    Run run;
    read_columns(kRunFields, runs, 3, run);
    insert.bind(1, runs.text(1)).bind(2, runs.text(2));
    bind_columns(kRunFields, run, insert, 3);
    insert.run();
    insert.reset();
    conn_->prepare("INSERT INTO temp.run_map (old, new) VALUES (?, ?)")
        .bind_all(runs.i64(0), conn_->last_insert_rowid())
        .run();
    ++st.runs;
  }
  for (const auto& [uid, entry] : renamed)
    conn_->prepare("UPDATE cache SET run_id = (SELECT id FROM runs WHERE uid = ?) WHERE id = ?")
        .bind_all(uid, entry)
        .run();
  constexpr const char* kTuningJoin =
      " FROM src.tunings t JOIN temp.run_map m ON m.old = t.run_id "
      "JOIN src.kernels sk ON sk.id = t.kernel_id JOIN main.kernels k ON k.hash = sk.hash ";
  constexpr const char* kNewTuning = " JOIN main.tunings nt ON nt.run_id = m.new AND "
                                     "nt.kernel_id = k.id AND nt.threads = t.threads ";
  // The run and kernel ids are the merged ones; every other column is copied as it is.
  const Columns<Tuning> copied(kTuningKey.begin() + 2, kTuningKey.end());
  conn_->exec("INSERT INTO tunings (run_id, kernel_id, " + names(copied) + ", " +
              names(kTuningOutcome) + ") SELECT m.new, k.id, " + names(copied, "t.") + ", " +
              names(kTuningOutcome, "t.") + kTuningJoin);
  st.tunings = conn_->changes();
  conn_->exec(
      "INSERT INTO candidates (tuning_id, " + names(kCandidateFields) + candidate_derived("") +
      ") SELECT nt.id, " + names(kCandidateFields, "c.") + candidate_derived("c.") +
      " FROM src.candidates c JOIN (SELECT t.id AS old_tuning, nt.id" + kTuningJoin + kNewTuning +
      ") tm ON tm.old_tuning = c.tuning_id" + " JOIN main.tunings nt ON nt.id = tm.id");
  st.candidates = conn_->changes();
  conn_->exec(std::string("INSERT INTO samples (candidate_id, idx, ms) SELECT nc.id, s.idx, s.ms "
                          "FROM src.samples s JOIN src.candidates c ON c.id = s.candidate_id "
                          "JOIN (SELECT t.id AS old_tuning, nt.id AS new_tuning") +
              kTuningJoin + kNewTuning +
              ") tm ON tm.old_tuning = c.tuning_id JOIN main.candidates nc ON "
              "nc.tuning_id = tm.new_tuning AND nc.seq = c.seq");
  conn_->exec("INSERT INTO benchmarks (run_id, name, params, metrics) SELECT m.new, b.name, "
              "b.params, b.metrics FROM src.benchmarks b JOIN temp.run_map m ON m.old = b.run_id");
  st.benchmarks = conn_->changes();
  for (CacheEntry& e : theirs) {
    std::optional<int64_t> run;
    if (e.run_id) {
      Statement m = conn_->prepare("SELECT new FROM temp.run_map WHERE old = ?");
      m.bind(1, *e.run_id);
      if (m.step()) run = m.i64(0);
    }
    e.run_id = run;
    if (e.stale || !put_entry(*conn_, e))
      ++st.cache_kept;
    else
      ++st.cache_added;
  }
  t.commit();
  return st;
}

std::map<std::string, std::vector<std::string>> Database::described_columns() {
  auto list = [](const auto& cols, std::vector<std::string> more = {}) {
    std::vector<std::string> out;
    for (const auto& c : cols) out.emplace_back(c.name);
    out.insert(out.end(), more.begin(), more.end());
    return out;
  };
  std::vector<std::string> candidate_more;
  for (std::string_view n : kCandidateDerived) candidate_more.emplace_back(n);
  for (std::string_view n : kCandidatePlace) candidate_more.emplace_back(n);
  return {{"devices",
           list(kDeviceInfo, {"id", "fingerprint", "peak_gflops", "peak_gbps", "created_at"})},
          {"device_limits", list(kDeviceLimits, {"device_id", "measured_at"})},
          {"device_memory", list(kDeviceMemory, {"device_id", "idx"})},
          {"runs", list(kRunAll, {"uid"})},
          {"kernels", list(kKernelAll)},
          {"tunings", list(kTuningAll)},
          {"candidates", list(kCandidateFields, candidate_more)},
          {"cache", list(kCacheAll)}};
}

// --- maintenance -----------------------------------------------------------------------------

std::vector<std::string> Database::verify() {
  std::vector<std::string> problems;
  Statement integrity = conn_->prepare("PRAGMA integrity_check");
  while (integrity.step())
    if (std::string r = integrity.text(0); r != "ok") problems.push_back("integrity: " + r);
  Statement fk = conn_->prepare("PRAGMA foreign_key_check");
  while (fk.step())
    problems.push_back("foreign key: row " + std::to_string(fk.i64(1)) + " of table " + fk.text(0) +
                       " refers to a missing row of " + fk.text(2));
  return problems;
}

} // namespace beamlab::db
