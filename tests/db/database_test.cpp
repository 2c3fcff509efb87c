// The database layer on real SQLite files: schema and migrations, bad files, the cache's keys
// and conflict policy, merging, and several processes on one file.
#include "db/database.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/temp_dir.hpp"

#include "db/sqlite.hpp"
#include "engine/support/error.hpp"

namespace beamlab::db {
namespace {

namespace fs = std::filesystem;

class DatabaseTest : public beamlab::test_support::TempDirTest {};

DeviceInfo device(const std::string& cpu = "Test CPU") {
  return {cpu, "znver3 +avx2,+fma", 2, "19.1.7", "0.1.0"};
}

CacheEntry entry(const std::string& kernel, const std::string& dev, double ms,
                 const std::string& opts = "UPCAST(0,4)") {
  CacheEntry e;
  e.kernel_hash = kernel;
  e.device = dev;
  e.compiler = "beamlab 0.1.0, LLVM 19.1.7, hash v1, opts v1";
  e.settings_key = "beam=2";
  e.threads = 2;
  e.kernel_name = "r_" + kernel;
  e.opts = opts;
  e.optimized_hash = "00000000000000aa";
  e.actions = "UPCAST:2,4";
  e.ms = ms;
  e.source = "test";
  return e;
}

/// A run with one tuning of kernel `hash`, and `n` candidates with samples.
int64_t journal_run(Database& db, const std::string& hash, int n, int first_seq = 0) {
  int64_t dev = db.upsert_device(device());
  int64_t run = db.begin_run({dev, RunKind::tune, "", "beamlab tune test", "{}", "", "host"});
  int64_t kernel =
      db.upsert_kernel({0, hash, 1, "r_" + hash, "[]", 100, 200, "AST " + hash, "", 0});
  Tuning t = db.open_tuning(run, kernel, 2, "test", "{}", "UPCAST:2,4", 10);
  for (int i = 0; i < n; ++i) {
    CandidateRow c;
    c.seq = first_seq + i;
    c.opts = "UPCAST(0," + std::to_string(i + 1) + ")";
    c.status = "ok";
    c.samples_ms = {1.0 + i, 1.5 + i, 1.25 + i};
    db.save_candidate(t.id, c);
  }
  return run;
}

TEST_F(DatabaseTest, CreatesAVersionedSchemaInWalModeWithForeignKeys) {
  Database db(file("a.db"));
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  {
    Statement mode = db.connection().prepare("PRAGMA journal_mode");
    ASSERT_TRUE(mode.step());
    EXPECT_EQ(mode.text(0), "wal");
  }
  EXPECT_EQ(db.connection().scalar_i64("PRAGMA foreign_keys"), 1);
  // Opening again neither migrates nor resets anything.
  journal_run(db, "k1", 3);
  Database again(file("a.db"));
  EXPECT_EQ(again.candidate_count(), 3);
}

// Every column of the tables the code describes column by column is described, and nothing
// else: a column added to the schema without its line in the list fails here, not silently.
TEST_F(DatabaseTest, TheDescribedColumnsAreTheSchemas) {
  Database db(file("a.db"));
  for (const auto& [table, described] : Database::described_columns()) {
    std::set<std::string> stored;
    Statement info = db.connection().prepare("PRAGMA table_info(" + table + ")");
    while (info.step()) stored.insert(info.text(1));
    EXPECT_EQ(std::set<std::string>(described.begin(), described.end()), stored) << table;
    EXPECT_EQ(described.size(), stored.size()) << table << ": a column described twice";
  }
}

// Every field of a tuning is written and read back as it was, by name.
TEST_F(DatabaseTest, EveryFieldOfATuningRoundTrips) {
  Database db(file("a.db"));
  journal_run(db, "k1", 1);
  Tuning t = db.tunings(1).at(0);
  t.status = TuningStatus::done;
  t.heuristic_opts = "UPCAST(0,4)";
  t.winner_opts = "UPCAST(0,8)";
  t.heuristic_ms = 2.5;
  t.winner_ms = 1.25;
  t.noise = 0.03;
  t.tie = true;
  t.tie_with_heuristic = true;
  t.speedup = PairedSpeedup{2.0, 1.9, 2.1};
  t.rounds_disturbed = 2;
  t.round_ms = "1 2.5 2.4";
  t.in_process = PairedSpeedup{1.8, 1.7, 1.95};
  t.fidelity = "agrees";
  t.stop_reason = "flat";
  t.error = "none";
  t.iterations = 7;
  t.wall_s = 12.5;
  t.reference_s = 0.5;
  t.compiling_s = 3.5;
  t.timing_s = 4.5;
  t.restarts = 3;
  db.finish_tuning(t);
  Tuning back = *db.tuning(t.id);
  EXPECT_EQ(back.run_id, t.run_id);
  EXPECT_EQ(back.kernel_id, t.kernel_id);
  EXPECT_EQ(back.workload, "test");
  EXPECT_EQ(back.threads, 2);
  EXPECT_EQ(back.settings, "{}");
  EXPECT_EQ(back.actions, "UPCAST:2,4");
  EXPECT_EQ(back.budget_s, 10);
  EXPECT_EQ(back.status, TuningStatus::done);
  EXPECT_EQ(back.heuristic_opts, t.heuristic_opts);
  EXPECT_EQ(back.winner_opts, t.winner_opts);
  EXPECT_EQ(back.heuristic_ms, t.heuristic_ms);
  EXPECT_EQ(back.winner_ms, t.winner_ms);
  EXPECT_EQ(back.noise, t.noise);
  EXPECT_TRUE(back.tie && back.tie_with_heuristic);
  ASSERT_TRUE(back.speedup && back.in_process);
  EXPECT_EQ(back.speedup->estimate, 2.0);
  EXPECT_EQ(back.speedup->lo, 1.9);
  EXPECT_EQ(back.speedup->hi, 2.1);
  EXPECT_EQ(back.in_process->estimate, 1.8);
  EXPECT_EQ(back.in_process->lo, 1.7);
  EXPECT_EQ(back.in_process->hi, 1.95);
  EXPECT_EQ(back.rounds_disturbed, 2);
  EXPECT_EQ(back.round_ms, t.round_ms);
  EXPECT_EQ(back.fidelity, "agrees");
  EXPECT_EQ(back.stop_reason, "flat");
  EXPECT_EQ(back.error, "none");
  EXPECT_EQ(back.iterations, 7);
  EXPECT_EQ(back.wall_s, 12.5);
  EXPECT_EQ(back.reference_s, 0.5);
  EXPECT_EQ(back.compiling_s, 3.5);
  EXPECT_EQ(back.timing_s, 4.5);
  EXPECT_EQ(back.restarts, 3);
  // An interval not stored reads back as none.
  t.speedup.reset();
  db.finish_tuning(t);
  EXPECT_FALSE(db.tuning(t.id)->speedup.has_value());
  EXPECT_TRUE(db.tuning(t.id)->in_process.has_value());
}

void drop_schema_7(Database& db) {
  db.connection().exec("ALTER TABLE device_limits DROP COLUMN busy_elsewhere");
}

void drop_schema_6(Database& db) {
  drop_schema_7(db);
  db.connection().exec("ALTER TABLE candidates DROP COLUMN settled_in");
}

void drop_schema_5(Database& db) {
  drop_schema_6(db);
  for (const char* column : {"reference_s", "compiling_s", "timing_s"})
    db.connection().exec(std::string("ALTER TABLE tunings DROP COLUMN ") + column);
}

// Takes a file of this schema back to version 3's tables and columns.
void drop_schema_4(Database& db) {
  drop_schema_5(db);
  db.connection().exec("DROP INDEX kernels_by_structure");
  db.connection().exec("ALTER TABLE kernels DROP COLUMN structure");
  db.connection().exec("ALTER TABLE kernels DROP COLUMN structure_version");
}

// Takes a file of this schema back to version 2's tables and columns.
void drop_schema_3(Database& db) {
  drop_schema_4(db);
  db.connection().exec("DROP TABLE device_memory; DROP TABLE device_limits");
  for (const char* column : {"speedup", "speedup_lo", "speedup_hi", "rounds_disturbed", "round_ms",
                             "in_process_speedup", "in_process_lo", "in_process_hi", "fidelity"})
    db.connection().exec(std::string("ALTER TABLE tunings DROP COLUMN ") + column);
}

// A file of the previous schema (1: no tie_with_heuristic) is migrated on open, its runs and
// tunings kept, and a tuning's tie with the heuristic then round-trips.
TEST_F(DatabaseTest, AVersionOneFileIsMigratedKeepingItsTunings) {
  {
    Database db(file("v1.db"));
    journal_run(db, "k1", 3);
    drop_schema_3(db);
    db.connection().exec("ALTER TABLE tunings DROP COLUMN tie_with_heuristic");
    db.connection().exec("PRAGMA user_version = 1");
  }
  {
    // A reader (the GUI, `cache list`) upgrades it too, where it may write.
    Database reader(file("v1.db"), Database::Access::read_only);
    EXPECT_EQ(reader.schema_version(), kSchemaVersion);
    EXPECT_EQ(reader.candidate_count(), 3);
  }
  Database db(file("v1.db"));
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(db.candidate_count(), 3);
  ASSERT_EQ(db.runs().size(), 1u);
  std::vector<Tuning> ts = db.tunings(db.runs()[0].id);
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_FALSE(ts[0].tie_with_heuristic);
  ts[0].tie_with_heuristic = true;
  ts[0].status = TuningStatus::done;
  db.finish_tuning(ts[0]);
  EXPECT_TRUE(db.tunings(db.runs()[0].id)[0].tie_with_heuristic);
}

MachineLimits limits_for_test(double gflops) {
  MachineLimits l;
  l.threads = 2;
  l.vector_bytes = 64;
  l.fma_f32_gflops = gflops;
  l.fma_f64_gflops = gflops / 2;
  l.levels = {{"L1", 96 << 10, 48 << 10, 800, 1100}, {"DRAM", 0, 256 << 20, 52, 64}};
  return l;
}

// A version-2 file (peaks from a matmul's speed, no limits) is migrated: its devices have no
// limits until measured; the old peaks are not read as limits.
TEST_F(DatabaseTest, AVersionTwoFileGetsMachineLimitsThatRoundTrip) {
  {
    Database db(file("v2.db"));
    journal_run(db, "k1", 2);
    drop_schema_3(db);
    db.connection().exec("UPDATE devices SET peak_gflops = 250, peak_gbps = 43");
    db.connection().exec("PRAGMA user_version = 2");
  }
  Database db(file("v2.db"));
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  int64_t dev = db.runs()[0].device_id;
  EXPECT_FALSE(db.device(dev)->limits);
  db.set_device_limits(dev, limits_for_test(430));
  std::optional<Device> d = db.device(dev);
  ASSERT_TRUE(d && d->limits);
  EXPECT_EQ(d->limits->threads, 2);
  EXPECT_EQ(d->limits->vector_bytes, 64);
  EXPECT_EQ(d->limits->fma_f32_gflops, 430);
  ASSERT_EQ(d->limits->levels.size(), 2u);
  EXPECT_EQ(d->limits->levels[0].name, "L1");
  EXPECT_EQ(d->limits->levels[0].capacity_bytes, 96 << 10);
  EXPECT_EQ(d->limits->levels[1].triad_gbps, 64);
  EXPECT_FALSE(d->limits_measured_at.empty());
  // Measuring again replaces them whole.
  MachineLimits again = limits_for_test(440);
  again.levels.pop_back();
  again.levels.push_back({"DRAM", 0, 1 << 28, 50, 60});
  db.set_device_limits(dev, again);
  EXPECT_EQ(db.device(dev)->limits->fma_f32_gflops, 440);
  EXPECT_EQ(db.device(dev)->limits->levels.size(), 2u);
  EXPECT_EQ(db.device(dev)->limits->levels[1].read_gbps, 50);
}

// A version-6 file's limits say nothing of how busy the machine was: migrated, they read 0 (as
// measured on a quiet machine); limits stored since keep their share.
TEST_F(DatabaseTest, AVersionSixFileGetsTheBusyShareOfItsLimits) {
  int64_t dev = 0;
  {
    Database db(file("v6.db"));
    journal_run(db, "k1", 2);
    dev = db.runs()[0].device_id;
    db.set_device_limits(dev, limits_for_test(430));
    drop_schema_7(db);
    db.connection().exec("PRAGMA user_version = 6");
  }
  Database db(file("v6.db"));
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  ASSERT_TRUE(db.device(dev)->limits);
  EXPECT_EQ(db.device(dev)->limits->fma_f32_gflops, 430);
  EXPECT_EQ(db.device(dev)->limits->busy_elsewhere, 0);
  MachineLimits busy = limits_for_test(210);
  busy.busy_elsewhere = 0.55;
  db.set_device_limits(dev, busy);
  EXPECT_EQ(db.device(dev)->limits->busy_elsewhere, 0.55);
}

/// A kernel of structure `structure` (recipe `version`) and a cache entry of it.
int64_t tuned_kernel(Database& db, const std::string& hash, const std::string& structure,
                     int version, double ms = 1) {
  Kernel k{0, hash, 1, "r_" + hash, "[]", 100, 200, "AST " + hash, structure, version};
  int64_t id = db.upsert_kernel(k);
  db.cache_put(entry(hash, "dev", ms));
  return id;
}

// A version-4 file's tunings say nothing of where their search time went: migrated, they read
// 0 for each part; a tuning finished since keeps its parts, and a merge carries them.
TEST_F(DatabaseTest, AVersionFourFileGetsSearchTimeColumns) {
  {
    Database db(file("v4.db"));
    journal_run(db, "k1", 2);
    drop_schema_5(db);
    db.connection().exec("PRAGMA user_version = 4");
  }
  Database db(file("v4.db"));
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  ASSERT_EQ(db.runs().size(), 1u);
  std::vector<Tuning> old = db.tunings(db.runs().at(0).id);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].timing_s, 0);
  Tuning t = old[0];
  t.status = TuningStatus::done;
  t.wall_s = 10;
  t.reference_s = 0.5;
  t.compiling_s = 4;
  t.timing_s = 5;
  db.finish_tuning(t);
  Tuning back = db.tunings(t.run_id).at(0);
  EXPECT_EQ(back.reference_s, 0.5);
  EXPECT_EQ(back.compiling_s, 4);
  EXPECT_EQ(back.timing_s, 5);
  Database merged(file("merged.db"));
  merged.merge_from(file("v4.db"));
  ASSERT_EQ(merged.runs().size(), 1u);
  Tuning copied = merged.tunings(merged.runs().at(0).id).at(0);
  EXPECT_EQ(copied.compiling_s, 4);
  EXPECT_EQ(copied.timing_s, 5);
}

