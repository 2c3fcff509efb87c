// What database.cpp, tunings.cpp, cache.cpp and merge.cpp share: the tables' column lists
// (db/table.hpp) and the readers and writers more than one of them uses. db/ only.
#pragma once

#include <string>
#include <string_view>

#include "db/database.hpp"
#include "db/sqlite.hpp"
#include "db/table.hpp"

namespace beamlab::db {

/// The devices table's columns of a DeviceInfo (besides `id`, `fingerprint`, the unused
/// peaks of schema 1 and `created_at`), device_limits' of a MachineLimits (besides `device_id`
/// and `measured_at`), device_memory's of a MemoryLevel (besides `device_id` and `idx`).
extern const Columns<DeviceInfo> kDeviceInfo;
extern const Columns<MachineLimits> kDeviceLimits;
extern const Columns<MemoryLevel> kDeviceMemory;

/// The runs table: a run's columns but its id and device (a merge maps those, and copies the
/// uid, a run's identity across files), and with its id and device first.
extern const Columns<Run> kRunFields, kRunAll;

/// The tunings table: its id, what a search is (set when it opens: run_id and kernel_id
/// first), what it found (set when it ends), and all three in that order.
extern const Columns<Tuning> kTuningId, kTuningKey, kTuningOutcome, kTuningAll;

/// The candidates table: a candidate's own columns; those derived from its samples when it is
/// written; and where it belongs.
extern const Columns<CandidateRow> kCandidateFields;
inline constexpr std::string_view kCandidateDerived[] = {"best_ms", "median_ms", "finished_at"};
inline constexpr std::string_view kCandidatePlace[] = {"id", "tuning_id"};
/// ", c.best_ms, c.median_ms, c.finished_at": the derived columns after `prefix`.
std::string candidate_derived(std::string_view prefix);

/// The cache table: an entry's columns, and with its id first.
extern const Columns<CacheEntry> kCacheEntry, kCacheAll;
/// Database::cache_put inside the caller's transaction.
bool put_entry(Connection& conn, const CacheEntry& e);

/// The kernels table: a kernel's columns, and with its id first.
extern const Columns<Kernel> kKernel, kKernelAll;

/// SQLite's quick_check of the file: "ok" or the first problem.
std::string quick_check(Connection& c);

} // namespace beamlab::db
