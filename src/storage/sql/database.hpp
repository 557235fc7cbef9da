// The SQL the repositories speak, whatever the backend: a Database runs read and write
// transactions, each on a Connection that prepares Statements. SQLite (storage/sqlite) and
// PostgreSQL (storage/postgres) implement it; the repositories (storage/sql) use only this.
//   Result<int> n = db.Read([](Connection& c) -> Result<int> {
//     auto stmt = c.Prepare("SELECT count(*) FROM bots WHERE enable = ?");
//     ...
//   });
// SQL is written once for both: `?` (or `?N`) placeholders, `ON CONFLICT ... DO ...`,
// `RETURNING`, standard functions. Where the dialects truly differ (full-text search, a few
// scalar functions) a repository asks `Connection::dialect()`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "util/error.hpp"

namespace sb::storage::sql {

enum class Dialect { kSqlite, kPostgres };

// Why the last Step or Run of a statement failed, when the repository can do something about it.
enum class Failure { kNone, kUnique, kForeignKey, kOther };

// A backend's prepared statement in use. Statement is its only user; see Statement for the
// contract of each call.
class StatementBackend {
 public:
  virtual void BindInt64(int index, std::int64_t value) = 0;
  virtual void BindDouble(int index, double value) = 0;
  virtual void BindText(int index, std::string_view value) = 0;
  virtual void BindBlob(int index, std::span<const std::byte> bytes) = 0;
  virtual void BindNull(int index) = 0;
  virtual util::Result<bool> Step() = 0;
  virtual bool IsNull(int column) const = 0;
  virtual std::int64_t Int64(int column) const = 0;
  virtual double Double(int column) const = 0;
  virtual std::string Text(int column) const = 0;
  virtual std::span<const std::byte> Blob(int column) const = 0;
  virtual Failure last_failure() const = 0;
  // Clears bindings and results and hands the statement back to its connection (or frees a
  // one-off copy). The backend must not be used afterwards.
  virtual void Release() = 0;

 protected:
  ~StatementBackend() = default;
};

// One use of a prepared statement: bind, step, read columns. Bind indexes start at 1, column
// indexes at 0. A Statement must not outlive the Connection (or transaction) it came from.
// Bind failures are reported by the next Step, so call sites can chain binds unchecked.
class Statement {
 public:
  explicit Statement(StatementBackend* backend) : backend_(backend) {}
  Statement(Statement&& other) noexcept : backend_(std::exchange(other.backend_, nullptr)) {}
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() {
    if (backend_ != nullptr) backend_->Release();
  }

  Statement& Bind(int index, std::int64_t value) {
    backend_->BindInt64(index, value);
    return *this;
  }
  Statement& Bind(int index, int value) { return Bind(index, static_cast<std::int64_t>(value)); }
  Statement& Bind(int index, bool value) { return Bind(index, static_cast<std::int64_t>(value)); }
  Statement& Bind(int index, double value) {
    backend_->BindDouble(index, value);
    return *this;
  }
  // Copied by the backend; an empty view is stored as '' (never NULL).
  Statement& Bind(int index, std::string_view value) {
    backend_->BindText(index, value);
    return *this;
  }
  Statement& Bind(int index, const std::string& value) {
    return Bind(index, std::string_view(value));
  }
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& BindNull(int index) {
    backend_->BindNull(index);
    return *this;
  }
  // Raw bytes (vectors), copied; an empty span stores an empty blob, not NULL.
  Statement& BindBlob(int index, std::span<const std::byte> bytes) {
    backend_->BindBlob(index, bytes);
    return *this;
  }
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value ? Bind(index, *value) : BindNull(index);
  }

  // True when a row is available, false when done.
  util::Result<bool> Step() { return backend_->Step(); }
  // Steps until done, for statements whose rows are not needed.
  util::Result<void> Run() {
    for (;;) {
      auto row = Step();
      if (!row) return tl::make_unexpected(row.error());
      if (!*row) return util::Ok();
    }
  }

