#include "langbot_import/sqlite_source.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

namespace sb::langbot_import {
namespace {

using util::ErrorCode;
using util::Fail;

// A file: URI for `path` (RFC 8089 plus SQLite's rules: '?', '#' and '%' must be escaped).
std::string FileUri(const std::filesystem::path& path) {
  std::string uri = "file:";
  for (char c : path.string()) {
    if (c == '?' || c == '#' || c == '%') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  // mode=ro: SQLITE_OPEN_READONLY for the URI too; no journal is created or rolled back.
  uri += "?mode=ro";
  return uri;
}

// Whether SQLite would write beside `file` even when opened read-only: the header says WAL mode
// (bytes 18 and 19 are 2; a reader creates -shm and -wal), or a rollback journal or WAL file is
// there (a hot journal is rolled back; a WAL index is updated).
bool NeedsPrivateCopy(const std::filesystem::path& file) {
  std::error_code ec;
  const std::string base = file.string();
  if (std::filesystem::exists(base + "-wal", ec) ||
      std::filesystem::exists(base + "-journal", ec)) {
    return true;
  }
  std::ifstream in(file, std::ios::binary);
  char header[20] = {};
  if (!in.read(header, sizeof header)) return false;
  return std::string_view(header, 16) == std::string_view("SQLite format 3\0", 16) &&
         (header[18] == 2 || header[19] == 2);
}

// Copies the database and its WAL / journal (not the -shm index, which SQLite rebuilds) into a
// new folder of mode 0700 under the system's temporary directory; the copy holds LangBot's
// secrets. Returns the folder.
util::Result<std::filesystem::path> MakePrivateCopy(const std::filesystem::path& file) {
  std::string pattern = (std::filesystem::temp_directory_path() / "sb-langbot-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    return Fail(ErrorCode::kInternal, "cannot create a temporary folder for the database copy");
  }
  const std::filesystem::path dir = pattern;
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-journal"}) {
    const std::filesystem::path from = file.string() + suffix;
    if (!std::filesystem::exists(from, ec)) continue;
    std::filesystem::copy_file(from, dir / (std::string("langbot.db") + suffix), ec);
    if (ec) {
      std::filesystem::remove_all(dir, ec);
      return Fail(ErrorCode::kInternal,
                  fmt::format("cannot copy {} to read it: {}", from.string(), ec.message()));
    }
  }
  return dir;
}

struct Statement {
  sqlite3_stmt* stmt = nullptr;
  ~Statement() { sqlite3_finalize(stmt); }
};

}  // namespace

util::Result<std::unique_ptr<SqliteSource>> SqliteSource::Open(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    return Fail(ErrorCode::kNotFound, fmt::format("{} does not exist", file.string()));
  }
  std::filesystem::path copy_dir;
  if (NeedsPrivateCopy(file)) {
    auto copied = MakePrivateCopy(file);
    if (!copied) return tl::unexpected(copied.error());
    copy_dir = *copied;
  }
  sqlite3* db = nullptr;
  // The copy may need its journal rolled back or its WAL read into a new index: it is ours, so
  // it is opened read-write; the source itself only ever read-only.
  const int rc = copy_dir.empty() ? sqlite3_open_v2(FileUri(file).c_str(), &db,
                                                    SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr)
                                  : sqlite3_open_v2((copy_dir / "langbot.db").c_str(), &db,
                                                    SQLITE_OPEN_READWRITE, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    std::error_code ec;
    if (!copy_dir.empty()) std::filesystem::remove_all(copy_dir, ec);
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("cannot open {} read-only: {}", file.string(), why));
  }
  std::unique_ptr<SqliteSource> source(new SqliteSource(db, file, copy_dir));
  sqlite3_busy_timeout(db, 5000);  // LangBot may still be running and writing
  sqlite3_exec(db, "PRAGMA query_only=1", nullptr, nullptr, nullptr);
  // A damaged file often opens fine and fails on the first page read; look at all of it now so
  // the import refuses before it has read (let alone written) anything.
  Statement check;
  if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &check.stmt, nullptr) != SQLITE_OK) {
    return tl::unexpected(source->Damaged(sqlite3_errmsg(db)));
  }
  int step = sqlite3_step(check.stmt);
  if (step != SQLITE_ROW) return tl::unexpected(source->Damaged(sqlite3_errmsg(db)));
  const auto* first = reinterpret_cast<const char*>(sqlite3_column_text(check.stmt, 0));
  if (!first || std::string_view(first) != "ok") {
    return tl::unexpected(
        source->Damaged(fmt::format("integrity check: {}", first ? first : "no answer")));
  }
  return source;
}

SqliteSource::~SqliteSource() {
  sqlite3_close(db_);
  if (!copy_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(copy_dir_, ec);
  }
}

std::string SqliteSource::Describe() const {
  return fmt::format("SQLite database {}", file_.string());
}

util::Error SqliteSource::Damaged(const std::string& what) const {
  return {ErrorCode::kInvalidArgument,
          fmt::format("{} cannot be read: {} (a damaged file, or not an SQLite database)",
                      file_.string(), what)};
}

util::Result<std::optional<std::vector<std::string>>> SqliteSource::Columns(
    const std::string& table) {
  if (!IsPlainName(table)) return Fail(ErrorCode::kInternal, "bad table name");
  Statement s;
  const std::string sql = fmt::format("PRAGMA table_info(\"{}\")", table);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK) {
    return tl::unexpected(Damaged(sqlite3_errmsg(db_)));
  }
  std::vector<std::string> columns;
  int rc;
  while ((rc = sqlite3_step(s.stmt)) == SQLITE_ROW) {
    const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(s.stmt, 1));
    if (name) columns.emplace_back(name);
  }
  if (rc != SQLITE_DONE) return tl::unexpected(Damaged(sqlite3_errmsg(db_)));
  if (columns.empty()) return std::optional<std::vector<std::string>>();
  return std::optional<std::vector<std::string>>(std::move(columns));
}

util::Result<std::vector<Row>> SqliteSource::Rows(const std::string& table,
                                                  const std::vector<std::string>& columns,
                                                  std::size_t max_rows) {
  auto select = SelectColumns(table, columns);
  if (!select) return tl::unexpected(select.error());
  const std::string sql = *select + " ORDER BY rowid";
  Statement s;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK) {
    return tl::unexpected(Damaged(sqlite3_errmsg(db_)));
  }
  std::vector<Row> rows;
  int rc;
  while ((rc = sqlite3_step(s.stmt)) == SQLITE_ROW) {
    if (rows.size() >= max_rows) {
      return Fail(ErrorCode::kPayloadTooLarge,
                  fmt::format("table {} has more than {} rows", table, max_rows));
    }
    Row row;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const int col = static_cast<int>(i);
      if (sqlite3_column_type(s.stmt, col) == SQLITE_NULL) {
        row[columns[i]] = std::nullopt;
        continue;
      }
      const auto* bytes = static_cast<const char*>(sqlite3_column_blob(s.stmt, col));
      const int size = sqlite3_column_bytes(s.stmt, col);
      row[columns[i]] = std::string(bytes ? bytes : "", bytes ? static_cast<std::size_t>(size) : 0);
    }
    rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return tl::unexpected(Damaged(sqlite3_errmsg(db_)));
  return rows;
}

}  // namespace sb::langbot_import
