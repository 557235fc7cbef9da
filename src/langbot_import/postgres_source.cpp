#include "langbot_import/postgres_source.hpp"

#include <fmt/format.h>
#include <libpq-fe.h>

namespace sb::langbot_import {
namespace {

using util::ErrorCode;
using util::Fail;

struct Result {
  PGresult* res = nullptr;
  ~Result() { PQclear(res); }
};

std::string FirstLine(const char* message) {
  std::string m = message ? message : "";
  if (auto nl = m.find('\n'); nl != std::string::npos) m.resize(nl);
  return m;
}

}  // namespace

util::Result<std::unique_ptr<PostgresSource>> PostgresSource::Open(const std::string& url) {
  if (url.rfind("postgresql://", 0) != 0 && url.rfind("postgres://", 0) != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "--from-database-url must be a postgresql://user:password@host:port/database URL");
  }
  // A connection that hangs must not hang the import.
  const char* keys[] = {"dbname", "connect_timeout", nullptr};
  const char* values[] = {url.c_str(), "10", nullptr};
  pg_conn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (!conn) return Fail(ErrorCode::kInternal, "out of memory");
  std::string where = fmt::format("{}:{}/{}", PQhost(conn) ? PQhost(conn) : "?",
                                  PQport(conn) ? PQport(conn) : "?", PQdb(conn) ? PQdb(conn) : "?");
  if (PQstatus(conn) != CONNECTION_OK) {
    // libpq's message names the host and what went wrong; it never repeats the password.
    std::string why = FirstLine(PQerrorMessage(conn));
    PQfinish(conn);
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("cannot connect to PostgreSQL at {}: {}", where, why));
  }
  std::unique_ptr<PostgresSource> source(new PostgresSource(conn, std::move(where)));
  Result begin{PQexec(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")};
  if (PQresultStatus(begin.res) != PGRES_COMMAND_OK) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("PostgreSQL at {}: {}", source->where_,
                                                         FirstLine(PQerrorMessage(conn))));
  }
  return source;
}

PostgresSource::~PostgresSource() {
  Result rollback{PQexec(conn_, "ROLLBACK")};
  PQfinish(conn_);
}

std::string PostgresSource::Describe() const {
  return fmt::format("PostgreSQL database {}", where_);
}

util::Result<std::optional<std::vector<std::string>>> PostgresSource::Columns(
    const std::string& table) {
  const char* params[] = {table.c_str()};
  Result r{PQexecParams(conn_,
                        "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                        "current_schema() AND table_name = $1 ORDER BY ordinal_position",
                        1, nullptr, params, nullptr, nullptr, 0)};
  if (PQresultStatus(r.res) != PGRES_TUPLES_OK) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: {}", Describe(), FirstLine(PQerrorMessage(conn_))));
  }
  const int n = PQntuples(r.res);
  if (n == 0) return std::optional<std::vector<std::string>>();
  std::vector<std::string> columns;
  for (int i = 0; i < n; ++i) columns.emplace_back(PQgetvalue(r.res, i, 0));
  return std::optional<std::vector<std::string>>(std::move(columns));
}

util::Result<std::vector<Row>> PostgresSource::Rows(const std::string& table,
                                                    const std::vector<std::string>& columns,
                                                    std::size_t max_rows) {
  auto select = SelectColumns(table, columns);
  if (!select) return tl::unexpected(select.error());
  // The first column is each table's key; one more row than allowed tells "too many".
  const std::string sql = *select + fmt::format(" ORDER BY 1 LIMIT {}", max_rows + 1);
  Result r{PQexec(conn_, sql.c_str())};
  if (PQresultStatus(r.res) != PGRES_TUPLES_OK) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: {}", Describe(), FirstLine(PQerrorMessage(conn_))));
  }
  const int n = PQntuples(r.res);
  if (static_cast<std::size_t>(n) > max_rows) {
    return Fail(ErrorCode::kPayloadTooLarge,
                fmt::format("table {} has more than {} rows", table, max_rows));
  }
  std::vector<Row> rows;
  rows.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Row row;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const int col = static_cast<int>(c);
      if (PQgetisnull(r.res, i, col)) {
        row[columns[c]] = std::nullopt;
      } else {
        row[columns[c]] = std::string(PQgetvalue(r.res, i, col),
                                      static_cast<std::size_t>(PQgetlength(r.res, i, col)));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace sb::langbot_import
