// The SQLite wrapper; see sqlite.hpp.
#include "db/sqlite.hpp"

#include <map>
#include <mutex>
#include <sys/stat.h>

#include <sqlite3.h>

#include <fmt/format.h>

#include "engine/support/error.hpp"

namespace beamlab::db {
namespace {

/// Long enough for another process's transaction (a candidate, a merge) to finish.
constexpr int kBusyTimeoutMs = 30000;

/// `path` as an SQLite URI with `query` ("file:" and the path, '%', '?' and '#' escaped).
std::string uri_of(const std::string& path, const char* query) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#')
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else
      uri += c;
  }
  return uri + "?" + query;
}

} // namespace

namespace {

// The files this process's connections have open, by (device, inode), with their count.
std::mutex g_open_mutex;
std::map<std::pair<uint64_t, uint64_t>, int> g_open;

std::pair<uint64_t, uint64_t> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {0, 0};
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

} // namespace

bool unless_open_here(const std::string& path, const std::function<void()>& check) {
  std::lock_guard lock(g_open_mutex);
  auto id = file_id(path);
  if (id != std::pair<uint64_t, uint64_t>{0, 0} && g_open.count(id)) return false;
  check();
  return true;
}

Connection::Connection(std::string path, bool read_only, bool immutable)
    : path_(std::move(path)), read_only_(read_only || immutable) {
  int flags = read_only_ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  std::string name = immutable ? uri_of(path_, "immutable=1") : path_;
  if (immutable) flags |= SQLITE_OPEN_URI;
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    user_error << "cannot open the database '" << path_ << "': " << why
               << (read_only ? " (it must exist to be read)" : "")
               << "; check the path and its permissions, or pass another --db";
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  // Registered before its first statement takes a lock: see unless_open_here.
  std::lock_guard lock(g_open_mutex);
  file_id_ = file_id(path_);
  ++g_open[file_id_];
}

Connection::~Connection() {
  sqlite3_close_v2(db_);
  std::lock_guard lock(g_open_mutex);
  if (auto it = g_open.find(file_id_); it != g_open.end() && --it->second == 0) g_open.erase(it);
}

void Connection::fail(int rc, std::string_view what) const {
  const char* msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB:
    user_error << "the database '" << path_ << "' is damaged (" << msg << ", while " << what
               << "); beamlab leaves it untouched: run 'beamlab cache verify --db " << path_
               << "', restore a copy, or pass another --db";
    break;
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    user_error << "the database '" << path_ << "' stayed locked by another process for "
               << kBusyTimeoutMs / 1000 << " s (while " << what << "); try again when it is done";
    break;
  case SQLITE_READONLY:
    user_error << "the database '" << path_ << "' is read-only here (while " << what
               << "); check its permissions or pass another --db";
    break;
  case SQLITE_FULL:
  case SQLITE_IOERR:
    runtime_error_report << "the database '" << path_ << "': " << msg << " (while " << what
                         << "); check the disk";
    break;
  default:
    runtime_error_report << "the database '" << path_ << "': " << msg << " (while " << what << ")";
  }
  internal_error << "unreachable";
  __builtin_unreachable();
}

void Connection::exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) fail(rc, "running " + s.substr(0, 60));
}

std::optional<int64_t> Connection::scalar_i64(std::string_view sql) {
  Statement st(*this, sql);
  if (!st.step() || st.is_null(0)) return std::nullopt;
  return st.i64(0);
}

int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Connection::changes() const { return sqlite3_changes(db_); }

Statement::Statement(Connection& conn, std::string_view sql) : conn_(conn) {
  int rc =
      sqlite3_prepare_v2(conn.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) conn.fail(rc, "preparing " + std::string(sql.substr(0, 60)));
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int i, int64_t v) {
  if (int rc = sqlite3_bind_int64(stmt_, i, v); rc != SQLITE_OK) conn_.fail(rc, "binding");
  return *this;
}
Statement& Statement::bind(int i, double v) {
  if (int rc = sqlite3_bind_double(stmt_, i, v); rc != SQLITE_OK) conn_.fail(rc, "binding");
  return *this;
}
Statement& Statement::bind(int i, std::string_view v) {
  int rc = sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) conn_.fail(rc, "binding");
  return *this;
}
Statement& Statement::bind(int i, std::nullopt_t) {
  if (int rc = sqlite3_bind_null(stmt_, i); rc != SQLITE_OK) conn_.fail(rc, "binding");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  conn_.fail(rc, std::string("executing ") + std::string(sqlite3_sql(stmt_)).substr(0, 60));
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Statement::i64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::f64(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Statement::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
           : std::string();
}
std::optional<double> Statement::opt_f64(int col) const {
  return is_null(col) ? std::nullopt : std::optional<double>(f64(col));
}

Transaction::Transaction(Connection& conn) : conn_(conn) { conn_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(conn_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  conn_.exec("COMMIT");
  done_ = true;
}

} // namespace beamlab::db
