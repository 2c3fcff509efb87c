// The beamlab database; see database.hpp.
#include "db/database.hpp"
#include "db/database_internal.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db/sqlite.hpp"
#include "db/table.hpp"
#include "engine/support/error.hpp"
#include "engine/support/hash.hpp"

namespace beamlab::db {
namespace {

/// PRAGMA application_id of a beamlab database: "BMLB".
constexpr int64_t kApplicationId = 0x424d4c42;

/// migrations[v] takes a database from schema version v to v + 1.
const char* const kMigrations[] = {
    // v0 -> v1: the first schema.
    R"sql(
CREATE TABLE devices (
  id              INTEGER PRIMARY KEY,
  fingerprint     TEXT NOT NULL UNIQUE,
  cpu_model       TEXT NOT NULL,
  isa_flags       TEXT NOT NULL,
  cores           INTEGER NOT NULL,
  llvm_version    TEXT NOT NULL,
  beamlab_version TEXT NOT NULL,
  peak_gflops     REAL,
  peak_gbps       REAL,
  created_at      TEXT NOT NULL
);
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY,
  device_id    INTEGER NOT NULL REFERENCES devices(id),
  kind         TEXT NOT NULL CHECK (kind IN ('tune', 'bench')),
  label        TEXT NOT NULL DEFAULT '',
  command      TEXT NOT NULL,
  settings     TEXT NOT NULL,
  git_revision TEXT NOT NULL DEFAULT '',
  host         TEXT NOT NULL DEFAULT '',
  pid          INTEGER NOT NULL DEFAULT 0,
  uid          TEXT NOT NULL UNIQUE,
  started_at   TEXT NOT NULL,
  ended_at     TEXT,
  status       TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted'))
);
CREATE TABLE kernels (
  id           INTEGER PRIMARY KEY,
  hash         TEXT NOT NULL UNIQUE,
  hash_version INTEGER NOT NULL,
  name         TEXT NOT NULL,
  shapes       TEXT NOT NULL,
  flops        INTEGER NOT NULL,
  bytes        INTEGER NOT NULL,
  ast          TEXT NOT NULL
);
CREATE TABLE tunings (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kernel_id      INTEGER NOT NULL REFERENCES kernels(id),
  workload       TEXT NOT NULL,
  threads        INTEGER NOT NULL,
  settings       TEXT NOT NULL,
  actions        TEXT NOT NULL,
  budget_s       REAL NOT NULL,
  status         TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  heuristic_opts TEXT NOT NULL DEFAULT '',
  heuristic_ms   REAL,
  winner_opts    TEXT NOT NULL DEFAULT '',
  winner_ms      REAL,
  noise          REAL NOT NULL DEFAULT 0,
  tie            INTEGER NOT NULL DEFAULT 0,
  iterations     INTEGER NOT NULL DEFAULT 0,
  stop_reason    TEXT NOT NULL DEFAULT '',
  wall_s         REAL NOT NULL DEFAULT 0,
  restarts       INTEGER NOT NULL DEFAULT 0,
  error          TEXT NOT NULL DEFAULT '',
  UNIQUE (run_id, kernel_id, threads)
);
CREATE TABLE candidates (
  id           INTEGER PRIMARY KEY,
  tuning_id    INTEGER NOT NULL REFERENCES tunings(id) ON DELETE CASCADE,
  seq          INTEGER NOT NULL,
  opts         TEXT NOT NULL,
  parent       INTEGER NOT NULL,
  iteration    INTEGER NOT NULL,
  status       TEXT NOT NULL,
  error        TEXT NOT NULL DEFAULT '',
  compile_ms   REAL NOT NULL DEFAULT 0,
  code_hash    TEXT NOT NULL DEFAULT '',
  code_bytes   INTEGER NOT NULL DEFAULT 0,
  max_error    REAL NOT NULL DEFAULT 0,
  duplicate_of INTEGER NOT NULL DEFAULT -1,
  best_ms      REAL,
  median_ms    REAL,
  finished_at  TEXT NOT NULL,
  UNIQUE (tuning_id, seq)
);
CREATE TABLE samples (
  candidate_id INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
  idx          INTEGER NOT NULL,
  ms           REAL NOT NULL,
  PRIMARY KEY (candidate_id, idx)
) WITHOUT ROWID;
CREATE TABLE cache (
  id             INTEGER PRIMARY KEY,
  kernel_hash    TEXT NOT NULL,
  device         TEXT NOT NULL,
  compiler       TEXT NOT NULL,
  settings_key   TEXT NOT NULL,
  threads        INTEGER NOT NULL,
  kernel_name    TEXT NOT NULL,
  opts           TEXT NOT NULL,
  optimized_hash TEXT NOT NULL,
  actions        TEXT NOT NULL,
  ms             REAL NOT NULL,
  heuristic_ms   REAL,
  source         TEXT NOT NULL,
  run_id         INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  created_at     TEXT NOT NULL,
  stale          INTEGER NOT NULL DEFAULT 0,
  stale_reason   TEXT NOT NULL DEFAULT '',
  UNIQUE (kernel_hash, device, compiler, settings_key, threads)
);
CREATE TABLE benchmarks (
  id      INTEGER PRIMARY KEY,
  run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name    TEXT NOT NULL,
  params  TEXT NOT NULL,
  metrics TEXT NOT NULL
);
CREATE INDEX candidates_by_tuning ON candidates(tuning_id);
CREATE INDEX tunings_by_run ON tunings(run_id);
CREATE INDEX cache_by_kernel ON cache(kernel_hash, device, compiler, threads);
CREATE INDEX benchmarks_by_run ON benchmarks(run_id);
)sql",
    // 2: a search's tie with the heuristic (not only with its runner-up), so a resumed run
    // reports it as the search did.
    R"sql(
ALTER TABLE tunings ADD COLUMN tie_with_heuristic INTEGER NOT NULL DEFAULT 0;
)sql",
    // 3: the machine's measured limits (engine/realize/machine_limits.hpp): FMA peaks and each
    // memory level's read and triad bandwidth. They replace devices.peak_gflops/peak_gbps (a
    // matmul's and an elementwise kernel's speed, not the machine's limits), which stay in
    // older files but are no longer read.
    R"sql(
