#include "storage/postgres/pg_statement.hpp"

#include <libpq-fe.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "storage/postgres/pg_connection.hpp"

namespace sb::storage::postgres {
namespace {

constexpr Oid kByteaOid = 17;  // pg_type.oid of bytea; fixed since PostgreSQL 7

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// bytea's text form: "\x" then two hex digits per byte. The older escape form is left to libpq.
std::vector<std::byte> DecodeBytea(std::string_view text) {
  std::vector<std::byte> out;
  if (text.starts_with("\\x")) {
    out.reserve((text.size() - 2) / 2);
    for (std::size_t i = 2; i + 1 < text.size(); i += 2) {
      const int high = HexValue(text[i]);
      const int low = HexValue(text[i + 1]);
      if (high < 0 || low < 0) break;
      out.push_back(static_cast<std::byte>(high * 16 + low));
    }
    return out;
  }
  std::size_t length = 0;
  unsigned char* bytes =
      PQunescapeBytea(reinterpret_cast<const unsigned char*>(std::string(text).c_str()), &length);
  if (bytes != nullptr) {
    out.assign(reinterpret_cast<std::byte*>(bytes), reinterpret_cast<std::byte*>(bytes) + length);
    PQfreemem(bytes);
  }
  return out;
}

// Numbers as PostgreSQL reads them back exactly: to_chars gives the shortest text that parses to
// the same double.
std::string FormatDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  (void)ec;  // 32 bytes hold any double's shortest form
  return std::string(buffer, end);
}

std::int64_t ClampToInt64(double value) {
  if (std::isnan(value)) return 0;
  if (value >= 9223372036854775807.0) return std::numeric_limits<std::int64_t>::max();
  if (value <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(value);  // truncates toward zero, as SQLite's CAST does
}

}  // namespace

PgStatement::PgStatement(PgConnection* connection, std::string sql, std::string translated,
                         int parameter_count, std::string name)
    : connection_(connection),
      sql_(std::move(sql)),
      translated_(std::move(translated)),
      parameter_count_(parameter_count),
      name_(std::move(name)),
      kinds_(static_cast<std::size_t>(parameter_count), Param::kNull),
      values_(static_cast<std::size_t>(parameter_count)) {}

PgStatement::~PgStatement() { PQclear(result_); }

bool PgStatement::SetParam(int index, Param kind) {
  if (index < 1 || index > parameter_count_) {
    if (bind_error_.empty()) {
      bind_error_ = "bind index " + std::to_string(index) + " is out of range: the statement has " +
                    std::to_string(parameter_count_) + " parameter(s)";
    }
    return false;
  }
  kinds_[static_cast<std::size_t>(index - 1)] = kind;
  return true;
}

void PgStatement::BindInt64(int index, std::int64_t value) {
  if (SetParam(index, Param::kText))
    values_[static_cast<std::size_t>(index - 1)] = std::to_string(value);
}

void PgStatement::BindDouble(int index, double value) {
  if (SetParam(index, Param::kText))
    values_[static_cast<std::size_t>(index - 1)] = FormatDouble(value);
}

void PgStatement::BindText(int index, std::string_view value) {
  // Text parameters travel NUL-terminated, and PostgreSQL's text cannot hold NUL anyway: say so
  // rather than store a silently shortened string.
  if (value.find('\0') != std::string_view::npos) {
    nul_in_text_ = true;
    return;
  }
  if (SetParam(index, Param::kText))
    values_[static_cast<std::size_t>(index - 1)] = std::string(value);
}

void PgStatement::BindBlob(int index, std::span<const std::byte> bytes) {
  if (SetParam(index, Param::kBinary)) {
    values_[static_cast<std::size_t>(index - 1)].assign(reinterpret_cast<const char*>(bytes.data()),
                                                        bytes.size());
  }
}

void PgStatement::BindNull(int index) { SetParam(index, Param::kNull); }

util::Result<bool> PgStatement::Step() {
  if (!executed_) return Execute();
  if (result_ == nullptr || row_ >= rows_) return false;
  ++row_;
  std::fill(blob_ready_.begin(), blob_ready_.end(), false);
  return row_ < rows_;
}

util::Result<bool> PgStatement::Execute() {
  executed_ = true;
  failure_ = sql::Failure::kNone;
  if (nul_in_text_ && bind_error_.empty()) {
    // What a client sent (a name, a config value): its error, with nothing of the SQL.
    failure_ = sql::Failure::kOther;
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "text must not contain NUL (\\u0000) characters");
  }
  if (!bind_error_.empty()) {
    failure_ = sql::Failure::kOther;
    return util::Fail(util::ErrorCode::kInternal,
                      bind_error_ + " (in \"" + SqlExcerpt(sql_) + "\")");
  }
  if (connection_->lost()) return tl::make_unexpected(Unavailable(connection_->lost_reason()));

