// One libpq connection as the repositories see it (sql::Connection), with its cache of named
// prepared statements and what the pool needs to know after a transaction: was the connection
// lost, did the server ask for the transaction to be retried. Internal to storage/postgres: only
// its .cpp files include this (PgDatabase, PgListener), so libpq stays out of everyone's headers.
//   auto c = PgConnection::Open(settings);          // kUnavailable when the server is away
//   auto stmt = (*c)->Prepare("SELECT ?1 + ?2");
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "storage/sql/database.hpp"
#include "util/error.hpp"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace sb::storage::postgres {

class PgStatement;

// How to reach the server, parsed once by ParseConnectSettings.
struct ConnectSettings {
  std::string url;         // as given; never put into a message
  std::string masked_url;  // for messages
  std::string password;    // scrubbed from libpq's messages
  std::string application_name = "switchboard";
  int connect_timeout_seconds = 5;
  std::chrono::milliseconds statement_timeout{30000};  // 0: none
};

// kInvalidArgument (with the password masked) when libpq cannot parse `url`.
util::Result<ConnectSettings> ParseConnectSettings(const std::string& url);

// The keyword/value arrays libpq's *Params connection functions take: the URL first (expanded),
// then our settings, which win over the URL's (application name, timeouts, TCP keepalives).
class ConnectParams {
 public:
  explicit ConnectParams(const ConnectSettings& settings);
  const char* const* keys() const { return keys_.data(); }
  const char* const* values() const { return values_.data(); }

 private:
  std::vector<std::string> storage_;
  std::vector<const char*> keys_;
  std::vector<const char*> values_;
};

// "database unavailable: <why>" (kUnavailable, retry in a second), the form every lost-server
// failure takes so the HTTP layer answers 503.
util::Error Unavailable(std::string why);

// The first line of `text` (libpq's messages run over several), leading blanks dropped.
std::string FirstLineOf(std::string_view text);

// The start of a statement for an error message: one line, at most 80 bytes.
std::string SqlExcerpt(std::string_view sql);

// The first line of libpq's error text for `conn`, password scrubbed.
std::string ConnectionMessage(const PGconn* conn, const ConnectSettings& settings);

class PgConnection final : public sql::Connection {
 public:
  // Connects (bounded by the connect timeout) and applies the session settings.
  static util::Result<std::unique_ptr<PgConnection>> Open(const ConnectSettings& settings);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  util::Result<sql::Statement> Prepare(std::string_view sql) override;
  util::Result<void> Exec(const std::string& sql) override;
  int Changes() const override { return changes_; }
  sql::Dialect dialect() const override { return sql::Dialect::kPostgres; }

  // --- for the pool ---
  // Runs a parameterless command (BEGIN, COMMIT, ROLLBACK) through the same error mapping.
  util::Result<void> Command(std::string_view sql) { return Exec(std::string(sql)); }
  // ROLLBACK unless the connection is lost or no transaction is open; errors are ignored (a
  // failed ROLLBACK leaves the connection lost, which the pool then discards).
  void RollbackQuietly();
  // Forgets the flags below; called at BEGIN.
  void StartTransaction();
  // The server was lost (the connection is unusable); why, for the kUnavailable message.
  bool lost() const { return lost_; }
  const std::string& lost_reason() const { return lost_reason_; }
  // A statement of this transaction failed with 40001 or 40P01, even if the body then turned
  // that error into one of its own.
  bool saw_retryable_failure() const { return saw_retryable_failure_; }
  // True inside a transaction that an earlier error aborted (COMMIT would only roll back).
  bool in_failed_transaction() const;
  // For an idle connection taken from the pool: false when the server has closed it meanwhile
  // (a restart terminates idle sessions), checked without blocking.
  bool LooksAlive();

  // --- for statements ---
  PGconn* handle() const { return conn_; }
  // Maps a result that is not a success to an Error, recording a lost connection, a retryable
  // failure and (in `failure`) the constraint involved. `sql` is the original text, quoted.
  util::Error ResultError(const PGresult* result, std::string_view sql, sql::Failure* failure);
  // Records the row count of an INSERT/UPDATE/DELETE/MERGE result.
  void NoteCommand(const PGresult* result);
  void MarkLost(std::string why);
  // False once the server's cached plans may no longer match the tables (a result type changed
  // under a prepared statement): the pool then closes the connection instead of reusing it.
  bool reusable() const { return !lost_ && !stale_plans_; }

 private:
  PgConnection(PGconn* conn, const ConnectSettings* settings);

  // Bounds the per-connection cache: repositories use a fixed set of statements, so more than
  // this means SQL built per call, which then runs unprepared rather than grow without limit.
  static constexpr std::size_t kMaxCachedStatements = 512;

  PGconn* conn_;
  const ConnectSettings* settings_;  // owned by the database or listener, which outlive this
  std::unordered_map<std::string, std::unique_ptr<PgStatement>> cache_;
  int next_statement_number_ = 0;
  int changes_ = 0;
  bool lost_ = false;
  std::string lost_reason_;
  bool saw_retryable_failure_ = false;
  bool stale_plans_ = false;
};

}  // namespace sb::storage::postgres
