// Small helpers for the PostgreSQL backend's tests: one-value queries and a gate that threads
// wait at (bounded, so a bug fails the test instead of hanging it).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "storage/sql/database.hpp"

namespace sb::test_support {

inline util::Result<std::int64_t> QueryInt(storage::sql::Connection& c, std::string_view sql) {
  auto statement = c.Prepare(sql);
  if (!statement) return tl::make_unexpected(statement.error());
  auto row = statement->Step();
  if (!row) return tl::make_unexpected(row.error());
  if (!*row) return util::Fail(util::ErrorCode::kNotFound, "no row");
  return statement->Int64(0);
}

inline util::Result<void> RunSql(storage::sql::Connection& c, std::string_view sql) {
  auto statement = c.Prepare(sql);
  if (!statement) return tl::make_unexpected(statement.error());
  return statement->Run();
}

// Threads Wait until Open; Wait gives up after `limit` (false).
class Gate {
 public:
  void Open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  bool Wait(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

// `count` threads meet: each Arrive returns once all have arrived (or after `limit`, false).
class Rendezvous {
 public:
  explicit Rendezvous(int count) : left_(count) {}
  bool Arrive(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    if (--left_ <= 0) changed_.notify_all();
    return changed_.wait_for(lock, limit, [&] { return left_ <= 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int left_;
};

}  // namespace sb::test_support