// A version-3 file's kernels have no structure: migrated, they read as not yet known (version
// 0), a warm start's query returns them for the tuner to compute, and storing a kernel again
// or setting its structure fills it.
TEST_F(DatabaseTest, AVersionThreeFileGetsKernelStructuresFilledLater) {
  {
    Database db(file("v3.db"));
    journal_run(db, "k1", 2);
    db.cache_put(entry("k1", "dev", 1));
    drop_schema_4(db);
    db.connection().exec("PRAGMA user_version = 3");
  }
  Database db(file("v3.db"));
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(db.candidate_count(), 2);
  int64_t k1 = *db.find_kernel("k1");
  EXPECT_EQ(db.kernel(k1)->structure, "");
  EXPECT_EQ(db.kernel(k1)->structure_version, 0);
  const std::string compiler = entry("k1", "dev", 1).compiler;
  std::vector<Database::EntryWithKernel> unknown =
      db.cache_by_structure("s", 1, "dev", compiler, 2, "other");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].entry.kernel_hash, "k1");
  EXPECT_EQ(unknown[0].kernel.ast, "AST k1");
  // Stored again by a tuner that computes structures: the row takes its structure.
  db.upsert_kernel({0, "k1", 1, "r_k1", "[]", 100, 200, "AST k1", "s", 1});
  EXPECT_EQ(db.kernel(k1)->structure, "s");
  EXPECT_EQ(db.kernel(k1)->structure_version, 1);
  // ... but not one of the same recipe again (it is the same), nor an older one.
  db.upsert_kernel({0, "k1", 1, "r_k1", "[]", 100, 200, "AST k1", "t", 1});
  db.upsert_kernel({0, "k1", 1, "r_k1", "[]", 100, 200, "AST k1", "", 0});
  EXPECT_EQ(db.kernel(k1)->structure, "s");
  db.set_kernel_structure(k1, "u", 2);
  EXPECT_EQ(db.kernel(k1)->structure, "u");
  EXPECT_EQ(db.kernel(k1)->structure_version, 2);
}

