// ProviderRepository over SQL (SQLite or PostgreSQL). Model counts per provider come from the same
// query as the providers themselves, so listing costs one statement however many providers there
// are.
#pragma once

#include "domain/provider.hpp"
#include "storage/sql/database.hpp"
#include "util/secret_box.hpp"

namespace sb::storage::sql {

// The provider INSERT, inside a caller's write transaction (also used by the model repository
// to store a model together with its inline provider). The API keys are sealed with `secrets`.
util::Result<void> InsertProviderRow(Connection& c, const domain::Provider& provider,
                                     const util::SecretBox& secrets);

// The stored form of a provider's API keys and back: sealed under the provider's uuid.
std::string SealProviderKeys(const util::SecretBox& secrets, const util::ProviderId& id,
                             const std::string& keys_text);

// Thread-safe; every method is one transaction on `db`. `db` and `secrets` (which seals the API
// keys at rest) must outlive this object.

class SqlProviderRepository final : public domain::ProviderRepository {
 public:
  SqlProviderRepository(Database& db, const util::SecretBox& secrets)
      : db_(db), secrets_(secrets) {}

  util::Result<std::vector<domain::ProviderUsage>> List() override;
  util::Result<domain::ProviderUsage> Get(const util::ProviderId& id) override;
  // kConflict when the uuid is taken.
  util::Result<void> Insert(const domain::Provider& provider) override;
  util::Result<void> Update(const domain::Provider& provider) override;
  util::Result<void> Delete(const util::ProviderId& id) override;

 private:
  Database& db_;
  const util::SecretBox& secrets_;
};

}  // namespace sb::storage::sql
