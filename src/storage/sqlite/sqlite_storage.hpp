// The SQLite backend of domain::Storage: one database file, migrated at open, under the shared SQL
// repositories. The composition root opens it once and closes it last.
//   auto storage = SqliteStorage::Open("data/switchboard.db", secret_box);
//   if (!storage) return storage.error();  // kInternal: unreadable file, failed migration
#pragma once

#include <memory>
#include <string>

#include "storage/sql/sql_storage.hpp"
#include "util/error.hpp"
#include "util/secret_box.hpp"

namespace sb::storage::sqlite {

// Thread-safe. Repositories stay valid as long as this object; after Close() their calls fail with
// kUnavailable.
class SqliteStorage final : public sql::SqlStorage {
 public:
  // Creates the file (and its parent directory) when missing, applies pending migrations and
  // seals with `secrets` the provider keys and bot configs of rows stored in plain text (by a
  // version before sealing). Those columns are read and written through `secrets` from then on.
  static util::Result<std::unique_ptr<SqliteStorage>> Open(const std::string& path,
                                                           util::SecretBox secrets);

 private:
  using sql::SqlStorage::SqlStorage;
};

}  // namespace sb::storage::sqlite