// The query behind warm starts: non-stale entries of other kernels of the structure, on the
// device, compiler and thread count asked for.
TEST_F(DatabaseTest, EntriesByStructureKeepToTheirDeviceCompilerAndThreads) {
  Database db(file("s.db"));
  tuned_kernel(db, "a", "s", 1);
  tuned_kernel(db, "b", "s", 1);
  tuned_kernel(db, "c", "t", 1); // another structure
  tuned_kernel(db, "d", "s", 1);
  db.cache_mark_stale(db.cache_lookup("d", "dev", entry("d", "dev", 1).compiler, 2)[0].id, "x");
  db.cache_put(entry("e", "dev", 1)); // a kernel the kernels table doesn't know
  const std::string compiler = entry("a", "dev", 1).compiler;
  auto hashes = [](const std::vector<Database::EntryWithKernel>& rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) out.push_back(r.entry.kernel_hash + ":" + r.kernel.structure);
    return out;
  };
  EXPECT_EQ(hashes(db.cache_by_structure("s", 1, "dev", compiler, 2, "b")),
            (std::vector<std::string>{"a:s"}));
  EXPECT_EQ(hashes(db.cache_by_structure("s", 1, "dev", compiler, 2, "")),
            (std::vector<std::string>{"a:s", "b:s"}));
  EXPECT_TRUE(db.cache_by_structure("s", 1, "other", compiler, 2, "").empty());
  EXPECT_TRUE(db.cache_by_structure("s", 1, "dev", "another compiler", 2, "").empty());
  EXPECT_TRUE(db.cache_by_structure("s", 1, "dev", compiler, 4, "").empty());
  // Under another recipe every row is one to compute again.
  EXPECT_EQ(hashes(db.cache_by_structure("s", 2, "dev", compiler, 2, "")),
            (std::vector<std::string>{"a:s", "b:s", "c:t"}));
}

