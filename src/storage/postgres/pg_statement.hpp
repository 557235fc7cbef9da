// A prepared statement on one PgConnection: parameters travel as text (numbers, strings) or
// binary (bytea), results come back as text and are parsed per column on demand. Internal to
// storage/postgres; repositories see it only through sql::Statement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sql/database.hpp"

typedef struct pg_result PGresult;

namespace sb::storage::postgres {

class PgConnection;

class PgStatement final : public sql::StatementBackend {
 public:
  // `name` is the server-side prepared statement's name, empty for a one-off that is parsed
  // with each execution (and deleted by Release). `sql` is the caller's text, for messages.
  PgStatement(PgConnection* connection, std::string sql, std::string translated,
              int parameter_count, std::string name);
  ~PgStatement();
  PgStatement(const PgStatement&) = delete;
  PgStatement& operator=(const PgStatement&) = delete;

  void BindInt64(int index, std::int64_t value) override;
  void BindDouble(int index, double value) override;
  void BindText(int index, std::string_view value) override;
  void BindBlob(int index, std::span<const std::byte> bytes) override;
  void BindNull(int index) override;
  // The first call executes the statement; later calls walk its rows.
  util::Result<bool> Step() override;
  bool IsNull(int column) const override;
  std::int64_t Int64(int column) const override;
  double Double(int column) const override;
  std::string Text(int column) const override;
  std::span<const std::byte> Blob(int column) const override;
  sql::Failure last_failure() const override { return failure_; }
  void Release() override;

  bool one_off() const { return name_.empty(); }
  bool in_use() const { return in_use_; }
  void set_in_use() { in_use_ = true; }

 private:
  enum class Param : char { kNull, kText, kBinary };
  bool SetParam(int index, Param kind);  // false (and a bind error) when out of range
  util::Result<bool> Execute();
  void Reset();
  // The column's text, or nullptr for NULL, no row, or a column out of range.
  const char* Value(int column) const;

  PgConnection* connection_;
  const std::string sql_;
  const std::string translated_;
  const int parameter_count_;
  const std::string name_;
  bool in_use_ = false;

  std::vector<Param> kinds_;
  std::vector<std::string> values_;
  std::string bind_error_;
  bool nul_in_text_ = false;  // a text parameter held NUL: the caller's input, not our SQL

  PGresult* result_ = nullptr;
  bool executed_ = false;
  int row_ = -1;
  int rows_ = 0;
  sql::Failure failure_ = sql::Failure::kNone;
  // Decoded bytea per column of the current row (libpq hands back its hex text form).
  mutable std::vector<std::vector<std::byte>> blobs_;
  mutable std::vector<bool> blob_ready_;
};

}  // namespace sb::storage::postgres
