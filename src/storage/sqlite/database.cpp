#include "storage/sqlite/database.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "util/private_files.hpp"

namespace sb::storage::sqlite {

namespace {

constexpr int kBusyTimeoutMs = 5000;
// Enough SQL to find the statement in the code, short enough for a log line.
constexpr std::size_t kSqlInMessage = 80;

bool IsBlank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char ch) { return std::isspace(ch) || ch == ';'; });
}

// Runs a parameterless cached statement (BEGIN, COMMIT, ...): cheaper than sqlite3_exec, which
// parses the text each time, and these run on every request.
util::Result<void> RunCached(sql::Connection& c, std::string_view sql) {
  auto stmt = c.Prepare(sql);
  if (!stmt) return tl::make_unexpected(stmt.error());
  return stmt->Run();
}

// Leaves `c` outside any transaction. Some errors (SQLITE_FULL, ...) already rolled back, and a
// second ROLLBACK would fail, hence the autocommit check.
void RollbackIfActive(Connection& c) {
  if (c.handle() != nullptr && sqlite3_get_autocommit(c.handle()) == 0) {
    sqlite3_exec(c.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

}  // namespace

util::Error SqliteError(sqlite3* db, int rc, std::string_view sql) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string shown(sql.substr(0, kSqlInMessage));
  std::replace(shown.begin(), shown.end(), '\n', ' ');
  if (sql.size() > kSqlInMessage) shown += "...";
  return util::Error{util::ErrorCode::kInternal,
                     fmt::format("database error {}: {} (in \"{}\")", rc, detail, shown)};
}

// A prepared statement: a cache slot of its connection, or a one-off copy (prepared while the
// cached one is in use) that frees itself on release.
class CachedStatement final : public sql::StatementBackend {
 public:
  CachedStatement(sqlite3_stmt* stmt, bool one_off) : stmt_(stmt), one_off_(one_off) {}
  ~CachedStatement() { sqlite3_finalize(stmt_); }
  CachedStatement(const CachedStatement&) = delete;
  CachedStatement& operator=(const CachedStatement&) = delete;

  bool in_use() const { return in_use_; }
  sql::Statement Use() {
    in_use_ = true;
    last_error_ = 0;
    bind_error_ = 0;
    return sql::Statement(this);
  }

  void BindInt64(int index, std::int64_t value) override {
    Check(sqlite3_bind_int64(stmt_, index, value));
  }
  void BindDouble(int index, double value) override {
    Check(sqlite3_bind_double(stmt_, index, value));
  }
  void BindText(int index, std::string_view value) override {
    // A non-null pointer even for an empty view, so '' is stored as text rather than NULL.
    const char* data = value.data() != nullptr ? value.data() : "";
    Check(sqlite3_bind_text64(stmt_, index, data, value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void BindBlob(int index, std::span<const std::byte> bytes) override {
    static const std::byte kEmpty{};
    const void* data = bytes.empty() ? &kEmpty : bytes.data();
    Check(sqlite3_bind_blob64(stmt_, index, data, bytes.size(), SQLITE_TRANSIENT));
  }
  void BindNull(int index) override { Check(sqlite3_bind_null(stmt_, index)); }

  util::Result<bool> Step() override {
    if (bind_error_ != 0) {
      last_error_ = bind_error_;
      return tl::make_unexpected(
          SqliteError(sqlite3_db_handle(stmt_), bind_error_, sqlite3_sql(stmt_)));
    }
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    last_error_ = rc;
    return tl::make_unexpected(SqliteError(sqlite3_db_handle(stmt_), rc, sqlite3_sql(stmt_)));
  }

  bool IsNull(int column) const override {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }
  std::int64_t Int64(int column) const override { return sqlite3_column_int64(stmt_, column); }
  double Double(int column) const override { return sqlite3_column_double(stmt_, column); }
  std::string Text(int column) const override {
    const auto* text = sqlite3_column_text(stmt_, column);
    if (text == nullptr) return {};
    const int size = sqlite3_column_bytes(stmt_, column);
    return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
  }
  std::span<const std::byte> Blob(int column) const override {
    const void* data = sqlite3_column_blob(stmt_, column);
    if (data == nullptr) return {};
    const int size = sqlite3_column_bytes(stmt_, column);
    return {static_cast<const std::byte*>(data), static_cast<std::size_t>(size)};
  }

  sql::Failure last_failure() const override {
    if (last_error_ == 0) return sql::Failure::kNone;
    if (last_error_ == SQLITE_CONSTRAINT_UNIQUE || last_error_ == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return sql::Failure::kUnique;
    }
    if (last_error_ == SQLITE_CONSTRAINT_FOREIGNKEY) return sql::Failure::kForeignKey;
    return sql::Failure::kOther;
  }

  void Release() override {
    if (one_off_) {
      delete this;
      return;
    }
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    in_use_ = false;
  }

 private:
  // A bind failure (out of range, out of memory) is reported by the next Step.
  void Check(int rc) {
    if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  }

  sqlite3_stmt* stmt_;
  const bool one_off_;
  bool in_use_ = false;
  int last_error_ = 0;
  int bind_error_ = 0;
};

Connection::Connection(sqlite3* db) : db_(db) {}

Connection::~Connection() { Close(); }

util::Result<std::unique_ptr<Connection>> Connection::Open(const std::string& path, bool create) {
  // NOMUTEX: the Database never lets two threads use one connection at once, so SQLite's own
  // per-connection mutex would be pure overhead.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (create) flags |= SQLITE_OPEN_CREATE;
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    util::Error error{util::ErrorCode::kInternal,
                      fmt::format("cannot open database {}: {}", path,
                                  db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc))};
    sqlite3_close_v2(db);
    return tl::make_unexpected(std::move(error));
  }
  std::unique_ptr<Connection> c(new Connection(db));
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // foreign_keys is per connection and off by default; synchronous=NORMAL is durable across
  // process crashes in WAL mode and only risks the last commits on power loss.
  auto pragmas = c->Exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;");
  if (!pragmas) return tl::make_unexpected(pragmas.error());
  return c;
}

util::Result<sql::Statement> Connection::Prepare(std::string_view sql) {
  auto it = cache_.find(sql);
  const bool duplicate = it != cache_.end() && it->second->in_use();
  if (it != cache_.end() && !duplicate) return it->second->Use();
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    duplicate ? 0 : SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
  if (rc != SQLITE_OK) return tl::make_unexpected(SqliteError(db_, rc, sql));
  const std::string_view rest = tail != nullptr
                                    ? sql.substr(static_cast<std::size_t>(tail - sql.data()))
                                    : std::string_view();
  if (stmt == nullptr || !IsBlank(rest)) {
    sqlite3_finalize(stmt);
    return util::Fail(util::ErrorCode::kInternal,
                      fmt::format("Prepare needs exactly one SQL statement, got \"{}\"",
                                  sql.substr(0, kSqlInMessage)));
  }
  if (duplicate) return (new CachedStatement(stmt, /*one_off=*/true))->Use();
  auto [slot, inserted] =
      cache_.emplace(std::string(sql), std::make_unique<CachedStatement>(stmt, false));
  (void)inserted;
  return slot->second->Use();
}

util::Result<void> Connection::Exec(const std::string& sql) {
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return tl::make_unexpected(SqliteError(db_, rc, sql));
  return util::Ok();
}

int Connection::Changes() const { return sqlite3_changes(db_); }

void Connection::Close() {
  if (db_ == nullptr) return;
  cache_.clear();
  sqlite3_close_v2(db_);
  db_ = nullptr;
}

util::Result<std::unique_ptr<Database>> Database::Open(const std::string& path,
                                                       int read_connections) {
  if (sqlite3_threadsafe() == 0) {
    return util::Fail(util::ErrorCode::kInternal, "SQLite was built without thread support");
  }
  if (path != ":memory:" && !path.empty() && path.rfind("file:", 0) != 0) {
    // SQLite creates files 0644, but gives the -wal and -shm files the mode of the database
    // file: a database created 0600 keeps all three private. Files of older versions are
    // narrowed.
    if (auto r = util::CreatePrivateFile(path); !r) return tl::make_unexpected(r.error());
    for (const char* suffix : {"-wal", "-shm"}) {
      std::error_code ec;
      const std::filesystem::path side = path + suffix;
      if (!std::filesystem::exists(std::filesystem::symlink_status(side, ec))) continue;
      if (auto r = util::CreatePrivateFile(side); !r) return tl::make_unexpected(r.error());
    }
  }
  std::unique_ptr<Database> db(new Database(path));
  auto writer = Connection::Open(path, /*create=*/true);
  if (!writer) return tl::make_unexpected(writer.error());
  db->writer_ = std::move(*writer);

  {
    // journal_mode answers with the mode in force; anything but "wal" (an in-memory database, a
    // file system without shared memory) would make readers block the writer.
    auto mode = db->writer_->Prepare("PRAGMA journal_mode=WAL");
    if (!mode) return tl::make_unexpected(mode.error());
    auto row = mode->Step();
    if (!row) return tl::make_unexpected(row.error());
    const std::string got = *row ? mode->Text(0) : std::string();
    if (got != "wal") {
      return util::Fail(util::ErrorCode::kInternal,
                        fmt::format("cannot enable WAL on {} (journal_mode is '{}')", path, got));
    }
  }

  for (int i = 0; i < std::max(1, read_connections); ++i) {
    auto reader = Connection::Open(path, /*create=*/false);
    if (!reader) return tl::make_unexpected(reader.error());
    // A read connection that writes would bypass the write mutex; make that an error.
    auto query_only = (*reader)->Exec("PRAGMA query_only=ON");
    if (!query_only) return tl::make_unexpected(query_only.error());
    db->idle_readers_.push_back(reader->get());
    db->readers_.push_back(std::move(*reader));
  }
  return db;
}

Database::~Database() { Close(); }

void Database::Close() {
  {
    std::unique_lock lock(pool_mutex_);
    closed_ = true;
    pool_cv_.notify_all();
    pool_cv_.wait(lock, [&] { return idle_readers_.size() == readers_.size(); });
    for (auto& reader : readers_) reader->Close();
    idle_readers_.clear();
    readers_.clear();
  }
  std::lock_guard lock(write_mutex_);
  if (!writer_) return;
  // With every reader gone, TRUNCATE folds the whole WAL into the main file and empties it, so
  // the file is self-contained for backups.
  sqlite3_exec(writer_->handle(), "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  writer_->Close();
  writer_.reset();
}

util::Result<void> Database::Transaction(Mode mode, const Body& body) {
  return mode == Mode::kRead ? ReadTransaction(body) : WriteTransaction(body);
}

util::Result<void> Database::WriteTransaction(const Body& body) {
  std::lock_guard lock(write_mutex_);
  if (!writer_) return util::Fail(util::ErrorCode::kUnavailable, "database is closed");
  Connection& c = *writer_;
  // IMMEDIATE takes the write lock up front, so a read-then-write body cannot fail half way with
  // SQLITE_BUSY when another process holds the file.
  if (auto begin = RunCached(c, "BEGIN IMMEDIATE"); !begin) return begin;
  util::Result<void> result;
  try {
    result = body(c);
  } catch (...) {
    RollbackIfActive(c);
    throw;
  }
  if (result) result = RunCached(c, "COMMIT");
  if (!result) RollbackIfActive(c);
  return result;
}

util::Result<void> Database::ReadTransaction(const Body& body) {
  Connection* c = nullptr;
  {
    std::unique_lock lock(pool_mutex_);
    pool_cv_.wait(lock, [&] { return closed_ || !idle_readers_.empty(); });
    if (closed_) return util::Fail(util::ErrorCode::kUnavailable, "database is closed");
    c = idle_readers_.back();
    idle_readers_.pop_back();
  }
  struct ReturnToPool {
    Database* db;
    Connection* c;
    ~ReturnToPool() {
      std::lock_guard lock(db->pool_mutex_);
      db->idle_readers_.push_back(c);
      db->pool_cv_.notify_all();
    }
  } give_back{this, c};

  // One read transaction so a body with several queries (a count and a page) sees one snapshot.
  if (auto begin = RunCached(*c, "BEGIN"); !begin) return begin;
  util::Result<void> result;
  try {
    result = body(*c);
  } catch (...) {
    RollbackIfActive(*c);
    throw;
  }
  if (result) result = RunCached(*c, "COMMIT");
  if (!result) RollbackIfActive(*c);
  return result;
}

}  // namespace sb::storage::sqlite