// A merge carries the kernels' structures, and fills a row the target has without one.
TEST_F(DatabaseTest, MergeCarriesKernelStructures) {
  {
    Database a(file("a.db"));
    tuned_kernel(a, "k1", "s", 1);
    tuned_kernel(a, "k2", "s", 1);
  }
  Database m(file("m.db"));
  tuned_kernel(m, "k2", "", 0);
  m.merge_from(file("a.db"));
  EXPECT_EQ(m.kernel(*m.find_kernel("k1"))->structure, "s");
  EXPECT_EQ(m.kernel(*m.find_kernel("k2"))->structure, "s");
  EXPECT_EQ(m.kernel(*m.find_kernel("k2"))->structure_version, 1);
}

TEST_F(DatabaseTest, MergeBringsADevicesLimitsAndKeepsOnesAlreadyThere) {
  {
    Database a(file("a.db"));
    journal_run(a, "k1", 1);
    a.set_device_limits(a.runs()[0].device_id, limits_for_test(430));
  }
  Database m(file("m.db"));
  m.merge_from(file("a.db"));
  std::optional<int64_t> dev = m.find_device(device().fingerprint());
  ASSERT_TRUE(dev);
  ASSERT_TRUE(m.device(*dev)->limits);
  EXPECT_EQ(m.device(*dev)->limits->fma_f32_gflops, 430);
  EXPECT_EQ(m.device(*dev)->limits->levels.size(), 2u);
  // A shard measured otherwise doesn't overwrite them, nor add its levels to them.
  {
    Database b(file("b.db"));
    journal_run(b, "k2", 1);
    MachineLimits other = limits_for_test(300);
    other.levels.insert(other.levels.begin() + 1, {"L2", 2 << 20, 1 << 20, 400, 380});
    b.set_device_limits(b.runs()[0].device_id, other);
  }
  m.merge_from(file("b.db"));
  EXPECT_EQ(m.device(*dev)->limits->fma_f32_gflops, 430);
  EXPECT_EQ(m.device(*dev)->limits->levels.size(), 2u);
  EXPECT_TRUE(m.verify().empty());
}

TEST_F(DatabaseTest, DefaultPathFollowsTheEnvironment) {
  ::setenv("BEAMLAB_DB", "/x/custom.db", 1);
  EXPECT_EQ(Database::default_path(), "/x/custom.db");
  ::unsetenv("BEAMLAB_DB");
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(Database::default_path(), "/x/cache/beamlab/beamlab.db");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/x/home", 1);
  EXPECT_EQ(Database::default_path(), "/x/home/.cache/beamlab/beamlab.db");
}

