// Where a LangBot installation keeps its rows, seen as tables of text cells, so the importer does
// not care whether LangBot ran on SQLite or PostgreSQL.
//   auto source = SqliteSource::Open(dir / "langbot.db");   // read-only, never writes
//   auto columns = (*source)->Columns("bots");               // nullopt: no such table
//   auto rows = (*source)->Rows("bots", {"uuid", "name"});
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace sb::langbot_import {

// One row: column name to its value as text (SQL NULL is nullopt). Booleans come as the
// backend spells them ("0"/"1" from SQLite, "t"/"f" from PostgreSQL); JSON columns as JSON text.
using Row = std::map<std::string, std::optional<std::string>>;

// Table and column names are the importer's own constants: lower-case ASCII, digits and '_', at
// most 64 bytes. Anything else is refused rather than quoted, so no name can change a statement.
bool IsPlainName(const std::string& name);

// `SELECT "c1", "c2" FROM "table"` for both backends; kInternal when a name is not plain.
util::Result<std::string> SelectColumns(const std::string& table,
                                        const std::vector<std::string>& columns);

// A read-only view of LangBot's database. Implementations never modify it. Not thread-safe.
class Source {
 public:
  virtual ~Source() = default;
  // For messages: "SQLite database /srv/langbot/data/langbot.db".
  virtual std::string Describe() const = 0;
  // The column names of `table`, or nullopt when there is no such table. kInvalidArgument when
  // the database cannot be read (damaged, not a database).
  virtual util::Result<std::optional<std::vector<std::string>>> Columns(
      const std::string& table) = 0;
  // Every row of `table` with the given columns (which must exist), in a stable order.
  // kInvalidArgument when the database cannot be read; kPayloadTooLarge past `max_rows`.
  virtual util::Result<std::vector<Row>> Rows(const std::string& table,
                                              const std::vector<std::string>& columns,
                                              std::size_t max_rows) = 0;
};

}  // namespace sb::langbot_import
