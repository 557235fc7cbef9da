#include "storage/postgres/pg_database.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <thread>
#include <utility>

#include "storage/postgres/pg_connection.hpp"
#include "storage/postgres/pg_listener.hpp"

namespace sb::storage::postgres {
namespace {

// A read sees one snapshot for the whole body; READ ONLY makes a stray write an error rather
// than an unserialized change.
constexpr std::string_view kBeginRead = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
constexpr std::string_view kBeginWrite = "BEGIN ISOLATION LEVEL SERIALIZABLE";
// Exclusive: one transaction at a time across every instance (the advisory lock, released at its
// end), each statement seeing all that committed before it (READ COMMITTED), so a body that
// checks and then acts (a migration) sees what the previous holder did.
constexpr std::string_view kBeginExclusive = "BEGIN ISOLATION LEVEL READ COMMITTED";
constexpr std::string_view kTakeExclusiveLock = "SELECT pg_advisory_xact_lock(5300019)";

// Sleeps a random time in [base/2, base], base doubling per attempt from 2 ms up to 200 ms, so
// two bodies that keep conflicting stop retrying in lockstep.
void Backoff(int attempt) {
  thread_local std::minstd_rand random(std::random_device{}());
  const int base_us = std::min(2000 << std::min(attempt - 1, 7), 200000);
  std::uniform_int_distribution<int> pick(base_us / 2, base_us);
  std::this_thread::sleep_for(std::chrono::microseconds(pick(random)));
}

}  // namespace

struct PgDatabase::Attempt {
  util::Result<void> result;
  bool retry = false;    // the body may run again on a (possibly new) connection
  bool backoff = false;  // ... after a pause: it lost a race with another transaction
};

// Hands the connection back to the pool however the transaction ends (exceptions included).
class PgDatabase::Lease {
 public:
  Lease(PgDatabase* db, std::unique_ptr<PgConnection> connection)
      : db_(db), connection_(std::move(connection)) {}
  ~Lease() { Return(); }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  PgConnection& operator*() const { return *connection_; }
  void Return() {
    if (connection_) db_->Release(std::move(connection_));
  }

 private:
  PgDatabase* db_;
  std::unique_ptr<PgConnection> connection_;
};

util::Result<std::unique_ptr<PgDatabase>> PgDatabase::Open(const std::string& url,
                                                           PgOptions options) {
  if (options.pool_size < 1 || options.max_attempts < 1 || options.connect_timeout_seconds < 1 ||
      options.acquire_timeout.count() < 0 || options.statement_timeout.count() < 0) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "database options out of range: pool size, attempts and connect timeout "
                      "must be at least 1, timeouts not negative");
  }
  auto settings = ParseConnectSettings(url);
  if (!settings) return tl::make_unexpected(settings.error());
  settings->application_name = options.application_name;
  settings->connect_timeout_seconds = options.connect_timeout_seconds;
  settings->statement_timeout = options.statement_timeout;
  std::unique_ptr<PgDatabase> db(
      new PgDatabase(std::move(options), std::make_unique<ConnectSettings>(std::move(*settings))));
  auto first = PgConnection::Open(*db->settings_);
  if (!first) return tl::make_unexpected(first.error());
  db->idle_.push_back(std::move(*first));
  db->open_ = 1;
  return db;
}

PgDatabase::PgDatabase(PgOptions options, std::unique_ptr<ConnectSettings> settings)
    : options_(std::move(options)), settings_(std::move(settings)) {}

PgDatabase::~PgDatabase() { Close(); }

void PgDatabase::Close() {
  std::vector<std::unique_ptr<PgConnection>> closing;
  {
    std::unique_lock lock(mutex_);
    closed_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return in_use_ == 0; });
    closing.swap(idle_);
    open_ -= static_cast<int>(closing.size());
  }
  // PQfinish outside the lock: it sends a goodbye to the server.
}

const std::string& PgDatabase::masked_url() const { return settings_->masked_url; }

PgDatabase::Stats PgDatabase::stats() const {
  std::lock_guard lock(mutex_);
  return Stats{open_, static_cast<int>(idle_.size()), rerun_count_.load()};
}

util::Result<std::unique_ptr<PgConnection>> PgDatabase::Acquire() {
  const auto deadline = std::chrono::steady_clock::now() + options_.acquire_timeout;
  std::unique_lock lock(mutex_);
  for (;;) {
    const bool ready = changed_.wait_until(
        lock, deadline, [&] { return closed_ || !idle_.empty() || open_ < options_.pool_size; });
    if (closed_) return tl::make_unexpected(Unavailable("the database was closed"));
    if (!ready) {
      util::Error busy{util::ErrorCode::kUnavailable,
                       "database busy: all " + std::to_string(options_.pool_size) +
                           " connections stayed in use for " +
                           std::to_string(options_.acquire_timeout.count()) + " ms"};
      busy.retry_after_seconds = 1;
      return tl::make_unexpected(std::move(busy));
    }
    ++in_use_;
    if (!idle_.empty()) {
      auto connection = std::move(idle_.back());
      idle_.pop_back();
      lock.unlock();
      if (connection->LooksAlive()) return connection;
      connection.reset();  // the server closed it meanwhile (a restart): open another
      lock.lock();
      --in_use_;
      --open_;
      continue;
    }
    ++open_;  // reserve the slot so concurrent callers do not overshoot the bound
    lock.unlock();
    auto connection = PgConnection::Open(*settings_);
    if (connection) {
      NoteReachable();
      return connection;
    }
    NoteUnreachable(connection.error().message);
    lock.lock();
    --in_use_;
    --open_;
    changed_.notify_all();
    return tl::make_unexpected(connection.error());
  }
}

