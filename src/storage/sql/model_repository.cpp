#include "storage/sql/model_repository.hpp"

#include <fmt/format.h>

#include "storage/sql/provider_repository.hpp"
#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using util::ErrorCode;

// A macro so each statement is one string literal at compile time (it is also the cache key).
#define SB_MODEL_COLUMNS                                                                    \
  "uuid, kind, name, description, provider_uuid, requester_config, abilities, extra_args, " \
  "prefered_ranking, dimensions, created_at, updated_at"

const char* KindText(domain::ModelKind kind) {
  return kind == domain::ModelKind::kLlm ? "llm" : "embedding";
}

util::Result<domain::Model> ReadRow(const Statement& s) {
  domain::Model m;
  m.uuid = util::ModelId::FromTrusted(s.Text(0));
  m.kind = s.Text(1) == "llm" ? domain::ModelKind::kLlm : domain::ModelKind::kEmbedding;
  m.name = s.Text(2);
  m.description = s.Text(3);
  m.provider_uuid = util::ProviderId::FromTrusted(s.Text(4));
  auto config = ObjectFromText(s.Text(5), "model requester_config");
  if (!config) return tl::make_unexpected(config.error());
  m.requester_config = std::move(*config);
  auto abilities = StringListFromText(s.Text(6), "model abilities");
  if (!abilities) return tl::make_unexpected(abilities.error());
  m.abilities = std::move(*abilities);
  auto extra = ObjectFromText(s.Text(7), "model extra_args");
  if (!extra) return tl::make_unexpected(extra.error());
  m.extra_args = std::move(*extra);
  m.prefered_ranking = s.Int(8);
  if (!s.IsNull(9)) m.dimensions = s.Int(9);
  m.created_at = TimeAt(s.Int64(10));
  m.updated_at = TimeAt(s.Int64(11));
  return m;
}

util::Error NotFound(domain::ModelKind kind, const util::ModelId& id) {
  return util::Error{ErrorCode::kNotFound,
                     fmt::format("{} {} not found", domain::ModelKindName(kind), id.str())};
}

util::Error NoProvider(const util::ProviderId& id) {
  return util::Error{ErrorCode::kInvalidArgument,
                     fmt::format("provider {} does not exist", id.str())};
}

// Inside the write transaction, so the provider cannot disappear before the insert or update.
util::Result<void> CheckProvider(Connection& c, const util::ProviderId& id) {
  auto exists = Exists(c, "SELECT 1 FROM providers WHERE uuid = ?", id.str());
  if (!exists) return tl::make_unexpected(exists.error());
  if (!*exists) return tl::make_unexpected(NoProvider(id));
  return util::Ok();
}

}  // namespace

util::Result<std::vector<domain::Model>> SqlModelRepository::List(
    domain::ModelKind kind, const std::optional<util::ProviderId>& provider) {
  return db_.Read([&](Connection& c) -> util::Result<std::vector<domain::Model>> {
    auto stmt = provider ? Query(c,
                                 "SELECT " SB_MODEL_COLUMNS
                                 " FROM models WHERE kind = ? AND provider_uuid = ?"
                                 " ORDER BY created_at, rowid",
                                 KindText(kind), provider->str())
                         : Query(c,
                                 "SELECT " SB_MODEL_COLUMNS
                                 " FROM models WHERE kind = ? ORDER BY created_at, rowid",
                                 KindText(kind));
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::Model>(*stmt, ReadRow);
  });
}

util::Result<domain::Model> SqlModelRepository::Get(domain::ModelKind kind,
                                                    const util::ModelId& id) {
  return db_.Read([&](Connection& c) -> util::Result<domain::Model> {
    auto stmt = Query(c, "SELECT " SB_MODEL_COLUMNS " FROM models WHERE uuid = ? AND kind = ?",
                      id.str(), KindText(kind));
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(NotFound(kind, id));
    return ReadRow(*stmt);
  });
}

namespace {

util::Result<void> InsertModelRow(Connection& c, const domain::Model& m) {
  if (auto ok = CheckProvider(c, m.provider_uuid); !ok) return ok;
  auto stmt = Query(
      c, "INSERT INTO models (" SB_MODEL_COLUMNS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      m.uuid.str(), KindText(m.kind), m.name, m.description, m.provider_uuid.str(),
      JsonToText(m.requester_config), StringListToText(m.abilities), JsonToText(m.extra_args),
      m.prefered_ranking, m.dimensions, Millis(m.created_at), Millis(m.updated_at));
  if (!stmt) return tl::make_unexpected(stmt.error());
  auto r = stmt->Run();
  if (!r && stmt->FailedOnUnique()) {
    return util::Fail(ErrorCode::kConflict, fmt::format("model {} already exists", m.uuid.str()));
  }
  if (!r && stmt->FailedOnForeignKey()) return tl::make_unexpected(NoProvider(m.provider_uuid));
  return r;
}

}  // namespace

util::Result<void> SqlModelRepository::Insert(const domain::Model& m) {
  return db_.Write([&](Connection& c) { return InsertModelRow(c, m); });
}

util::Result<void> SqlModelRepository::InsertWithProvider(const domain::Provider& provider,
                                                          const domain::Model& m) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    if (auto r = InsertProviderRow(c, provider, secrets_); !r) return r;
    return InsertModelRow(c, m);
  });
}

util::Result<void> SqlModelRepository::Update(const domain::Model& m) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto exists = Exists(c, "SELECT 1 FROM models WHERE uuid = ? AND kind = ?", m.uuid.str(),
                         KindText(m.kind));
    if (!exists) return tl::make_unexpected(exists.error());
    if (!*exists) return tl::make_unexpected(NotFound(m.kind, m.uuid));
    if (auto ok = CheckProvider(c, m.provider_uuid); !ok) return ok;
    auto stmt = Query(c,
                      "UPDATE models SET name = ?, description = ?, provider_uuid = ?, "
                      "requester_config = ?, abilities = ?, extra_args = ?, prefered_ranking = ?, "
                      "dimensions = ?, updated_at = ? WHERE uuid = ? AND kind = ?",
                      m.name, m.description, m.provider_uuid.str(), JsonToText(m.requester_config),
                      StringListToText(m.abilities), JsonToText(m.extra_args), m.prefered_ranking,
                      m.dimensions, Millis(m.updated_at), m.uuid.str(), KindText(m.kind));
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto r = stmt->Run();
    if (!r && stmt->FailedOnForeignKey()) return tl::make_unexpected(NoProvider(m.provider_uuid));
    return r;
  });
}

util::Result<void> SqlModelRepository::Delete(domain::ModelKind kind, const util::ModelId& id) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed =
        Execute(c, "DELETE FROM models WHERE uuid = ? AND kind = ?", id.str(), KindText(kind));
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(NotFound(kind, id));
    return util::Ok();
  });
}

util::Result<void> SqlModelRepository::SetDimensions(const util::ModelId& id, int dimensions) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed = Execute(c, "UPDATE models SET dimensions = ? WHERE uuid = ? AND kind = ?",
                           dimensions, id.str(), KindText(domain::ModelKind::kEmbedding));
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(NotFound(domain::ModelKind::kEmbedding, id));
    return util::Ok();
  });
}

}  // namespace sb::storage::sql
