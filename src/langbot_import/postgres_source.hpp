// LangBot's tables in PostgreSQL (LangBot's `database.use: postgresql`), read through libpq in
// one read-only transaction, so every table is read from the same snapshot.
#pragma once

#include <memory>
#include <string>

#include "langbot_import/source.hpp"

struct pg_conn;

namespace sb::langbot_import {

class PostgresSource final : public Source {
 public:
  // `url`: postgresql://user:password@host:port/database. kInvalidArgument when the connection
  // fails (the message names host and database, never the password).
  static util::Result<std::unique_ptr<PostgresSource>> Open(const std::string& url);
  ~PostgresSource() override;

  std::string Describe() const override;
  util::Result<std::optional<std::vector<std::string>>> Columns(const std::string& table) override;
  util::Result<std::vector<Row>> Rows(const std::string& table,
                                      const std::vector<std::string>& columns,
                                      std::size_t max_rows) override;

 private:
  PostgresSource(pg_conn* conn, std::string where) : conn_(conn), where_(std::move(where)) {}

  pg_conn* conn_;
  std::string where_;  // "host:port/database"
};

}  // namespace sb::langbot_import