TEST_F(DatabaseTest, CreatesTheParentDirectories) {
  Database db(file("deep/er/beamlab.db"));
  EXPECT_TRUE(fs::exists(file("deep/er/beamlab.db")));
}

void expect_user_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
}

TEST_F(DatabaseTest, AFileThatIsNotSQLiteIsAnErrorAndLeftUntouched) {
  std::string path = file("notes.db");
  std::ofstream(path) << "shopping list: milk, eggs, a faster GPU\n";
  auto size = fs::file_size(path);
  expect_user_error([&] { Database db(path); }, "'" + path + "' is not a beamlab database");
  EXPECT_EQ(fs::file_size(path), size);
}

TEST_F(DatabaseTest, AnotherApplicationsDatabaseIsAnError) {
  std::string path = file("other.db");
  {
    Connection c(path, false);
    c.exec("CREATE TABLE contacts (name TEXT)");
  }
  expect_user_error([&] { Database db(path); }, "another application");
  Connection c(path, true);
  EXPECT_EQ(c.scalar_i64("SELECT count(*) FROM sqlite_master"), 1); // not migrated into
  // ... nor switched to WAL: the header's read and write versions still say rollback (1).
  std::ifstream f(path, std::ios::binary);
  char header[20] = {};
  f.read(header, sizeof header);
  EXPECT_EQ(header[18], 1);
  EXPECT_EQ(header[19], 1);
  EXPECT_FALSE(fs::exists(path + "-wal"));
}

TEST_F(DatabaseTest, ANewerSchemaIsAnError) {
  std::string path = file("new.db");
  { Database db(path); }
  {
    Connection c(path, false);
    c.exec("PRAGMA user_version = 99");
  }
  expect_user_error([&] { Database db(path); }, "schema version 99, newer than this beamlab's");
}

TEST_F(DatabaseTest, ATruncatedFileIsAnErrorNamingItAndVerifyFindsIt) {
  std::string path = file("cut.db");
  {
    Database db(path);
    for (int i = 0; i < 40; ++i) journal_run(db, "k" + std::to_string(i), 20);
  } // the last connection checkpoints the WAL into the file
  ASSERT_GT(fs::file_size(path), 100000u);
  fs::resize_file(path, fs::file_size(path) / 3);
  expect_user_error(
      [&] {
        Database db(path, Database::Access::read_only);
        for (const db::Run& r : db.runs())
          for (const Tuning& t : db.tunings(r.id)) (void)db.candidates(t.id);
        (void)db.verify();
      },
      "the database '" + path + "' is damaged");
}

TEST_F(DatabaseTest, MergingADamagedShardNamesTheShardAndChangesNothing) {
  std::string bad = file("bad.db"), into = file("into.db");
  {
    Database db(bad);
    for (int i = 0; i < 40; ++i) journal_run(db, "k" + std::to_string(i), 20);
  }
  { // an interior page overwritten: the file still opens, its tables don't hold together
    std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(bad) / 2 / 4096 * 4096));
    std::string junk(4096, '\x55');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  Database m(into);
  std::string error;
  try {
    m.merge_from(bad);
  } catch (const UserError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find(bad), std::string::npos) << error;
  EXPECT_NE(error.find("damaged"), std::string::npos) << error;
  EXPECT_EQ(error.find(into), std::string::npos) << error;
  EXPECT_EQ(m.connection().scalar_i64("SELECT count(*) FROM runs"), 0);
  EXPECT_TRUE(m.verify().empty());
}

std::string contents(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST_F(DatabaseTest, ADatabaseNotClosedCleanlyIsCheckedBeforeAnythingWritesToIt) {
  std::string path = file("a.db"), copy = file("copy.db");
  {
    Database db(path);
    for (int i = 0; i < 20; ++i) journal_run(db, "k" + std::to_string(i), 20);
  } // closed cleanly: everything is in the main file
  Database open(path);
  journal_run(open, "late", 3); // in the write-ahead log only
  int64_t page = open.connection()
                     .scalar_i64("SELECT rootpage FROM sqlite_master WHERE name = 'benchmarks'")
                     .value_or(0);
  ASSERT_GT(page, 1);
  // A copy as a crash leaves it (the file and its log), with a page the log doesn't hold
  // overwritten.
  fs::copy_file(path, copy);
  fs::copy_file(path + "-wal", copy + "-wal");
  {
    std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>((page - 1) * 4096));
    std::string junk(4096, '\x55');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  std::string before = contents(copy), log_before = contents(copy + "-wal");
  expect_user_error([&] { Database db(copy); }, "the database '" + copy + "' is damaged");
  expect_user_error([&] { Database db(copy); }, "it was not closed cleanly");
  EXPECT_EQ(contents(copy), before) << "nothing was written to the damaged file";
  EXPECT_EQ(contents(copy + "-wal"), log_before);
  // An intact copy in the same state opens, with the log's rows.
  fs::remove(copy);
  fs::remove(copy + "-wal");
  fs::copy_file(path, copy);
  fs::copy_file(path + "-wal", copy + "-wal");
  Database ok(copy);
  EXPECT_EQ(ok.connection().scalar_i64("SELECT count(*) FROM runs"), 21);
}

// A database in a directory this process can't write (read-only media, another user's
// directory): read-only access reads it; write access is a one-line error naming the way out.
TEST_F(DatabaseTest, ADatabaseInAReadOnlyDirectoryCanBeRead) {
  std::string dir = file("ro"), path = file("ro/a.db");
  fs::create_directories(dir);
  {
    Database db(path);
    journal_run(db, "k", 3);
  }
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                           fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir_, fs::perms::others_exec | fs::perms::others_read, fs::perm_options::add);
  pid_t child = ::fork();
  if (child == 0) { // as nobody when root (to whom no directory is read-only)
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(10);
    try {
      Database db(path, Database::Access::read_only);
      if (db.connection().scalar_i64("SELECT count(*) FROM runs") != 1) ::_exit(11);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "read-only: %s\n", e.what());
      ::_exit(12);
    }
    try {
      Database db(path);
      ::_exit(13);
    } catch (const UserError& e) {
      if (std::string(e.what()).find("is read-only here") == std::string::npos) ::_exit(14);
    }
    ::_exit(0);
  }
  int status = -1;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::exists(path + "-shm")) << "nothing was created beside it";
  fs::permissions(dir, fs::perms::owner_all);
}