CREATE TABLE device_limits (
  device_id      INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  threads        INTEGER NOT NULL,
  vector_bytes   INTEGER NOT NULL,
  fma_f32_gflops REAL NOT NULL,
  fma_f64_gflops REAL NOT NULL,
  measured_at    TEXT NOT NULL
);
-- the paired verdict of the re-measurement: the heuristic's time over the winner's (geometric
-- mean of per-round ratios, 95% interval), the rounds dropped as disturbed, and per finalist
-- its median in each kept round ("SEQ MS MS ...", a line each): what the verdict is computed
-- from.
ALTER TABLE tunings ADD COLUMN speedup REAL;
ALTER TABLE tunings ADD COLUMN speedup_lo REAL;
ALTER TABLE tunings ADD COLUMN speedup_hi REAL;
ALTER TABLE tunings ADD COLUMN rounds_disturbed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tunings ADD COLUMN round_ms TEXT NOT NULL DEFAULT '';
-- the same verdict timed in the tuner's own process before the plan was cached, and what that
-- check found (tuner/measure/fidelity.hpp)
ALTER TABLE tunings ADD COLUMN in_process_speedup REAL;
ALTER TABLE tunings ADD COLUMN in_process_lo REAL;
ALTER TABLE tunings ADD COLUMN in_process_hi REAL;
ALTER TABLE tunings ADD COLUMN fidelity TEXT NOT NULL DEFAULT '';
CREATE TABLE device_memory (
  device_id         INTEGER NOT NULL REFERENCES device_limits(device_id) ON DELETE CASCADE,
  idx               INTEGER NOT NULL,
  name              TEXT NOT NULL,
  capacity_bytes    INTEGER NOT NULL,
  working_set_bytes INTEGER NOT NULL,
  read_gbps         REAL NOT NULL,
  triad_gbps        REAL NOT NULL,
  PRIMARY KEY (device_id, idx)
);
)sql",
    // 4: each kernel's structure, its AST's hash up to sizes (tuner/search/structure.hpp), and
    // the recipe it was computed with: warm starts seed a search with the plans of the nearest
    // tuned kernels of its structure. Rows of older files have none ('' at version 0) until
    // the tuner computes it from their AST.
    R"sql(
