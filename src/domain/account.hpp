// Local user accounts and API keys. Secrets are stored only as hashes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::domain {

struct User {
  std::string username;
  std::string password_hash;  // argon2id, libsodium encoded form
  util::TimePoint created_at;
  util::TimePoint updated_at;
  // Moves up with every password change or reset; a user token carries the generation it was
  // issued for, so the tokens issued before a change stop working.
  std::int64_t token_generation = 0;
};

struct ApiKey {
  std::int64_t id = 0;  // assigned by the repository
  std::string name;
  std::string description;
  std::string key_hash;    // SHA-256 hex of the whole key
  std::string masked_key;  // "lbk_abcd...wxyz", safe to show
  util::TimePoint created_at;
  util::TimePoint updated_at;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class UserRepository {
 public:
  virtual ~UserRepository() = default;
  virtual util::Result<int> Count() = 0;
  // kNotFound when absent.
  virtual util::Result<User> Get(const std::string& username) = 0;
  // kConflict when the name is taken, or when `only_if_none` and any user exists (atomically).
  virtual util::Result<void> Insert(const User& user, bool only_if_none) = 0;
  // Replaces the hash and moves token_generation one up, atomically. kNotFound when absent.
  virtual util::Result<void> UpdatePassword(const std::string& username, const std::string& hash,
                                            util::TimePoint now) = 0;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class ApiKeyRepository {
 public:
  virtual ~ApiKeyRepository() = default;
  // Oldest first.
  virtual util::Result<std::vector<ApiKey>> List() = 0;
  // kNotFound when absent.
  virtual util::Result<ApiKey> Get(std::int64_t id) = 0;
  // kNotFound when no key has this hash.
  virtual util::Result<ApiKey> FindByHash(const std::string& key_hash) = 0;
  // Returns the new id.
  virtual util::Result<std::int64_t> Insert(const ApiKey& key) = 0;
  // Replaces name and description. kNotFound when absent.
  virtual util::Result<void> Update(const ApiKey& key) = 0;
  // kNotFound when absent.
  virtual util::Result<void> Delete(std::int64_t id) = 0;
};

}  // namespace sb::domain
