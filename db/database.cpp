// The beamlab database; see database.hpp.
#include "db/database.hpp"

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
std::string quick_check(Connection& c) {
  Statement st = c.prepare("PRAGMA quick_check(1)");
  std::string verdict = st.step() ? st.text(0) : "no answer";
  if (verdict.starts_with("*** in database main ***\n")) verdict.erase(0, 25);
  std::replace(verdict.begin(), verdict.end(), '\n', ' ');
  return verdict;
}

/// Creates the directories above `path`.
void make_parent_dirs(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1))
    ::mkdir(path.substr(0, pos).c_str(), 0755);
}

} // namespace

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

int64_t Database::upsert_device(const DeviceInfo& d) {
  std::string fp = d.fingerprint();
  conn_
      ->prepare("INSERT INTO devices (fingerprint, cpu_model, isa_flags, cores, llvm_version, "
                "beamlab_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (fingerprint) DO NOTHING")
      .bind_all(fp, d.cpu_model, d.isa_flags, d.cores, d.llvm_version, d.beamlab_version, now_utc())
      .run();
  Statement st = conn_->prepare("SELECT id FROM devices WHERE fingerprint = ?");
  st.bind(1, fp);
  internal_assert(st.step());
  return st.i64(0);
}

std::optional<Device> Database::device(int64_t id) {
  Statement st = conn_->prepare(
      "SELECT id, fingerprint, cpu_model, isa_flags, cores, llvm_version, beamlab_version "
      "FROM devices WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  Device d;
  d.id = st.i64(0);
  d.fingerprint = st.text(1);
  d.info = {st.text(2), st.text(3), static_cast<int>(st.i64(4)), st.text(5), st.text(6)};
  Statement lim = conn_->prepare("SELECT threads, vector_bytes, fma_f32_gflops, fma_f64_gflops, "
                                 "measured_at FROM device_limits WHERE device_id = ?");
  lim.bind(1, id);
  if (!lim.step()) return d;
  MachineLimits& l = d.limits.emplace();
  l.threads = static_cast<int>(lim.i64(0));
  l.vector_bytes = static_cast<int>(lim.i64(1));
  l.fma_f32_gflops = lim.f64(2);
  l.fma_f64_gflops = lim.f64(3);
  d.limits_measured_at = lim.text(4);
  Statement mem = conn_->prepare("SELECT name, capacity_bytes, working_set_bytes, read_gbps, "
                                 "triad_gbps FROM device_memory WHERE device_id = ? ORDER BY idx");
  mem.bind(1, id);
  while (mem.step())
    l.levels.push_back({mem.text(0), mem.i64(1), mem.i64(2), mem.f64(3), mem.f64(4)});
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
  conn_
      ->prepare("INSERT INTO device_limits (device_id, threads, vector_bytes, fma_f32_gflops, "
                "fma_f64_gflops, measured_at) VALUES (?, ?, ?, ?, ?, ?)")
      .bind_all(id, limits.threads, limits.vector_bytes, limits.fma_f32_gflops,
                limits.fma_f64_gflops, now_utc())
      .run();
  for (size_t i = 0; i < limits.levels.size(); ++i) {
    const MemoryLevel& m = limits.levels[i];
    conn_
        ->prepare("INSERT INTO device_memory (device_id, idx, name, capacity_bytes, "
                  "working_set_bytes, read_gbps, triad_gbps) VALUES (?, ?, ?, ?, ?, ?, ?)")
        .bind_all(id, static_cast<int64_t>(i), m.name, m.capacity_bytes, m.working_set_bytes,
                  m.read_gbps, m.triad_gbps)
        .run();
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

namespace {
constexpr const char* kRunColumns = "SELECT id, device_id, kind, label, command, settings, "
                                    "git_revision, host, pid, started_at, "
                                    "coalesce(ended_at, ''), status FROM runs";
Run read_run(const Statement& st) {
  Run r;
  r.id = st.i64(0);
  r.device_id = st.i64(1);
  r.kind = parse_run_kind(st.text(2));
  r.label = st.text(3);
  r.command = st.text(4);
  r.settings = st.text(5);
  r.git_revision = st.text(6);
  r.host = st.text(7);
  r.pid = st.i64(8);
  r.started_at = st.text(9);
  r.ended_at = st.text(10);
  r.status = parse_run_status(st.text(11));
  return r;
}
} // namespace

std::optional<Run> Database::run(int64_t id) {
  Statement st = conn_->prepare(std::string(kRunColumns) + " WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return as_it_is(read_run(st));
}

std::vector<Run> Database::runs() {
  Statement st = conn_->prepare(std::string(kRunColumns) + " ORDER BY id DESC");
  std::vector<Run> out;
  while (st.step()) out.push_back(as_it_is(read_run(st)));
  return out;
}

Run Database::as_it_is(Run r) const {
  if (r.status == RunStatus::running && liveness(r) == Liveness::dead)
    r.status = RunStatus::interrupted;
  return r;
}

// --- kernels and tunings ---------------------------------------------------------------------

int64_t Database::upsert_kernel(const Kernel& k) {
  conn_
      ->prepare("INSERT INTO kernels (hash, hash_version, name, shapes, flops, bytes, ast, "
                "structure, structure_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (hash) DO UPDATE SET structure = excluded.structure, "
                "structure_version = excluded.structure_version "
                "WHERE excluded.structure_version > kernels.structure_version")
      .bind_all(k.hash, k.hash_version, k.name, k.shapes, k.flops, k.bytes, k.ast, k.structure,
                k.structure_version)
      .run();
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

namespace {
/// The columns read_kernel reads, of the kernels as `k`.
constexpr const char* kKernelFields =
    "k.id, k.hash, k.hash_version, k.name, k.shapes, k.flops, k.bytes, k.ast, k.structure, "
    "k.structure_version";
/// A kernel from the columns kKernelFields, the first at `at`.
Kernel read_kernel(const Statement& st, int at) {
  return Kernel{st.i64(at),
                st.text(at + 1),
                static_cast<int>(st.i64(at + 2)),
                st.text(at + 3),
                st.text(at + 4),
                st.i64(at + 5),
                st.i64(at + 6),
                st.text(at + 7),
                st.text(at + 8),
                static_cast<int>(st.i64(at + 9))};
}
} // namespace

std::optional<Kernel> Database::kernel(int64_t id) {
  Statement st =
      conn_->prepare(std::string("SELECT ") + kKernelFields + " FROM kernels k WHERE k.id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_kernel(st, 0);
}

void Database::set_kernel_structure(int64_t kernel_id, const std::string& structure, int version) {
  conn_->prepare("UPDATE kernels SET structure = ?, structure_version = ? WHERE id = ?")
      .bind_all(structure, static_cast<int64_t>(version), kernel_id)
      .run();
}

namespace {
constexpr const char* kTuningColumns =
    "SELECT id, run_id, kernel_id, workload, threads, settings, actions, status, heuristic_opts, "
    "winner_opts, heuristic_ms, winner_ms, noise, tie, stop_reason, error, iterations, wall_s, "
    "budget_s, restarts, tie_with_heuristic, speedup, speedup_lo, speedup_hi, rounds_disturbed, "
    "round_ms, in_process_speedup, in_process_lo, in_process_hi, fidelity, reference_s, "
    "compiling_s, timing_s FROM tunings";
Tuning read_tuning(const Statement& st) {
  Tuning t;
  t.id = st.i64(0);
  t.run_id = st.i64(1);
  t.kernel_id = st.i64(2);
  t.workload = st.text(3);
  t.threads = static_cast<int>(st.i64(4));
  t.settings = st.text(5);
  t.actions = st.text(6);
  t.status = parse_tuning_status(st.text(7));
  t.heuristic_opts = st.text(8);
  t.winner_opts = st.text(9);
  t.heuristic_ms = st.opt_f64(10);
  t.winner_ms = st.opt_f64(11);
  t.noise = st.f64(12);
  t.tie = st.i64(13) != 0;
  t.stop_reason = st.text(14);
  t.error = st.text(15);
  t.iterations = static_cast<int>(st.i64(16));
  t.wall_s = st.f64(17);
  t.budget_s = st.f64(18);
  t.restarts = static_cast<int>(st.i64(19));
  t.tie_with_heuristic = st.i64(20) != 0;
  if (std::optional<double> x = st.opt_f64(21), lo = st.opt_f64(22), hi = st.opt_f64(23);
      x && lo && hi)
    t.speedup = PairedSpeedup{*x, *lo, *hi};
  t.rounds_disturbed = static_cast<int>(st.i64(24));
  t.round_ms = st.text(25);
  if (std::optional<double> x = st.opt_f64(26), lo = st.opt_f64(27), hi = st.opt_f64(28);
      x && lo && hi)
    t.in_process = PairedSpeedup{*x, *lo, *hi};
  t.fidelity = st.text(29);
  t.reference_s = st.f64(30);
  t.compiling_s = st.f64(31);
  t.timing_s = st.f64(32);
  return t;
}
} // namespace

Tuning Database::open_tuning(int64_t run_id, int64_t kernel_id, int threads,
                             const std::string& workload, const std::string& settings,
                             const std::string& actions, double budget_s) {
  conn_
      ->prepare("INSERT INTO tunings (run_id, kernel_id, workload, threads, settings, actions, "
                "budget_s, status) VALUES (?, ?, ?, ?, ?, ?, ?, 'running') "
                "ON CONFLICT (run_id, kernel_id, threads) DO NOTHING")
      .bind_all(run_id, kernel_id, workload, threads, settings, actions, budget_s)
      .run();
  Statement st = conn_->prepare(std::string(kTuningColumns) +
                                " WHERE run_id = ? AND kernel_id = ? AND threads = ?");
  st.bind_all(run_id, kernel_id, threads);
  internal_assert(st.step());
  return read_tuning(st);
}

void Database::finish_tuning(const Tuning& t) {
  conn_
      ->prepare(
          "UPDATE tunings SET status = ?, heuristic_opts = ?, heuristic_ms = ?, "
          "winner_opts = ?, winner_ms = ?, noise = ?, tie = ?, tie_with_heuristic = ?, "
          "stop_reason = ?, error = ?, iterations = ?, wall_s = ?, restarts = ?, speedup = ?, "
          "speedup_lo = ?, speedup_hi = ?, rounds_disturbed = ?, round_ms = ?, "
          "in_process_speedup = ?, in_process_lo = ?, in_process_hi = ?, fidelity = ?, "
          "reference_s = ?, compiling_s = ?, timing_s = ? WHERE id = ?")
      .bind_all(to_string(t.status), t.heuristic_opts, t.heuristic_ms, t.winner_opts, t.winner_ms,
                t.noise, static_cast<int64_t>(t.tie), static_cast<int64_t>(t.tie_with_heuristic),
                t.stop_reason, t.error, t.iterations, t.wall_s, t.restarts,
                t.speedup ? std::optional(t.speedup->estimate) : std::nullopt,
                t.speedup ? std::optional(t.speedup->lo) : std::nullopt,
                t.speedup ? std::optional(t.speedup->hi) : std::nullopt, t.rounds_disturbed,
                t.round_ms, t.in_process ? std::optional(t.in_process->estimate) : std::nullopt,
                t.in_process ? std::optional(t.in_process->lo) : std::nullopt,
                t.in_process ? std::optional(t.in_process->hi) : std::nullopt, t.fidelity,
                t.reference_s, t.compiling_s, t.timing_s, t.id)
      .run();
}

std::vector<Tuning> Database::tunings(int64_t run_id) {
  Statement st = conn_->prepare(std::string(kTuningColumns) + " WHERE run_id = ? ORDER BY id");
  st.bind(1, run_id);
  std::vector<Tuning> out;
  while (st.step()) out.push_back(read_tuning(st));
  return out;
}

std::optional<Tuning> Database::tuning(int64_t id) {
  Statement st = conn_->prepare(std::string(kTuningColumns) + " WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_tuning(st);
}

std::vector<Tuning> Database::tunings_of_kernel(int64_t kernel_id) {
  Statement st =
      conn_->prepare(std::string(kTuningColumns) + " WHERE kernel_id = ? ORDER BY run_id, id");
  st.bind(1, kernel_id);
  std::vector<Tuning> out;
  while (st.step()) out.push_back(read_tuning(st));
  return out;
}

std::map<int64_t, Database::RunStats> Database::run_stats() {
  Statement st = conn_->prepare("SELECT t.run_id, count(DISTINCT t.id), count(c.id) FROM tunings t "
                                "LEFT JOIN candidates c ON c.tuning_id = t.id GROUP BY t.run_id");
  std::map<int64_t, RunStats> out;
  while (st.step()) out[st.i64(0)] = {static_cast<int>(st.i64(1)), st.i64(2)};
  Statement b = conn_->prepare("SELECT run_id, count(*) FROM benchmarks GROUP BY run_id");
  while (b.step()) out[b.i64(0)].benchmarks = b.i64(1);
  return out;
}

std::map<int64_t, int64_t> Database::tunings_with_workload(const std::string& workload) {
  Statement st =
      conn_->prepare("SELECT run_id, count(*) FROM tunings WHERE workload = ? GROUP BY run_id");
  st.bind(1, workload);
  std::map<int64_t, int64_t> out;
  while (st.step()) out[st.i64(0)] = st.i64(1);
  return out;
}

std::map<int64_t, int64_t> Database::candidate_counts(int64_t run_id) {
  Statement st = conn_->prepare("SELECT t.id, count(c.id) FROM tunings t LEFT JOIN candidates c "
                                "ON c.tuning_id = t.id WHERE t.run_id = ? GROUP BY t.id");
  st.bind(1, run_id);
  std::map<int64_t, int64_t> out;
  while (st.step()) out[st.i64(0)] = st.i64(1);
  return out;
}

std::map<int64_t, std::map<std::string, int64_t>> Database::status_counts(int64_t run_id) {
  Statement st = conn_->prepare("SELECT t.id, c.status, count(*) FROM tunings t JOIN candidates c "
                                "ON c.tuning_id = t.id WHERE t.run_id = ? GROUP BY t.id, c.status");
  st.bind(1, run_id);
  std::map<int64_t, std::map<std::string, int64_t>> out;
  while (st.step()) out[st.i64(0)][st.text(1)] = st.i64(2);
  return out;
}

std::vector<double> Database::samples_of(int64_t tuning_id, const std::string& opts) {
  Statement st = conn_->prepare(
      "SELECT s.ms FROM samples s WHERE s.candidate_id = (SELECT id FROM candidates WHERE "
      "tuning_id = ? AND opts = ? AND status = 'ok' ORDER BY seq LIMIT 1) ORDER BY s.idx");
  st.bind_all(tuning_id, opts);
  std::vector<double> out;
  while (st.step()) out.push_back(st.f64(0));
  return out;
}

// --- candidates ------------------------------------------------------------------------------

namespace {
void insert_candidate(Connection& conn, int64_t tuning_id, const CandidateRow& c) {
  std::optional<double> best, median;
  if (!c.samples_ms.empty()) {
    std::vector<double> s = c.samples_ms;
    std::sort(s.begin(), s.end());
    best = s.front();
    median = s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
  }
  conn.prepare("INSERT INTO candidates (tuning_id, seq, opts, parent, iteration, status, error, "
               "compile_ms, code_hash, code_bytes, max_error, duplicate_of, best_ms, median_ms, "
               "finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
               "ON CONFLICT (tuning_id, seq) DO UPDATE SET opts = excluded.opts, "
               "parent = excluded.parent, iteration = excluded.iteration, "
               "status = excluded.status, error = excluded.error, "
               "compile_ms = excluded.compile_ms, code_hash = excluded.code_hash, "
               "code_bytes = excluded.code_bytes, max_error = excluded.max_error, "
               "duplicate_of = excluded.duplicate_of, best_ms = excluded.best_ms, "
               "median_ms = excluded.median_ms, finished_at = excluded.finished_at")
      .bind_all(tuning_id, c.seq, c.opts, c.parent, c.iteration, c.status, c.error, c.compile_ms,
                c.code_hash, c.code_bytes, c.max_error, c.duplicate_of, best, median, now_utc())
      .run();
  Statement id = conn.prepare("SELECT id FROM candidates WHERE tuning_id = ? AND seq = ?");
  id.bind_all(tuning_id, c.seq);
  internal_assert(id.step());
  int64_t cid = id.i64(0);
  conn.prepare("DELETE FROM samples WHERE candidate_id = ?").bind(1, cid).run();
  Statement ins = conn.prepare("INSERT INTO samples (candidate_id, idx, ms) VALUES (?, ?, ?)");
  for (size_t i = 0; i < c.samples_ms.size(); ++i) {
    ins.bind_all(cid, static_cast<int64_t>(i), c.samples_ms[i]).run();
    ins.reset();
  }
}
} // namespace

void Database::save_candidate(int64_t tuning_id, const CandidateRow& c) {
  Transaction t(*conn_);
  insert_candidate(*conn_, tuning_id, c);
  t.commit();
}

void Database::save_candidates(int64_t tuning_id, const std::vector<CandidateRow>& cs) {
  Transaction t(*conn_);
  for (const CandidateRow& c : cs) insert_candidate(*conn_, tuning_id, c);
  t.commit();
}

std::vector<CandidateRow> Database::candidates(int64_t tuning_id) {
  Statement st = conn_->prepare(
      "SELECT c.seq, c.opts, c.parent, c.iteration, c.status, c.error, c.compile_ms, c.code_hash, "
      "c.code_bytes, c.max_error, c.duplicate_of, "
      "(SELECT group_concat(ms, ' ') FROM (SELECT ms FROM samples s WHERE s.candidate_id = c.id "
      "ORDER BY idx)) FROM candidates c WHERE c.tuning_id = ? ORDER BY c.seq");
  st.bind(1, tuning_id);
  std::vector<CandidateRow> out;
  while (st.step()) {
    CandidateRow c;
    c.seq = static_cast<int>(st.i64(0));
    c.opts = st.text(1);
    c.parent = static_cast<int>(st.i64(2));
    c.iteration = static_cast<int>(st.i64(3));
    c.status = st.text(4);
    c.error = st.text(5);
    c.compile_ms = st.f64(6);
    c.code_hash = st.text(7);
    c.code_bytes = st.i64(8);
    c.max_error = st.f64(9);
    c.duplicate_of = static_cast<int>(st.i64(10));
    std::string samples = st.text(11);
    for (size_t pos = 0; pos < samples.size();) {
      size_t end = samples.find(' ', pos);
      if (end == std::string::npos) end = samples.size();
      c.samples_ms.push_back(std::stod(samples.substr(pos, end - pos)));
      pos = end + 1;
    }
    out.push_back(std::move(c));
  }
  return out;
}

int64_t Database::candidate_count() {
  return conn_->scalar_i64("SELECT count(*) FROM candidates").value_or(0);
}

// --- the cache -------------------------------------------------------------------------------

namespace {
/// The columns read_cache reads, of the cache as `c`.
constexpr const char* kCacheFields =
    "c.id, c.kernel_hash, c.device, c.compiler, c.settings_key, c.threads, c.kernel_name, "
    "c.opts, c.optimized_hash, c.actions, c.ms, c.heuristic_ms, c.source, c.run_id, "
    "c.created_at, c.stale, c.stale_reason";
constexpr int kCacheFieldCount = 17;
std::string select_cache() { return std::string("SELECT ") + kCacheFields + " FROM cache c"; }
CacheEntry read_cache(const Statement& st) {
  CacheEntry e;
  e.id = st.i64(0);
  e.kernel_hash = st.text(1);
  e.device = st.text(2);
  e.compiler = st.text(3);
  e.settings_key = st.text(4);
  e.threads = static_cast<int>(st.i64(5));
  e.kernel_name = st.text(6);
  e.opts = st.text(7);
  e.optimized_hash = st.text(8);
  e.actions = st.text(9);
  e.ms = st.f64(10);
  e.heuristic_ms = st.opt_f64(11);
  e.source = st.text(12);
  if (!st.is_null(13)) e.run_id = st.i64(13);
  e.created_at = st.text(14);
  e.stale = st.i64(15) != 0;
  e.stale_reason = st.text(16);
  return e;
}
} // namespace

std::vector<CacheEntry> Database::cache_lookup(const std::string& kernel_hash,
                                               const std::string& device,
                                               const std::string& compiler, int threads) {
  Statement st =
      conn_->prepare(select_cache() + " WHERE kernel_hash = ? AND device = ? AND compiler = ? AND "
                                      "threads = ? ORDER BY stale, ms, id");
  st.bind_all(kernel_hash, device, compiler, threads);
  std::vector<CacheEntry> out;
  while (st.step()) out.push_back(read_cache(st));
  return out;
}

namespace {
/// cache_put inside the caller's transaction.
bool put_entry(Connection& conn, const CacheEntry& e) {
  Statement old = conn.prepare("SELECT ms, stale FROM cache WHERE kernel_hash = ? AND device = ? "
                               "AND compiler = ? AND settings_key = ? AND threads = ?");
  old.bind_all(e.kernel_hash, e.device, e.compiler, e.settings_key, e.threads);
  if (old.step() && old.i64(1) == 0 && old.f64(0) <= e.ms) return false;
  conn.prepare("INSERT OR REPLACE INTO cache (kernel_hash, device, compiler, settings_key, "
               "threads, kernel_name, opts, optimized_hash, actions, ms, heuristic_ms, source, "
               "run_id, created_at, stale, stale_reason) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '')")
      .bind_all(e.kernel_hash, e.device, e.compiler, e.settings_key, e.threads, e.kernel_name,
                e.opts, e.optimized_hash, e.actions, e.ms, e.heuristic_ms, e.source, e.run_id,
                e.created_at.empty() ? now_utc() : e.created_at)
      .run();
  return true;
}
} // namespace

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
  while (st.step()) out.push_back(read_cache(st));
  return out;
}

std::vector<Database::EntryWithKernel>
Database::cache_by_structure(const std::string& structure, int version, const std::string& device,
                             const std::string& compiler, int threads,
                             const std::string& except_hash) {
  Statement st =
      conn_->prepare(std::string("SELECT ") + kCacheFields + ", " + kKernelFields +
                     " FROM cache c JOIN kernels k ON k.hash = c.kernel_hash WHERE c.stale = 0 AND "
                     "c.device = ? AND c.compiler = ? AND c.threads = ? AND c.kernel_hash <> ? AND "
                     "((k.structure = ? AND k.structure_version = ?) OR k.structure_version <> ?) "
                     "ORDER BY c.id");
  st.bind_all(device, compiler, threads, except_hash, structure, static_cast<int64_t>(version),
              static_cast<int64_t>(version));
  std::vector<EntryWithKernel> out;
  while (st.step()) out.push_back({read_cache(st), read_kernel(st, kCacheFieldCount)});
  return out;
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
  conn_->exec(R"sql(
INSERT INTO devices (fingerprint, cpu_model, isa_flags, cores, llvm_version, beamlab_version,
                     peak_gflops, peak_gbps, created_at)
  SELECT fingerprint, cpu_model, isa_flags, cores, llvm_version, beamlab_version, peak_gflops,
         peak_gbps, created_at FROM src.devices WHERE true
  ON CONFLICT (fingerprint) DO UPDATE SET
    peak_gflops = coalesce(devices.peak_gflops, excluded.peak_gflops),
    peak_gbps = coalesce(devices.peak_gbps, excluded.peak_gbps);
DROP TABLE IF EXISTS temp.new_limits;
CREATE TEMP TABLE new_limits AS
  SELECT m.id AS device_id, s.id AS src_id FROM src.device_limits l
  JOIN src.devices s ON s.id = l.device_id JOIN main.devices m ON m.fingerprint = s.fingerprint
  WHERE NOT EXISTS (SELECT 1 FROM main.device_limits ml WHERE ml.device_id = m.id);
INSERT INTO device_limits (device_id, threads, vector_bytes, fma_f32_gflops, fma_f64_gflops,
                           measured_at)
  SELECT n.device_id, l.threads, l.vector_bytes, l.fma_f32_gflops, l.fma_f64_gflops,
         l.measured_at FROM temp.new_limits n JOIN src.device_limits l ON l.device_id = n.src_id;
INSERT INTO device_memory (device_id, idx, name, capacity_bytes, working_set_bytes, read_gbps,
                           triad_gbps)
  SELECT n.device_id, dm.idx, dm.name, dm.capacity_bytes, dm.working_set_bytes, dm.read_gbps,
         dm.triad_gbps FROM temp.new_limits n JOIN src.device_memory dm ON dm.device_id = n.src_id;
INSERT INTO kernels (hash, hash_version, name, shapes, flops, bytes, ast, structure,
                     structure_version)
  SELECT hash, hash_version, name, shapes, flops, bytes, ast, structure, structure_version
  FROM src.kernels WHERE true
  ON CONFLICT (hash) DO UPDATE SET structure = excluded.structure,
    structure_version = excluded.structure_version
  WHERE excluded.structure_version > kernels.structure_version;
DROP TABLE IF EXISTS temp.run_map;
CREATE TEMP TABLE run_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
)sql");
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
      "SELECT r.id, d.fingerprint, r.kind, r.label, r.command, r.settings, r.git_revision, "
      "r.host, r.pid, r.started_at, r.ended_at, r.status, r.uid FROM src.runs r "
      "JOIN src.devices d ON d.id = r.device_id WHERE NOT EXISTS (SELECT 1 FROM main.runs m "
      "WHERE m.uid = r.uid) ORDER BY r.id");
  while (runs.step()) {
    conn_
        ->prepare("INSERT INTO runs (device_id, kind, label, command, settings, git_revision, "
                  "host, pid, started_at, ended_at, status, uid) VALUES ((SELECT id FROM "
                  "devices WHERE fingerprint = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .bind_all(runs.text(1), runs.text(2), runs.text(3), runs.text(4), runs.text(5),
                  runs.text(6), runs.text(7), runs.i64(8), runs.text(9),
                  runs.is_null(10) ? std::optional<std::string>() : runs.text(10), runs.text(11),
                  runs.text(12))
        .run();
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
  conn_->exec(
      std::string("INSERT INTO tunings (run_id, kernel_id, workload, threads, settings, "
                  "actions, budget_s, status, heuristic_opts, heuristic_ms, winner_opts, "
                  "winner_ms, noise, tie, tie_with_heuristic, speedup, speedup_lo, speedup_hi, "
                  "rounds_disturbed, round_ms, in_process_speedup, in_process_lo, "
                  "in_process_hi, fidelity, iterations, stop_reason, "
                  "wall_s, restarts, error, reference_s, compiling_s, timing_s) SELECT m.new, "
                  "k.id, t.workload, t.threads, "
                  "t.settings, t.actions, t.budget_s, t.status, t.heuristic_opts, "
                  "t.heuristic_ms, t.winner_opts, t.winner_ms, t.noise, t.tie, "
                  "t.tie_with_heuristic, t.speedup, t.speedup_lo, t.speedup_hi, "
                  "t.rounds_disturbed, t.round_ms, t.in_process_speedup, t.in_process_lo, "
                  "t.in_process_hi, t.fidelity, t.iterations, t.stop_reason, t.wall_s, "
                  "t.restarts, t.error, t.reference_s, t.compiling_s, t.timing_s") +
      kTuningJoin);
  st.tunings = conn_->changes();
  conn_->exec(std::string("INSERT INTO candidates (tuning_id, seq, opts, parent, iteration, "
                          "status, error, compile_ms, code_hash, code_bytes, max_error, "
                          "duplicate_of, best_ms, median_ms, finished_at) SELECT nt.id, c.seq, "
                          "c.opts, c.parent, c.iteration, c.status, c.error, c.compile_ms, "
                          "c.code_hash, c.code_bytes, c.max_error, c.duplicate_of, c.best_ms, "
                          "c.median_ms, c.finished_at FROM src.candidates c JOIN (SELECT t.id "
                          "AS old_tuning, nt.id") +
              kTuningJoin + kNewTuning + ") tm ON tm.old_tuning = c.tuning_id" +
              " JOIN main.tunings nt ON nt.id = tm.id");
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