ALTER TABLE kernels ADD COLUMN structure TEXT NOT NULL DEFAULT '';
ALTER TABLE kernels ADD COLUMN structure_version INTEGER NOT NULL DEFAULT 0;
CREATE INDEX kernels_by_structure ON kernels(structure);
)sql",
    // 5: where a search's wall time went: the reference's run, waiting for its compile phases,
    // and timing alone on the machine (the rest is the search's own work).
    R"sql(
ALTER TABLE tunings ADD COLUMN reference_s REAL NOT NULL DEFAULT 0;
ALTER TABLE tunings ADD COLUMN compiling_s REAL NOT NULL DEFAULT 0;
ALTER TABLE tunings ADD COLUMN timing_s REAL NOT NULL DEFAULT 0;
)sql",
    // 6: the iteration that settled a candidate: later than the one that proposed it when its
    // compile was left running (a replay retraces the search only knowing when).
    R"sql(
ALTER TABLE candidates ADD COLUMN settled_in INTEGER NOT NULL DEFAULT -1;
)sql",
    // 7: the share of the CPUs other processes took while a device's limits were measured
    // (MachineLimits::busy_elsewhere): figures taken on a busy machine are low, and a quieter
    // measurement replaces them.
    R"sql(
ALTER TABLE device_limits ADD COLUMN busy_elsewhere REAL NOT NULL DEFAULT 0;
)sql",
};
constexpr int kMigrationCount = sizeof(kMigrations) / sizeof(kMigrations[0]);
static_assert(kMigrationCount == kSchemaVersion);

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

/// A non-empty file that doesn't start with SQLite's magic is someone else's.
void check_header(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return; // SQLite reports why it can't open it
  char magic[16] = {};
  f.read(magic, sizeof magic);
  if (f.gcount() == 0) return; // empty: a new database
  user_assert(f.gcount() == 16 && std::string(magic, 16) == std::string("SQLite format 3\0", 16))
      << "'" << path << "' is not a beamlab database (not an SQLite file); beamlab leaves it "
      << "untouched: pass another --db or move it away";
}

/// The size of the file at `path` (0 when there is none).
int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

/// Whether this process may create files beside `path` (SQLite's WAL index and journal).
bool directory_writable(const std::string& path) {
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  return ::access(dir.empty() ? "/" : dir.c_str(), W_OK) == 0;
}

/// SQLite's quick_check on one line: "ok", or its first problem (its "*** in database main ***"
/// heading dropped).

/// Creates the directories above `path`.
void make_parent_dirs(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1))
    ::mkdir(path.substr(0, pos).c_str(), 0755);
}

} // namespace

std::string quick_check(Connection& c) {
  Statement st = c.prepare("PRAGMA quick_check(1)");
  std::string verdict = st.step() ? st.text(0) : "no answer";
  if (verdict.starts_with("*** in database main ***\n")) verdict.erase(0, 25);
  std::replace(verdict.begin(), verdict.end(), '\n', ' ');
  return verdict;
}

const char* to_string(RunKind k) { return k == RunKind::tune ? "tune" : "bench"; }

const char* to_string(RunStatus s) {
  switch (s) {
  case RunStatus::running: return "running";
  case RunStatus::done: return "done";
  case RunStatus::failed: return "failed";
  case RunStatus::interrupted: return "interrupted";
  }
  return "?";
}

const char* to_string(TuningStatus s) {
  switch (s) {
  case TuningStatus::running: return "running";
  case TuningStatus::done: return "done";
  case TuningStatus::failed: return "failed";
  }
  return "?";
}

RunKind parse_run_kind(std::string_view name) {
  if (name == "tune") return RunKind::tune;
  if (name == "bench") return RunKind::bench;
  internal_error << "a run kind the schema does not allow: '" << name << "'";
  return RunKind::tune;
}

RunStatus parse_run_status(std::string_view name) {
  for (RunStatus s :
       {RunStatus::running, RunStatus::done, RunStatus::failed, RunStatus::interrupted})
    if (name == to_string(s)) return s;
  internal_error << "a run status the schema does not allow: '" << name << "'";
  return RunStatus::failed;
}

