// The PostgreSQL backend of domain::Storage: one database that several instances may share,
// migrated at open (by one instance at a time), under the shared SQL repositories.
//   auto storage = PostgresStorage::Open("postgresql://sb@db/sb", 8, secret_box);
//   if (!storage) return storage.error();  // kUnavailable: cannot connect; kInternal: migration
#pragma once

#include <memory>
#include <string>

#include "storage/sql/sql_storage.hpp"
#include "util/error.hpp"
#include "util/secret_box.hpp"

namespace sb::storage::postgres {

// Thread-safe. Repositories stay valid as long as this object; after Close() their calls fail with
// kUnavailable, as they do while the server cannot be reached.
class PostgresStorage final : public sql::SqlStorage {
 public:
  // Connects to `url` (libpq's URI form) with at most `pool_size` connections and applies pending
  // migrations. Messages never show the URL's password.
  static util::Result<std::unique_ptr<PostgresStorage>> Open(const std::string& url, int pool_size,
                                                             util::SecretBox secrets);

 private:
  using sql::SqlStorage::SqlStorage;
};

}  // namespace sb::storage::postgres
