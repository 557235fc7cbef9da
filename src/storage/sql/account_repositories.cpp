#include "storage/sql/account_repositories.hpp"

#include <fmt/format.h>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using util::ErrorCode;

constexpr const char* kApiKeyColumns =
    "SELECT id, name, description, key_hash, masked_key, created_at, updated_at FROM api_keys ";

util::Result<domain::ApiKey> ReadApiKey(const Statement& s) {
  domain::ApiKey k;
  k.id = s.Int64(0);
  k.name = s.Text(1);
  k.description = s.Text(2);
  k.key_hash = s.Text(3);
  k.masked_key = s.Text(4);
  k.created_at = TimeAt(s.Int64(5));
  k.updated_at = TimeAt(s.Int64(6));
  return k;
}

util::Error ApiKeyNotFound(std::int64_t id) {
  return util::Error{ErrorCode::kNotFound, fmt::format("API key {} not found", id)};
}

// The API key that `sql` (one parameter) selects, or `not_found`.
template <typename Arg>
util::Result<domain::ApiKey> GetApiKey(Database& db, const std::string& sql, const Arg& arg,
                                       const util::Error& not_found) {
  return db.Read([&](Connection& c) -> util::Result<domain::ApiKey> {
    auto stmt = Query(c, sql, arg);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(not_found);
    return ReadApiKey(*stmt);
  });
}

}  // namespace

util::Result<int> SqlUserRepository::Count() {
  return db_.Read([](Connection& c) -> util::Result<int> {
    auto n = QueryInt(c, "SELECT COUNT(*) FROM users");
    if (!n) return tl::make_unexpected(n.error());
    return static_cast<int>(*n);
  });
}

util::Result<domain::User> SqlUserRepository::Get(const std::string& username) {
  return db_.Read([&](Connection& c) -> util::Result<domain::User> {
    auto stmt = Query(c,
                      "SELECT username, password_hash, created_at, updated_at, token_generation "
                      "FROM users WHERE username = ?",
                      username);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) {
      return util::Fail(ErrorCode::kNotFound, fmt::format("user '{}' not found", username));
    }
    return domain::User{stmt->Text(0), stmt->Text(1), TimeAt(stmt->Int64(2)),
                        TimeAt(stmt->Int64(3)), stmt->Int64(4)};
  });
}

util::Result<void> SqlUserRepository::Insert(const domain::User& user, bool only_if_none) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    // The count and the insert share the write transaction, which holds the write lock from
    // BEGIN IMMEDIATE on: no second first user can slip in between.
    if (only_if_none) {
      auto any = Exists(c, "SELECT 1 FROM users LIMIT 1");
      if (!any) return tl::make_unexpected(any.error());
      if (*any) return util::Fail(ErrorCode::kConflict, "a user already exists");
    }
    auto stmt =
        Query(c,
              "INSERT INTO users (username, password_hash, created_at, updated_at) "
              "VALUES (?, ?, ?, ?)",
              user.username, user.password_hash, Millis(user.created_at), Millis(user.updated_at));
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto r = stmt->Run();
    if (!r && stmt->FailedOnUnique()) {
      return util::Fail(ErrorCode::kConflict,
                        fmt::format("user '{}' already exists", user.username));
    }
    return r;
  });
}

util::Result<void> SqlUserRepository::UpdatePassword(const std::string& username,
                                                     const std::string& hash, util::TimePoint now) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed = Execute(c,
                           "UPDATE users SET password_hash = ?, updated_at = ?, "
                           "token_generation = token_generation + 1 WHERE username = ?",
                           hash, Millis(now), username);
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) {
      return util::Fail(ErrorCode::kNotFound, fmt::format("user '{}' not found", username));
    }
    return util::Ok();
  });
}

util::Result<std::vector<domain::ApiKey>> SqlApiKeyRepository::List() {
  static const std::string kSql = std::string(kApiKeyColumns) + "ORDER BY created_at, id";
  return db_.Read([](Connection& c) -> util::Result<std::vector<domain::ApiKey>> {
    auto stmt = Query(c, kSql);
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::ApiKey>(*stmt, ReadApiKey);
  });
}

util::Result<domain::ApiKey> SqlApiKeyRepository::Get(std::int64_t id) {
  static const std::string kSql = std::string(kApiKeyColumns) + "WHERE id = ?";
  return GetApiKey(db_, kSql, id, ApiKeyNotFound(id));
}

util::Result<domain::ApiKey> SqlApiKeyRepository::FindByHash(const std::string& key_hash) {
  static const std::string kSql = std::string(kApiKeyColumns) + "WHERE key_hash = ?";
  // The hash identifies a secret: keep it out of the message.
  return GetApiKey(db_, kSql, key_hash, util::Error{ErrorCode::kNotFound, "no API key matches"});
}

util::Result<std::int64_t> SqlApiKeyRepository::Insert(const domain::ApiKey& k) {
  return db_.Write([&](Connection& c) -> util::Result<std::int64_t> {
    auto stmt = Query(c,
                      "INSERT INTO api_keys (name, description, key_hash, masked_key, created_at, "
                      "updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                      k.name, k.description, k.key_hash, k.masked_key, Millis(k.created_at),
                      Millis(k.updated_at));
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) {
      if (stmt->FailedOnUnique()) {
        return util::Fail(ErrorCode::kConflict, "an API key with the same hash already exists");
      }
      return tl::make_unexpected(row.error());
    }
    const std::int64_t id = stmt->Int64(0);
    if (auto rest = stmt->Run(); !rest) return tl::make_unexpected(rest.error());
    return id;
  });
}

util::Result<void> SqlApiKeyRepository::Update(const domain::ApiKey& k) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed =
        Execute(c, "UPDATE api_keys SET name = ?, description = ?, updated_at = ? WHERE id = ?",
                k.name, k.description, Millis(k.updated_at), k.id);
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(ApiKeyNotFound(k.id));
    return util::Ok();
  });
}

util::Result<void> SqlApiKeyRepository::Delete(std::int64_t id) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed = Execute(c, "DELETE FROM api_keys WHERE id = ?", id);
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(ApiKeyNotFound(id));
    return util::Ok();
  });
}

}  // namespace sb::storage::sql
