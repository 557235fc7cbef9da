// PostgreSQL behind sql::Database: a bounded pool of libpq connections, opened as needed, each
// with its own cache of prepared statements. Writes run SERIALIZABLE and are run again when the
// server reports a serialization failure or deadlock, so they behave as if run one at a time.
//   auto db = PgDatabase::Open("postgresql://sb@db.internal/sb", {});
//   Result<int> n = (*db)->Read([](sql::Connection& c) -> Result<int> { ... });
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sql/database.hpp"
#include "util/error.hpp"

namespace sb::storage::postgres {

class PgConnection;
struct ConnectSettings;

struct PgOptions {
  int pool_size = 8;  // connections open at most, including those being opened
  // How long a transaction waits for a free connection before failing with kUnavailable.
  std::chrono::milliseconds acquire_timeout{5000};
  int connect_timeout_seconds = 5;  // per connection attempt; libpq rounds values below 2 up to 2
  // Runs of one body at most when the server keeps asking for a retry (40001, 40P01).
  int max_attempts = 10;
  // The server cancels a statement running longer (57014); 0 lets statements run unbounded.
  std::chrono::milliseconds statement_timeout{30000};
  std::string application_name = "switchboard";  // shown in pg_stat_activity
};

// Thread-safe. Every failure to reach the server (refused, dropped, shut down) comes back as
// kUnavailable "database unavailable: ..." with the URL's password masked; once the server is
// back, the next transaction opens a fresh connection, so service resumes by itself.
class PgDatabase final : public sql::Database {
 public:
  // Opens one connection to check that the server answers (kUnavailable when it does not,
  // kInvalidArgument for a URL libpq cannot parse or options out of range).
  static util::Result<std::unique_ptr<PgDatabase>> Open(const std::string& url, PgOptions options);
  ~PgDatabase() override;
  PgDatabase(const PgDatabase&) = delete;
  PgDatabase& operator=(const PgDatabase&) = delete;

  void Close() override;
  sql::Dialect dialect() const override { return sql::Dialect::kPostgres; }

  // Sends one notification in a write transaction of its own (pg_notify): listeners get it once
  // this returns. Inside a transaction of your own use postgres::Notify (pg_listener.hpp).
  util::Result<void> Notify(std::string_view channel, std::string_view payload);

  // The URL with its password masked, for logs.
  const std::string& masked_url() const;

  struct Stats {
    int open = 0;                  // connections open or being opened
    int idle = 0;                  // of which waiting in the pool
    std::int64_t rerun_count = 0;  // bodies run again (serialization failure, lost connection)
  };
  Stats stats() const;

 protected:
  util::Result<void> Transaction(Mode mode, const Body& body) override;

 private:
  struct Attempt;
  class Lease;

  PgDatabase(PgOptions options, std::unique_ptr<ConnectSettings> settings);
  util::Result<std::unique_ptr<PgConnection>> Acquire();
  void Release(std::unique_ptr<PgConnection> connection);
  Attempt RunOnce(PgConnection& connection, Mode mode, const Body& body);
  // Logs only the transitions between reachable and unreachable, not every failed request.
  void NoteReachable();
  void NoteUnreachable(const std::string& why);

  const PgOptions options_;
  const std::unique_ptr<ConnectSettings> settings_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a connection came back, a slot freed, or Close began
  std::vector<std::unique_ptr<PgConnection>> idle_;  // guarded by mutex_
  int open_ = 0;                                     // guarded by mutex_
  int in_use_ = 0;                                   // guarded by mutex_
  bool closed_ = false;                              // guarded by mutex_

  std::atomic<bool> reachable_{true};
  std::atomic<std::int64_t> rerun_count_{0};
};

}  // namespace sb::storage::postgres
