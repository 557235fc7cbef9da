// LangBot's SQLite database (data/langbot.db), opened read-only: the file, its journal and its
// folder are left exactly as they were.
#pragma once

#include <filesystem>
#include <memory>

#include "langbot_import/source.hpp"

struct sqlite3;

namespace sb::langbot_import {

class SqliteSource final : public Source {
 public:
  // kNotFound when the file does not exist; kInvalidArgument when it is not a readable SQLite
  // database (damaged, another format) — checked here with PRAGMA quick_check.
  static util::Result<std::unique_ptr<SqliteSource>> Open(const std::filesystem::path& file);
  ~SqliteSource() override;

  std::string Describe() const override;
  util::Result<std::optional<std::vector<std::string>>> Columns(const std::string& table) override;
  util::Result<std::vector<Row>> Rows(const std::string& table,
                                      const std::vector<std::string>& columns,
                                      std::size_t max_rows) override;

 private:
  SqliteSource(sqlite3* db, std::filesystem::path file) : db_(db), file_(std::move(file)) {}
  util::Error Damaged(const std::string& what) const;

  sqlite3* db_;
  std::filesystem::path file_;
};

}  // namespace sb::langbot_import
