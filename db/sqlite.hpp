// A thin RAII layer over the SQLite C API: a connection, prepared statements, transactions.
//
// Every failure names the database file and what was being done, and says how to recover when
// the file itself is the problem (corrupt, not a database, locked). sqlite3.h is included only
// by db/*.cpp; nothing above the db layer sees it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace beamlab::db {

class Connection;

/// A prepared statement. Binds are 1-based, columns 0-based, as in SQLite.
class Statement {
public:
  Statement(Connection& conn, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, std::nullopt_t);
  template <class T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind(i, std::nullopt);
  }
  /// Binds every argument in order from parameter 1.
  template <class... Ts>
  Statement& bind_all(const Ts&... vs) {
    int i = 0;
    (bind(++i, vs), ...);
    return *this;
  }

  /// Advances: true when a row is available.
  bool step();
  /// Steps to completion (a statement without rows).
  void run();
  void reset();

  bool is_null(int col) const;
  int64_t i64(int col) const;
  double f64(int col) const;
  std::string text(int col) const;
  std::optional<double> opt_f64(int col) const;

private:
  Connection& conn_;
  sqlite3_stmt* stmt_ = nullptr;
};

/// One open database file.
class Connection {
public:
  /// Opens `path` (created when absent unless read_only). Throws a UserError naming the file.
  /// `immutable`: read it as a file nothing changes (no locks, no WAL index: a read-only
  /// directory, where SQLite could not create them).
  Connection(std::string path, bool read_only, bool immutable = false);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs SQL without results (several statements allowed).
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql) { return Statement(*this, sql); }
  /// The single value of a one-row, one-column query (null when there is no row).
  std::optional<int64_t> scalar_i64(std::string_view sql);

  int64_t last_insert_rowid() const;
  int changes() const;
  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }

  /// Throws for SQLite result `rc` while doing `what`, naming the file.
  [[noreturn]] void fail(int rc, std::string_view what) const;
  sqlite3* handle() const { return db_; }

private:
  std::string path_;
  bool read_only_ = false;
  sqlite3* db_ = nullptr;
  std::pair<uint64_t, uint64_t> file_id_{0, 0}; ///< (device, inode) while registered open
};

/// Runs `check`, which may open and close the database file at `path` plainly (an
/// std::ifstream), only when no Connection of this process has that file open; returns whether
/// it ran. Closing any descriptor of a file drops every POSIX lock the process holds on it, and
/// SQLite's connections keep theirs there: a plain read beside the GUI's long-lived reader
/// dropped its lock, a writer process then deleted the write-ahead log's index under it, and
/// every read after that failed as "database disk image is malformed".
bool unless_open_here(const std::string& path, const std::function<void()>& check);

/// BEGIN IMMEDIATE ... COMMIT: takes the write lock at once (so a busy writer waits its turn
/// instead of failing on upgrade); rolled back unless commit() was called.
class Transaction {
public:
  explicit Transaction(Connection& conn);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

private:
  Connection& conn_;
  bool done_ = false;
};

} // namespace beamlab::db