TEST_F(DatabaseTest, AMissingFileOpenedReadOnlyIsAnError) {
  expect_user_error([&] { Database db(file("none.db"), Database::Access::read_only); },
                    "does not exist");
  EXPECT_FALSE(fs::exists(file("none.db")));
}

TEST_F(DatabaseTest, CandidatesKeepEverySampleInOrder) {
  Database db(file("a.db"));
  int64_t run = journal_run(db, "k1", 4);
  std::vector<Tuning> ts = db.tunings(run);
  ASSERT_EQ(ts.size(), 1u);
  std::vector<CandidateRow> cs = db.candidates(ts[0].id);
  ASSERT_EQ(cs.size(), 4u);
  EXPECT_EQ(cs[2].samples_ms, (std::vector<double>{3.0, 3.5, 3.25}));
  // Saving a candidate again replaces it (the finalists' extra samples).
  cs[2].samples_ms.push_back(3.125);
  db.save_candidate(ts[0].id, cs[2]);
  EXPECT_EQ(db.candidates(ts[0].id)[2].samples_ms.size(), 4u);
  Statement median =
      db.connection().prepare("SELECT best_ms, median_ms FROM candidates WHERE seq = 2");
  ASSERT_TRUE(median.step());
  EXPECT_DOUBLE_EQ(median.f64(0), 3.0);
  EXPECT_DOUBLE_EQ(median.f64(1), 3.1875);
}

TEST_F(DatabaseTest, FingerprintsDifferWhenAnyFieldDiffers) {
  DeviceInfo base = device();
  std::vector<DeviceInfo> variants(5, base);
  variants[0].cpu_model = "Other CPU";
  variants[1].isa_flags += ",+avx512f";
  variants[2].cores = 4;
  variants[3].llvm_version = "20.1.0";
  variants[4].beamlab_version = "0.2.0";
  for (const DeviceInfo& v : variants) EXPECT_NE(v.fingerprint(), base.fingerprint());
  EXPECT_EQ(device().fingerprint(), base.fingerprint());
}

TEST_F(DatabaseTest, CacheKeysNeverMatchAnotherDevice) {
  Database db(file("a.db"));
  std::string a = device("CPU A").fingerprint(), b = device("CPU B").fingerprint();
  ASSERT_TRUE(db.cache_put(entry("k1", a, 1.0)));
  EXPECT_EQ(db.cache_lookup("k1", a, entry("k1", a, 0).compiler, 2).size(), 1u);
  EXPECT_TRUE(db.cache_lookup("k1", b, entry("k1", a, 0).compiler, 2).empty());
  EXPECT_TRUE(db.cache_lookup("k1", a, "beamlab 0.2.0, LLVM 20", 2).empty());
  EXPECT_TRUE(db.cache_lookup("k1", a, entry("k1", a, 0).compiler, 4).empty());
}

TEST_F(DatabaseTest, TheFastestPlanPerKeyWinsAndStaleEntriesAreReplaced) {
  Database db(file("a.db"));
  std::string d = device().fingerprint();
  EXPECT_TRUE(db.cache_put(entry("k1", d, 2.0, "UPCAST(0,2)")));
  EXPECT_FALSE(db.cache_put(entry("k1", d, 3.0, "UPCAST(0,8)"))); // slower: kept out
  EXPECT_TRUE(db.cache_put(entry("k1", d, 1.0, "UPCAST(0,4)")));  // faster: replaces
  std::vector<CacheEntry> es = db.cache_entries();
  ASSERT_EQ(es.size(), 1u);
  EXPECT_EQ(es[0].opts, "UPCAST(0,4)");
  db.cache_mark_stale(es[0].id, "its Opts no longer apply");
  EXPECT_TRUE(db.cache_put(entry("k1", d, 5.0, "UPCAST(0,16)"))); // a stale entry yields
  EXPECT_EQ(db.cache_entries()[0].opts, "UPCAST(0,16)");
}

