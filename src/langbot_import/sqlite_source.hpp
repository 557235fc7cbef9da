// LangBot's SQLite database (data/langbot.db), opened read-only: the file, its journal and its
// folder are left exactly as they were. A database in WAL mode, or one with a journal or WAL file
// beside it, is read from a private copy: SQLite would otherwise create or update its -shm and
// -wal files next to the source even for a read-only connection.
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
  SqliteSource(sqlite3* db, std::filesystem::path file, std::filesystem::path copy_dir)
      : db_(db), file_(std::move(file)), copy_dir_(std::move(copy_dir)) {}
  util::Error Damaged(const std::string& what) const;

  sqlite3* db_;
  std::filesystem::path file_;      // the source, for messages
  std::filesystem::path copy_dir_;  // the private copy's folder, removed at the end; or empty
};

}  // namespace sb::langbot_import