TuningStatus parse_tuning_status(std::string_view name) {
  for (TuningStatus s : {TuningStatus::running, TuningStatus::done, TuningStatus::failed})
    if (name == to_string(s)) return s;
  internal_error << "a tuning status the schema does not allow: '" << name << "'";
  return TuningStatus::failed;
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string now_utc() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  gmtime_r(&ts.tv_sec, &t);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000000);
  return buf;
}

std::string DeviceInfo::fingerprint() const {
  StableHasher h;
  h.add_str(cpu_model)
      .add_str(isa_flags)
      .add_i64(cores)
      .add_str(llvm_version)
      .add_str(beamlab_version);
  return hash_hex(h.finish());
}

std::string Database::default_path() {
  if (const char* p = std::getenv("BEAMLAB_DB"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/beamlab/beamlab.db";
  const char* home = std::getenv("HOME");
  user_assert(home && *home) << "no database path: set BEAMLAB_DB, XDG_CACHE_HOME or HOME, "
                             << "or pass --db FILE";
  return std::string(home) + "/.cache/beamlab/beamlab.db";
}

Database::Database(const std::string& path, Access access) {
  bool read_only = access == Access::read_only;
  user_assert(!read_only || file_exists(path))
      << "the database '" << path << "' does not exist; run 'beamlab tune' to create it, "
      << "or pass another --db";
  bool exists = file_exists(path);
  // A log not closed cleanly, or open elsewhere now. Both reads open the files plainly, so
  // they run only when no connection of this process has the file open (sqlite.hpp): one that
  // has checked it already.
  bool has_log = false;
  unless_open_here(path, [&] {
    check_header(path);
    has_log = file_size(path + "-wal") > 0;
  });
  bool dir_writable = directory_writable(path);
  if (exists && (!dir_writable || ::access(path.c_str(), W_OK) != 0)) {
    // Readable from a read-only directory (or a read-only file): as an immutable file, which
    // needs no WAL index beside it, unless a write-ahead log holds part of its content.
    user_assert(read_only) << "the database '" << path << "' is read-only here (the file or its "
                           << "directory is not writable); pass --cache read-only to read it, "
                           << "or another --db";
    user_assert(!has_log || file_exists(path + "-shm"))
        << "the database '" << path << "' has an unfinished write-ahead log ('" << path
        << "-wal') and its directory is read-only: open it once where it is writable";
  }
  if (!read_only) make_parent_dirs(path);
  // A database that was not closed cleanly is checked before anything writes to it, through
  // a read-only connection (which never checkpoints the log into a damaged file).
  if (!read_only && has_log) {
    Connection check(path, true);
    std::string verdict = quick_check(check);
    user_assert(verdict == "ok")
        << "the database '" << path << "' is damaged (" << verdict << "); it was not closed "
        << "cleanly and beamlab leaves it untouched: run 'beamlab cache verify --db " << path
        << "', restore a copy, or pass another --db";
  }
  // A reader of a file an older beamlab wrote (the GUI, `cache list`, `report`) migrates it
  // first where it may write there: a schema upgrade changes no data. Elsewhere it is refused
  // below, naming the fix.
  if (read_only && dir_writable && ::access(path.c_str(), W_OK) == 0 && needs_upgrade(path))
    Database(path, Access::read_write);
  bool immutable = read_only && exists && !dir_writable && !has_log;
  conn_ = std::make_unique<Connection>(path, read_only, immutable);
  conn_->exec("PRAGMA foreign_keys = ON");
  migrate(); // first: another application's file is refused before anything changes in it
  if (!read_only) {
    conn_->exec("PRAGMA journal_mode = WAL");
    conn_->exec("PRAGMA synchronous = NORMAL");
  }
}

bool Database::needs_upgrade(const std::string& path) {
  Connection peek(path, true);
  int64_t version = peek.scalar_i64("PRAGMA user_version").value_or(0);
  return peek.scalar_i64("PRAGMA application_id").value_or(0) == kApplicationId && version > 0 &&
         version < kSchemaVersion;
}

Database::~Database() = default;
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;

const std::string& Database::path() const { return conn_->path(); }
int Database::schema_version() const { return version_; }
bool Database::read_only() const { return conn_->read_only(); }
Connection& Database::connection() { return *conn_; }

int64_t Database::data_version() { return conn_->scalar_i64("PRAGMA data_version").value_or(0); }

void Database::migrate() {
  auto read_ids = [&] {
    int64_t app = conn_->scalar_i64("PRAGMA application_id").value_or(0);
    version_ = static_cast<int>(conn_->scalar_i64("PRAGMA user_version").value_or(0));
    int64_t tables = conn_->scalar_i64("SELECT count(*) FROM sqlite_master").value_or(0);
    user_assert(app == kApplicationId || (app == 0 && tables == 0))
        << "'" << path() << "' is an SQLite database of another application, not beamlab's; "
        << "beamlab leaves it untouched: pass another --db";
  };
  read_ids();
  user_assert(version_ <= kSchemaVersion)
      << "the database '" << path() << "' has schema version " << version_
      << ", newer than this beamlab's " << kSchemaVersion << "; use a newer beamlab";
  if (version_ == kSchemaVersion) return;
  user_assert(!conn_->read_only())
      << "the database '" << path() << "' needs migrating from schema version " << version_
      << " to " << kSchemaVersion << "; open it once without read-only access";
  Transaction t(*conn_);
  read_ids(); // another process may have migrated it meanwhile
  for (int v = version_; v < kSchemaVersion; ++v) conn_->exec(kMigrations[v]);
  conn_->exec("PRAGMA application_id = " + std::to_string(kApplicationId));
  conn_->exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  t.commit();
  version_ = kSchemaVersion;
}

// --- devices ---------------------------------------------------------------------------------

// The devices table (with `id`, `fingerprint`, the peaks of schema 1 and `created_at`), its
// measured limits, and one row per memory level.
const Columns<DeviceInfo> kDeviceInfo = {
    column("cpu_model", &DeviceInfo::cpu_model), column("isa_flags", &DeviceInfo::isa_flags),
    column("cores", &DeviceInfo::cores), column("llvm_version", &DeviceInfo::llvm_version),
    column("beamlab_version", &DeviceInfo::beamlab_version)};
const Columns<MachineLimits> kDeviceLimits = {
    column("threads", &MachineLimits::threads),
    column("vector_bytes", &MachineLimits::vector_bytes),
    column("fma_f32_gflops", &MachineLimits::fma_f32_gflops),
    column("fma_f64_gflops", &MachineLimits::fma_f64_gflops),
    column("busy_elsewhere", &MachineLimits::busy_elsewhere)};
const Columns<MemoryLevel> kDeviceMemory = {
    column("name", &MemoryLevel::name), column("capacity_bytes", &MemoryLevel::capacity_bytes),
    column("working_set_bytes", &MemoryLevel::working_set_bytes),
    column("read_gbps", &MemoryLevel::read_gbps), column("triad_gbps", &MemoryLevel::triad_gbps)};

int64_t Database::upsert_device(const DeviceInfo& d) {
  std::string fp = d.fingerprint();
  Statement insert = conn_->prepare("INSERT INTO devices (fingerprint, " + names(kDeviceInfo) +
                                    ", created_at) VALUES (?, " + placeholders(kDeviceInfo) +
                                    ", ?) ON CONFLICT (fingerprint) DO NOTHING");
  insert.bind(1, fp);
  insert.bind(bind_columns(kDeviceInfo, d, insert, 2), now_utc());
  insert.run();
  Statement st = conn_->prepare("SELECT id FROM devices WHERE fingerprint = ?");
  st.bind(1, fp);
  internal_assert(st.step());
  return st.i64(0);
}

std::optional<Device> Database::device(int64_t id) {
  Statement st =
      conn_->prepare("SELECT " + names(kDeviceInfo) + ", fingerprint FROM devices WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  Device d;
  d.id = id;
  d.fingerprint = st.text(read_columns(kDeviceInfo, st, 0, d.info));
  Statement lim = conn_->prepare("SELECT " + names(kDeviceLimits) +
                                 ", measured_at FROM device_limits WHERE device_id = ?");
  lim.bind(1, id);
  if (!lim.step()) return d;
  MachineLimits& l = d.limits.emplace();
  d.limits_measured_at = lim.text(read_columns(kDeviceLimits, lim, 0, l));
  Statement mem = conn_->prepare("SELECT " + names(kDeviceMemory) +
                                 " FROM device_memory WHERE device_id = ? ORDER BY idx");
  mem.bind(1, id);
  while (mem.step()) read_columns(kDeviceMemory, mem, 0, l.levels.emplace_back());
  if (!l.known()) d.limits.reset();
  return d;
}

std::optional<int64_t> Database::find_device(const std::string& fingerprint) {
  Statement st = conn_->prepare("SELECT id FROM devices WHERE fingerprint = ?");
  st.bind(1, fingerprint);
  if (!st.step()) return std::nullopt;
  return st.i64(0);
}

void Database::set_device_limits(int64_t id, const MachineLimits& limits) {
  Transaction t(*conn_);
  conn_->prepare("DELETE FROM device_limits WHERE device_id = ?").bind_all(id).run();
  Statement lim =
      conn_->prepare("INSERT INTO device_limits (device_id, " + names(kDeviceLimits) +
                     ", measured_at) VALUES (?, " + placeholders(kDeviceLimits) + ", ?)");
  lim.bind(1, id);
  lim.bind(bind_columns(kDeviceLimits, limits, lim, 2), now_utc());
  lim.run();
  Statement mem =
      conn_->prepare("INSERT INTO device_memory (device_id, idx, " + names(kDeviceMemory) +
                     ") VALUES (?, ?, " + placeholders(kDeviceMemory) + ")");
  for (size_t i = 0; i < limits.levels.size(); ++i) {
    mem.bind(1, id).bind(2, static_cast<int64_t>(i));
    bind_columns(kDeviceMemory, limits.levels[i], mem, 3);
    mem.run();
    mem.reset();
  }
  t.commit();
}

// --- runs ------------------------------------------------------------------------------------

int64_t Database::begin_run(const NewRun& r, RunLock* lock) {
  // A run's identity across files (merges skip a run they have already).
  std::random_device rd;
  std::string uid =
      hash_hex((uint64_t(rd()) << 32) ^ rd()) + hash_hex((uint64_t(rd()) << 32) ^ rd());
  Transaction t(*conn_); // the lock is held before the row is visible: never running unlocked
  conn_
      ->prepare("INSERT INTO runs (device_id, kind, label, command, settings, git_revision, "
                "host, pid, uid, started_at, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running')")
      .bind_all(r.device_id, to_string(r.kind), r.label, r.command, r.settings, r.git_revision,
                r.host, static_cast<int64_t>(::getpid()), uid, now_utc())
      .run();
  int64_t id = conn_->last_insert_rowid();
  if (lock) *lock = RunLock::take(path(), id);
  t.commit();
  return id;
}

Liveness Database::liveness(const Run& r, std::string* why) const {
  if (r.status != RunStatus::running) return Liveness::dead;
  Liveness l = run_liveness(path(), r.id, why);
  if (l != Liveness::unknown) return l;
  if (r.host != host_name()) return Liveness::unknown;
  bool alive = r.pid > 0 &&
               (r.pid == ::getpid() || ::kill(static_cast<pid_t>(r.pid), 0) == 0 || errno == EPERM);
  return alive ? Liveness::alive : Liveness::dead;
}

void Database::reopen_run(int64_t id) {
  conn_->prepare("UPDATE runs SET status = 'running', ended_at = NULL, pid = ? WHERE id = ?")
      .bind_all(static_cast<int64_t>(::getpid()), id)
      .run();
}

void Database::end_run(int64_t id, RunStatus status) {
  conn_->prepare("UPDATE runs SET status = ?, ended_at = ? WHERE id = ?")
      .bind_all(to_string(status), now_utc(), id)
      .run();
}

// The runs table: a run's columns but its id and device (a merge maps those), then all of them;
// its uid, a run's identity across files, is the merge's alone.
const Columns<Run> kRunFields = {
    text_column(
        "kind", &Run::kind, [](RunKind k) { return to_string(k); },
        [](const std::string& t) { return parse_run_kind(t); }),
    column("label", &Run::label),
    column("command", &Run::command),
    column("settings", &Run::settings),
    column("git_revision", &Run::git_revision),
    column("host", &Run::host),
    column("pid", &Run::pid),
    column("started_at", &Run::started_at),
    {"ended_at", [](const Statement& st, int c, Run& r) { r.ended_at = st.text(c); },
     [](const Run& r, Statement& st, int i) {
       if (r.ended_at.empty())
         st.bind(i, std::nullopt); // not ended
       else
         st.bind(i, r.ended_at);
     }},
    text_column(
        "status", &Run::status, [](RunStatus v) { return to_string(v); },
        [](const std::string& t) { return parse_run_status(t); })};
const Columns<Run> kRunAll =
    Columns<Run>{column("id", &Run::id), column("device_id", &Run::device_id)} + kRunFields;

namespace {
std::string select_runs() { return "SELECT " + names(kRunAll) + " FROM runs"; }
} // namespace

std::optional<Run> Database::run(int64_t id) {
  Statement st = conn_->prepare(select_runs() + " WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return as_it_is(read_row(kRunAll, st));
}

std::vector<Run> Database::runs() {
  Statement st = conn_->prepare(select_runs() + " ORDER BY id DESC");
  std::vector<Run> out;
  while (st.step()) out.push_back(as_it_is(read_row(kRunAll, st)));
  return out;
}

Run Database::as_it_is(Run r) const {
  if (r.status == RunStatus::running && liveness(r) == Liveness::dead)
    r.status = RunStatus::interrupted;
  return r;
}

// --- kernels and tunings ---------------------------------------------------------------------

// The kernels table: a kernel's columns, and with its id first.
const Columns<Kernel> kKernel = {column("hash", &Kernel::hash),
                                 column("hash_version", &Kernel::hash_version),
                                 column("name", &Kernel::name),
                                 column("shapes", &Kernel::shapes),
                                 column("flops", &Kernel::flops),
                                 column("bytes", &Kernel::bytes),
                                 column("ast", &Kernel::ast),
                                 column("structure", &Kernel::structure),
                                 column("structure_version", &Kernel::structure_version)};
const Columns<Kernel> kKernelAll = Columns<Kernel>{column("id", &Kernel::id)} + kKernel;

int64_t Database::upsert_kernel(const Kernel& k) {
  Statement insert = conn_->prepare(
      "INSERT INTO kernels (" + names(kKernel) + ") VALUES (" + placeholders(kKernel) +
      ") ON CONFLICT (hash) DO UPDATE SET structure = excluded.structure, "
      "structure_version = excluded.structure_version "
      "WHERE excluded.structure_version > kernels.structure_version");
  bind_columns(kKernel, k, insert, 1);
  insert.run();
  Statement st = conn_->prepare("SELECT id FROM kernels WHERE hash = ?");
  st.bind(1, k.hash);
  internal_assert(st.step());
  return st.i64(0);
}

std::optional<int64_t> Database::find_kernel(const std::string& hash) {
  Statement st = conn_->prepare("SELECT id FROM kernels WHERE hash = ?");
  st.bind(1, hash);
  if (!st.step()) return std::nullopt;
  return st.i64(0);
}

std::optional<Kernel> Database::kernel(int64_t id) {
  Statement st =
      conn_->prepare("SELECT " + names(kKernelAll, "k.") + " FROM kernels k WHERE k.id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_row(kKernelAll, st);
}

void Database::set_kernel_structure(int64_t kernel_id, const std::string& structure, int version) {
  conn_->prepare("UPDATE kernels SET structure = ?, structure_version = ? WHERE id = ?")
      .bind_all(structure, static_cast<int64_t>(version), kernel_id)
      .run();
}

// --- benchmarks ------------------------------------------------------------------------------

void Database::add_benchmark(const Benchmark& b) {
  conn_->prepare("INSERT INTO benchmarks (run_id, name, params, metrics) VALUES (?, ?, ?, ?)")
      .bind_all(b.run_id, b.name, b.params, b.metrics)
      .run();
}

std::vector<Benchmark> Database::benchmarks(int64_t run_id) {
  Statement st = conn_->prepare(
      "SELECT run_id, name, params, metrics FROM benchmarks WHERE run_id = ? ORDER BY id");
  st.bind(1, run_id);
  std::vector<Benchmark> out;
  while (st.step()) out.push_back({st.i64(0), st.text(1), st.text(2), st.text(3)});
  return out;
}

} // namespace beamlab::db
