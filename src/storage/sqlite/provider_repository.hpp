// ProviderRepository over SQLite. Model counts per provider come from the same query as the
// providers themselves, so listing costs one statement however many providers there are.
#pragma once

#include "domain/provider.hpp"
#include "storage/sqlite/database.hpp"

namespace sb::storage::sqlite {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
// The provider INSERT, inside a caller's write transaction (also used by the model repository
// to store a model together with its inline provider).
util::Result<void> InsertProviderRow(Connection& c, const domain::Provider& provider);

class SqliteProviderRepository final : public domain::ProviderRepository {
 public:
  explicit SqliteProviderRepository(Database& db) : db_(db) {}

  util::Result<std::vector<domain::ProviderUsage>> List() override;
  util::Result<domain::ProviderUsage> Get(const util::ProviderId& id) override;
  // kConflict when the uuid is taken.
  util::Result<void> Insert(const domain::Provider& provider) override;
  util::Result<void> Update(const domain::Provider& provider) override;
  util::Result<void> Delete(const util::ProviderId& id) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sqlite
