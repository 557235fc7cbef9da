#include "storage/postgres/pg_connection.hpp"

#include <libpq-fe.h>
#include <poll.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <utility>

#include "storage/postgres/pg_placeholders.hpp"
#include "storage/postgres/pg_statement.hpp"
#include "storage/postgres/pg_url.hpp"
#include "util/utf8.hpp"

namespace sb::storage::postgres {
namespace {

struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

}  // namespace

std::string FirstLineOf(std::string_view text) {
  while (!text.empty() && (text.front() == '\n' || text.front() == ' ')) text.remove_prefix(1);
  const std::size_t end = text.find('\n');
  return std::string(text.substr(0, end));
}

namespace {

// Notices (a migration's "already exists, skipping", the FATAL goodbye an idle connection gets
// when the server stops) would go to stderr by default.
void LogNotice(void*, const char* message) {
  spdlog::debug("database notice: {}", FirstLineOf(message));
}

bool IsLostState(std::string_view sqlstate) {
  // Class 08 is "connection exception"; 57P01-57P03 are admin shutdown, crash shutdown and
  // "cannot connect now" (starting up or shutting down).
  return sqlstate.starts_with("08") || sqlstate == "57P01" || sqlstate == "57P02" ||
         sqlstate == "57P03";
}

}  // namespace

std::string SqlExcerpt(std::string_view sql) {
  std::string out;
  for (char c : sql.substr(0, util::Utf8CutPoint(sql, 80))) {
    const bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out.push_back(space ? ' ' : c);
  }
  return out;
}

util::Result<ConnectSettings> ParseConnectSettings(const std::string& url) {
  ConnectSettings settings;
  settings.url = url;
  // Scrubbed as well as masked: a password repeated elsewhere in the URL must not show either.
  settings.masked_url = ScrubSecret(MaskPassword(url), PasswordOf(url));
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    std::string why = error != nullptr ? FirstLineOf(error) : "out of memory";
    if (error != nullptr) PQfreemem(error);
    return util::Fail(
        util::ErrorCode::kInvalidArgument,
        "invalid database URL " + settings.masked_url + ": " + ScrubSecret(why, PasswordOf(url)));
  }
  for (PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (std::string_view(option->keyword) == "password" && option->val != nullptr) {
      settings.password = option->val;
    }
  }
  PQconninfoFree(options);
  if (settings.password.empty()) settings.password = PasswordOf(url);
  settings.masked_url = ScrubSecret(std::move(settings.masked_url), settings.password);
  return settings;
}

ConnectParams::ConnectParams(const ConnectSettings& settings) {
  // Later keywords override earlier ones, so the URL comes first: its host, user and database
  // stand, and the settings below are ours whatever it says.
  storage_ = {
      "dbname",
      settings.url,
      "application_name",
      settings.application_name,
      "connect_timeout",
      std::to_string(settings.connect_timeout_seconds),
      // A peer that vanishes without a FIN (a partitioned network) is noticed within about a
      // minute instead of the kernel's two hours.
      "keepalives",
      "1",
      "keepalives_idle",
      "30",
      "keepalives_interval",
      "10",
      "keepalives_count",
      "3",
      "tcp_user_timeout",
      "60000",
  };
  for (std::size_t i = 0; i < storage_.size(); i += 2) {
    keys_.push_back(storage_[i].c_str());
    values_.push_back(storage_[i + 1].c_str());
  }
  keys_.push_back(nullptr);
  values_.push_back(nullptr);
}

util::Error Unavailable(std::string why) {
  util::Error error{util::ErrorCode::kUnavailable, "database unavailable: " + std::move(why)};
  error.retry_after_seconds = 1;
  return error;
}

std::string ConnectionMessage(const PGconn* conn, const ConnectSettings& settings) {
  std::string message = conn != nullptr ? FirstLineOf(PQerrorMessage(conn)) : "out of memory";
  if (message.empty()) message = "connection failed";
  return ScrubSecret(std::move(message), settings.password);
}

util::Result<std::unique_ptr<PgConnection>> PgConnection::Open(const ConnectSettings& settings) {
  ConnectParams params(settings);
  PGconn* conn = PQconnectdbParams(params.keys(), params.values(), /*expand_dbname=*/1);
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    std::string why = ConnectionMessage(conn, settings);
    PQfinish(conn);
    return tl::make_unexpected(
        Unavailable("cannot connect to " + settings.masked_url + ": " + std::move(why)));
  }
  PQsetNoticeProcessor(conn, LogNotice, nullptr);
  std::unique_ptr<PgConnection> connection(new PgConnection(conn, &settings));
  // bytea_output is hex by default; set it anyway, PgStatement::Blob decodes only that form.
  std::string setup = "SET bytea_output = hex";
  if (settings.statement_timeout.count() > 0) {
    setup += "; SET statement_timeout = " + std::to_string(settings.statement_timeout.count());
  }
  if (auto done = connection->Exec(setup); !done) return tl::make_unexpected(done.error());
  return connection;
}

PgConnection::PgConnection(PGconn* conn, const ConnectSettings* settings)
    : conn_(conn), settings_(settings) {}

PgConnection::~PgConnection() {
  cache_.clear();  // statements hold results of this connection
  PQfinish(conn_);
}