TEST_F(DatabaseTest, MergeUnionsRunsAndKeepsTheFastestPlanOnce) {
  std::string d = device().fingerprint();
  {
    Database a(file("a.db"));
    journal_run(a, "k1", 5);
    a.cache_put(entry("k1", d, 2.0, "UPCAST(0,2)"));
    a.cache_put(entry("k2", d, 1.0));
  }
  {
    Database b(file("b.db"));
    journal_run(b, "k1", 3);
    journal_run(b, "k3", 2);
    b.cache_put(entry("k1", d, 1.5, "UPCAST(0,8)"));
    b.cache_put(entry("k3", d, 4.0));
  }
  Database m(file("m.db"));
  Database::MergeStats s1 = m.merge_from(file("a.db"));
  Database::MergeStats s2 = m.merge_from(file("b.db"));
  EXPECT_EQ(s1.runs + s2.runs, 3);
  EXPECT_EQ(s1.candidates + s2.candidates, 10);
  EXPECT_EQ(m.candidate_count(), 10);
  EXPECT_EQ(m.connection().scalar_i64("SELECT count(*) FROM samples"), 30);
  std::vector<CacheEntry> es = m.cache_entries();
  ASSERT_EQ(es.size(), 3u);
  for (const CacheEntry& e : es)
    if (e.kernel_hash == "k1") EXPECT_EQ(e.opts, "UPCAST(0,8)"); // b's 1.5 ms beat a's 2.0
  // Merging a file again adds nothing.
  Database::MergeStats again = m.merge_from(file("b.db"));
  EXPECT_EQ(again.runs, 0);
  EXPECT_EQ(m.candidate_count(), 10);
  EXPECT_TRUE(m.verify().empty());
}

// A shard merged while its run was unfinished (a cancelled Slurm task), then resumed and merged
// again: the newer state replaces the copy, once, and the cache's provenance follows it.
TEST_F(DatabaseTest, MergeReplacesAnUnfinishedRunThatMovedOnSinceItWasMerged) {
  std::string d = device().fingerprint();
  int64_t run = 0;
  {
    Database a(file("a.db"));
    run = journal_run(a, "k1", 3);
    CacheEntry e = entry("k1", d, 2.0);
    e.run_id = run;
    a.cache_put(e);
  }
  Database m(file("m.db"));
  Database::MergeStats first = m.merge_from(file("a.db"));
  EXPECT_EQ(first.runs, 1);
  EXPECT_EQ(first.refreshed, 0);
  ASSERT_EQ(first.unfinished.size(), 1u);
  EXPECT_EQ(first.unfinished[0], std::make_pair(run, RunStatus::running));
  EXPECT_EQ(m.candidate_count(), 3);
  // Unchanged there: nothing to replace.
  EXPECT_EQ(m.merge_from(file("a.db")).runs, 0);
  {
    Database a(file("a.db"));
    int64_t tuning = *a.connection().scalar_i64("SELECT id FROM tunings");
    for (int seq = 3; seq < 5; ++seq) {
      CandidateRow c;
      c.seq = seq;
      c.opts = "UPCAST(0,16)";
      c.status = "ok";
      c.samples_ms = {0.5};
      a.save_candidate(tuning, c);
    }
    a.end_run(run, RunStatus::done);
  }
  Database::MergeStats second = m.merge_from(file("a.db"));
  EXPECT_EQ(second.runs, 1);
  EXPECT_EQ(second.refreshed, 1);
  EXPECT_TRUE(second.unfinished.empty());
  std::vector<db::Run> rs = m.runs();
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, RunStatus::done);
  EXPECT_EQ(m.candidate_count(), 5);
  EXPECT_EQ(m.connection().scalar_i64("SELECT count(*) FROM samples"), 11);
  std::vector<CacheEntry> es = m.cache_entries();
  ASSERT_EQ(es.size(), 1u);
  EXPECT_EQ(es[0].run_id, rs[0].id); // not left pointing nowhere
  // A finished copy is never replaced.
  EXPECT_EQ(m.merge_from(file("a.db")).runs, 0);
  EXPECT_TRUE(m.verify().empty());
}

// --- liveness locks ---------------------------------------------------------------------------

NewRun new_run(Database& db) {
  return {
      db.upsert_device(device()), RunKind::tune, "", "beamlab tune test", "{}", "", host_name()};
}

TEST_F(DatabaseTest, ARunsLockIsHeldUntilReleasedAndSeenFromAnyOpenFile) {
  Database db(file("a.db"));
  RunLock lock;
  int64_t id = db.begin_run(new_run(db), &lock);
  ASSERT_EQ(lock.outcome(), RunLock::Outcome::taken) << lock.why();
  EXPECT_TRUE(fs::exists(file("a.db-runs.lock")));
  EXPECT_EQ(run_liveness(db.path(), id), Liveness::alive);
  // OFD locks conflict between open files, so this process sees (and can't take) it too.
  EXPECT_EQ(RunLock::take(db.path(), id).outcome(), RunLock::Outcome::held_elsewhere);
  EXPECT_EQ(db.run(id)->status, RunStatus::running);
  // Another run's byte is its own.
  EXPECT_EQ(run_liveness(db.path(), id + 1), Liveness::dead);
  lock = RunLock();
  EXPECT_EQ(run_liveness(db.path(), id), Liveness::dead);
  // Recorded running, nobody holding it: it reads as what it is.
  EXPECT_EQ(db.run(id)->status, RunStatus::interrupted);
  EXPECT_EQ(db.runs()[0].status, RunStatus::interrupted);
  EXPECT_EQ(*db.connection().scalar_i64("SELECT count(*) FROM runs WHERE status = 'running'"), 1);
  // A finished run is not asked about.
  db.end_run(id, RunStatus::done);
  EXPECT_EQ(db.run(id)->status, RunStatus::done);
}