  std::vector<const char*> values(kinds_.size());
  std::vector<int> lengths(kinds_.size());
  std::vector<int> formats(kinds_.size());
  for (std::size_t i = 0; i < kinds_.size(); ++i) {
    if (kinds_[i] == Param::kNull) continue;
    values[i] = values_[i].c_str();
    lengths[i] = static_cast<int>(values_[i].size());
    formats[i] = kinds_[i] == Param::kBinary ? 1 : 0;
  }
  PGconn* conn = connection_->handle();
  PGresult* result =
      one_off() ? PQexecParams(conn, translated_.c_str(), parameter_count_, nullptr, values.data(),
                               lengths.data(), formats.data(), /*resultFormat=*/0)
                : PQexecPrepared(conn, name_.c_str(), parameter_count_, values.data(),
                                 lengths.data(), formats.data(), /*resultFormat=*/0);
  switch (PQresultStatus(result)) {
    case PGRES_TUPLES_OK:
      connection_->NoteCommand(result);  // INSERT ... RETURNING counts as a change
      result_ = result;
      rows_ = PQntuples(result);
      row_ = 0;
      blobs_.assign(static_cast<std::size_t>(PQnfields(result)), {});
      blob_ready_.assign(blobs_.size(), false);
      return rows_ > 0;
    case PGRES_COMMAND_OK:
    case PGRES_EMPTY_QUERY:
      connection_->NoteCommand(result);
      PQclear(result);
      return false;
    default: {
      util::Error error = connection_->ResultError(result, sql_, &failure_);
      PQclear(result);
      return tl::make_unexpected(std::move(error));
    }
  }
}

const char* PgStatement::Value(int column) const {
  if (result_ == nullptr || row_ < 0 || row_ >= rows_ || column < 0 ||
      column >= PQnfields(result_) || PQgetisnull(result_, row_, column)) {
    return nullptr;
  }
  return PQgetvalue(result_, row_, column);
}

bool PgStatement::IsNull(int column) const { return Value(column) == nullptr; }

std::int64_t PgStatement::Int64(int column) const {
  const char* value = Value(column);
  if (value == nullptr) return 0;
  const std::string_view text(value, static_cast<std::size_t>(PQgetlength(result_, row_, column)));
  // Booleans come back as t/f; SUM and AVG give numeric text ("12", "12.0", "1e+25").
  if (text == "t") return 1;
  if (text == "f") return 0;
  std::int64_t integer = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), integer);
  if (ec == std::errc{} && end == text.data() + text.size()) return integer;
  double number = 0;
  auto [real_end, real_ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (real_ec == std::errc{} || real_ec == std::errc::result_out_of_range) {
    return ClampToInt64(number);
  }
  return 0;
}

double PgStatement::Double(int column) const {
  const char* value = Value(column);
  if (value == nullptr) return 0;
  const std::string_view text(value, static_cast<std::size_t>(PQgetlength(result_, row_, column)));
  if (text == "t") return 1;
  if (text == "f") return 0;
  double number = 0;
  std::from_chars(text.data(), text.data() + text.size(), number);
  return number;
}

std::string PgStatement::Text(int column) const {
  const char* value = Value(column);
  if (value == nullptr) return {};
  return std::string(value, static_cast<std::size_t>(PQgetlength(result_, row_, column)));
}

std::span<const std::byte> PgStatement::Blob(int column) const {
  const char* value = Value(column);
  if (value == nullptr) return {};
  const auto length = static_cast<std::size_t>(PQgetlength(result_, row_, column));
  if (PQftype(result_, column) != kByteaOid) {
    return {reinterpret_cast<const std::byte*>(value), length};  // text read as bytes
  }
  const auto index = static_cast<std::size_t>(column);
  if (!blob_ready_[index]) {
    blobs_[index] = DecodeBytea(std::string_view(value, length));
    blob_ready_[index] = true;
  }
  return blobs_[index];
}

void PgStatement::Reset() {
  PQclear(result_);
  result_ = nullptr;
  executed_ = false;
  row_ = -1;
  rows_ = 0;
  failure_ = sql::Failure::kNone;
  bind_error_.clear();
  nul_in_text_ = false;
  std::fill(kinds_.begin(), kinds_.end(), Param::kNull);
  for (auto& value : values_) value.clear();
  blobs_.clear();
  blob_ready_.clear();
}

void PgStatement::Release() {
  if (one_off()) {
    delete this;
    return;
  }
  Reset();
  in_use_ = false;
}

}  // namespace sb::storage::postgres