util::Result<sql::Statement> PgConnection::Prepare(std::string_view sql) {
  if (lost_) return tl::make_unexpected(Unavailable(lost_reason_));
  std::string key(sql);
  auto cached = cache_.find(key);
  if (cached != cache_.end() && !cached->second->in_use()) {
    cached->second->set_in_use();
    return sql::Statement(cached->second.get());
  }
  auto translated = TranslatePlaceholders(sql);
  if (!translated) {
    return util::Fail(util::ErrorCode::kInternal,
                      translated.error().message + " (in \"" + SqlExcerpt(sql) + "\")");
  }
  if (cached != cache_.end() || cache_.size() >= kMaxCachedStatements) {
    // Deleted by its own Release.
    auto* one_off = new PgStatement(this, std::move(key), std::move(translated->text),
                                    translated->parameter_count, "");
    one_off->set_in_use();
    return sql::Statement(one_off);
  }
  std::string name = "sb_" + std::to_string(++next_statement_number_);
  ResultPtr result(PQprepare(conn_, name.c_str(), translated->text.c_str(), 0, nullptr));
  if (PQresultStatus(result.get()) != PGRES_COMMAND_OK) {
    return tl::make_unexpected(ResultError(result.get(), sql, nullptr));
  }
  auto statement = std::make_unique<PgStatement>(this, key, std::move(translated->text),
                                                 translated->parameter_count, std::move(name));
  statement->set_in_use();
  PgStatement* handle = statement.get();
  cache_.emplace(std::move(key), std::move(statement));
  return sql::Statement(handle);
}

util::Result<void> PgConnection::Exec(const std::string& sql) {
  if (lost_) return tl::make_unexpected(Unavailable(lost_reason_));
  ResultPtr result(PQexec(conn_, sql.c_str()));
  const ExecStatusType status = PQresultStatus(result.get());
  if (result != nullptr &&
      (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY)) {
    NoteCommand(result.get());
    return util::Ok();
  }
  return tl::make_unexpected(ResultError(result.get(), sql, nullptr));
}

void PgConnection::RollbackQuietly() {
  if (lost_ || PQstatus(conn_) != CONNECTION_OK) return;
  if (PQtransactionStatus(conn_) == PQTRANS_IDLE) return;
  ResultPtr result(PQexec(conn_, "ROLLBACK"));
  if (PQresultStatus(result.get()) != PGRES_COMMAND_OK) {
    // A connection that cannot roll back must not carry its open transaction to the next user.
    MarkLost(ConnectionMessage(conn_, *settings_));
  }
}

void PgConnection::StartTransaction() {
  saw_retryable_failure_ = false;
  changes_ = 0;
}

bool PgConnection::in_failed_transaction() const {
  return PQtransactionStatus(conn_) == PQTRANS_INERROR;
}

bool PgConnection::LooksAlive() {
  if (!reusable() || PQstatus(conn_) != CONNECTION_OK) return false;
  if (PQtransactionStatus(conn_) != PQTRANS_IDLE) return false;
  pollfd fd{PQsocket(conn_), POLLIN, 0};
  const int ready = poll(&fd, 1, 0);
  if (ready <= 0) return ready == 0;
  // Nothing is due on an idle connection that is not listening: what arrived is most likely the
  // server's goodbye (57P01 on shutdown) or the end of the stream.
  if ((fd.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) return false;
  if (PQconsumeInput(conn_) == 0) return false;
  while (PGnotify* notify = PQnotifies(conn_)) PQfreemem(notify);
  return PQstatus(conn_) == CONNECTION_OK;
}

util::Error PgConnection::ResultError(const PGresult* result, std::string_view sql,
                                      sql::Failure* failure) {
  if (failure != nullptr) *failure = sql::Failure::kOther;
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state != nullptr ? state : "";
  const char* primary =
      result != nullptr ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  std::string message = primary != nullptr ? FirstLineOf(primary) : "";
  if (message.empty()) message = ConnectionMessage(conn_, *settings_);
  message = ScrubSecret(std::move(message), settings_->password);

  if (PQstatus(conn_) == CONNECTION_BAD || IsLostState(sqlstate)) {
    MarkLost(message);
    return Unavailable(message);
  }
  if (sqlstate == "40001" || sqlstate == "40P01") saw_retryable_failure_ = true;
  if (sqlstate == "0A000" && message.find("cached plan") != std::string::npos) {
    // DDL elsewhere changed a table under a prepared statement: a new connection prepares
    // afresh, so drop this one after the transaction and run the body again there.
    stale_plans_ = true;
    saw_retryable_failure_ = true;
  }
  if (failure != nullptr) {
    if (sqlstate == "23505") *failure = sql::Failure::kUnique;
    if (sqlstate == "23503") *failure = sql::Failure::kForeignKey;
  }
  // Data exceptions quote the offending input after a colon ('invalid input syntax for type
  // integer: "abc"'), which may be a bound value: keep only the kind of error.
  if (sqlstate.starts_with("22")) {
    if (const std::size_t colon = message.find(": "); colon != std::string::npos) {
      message.resize(colon);
    }
  }
  std::string text = "database error ";
  text.append(sqlstate.empty() ? "(no SQLSTATE)" : sqlstate)
      .append(": ")
      .append(message)
      .append(" (in \"")
      .append(SqlExcerpt(sql))
      .append("\")");
  return util::Error{util::ErrorCode::kInternal, std::move(text)};
}

void PgConnection::NoteCommand(const PGresult* result) {
  const std::string_view status = PQcmdStatus(const_cast<PGresult*>(result));
  if (status.starts_with("INSERT") || status.starts_with("UPDATE") ||
      status.starts_with("DELETE") || status.starts_with("MERGE")) {
    changes_ = std::atoi(PQcmdTuples(const_cast<PGresult*>(result)));
  }
}

void PgConnection::MarkLost(std::string why) {
  if (lost_) return;
  lost_ = true;
  lost_reason_ = why.empty() ? "connection lost" : std::move(why);
}

}  // namespace sb::storage::postgres