  bool IsNull(int column) const { return backend_->IsNull(column); }
  std::int64_t Int64(int column) const { return backend_->Int64(column); }
  int Int(int column) const { return static_cast<int>(Int64(column)); }
  double Double(int column) const { return backend_->Double(column); }
  std::string Text(int column) const { return backend_->Text(column); }
  // A BLOB column's bytes, valid until the next Step or the Statement's end.
  std::span<const std::byte> Blob(int column) const { return backend_->Blob(column); }

  // Lets a repository turn a constraint it did not pre-check into the code its contract promises.
  bool FailedOnUnique() const { return backend_->last_failure() == Failure::kUnique; }
  bool FailedOnForeignKey() const { return backend_->last_failure() == Failure::kForeignKey; }

 private:
  StatementBackend* backend_;
};

// One connection inside one transaction, used by one thread at a time.
class Connection {
 public:
  // A statement from the connection's cache, prepared on first use. The same SQL may be prepared
  // again while an earlier Statement for it is still alive (it then gets a one-off copy).
  virtual util::Result<Statement> Prepare(std::string_view sql) = 0;
  // Runs one or more statements with no parameters and no caching (DDL).
  virtual util::Result<void> Exec(const std::string& sql) = 0;
  // Rows changed by the last INSERT/UPDATE/DELETE run on this connection.
  virtual int Changes() const = 0;
  virtual Dialect dialect() const = 0;

 protected:
  ~Connection() = default;
};

// Thread-safe. Read transactions each see one consistent snapshot; write transactions behave as
// if run one after another (SQLite runs them so; PostgreSQL runs them SERIALIZABLE and runs the
// body again after a serialization failure, so a body must only touch the database).
class Database {
 public:
  virtual ~Database() = default;

  // Runs `fn(Connection&) -> Result<T>` inside a read-only transaction. kUnavailable once closed
  // or while the database cannot be reached.
  template <typename Fn>
  auto Read(Fn&& fn) -> decltype(fn(std::declval<Connection&>())) {
    return Run(Mode::kRead, std::forward<Fn>(fn));
  }

  // Runs `fn(Connection&) -> Result<T>` inside a write transaction. An error result or an
  // exception rolls everything back (the exception is then rethrown).
  template <typename Fn>
  auto Write(Fn&& fn) -> decltype(fn(std::declval<Connection&>())) {
    return Run(Mode::kWrite, std::forward<Fn>(fn));
  }

  // A write transaction that runs alone among every process sharing the database and sees all
  // that committed before it began: for schema migrations and anything else that must check then
  // act across instances. SQLite's writes already are; PostgreSQL takes one advisory lock first
  // (and reads at READ COMMITTED after it).
  template <typename Fn>
  auto Exclusive(Fn&& fn) -> decltype(fn(std::declval<Connection&>())) {
    return Run(Mode::kExclusive, std::forward<Fn>(fn));
  }

  // Waits for running transactions and closes every connection; later calls fail with
  // kUnavailable. Idempotent.
  virtual void Close() = 0;
  virtual Dialect dialect() const = 0;

 protected:
  enum class Mode { kRead, kWrite, kExclusive };
  using Body = std::function<util::Result<void>(Connection&)>;
  virtual util::Result<void> Transaction(Mode mode, const Body& body) = 0;

 private:
  template <typename Fn>
  auto Run(Mode mode, Fn&& fn) -> decltype(fn(std::declval<Connection&>())) {
    using R = decltype(fn(std::declval<Connection&>()));
    std::optional<R> out;
    util::Result<void> status = Transaction(mode, [&](Connection& c) -> util::Result<void> {
      out.emplace(fn(c));
      if (!*out) return tl::make_unexpected(out->error());
      return util::Ok();
    });
    if (!status) return tl::make_unexpected(status.error());
    return std::move(*out);
  }
};

}  // namespace sb::storage::sql
