// ModelRepository over SQL (SQLite or PostgreSQL): LLM and embedding models share the `models`
// table, told apart by its `kind` column; a model of the other kind is treated as absent.
#pragma once

#include "domain/model.hpp"
#include "storage/sql/database.hpp"
#include "util/secret_box.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`. `db` and `secrets` (for the API keys of
// a provider stored with a model) must outlive this object.
class SqlModelRepository final : public domain::ModelRepository {
 public:
  SqlModelRepository(Database& db, const util::SecretBox& secrets) : db_(db), secrets_(secrets) {}

  util::Result<std::vector<domain::Model>> List(
      domain::ModelKind kind, const std::optional<util::ProviderId>& provider) override;
  util::Result<domain::Model> Get(domain::ModelKind kind, const util::ModelId& id) override;
  // Also kConflict when the uuid is taken (by a model of either kind).
  util::Result<void> Insert(const domain::Model& model) override;
  util::Result<void> InsertWithProvider(const domain::Provider& provider,
                                        const domain::Model& model) override;
  util::Result<void> Update(const domain::Model& model) override;
  util::Result<void> Delete(domain::ModelKind kind, const util::ModelId& id) override;
  util::Result<void> SetDimensions(const util::ModelId& id, int dimensions) override;

 private:
  Database& db_;
  const util::SecretBox& secrets_;
};

}  // namespace sb::storage::sql
