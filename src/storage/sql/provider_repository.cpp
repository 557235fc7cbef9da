#include "storage/sql/provider_repository.hpp"

#include <fmt/format.h>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using util::ErrorCode;

constexpr const char* kSelect = R"sql(
SELECT p.uuid, p.name, p.requester, p.base_url, p.api_keys, p.created_at, p.updated_at,
       (SELECT COUNT(*) FROM models m WHERE m.provider_uuid = p.uuid AND m.kind = 'llm'),
       (SELECT COUNT(*) FROM models m WHERE m.provider_uuid = p.uuid AND m.kind = 'embedding')
FROM providers p)sql";

std::string KeysContext(const util::ProviderId& id) { return "providers.api_keys:" + id.str(); }

util::Result<domain::ProviderUsage> ReadRow(const Statement& s, const util::SecretBox& secrets) {
  domain::ProviderUsage u;
  u.provider.uuid = util::ProviderId::FromTrusted(s.Text(0));
  u.provider.name = s.Text(1);
  u.provider.requester = s.Text(2);
  u.provider.base_url = s.Text(3);
  auto keys_text = secrets.Open(s.Text(4), KeysContext(u.provider.uuid));
  if (!keys_text) return tl::make_unexpected(keys_text.error());
  auto keys = StringListFromText(*keys_text, "provider api_keys");
  if (!keys) return tl::make_unexpected(keys.error());
  u.provider.api_keys = std::move(*keys);
  u.provider.created_at = TimeAt(s.Int64(5));
  u.provider.updated_at = TimeAt(s.Int64(6));
  u.llm_count = s.Int(7);
  u.embedding_count = s.Int(8);
  return u;
}

util::Error NotFound(const util::ProviderId& id) {
  return util::Error{ErrorCode::kNotFound, fmt::format("provider {} not found", id.str())};
}

}  // namespace

std::string SealProviderKeys(const util::SecretBox& secrets, const util::ProviderId& id,
                             const std::string& keys_text) {
  return secrets.Seal(keys_text, KeysContext(id));
}

util::Result<std::vector<domain::ProviderUsage>> SqlProviderRepository::List() {
  static const std::string kSql = std::string(kSelect) + " ORDER BY p.created_at, p.rowid";
  return db_.Read([this](Connection& c) -> util::Result<std::vector<domain::ProviderUsage>> {
    auto stmt = Query(c, kSql);
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::ProviderUsage>(
        *stmt, [this](const Statement& s) { return ReadRow(s, secrets_); });
  });
}

util::Result<domain::ProviderUsage> SqlProviderRepository::Get(const util::ProviderId& id) {
  static const std::string kSql = std::string(kSelect) + " WHERE p.uuid = ?";
  return db_.Read([&](Connection& c) -> util::Result<domain::ProviderUsage> {
    auto stmt = Query(c, kSql, id.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(NotFound(id));
    return ReadRow(*stmt, secrets_);
  });
}

util::Result<void> InsertProviderRow(Connection& c, const domain::Provider& p,
                                     const util::SecretBox& secrets) {
  auto stmt = Query(c,
                    "INSERT INTO providers (uuid, name, requester, base_url, api_keys, "
                    "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    p.uuid.str(), p.name, p.requester, p.base_url,
                    SealProviderKeys(secrets, p.uuid, StringListToText(p.api_keys)),
                    Millis(p.created_at), Millis(p.updated_at));
  if (!stmt) return tl::make_unexpected(stmt.error());
  auto r = stmt->Run();
  if (!r && stmt->FailedOnUnique()) {
    return util::Fail(ErrorCode::kConflict,
                      fmt::format("provider {} already exists", p.uuid.str()));
  }
  return r;
}

util::Result<void> SqlProviderRepository::Insert(const domain::Provider& p) {
  return db_.Write([&](Connection& c) { return InsertProviderRow(c, p, secrets_); });
}

util::Result<void> SqlProviderRepository::Update(const domain::Provider& p) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed = Execute(c,
                           "UPDATE providers SET name = ?, requester = ?, base_url = ?, "
                           "api_keys = ?, updated_at = ? WHERE uuid = ?",
                           p.name, p.requester, p.base_url,
                           SealProviderKeys(secrets_, p.uuid, StringListToText(p.api_keys)),
                           Millis(p.updated_at), p.uuid.str());
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(NotFound(p.uuid));
    return util::Ok();
  });
}

util::Result<void> SqlProviderRepository::Delete(const util::ProviderId& id) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    // Counted first for a message that says how many; the RESTRICT foreign key below stays the
    // guarantee.
    auto used = QueryInt(c, "SELECT COUNT(*) FROM models WHERE provider_uuid = ?", id.str());
    if (!used) return tl::make_unexpected(used.error());
    if (*used > 0) {
      return util::Fail(ErrorCode::kConflict,
                        fmt::format("provider {} is used by {} model(s)", id.str(), *used));
    }
    auto stmt = Query(c, "DELETE FROM providers WHERE uuid = ?", id.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    if (auto r = stmt->Run(); !r) {
      if (stmt->FailedOnForeignKey()) {
        return util::Fail(ErrorCode::kConflict,
                          fmt::format("provider {} is used by a model", id.str()));
      }
      return r;
    }
    if (c.Changes() == 0) return tl::make_unexpected(NotFound(id));
    return util::Ok();
  });
}

}  // namespace sb::storage::sql
