// UserRepository and ApiKeyRepository over SQL (SQLite or PostgreSQL). Only hashes are stored; the
// first-user insert counts and inserts inside one write transaction so two concurrent sign-ups
// cannot both win.
#pragma once

#include "domain/account.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlUserRepository final : public domain::UserRepository {
 public:
  explicit SqlUserRepository(Database& db) : db_(db) {}

  util::Result<int> Count() override;
  util::Result<domain::User> Get(const std::string& username) override;
  util::Result<void> Insert(const domain::User& user, bool only_if_none) override;
  util::Result<void> UpdatePassword(const std::string& username, const std::string& hash,
                                    util::TimePoint now) override;

 private:
  Database& db_;
};

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlApiKeyRepository final : public domain::ApiKeyRepository {
 public:
  explicit SqlApiKeyRepository(Database& db) : db_(db) {}

  util::Result<std::vector<domain::ApiKey>> List() override;
  util::Result<domain::ApiKey> Get(std::int64_t id) override;
  util::Result<domain::ApiKey> FindByHash(const std::string& key_hash) override;
  // kConflict when another key has the same hash.
  util::Result<std::int64_t> Insert(const domain::ApiKey& key) override;
  util::Result<void> Update(const domain::ApiKey& key) override;
  util::Result<void> Delete(std::int64_t id) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
