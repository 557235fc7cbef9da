// The SQLite backend of sql::Database: one database file behind one serialized write connection
// and a pool of read connections, with per-connection prepared-statement caches and transactions
// that never leave partial writes.
//   auto db = Database::Open("data/switchboard.db");
//   Result<int> n = (*db)->Read([](sql::Connection& c) -> Result<int> { ... });
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "storage/sql/database.hpp"
#include "util/error.hpp"

struct sqlite3;

namespace sb::storage::sqlite {

class CachedStatement;

// One SQLite connection and its statement cache. Used by one thread at a time (the Database
// hands it out under its mutex or pool), so it has no locking of its own.
class Connection final : public sql::Connection {
 public:
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens `path` (creating it when `create`) and applies the pragmas every connection needs.
  static util::Result<std::unique_ptr<Connection>> Open(const std::string& path, bool create);

  util::Result<sql::Statement> Prepare(std::string_view sql) override;
  util::Result<void> Exec(const std::string& sql) override;
  int Changes() const override;
  sql::Dialect dialect() const override { return sql::Dialect::kSqlite; }

  // Finalizes cached statements and closes the handle; idempotent.
  void Close();

  sqlite3* handle() const { return db_; }

 private:
  explicit Connection(sqlite3* db);  // in the .cpp, where CachedStatement is complete

  // Transparent hashing so a lookup with a string_view does not allocate on the hot path.
  struct SqlHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  sqlite3* db_;
  std::unordered_map<std::string, std::unique_ptr<CachedStatement>, SqlHash, std::equal_to<>>
      cache_;
};

// util::Error for a failed SQLite call: kInternal, the SQLite message and the start of the SQL
// text. Bound values are never included (they may be secrets).
util::Error SqliteError(sqlite3* db, int rc, std::string_view sql);

// Thread-safe. Writes are serialized on one connection; reads use a pool and run concurrently with
// each other and with a write (WAL), each seeing one consistent snapshot.
class Database final : public sql::Database {
 public:
  static constexpr int kDefaultReadConnections = 4;

  // Opens or creates the file (a real file: WAL needs one). kInternal when SQLite fails.
  static util::Result<std::unique_ptr<Database>> Open(
      const std::string& path, int read_connections = kDefaultReadConnections);
  ~Database() override;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Waits for running transactions, checkpoints the WAL into the main file and closes every
  // connection. Later calls fail with kUnavailable. Idempotent.
  void Close() override;
  sql::Dialect dialect() const override { return sql::Dialect::kSqlite; }

  const std::string& path() const { return path_; }

 protected:
  // Reads: BEGIN on a pooled connection. Writes (exclusive ones too, as every write is): BEGIN
  // IMMEDIATE on the write connection.
  util::Result<void> Transaction(Mode mode, const Body& body) override;

 private:
  explicit Database(std::string path) : path_(std::move(path)) {}

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