TEST_F(DatabaseTest, ALockHeldByAnotherProcessGoesWithItsDeath) {
  Database db(file("a.db"));
  int64_t id = db.begin_run(new_run(db));
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    RunLock lock = RunLock::take(file("a.db"), id);
    char ok = lock.outcome() == RunLock::Outcome::taken ? '1' : '0';
    (void)!::write(ready[1], &ok, 1);
    ::pause(); // until killed
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  EXPECT_EQ(db.liveness(*db.run(id)), Liveness::alive);
  EXPECT_EQ(db.run(id)->status, RunStatus::running);
  ::kill(pid, SIGKILL);
  // Dead but not reaped (a zombie, its pid still answering kill(pid, 0)): it holds nothing.
  for (int i = 0; i < 500; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    if (line.find(") Z ") != std::string::npos) break;
    ::usleep(2000);
  }
  EXPECT_EQ(::kill(pid, 0), 0) << "the zombie is still there";
  EXPECT_EQ(run_liveness(db.path(), id), Liveness::dead);
  EXPECT_EQ(db.run(id)->status, RunStatus::interrupted);
  ::waitpid(pid, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

// Without a lock file (a database from before locks, or where none could be made), a run's
// pid on this host decides; another host's run can't be told.
TEST_F(DatabaseTest, WithoutALockFileTheProcessIdDecides) {
  Database db(file("a.db"));
  int64_t mine = db.begin_run(new_run(db));
  NewRun elsewhere = new_run(db);
  elsewhere.host = "another-host";
  int64_t theirs = db.begin_run(elsewhere);
  int64_t gone = db.begin_run(new_run(db));
  db.connection().exec("UPDATE runs SET pid = 999999999 WHERE id = " + std::to_string(gone));
  ASSERT_FALSE(fs::exists(file("a.db-runs.lock")));
  std::string why;
  EXPECT_EQ(run_liveness(db.path(), mine, &why), Liveness::unknown);
  EXPECT_NE(why.find("a.db-runs.lock"), std::string::npos) << why;
  EXPECT_EQ(db.liveness(*db.run(mine)), Liveness::alive); // this very process
  EXPECT_EQ(db.liveness(*db.run(theirs)), Liveness::unknown);
  EXPECT_EQ(db.run(theirs)->status, RunStatus::running);
  EXPECT_EQ(db.run(gone)->status, RunStatus::interrupted);
  // A lock that can't be made (no such folder) holds nothing and says why.
  RunLock none = RunLock::take(file("no/such/dir/a.db"), 1);
  EXPECT_EQ(none.outcome(), RunLock::Outcome::unavailable);
  EXPECT_NE(none.why().find("no/such/dir/a.db-runs.lock"), std::string::npos) << none.why();
}

/// Runs `body` in a child process; true when it exited 0.
pid_t spawn(const std::function<void()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    try {
      body();
      ::_exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      ::_exit(1);
    }
  }
  return pid;
}

bool exited_ok(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_F(DatabaseTest, TwoWritersOnOneFileLoseNothing) {
  std::string path = file("shared.db");
  { Database db(path); } // created before the writers race
  constexpr int kEach = 150;
  std::vector<pid_t> writers;
  for (int w = 0; w < 2; ++w)
    writers.push_back(spawn([&, w] {
      Database db(path);
      journal_run(db, "writer" + std::to_string(w), kEach);
      for (int i = 0; i < 20; ++i)
        db.cache_put(entry("k" + std::to_string(i), device().fingerprint(), 1.0 + w + i));
    }));
  for (pid_t p : writers) EXPECT_TRUE(exited_ok(p));
  Database db(path);
  EXPECT_EQ(db.candidate_count(), 2 * kEach);
  EXPECT_EQ(db.connection().scalar_i64("SELECT count(*) FROM samples"), 2 * kEach * 3);
  EXPECT_EQ(db.runs().size(), 2u);
  std::vector<CacheEntry> es = db.cache_entries();
  EXPECT_EQ(es.size(), 20u);
  for (const CacheEntry& e : es) EXPECT_LT(e.ms, 1.0 + 1 + std::stoi(e.kernel_hash.substr(1)));
  EXPECT_TRUE(db.verify().empty());
}

TEST_F(DatabaseTest, AReaderSeesAConsistentJournalWhileAWriterWrites) {
  std::string path = file("live.db");
  { Database db(path); }
  constexpr int kRows = 300;
  pid_t writer = spawn([&] {
    Database db(path);
    journal_run(db, "live", kRows);
  });
  Database reader(path, Database::Access::read_only);
  int64_t last = 0;
  int reads = 0;
  for (;;) {
    int status = 0;
    bool done = ::waitpid(writer, &status, WNOHANG) == writer;
    // Every candidate the reader sees is complete: its three samples are committed with it.
    Statement counts = reader.connection().prepare(
        "SELECT (SELECT count(*) FROM candidates), (SELECT count(*) FROM samples)");
    ASSERT_TRUE(counts.step()); // one statement: one snapshot
    int64_t n = counts.i64(0), samples = counts.i64(1);
    EXPECT_GE(n, last);
    EXPECT_EQ(samples, 3 * n);
    last = n;
    ++reads;
    if (done) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      break;
    }
  }
  EXPECT_EQ(reader.candidate_count(), kRows);
  EXPECT_GT(reads, 1);
}

} // namespace
} // namespace beamlab::db
