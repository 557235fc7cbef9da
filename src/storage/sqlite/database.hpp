// A SQLite database file behind one serialized write connection and a pool of read connections,
// with per-connection prepared-statement caches and transactions that never leave partial writes.
//   auto db = Database::Open("data/switchboard.db");
//   Result<int> n = (*db)->Read([](Connection& c) -> Result<int> { ... });
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/error.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace sb::storage::sqlite {

class Connection;

// One use of a prepared statement: bind, step, read columns. Bind indexes start at 1, column
// indexes at 0. On destruction the statement is reset and handed back to its connection's cache,
// so a Statement must not outlive the Connection (or transaction) it came from.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, std::int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<std::int64_t>(value)); }
  Statement& Bind(int index, bool value) { return Bind(index, static_cast<std::int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view value);  // copied by SQLite
  Statement& Bind(int index, const std::string& value) {
    return Bind(index, std::string_view(value));
  }
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& BindNull(int index);
  // Raw bytes (vectors), copied by SQLite; an empty span stores an empty blob, not NULL.
  Statement& BindBlob(int index, std::span<const std::byte> bytes);
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value ? Bind(index, *value) : BindNull(index);
  }

  // True when a row is available, false when done.
  util::Result<bool> Step();
  // Steps until done, for statements that return no rows.
  util::Result<void> Run();

  bool IsNull(int column) const;
  std::int64_t Int64(int column) const;
  int Int(int column) const { return static_cast<int>(Int64(column)); }
  double Double(int column) const;
  std::string Text(int column) const;
  // A BLOB column's bytes, valid until the next Step or the Statement's end.
  std::span<const std::byte> Blob(int column) const;

  // The extended result code of the last failed Step/Run (0 if none): lets a repository turn a
  // constraint it did not pre-check into the code its contract promises.
  int last_error() const { return last_error_; }
  bool FailedOnUnique() const;  // UNIQUE or PRIMARY KEY
  bool FailedOnForeignKey() const;

 private:
  friend class Connection;
  Statement(sqlite3_stmt* stmt, bool* in_use) : stmt_(stmt), in_use_(in_use) {}

  sqlite3_stmt* stmt_;
  // The cache slot's flag, cleared on destruction; null for a one-off copy, finalized instead.
  bool* in_use_;
  int last_error_ = 0;
  // A bind failure (out of range, out of memory) is reported by the next Step, so call sites can
  // chain binds without checking each one.
  int bind_error_ = 0;
};

// One SQLite connection and its statement cache. Used by one thread at a time (the Database
// hands it out under its mutex or pool), so it has no locking of its own.
class Connection {
 public:
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens `path` (creating it when `create`) and applies the pragmas every connection needs.
  static util::Result<std::unique_ptr<Connection>> Open(const std::string& path, bool create);

  // A statement from the cache, prepared on first use. The same SQL may be prepared again while
  // an earlier Statement for it is still alive (it then gets a one-off copy).
  util::Result<Statement> Prepare(std::string_view sql);
  // Runs one or more statements with no parameters and no caching (DDL, pragmas, BEGIN...).
  util::Result<void> Exec(const std::string& sql);

  std::int64_t LastInsertRowId() const;
  // Rows changed by the last INSERT/UPDATE/DELETE.
  int Changes() const;

  // Finalizes cached statements and closes the handle; idempotent.
  void Close();

  sqlite3* handle() const { return db_; }

 private:
  explicit Connection(sqlite3* db) : db_(db) {}

  struct CachedStatement {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  // Transparent hashing so a lookup with a string_view does not allocate on the hot path.
  struct SqlHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  sqlite3* db_;
  // Node-based, so a Statement may keep a pointer to its slot's flag across rehashing.
  std::unordered_map<std::string, CachedStatement, SqlHash, std::equal_to<>> cache_;
};

// util::Error for a failed SQLite call: kInternal, the SQLite message and the start of the SQL
// text. Bound values are never included (they may be secrets).
util::Error SqliteError(sqlite3* db, int rc, std::string_view sql);

// Thread-safe. Writes are serialized on one connection; reads use a pool and run concurrently with
// each other and with a write (WAL), each seeing one consistent snapshot.
class Database {
 public:
  static constexpr int kDefaultReadConnections = 4;

  // Opens or creates the file (a real file: WAL needs one). kInternal when SQLite fails.
  static util::Result<std::unique_ptr<Database>> Open(
      const std::string& path, int read_connections = kDefaultReadConnections);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs `fn(Connection&) -> Result<T>` inside a read transaction on a pooled connection.
  // kUnavailable once closed.
  template <typename Fn>
  auto Read(Fn&& fn) -> decltype(fn(std::declval<Connection&>())) {
    return Run(/*write=*/false, std::forward<Fn>(fn));
  }

  // Runs `fn(Connection&) -> Result<T>` inside BEGIN IMMEDIATE ... COMMIT on the write connection.
  // An error result or an exception rolls everything back (the exception is then rethrown).
  // kUnavailable once closed.
  template <typename Fn>
  auto Write(Fn&& fn) -> decltype(fn(std::declval<Connection&>())) {
    return Run(/*write=*/true, std::forward<Fn>(fn));
  }

  // Waits for running transactions, checkpoints the WAL into the main file and closes every
  // connection. Later calls fail with kUnavailable. Idempotent.
  void Close();

  const std::string& path() const { return path_; }

 private:
  using Body = std::function<util::Result<void>(Connection&)>;

  explicit Database(std::string path) : path_(std::move(path)) {}

  template <typename Fn>
  auto Run(bool write, Fn&& fn) -> decltype(fn(std::declval<Connection&>())) {
    using R = decltype(fn(std::declval<Connection&>()));
    std::optional<R> out;
    util::Result<void> status = Transaction(write, [&](Connection& c) -> util::Result<void> {
      out.emplace(fn(c));
      if (!*out) return tl::make_unexpected(out->error());
      return util::Ok();
    });
    if (!status) return tl::make_unexpected(status.error());
    return std::move(*out);
  }

  util::Result<void> Transaction(bool write, const Body& body);
  util::Result<void> WriteTransaction(const Body& body);
  util::Result<void> ReadTransaction(const Body& body);

  const std::string path_;

  std::mutex write_mutex_;
  std::unique_ptr<Connection> writer_;  // guarded by write_mutex_; null once closed

  std::mutex pool_mutex_;
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<Connection>> readers_;  // guarded by pool_mutex_: all of them
  std::vector<Connection*> idle_readers_;             // guarded by pool_mutex_
  bool closed_ = false;                               // guarded by pool_mutex_
};

}  // namespace sb::storage::sqlite