void PgDatabase::Release(std::unique_ptr<PgConnection> connection) {
  std::unique_lock lock(mutex_);
  --in_use_;
  if (connection->reusable() && !closed_) {
    idle_.push_back(std::move(connection));
  } else {
    --open_;
  }
  changed_.notify_all();
  lock.unlock();
  connection.reset();  // a discarded connection closes outside the lock
}

util::Result<void> PgDatabase::Transaction(Mode mode, const Body& body) {
  for (int attempt = 1;; ++attempt) {
    auto connection = Acquire();
    if (!connection) return tl::make_unexpected(connection.error());
    Lease lease(this, std::move(*connection));
    Attempt outcome = RunOnce(*lease, mode, body);
    if (!outcome.retry) return std::move(outcome.result);
    if (attempt >= options_.max_attempts) {
      if (!outcome.backoff) return std::move(outcome.result);  // the server stayed away
      util::Error busy{util::ErrorCode::kUnavailable,
                       "database busy: the transaction conflicted with concurrent ones " +
                           std::to_string(attempt) + " times in a row"};
      busy.retry_after_seconds = 1;
      return tl::make_unexpected(std::move(busy));
    }
    lease.Return();
    ++rerun_count_;
    if (outcome.backoff) Backoff(attempt);
  }
}

PgDatabase::Attempt PgDatabase::RunOnce(PgConnection& c, Mode mode, const Body& body) {
  c.StartTransaction();
  const std::string_view begin_sql = mode == Mode::kRead    ? kBeginRead
                                     : mode == Mode::kWrite ? kBeginWrite
                                                            : kBeginExclusive;
  auto begin = c.Command(begin_sql);
  if (begin && mode == Mode::kExclusive) begin = c.Command(kTakeExclusiveLock);
  if (!begin) {
    // A connection the server dropped while it sat idle fails here, before anything ran.
    if (c.lost()) NoteUnreachable(begin.error().message);
    if (!c.lost()) c.RollbackQuietly();
    return Attempt{std::move(begin), c.lost(), false};
  }
  util::Result<void> result;
  try {
    result = body(c);
  } catch (...) {
    c.RollbackQuietly();
    throw;
  }
  if (c.lost()) {
    // Nothing was committed: the server rolls back what a lost session left open, so the body
    // may run again on a new connection.
    NoteUnreachable(c.lost_reason());
    return Attempt{tl::make_unexpected(Unavailable(c.lost_reason())), true, false};
  }
  if (c.saw_retryable_failure()) {
    c.RollbackQuietly();
    if (result) result = util::Fail(util::ErrorCode::kInternal, "serialization failure");
    return Attempt{std::move(result), true, true};
  }
  if (!result) {
    c.RollbackQuietly();
    return Attempt{std::move(result), false, false};
  }
  if (c.in_failed_transaction()) {
    // COMMIT would quietly roll back; the body must not be told its writes are in.
    c.RollbackQuietly();
    return Attempt{util::Fail(util::ErrorCode::kInternal,
                              "database error: a statement failed and the transaction was "
                              "rolled back, but the code running it did not stop"),
                   false, false};
  }
  auto commit = c.Command("COMMIT");
  if (commit) return Attempt{util::Ok(), false, false};
  if (c.saw_retryable_failure()) return Attempt{std::move(commit), true, true};
  if (c.lost()) {
    NoteUnreachable(c.lost_reason());
    return Attempt{tl::make_unexpected(Unavailable(
                       "connection lost during COMMIT, the transaction may or may not have been "
                       "applied: " +
                       c.lost_reason())),
                   false, false};
  }
  c.RollbackQuietly();
  return Attempt{std::move(commit), false, false};
}

util::Result<void> PgDatabase::Notify(std::string_view channel, std::string_view payload) {
  return Write([&](sql::Connection& c) { return postgres::Notify(c, channel, payload); });
}

void PgDatabase::NoteReachable() {
  if (!reachable_.exchange(true)) {
    spdlog::info("database {} is reachable again", settings_->masked_url);
  }
}

void PgDatabase::NoteUnreachable(const std::string& why) {
  if (reachable_.exchange(false)) spdlog::warn("{}", why);
}

}  // namespace sb::storage::postgres
