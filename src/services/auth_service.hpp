// Accounts and credentials (contract §2): first-run init, login with throttling, JWT user
// tokens, password change and recovery-key reset, and API keys hashed at rest.
//   auto token = auth.Login("admin", "pw", "127.0.0.1");  // kUnauthenticated / kRateLimited
//   auto user = auth.VerifyToken(*token);                 // the username
//   auto created = auth.CreateApiKey("ci", "");           // created->key shown once
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "domain/account.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::services {

struct AuthOptions {
  std::string jwt_secret;    // from the data directory, never logged
  std::string recovery_key;  // from the data directory
  std::string issuer = "LangBot-community";
  int jwt_expire_seconds = 7 * 24 * 3600;
  int login_max_failures = 5;
  int login_window_seconds = 300;
  bool allow_modify_login_info = true;
};

struct CreatedApiKey {
  domain::ApiKey record;
  std::string key;  // the whole key; exists only in this answer
};

// Thread-safe. Password hashing is slow on purpose: call from the blocking pool.
class AuthService {
 public:
  AuthService(domain::UserRepository& users, domain::ApiKeyRepository& keys,
              const util::Clock& clock, AuthOptions options);

  util::Result<bool> IsInitialized();
  // Creates the first account. kConflict once one exists; kInvalidArgument for an empty user or
  // a password shorter than 8 characters.
  util::Result<void> InitAdmin(const std::string& user, const std::string& password);
  // Creates or replaces an account's password (CLI). kInvalidArgument as above.
  util::Result<void> UpsertUser(const std::string& user, const std::string& password);

  // A fresh token. kUnauthenticated on a wrong user or password, kRateLimited after too many
  // failures for this account or this client address within the window.
  util::Result<std::string> Login(const std::string& user, const std::string& password,
                                  const std::string& client_address);
  // The username of a valid, unexpired token of an existing account; kUnauthenticated otherwise.
  util::Result<std::string> VerifyToken(std::string_view token);
  // VerifyToken without the database: nullopt when the account has not been seen yet.
  std::optional<util::Result<std::string>> VerifyTokenCached(std::string_view token);
  std::string IssueToken(const std::string& user);

  // kInvalidArgument when `current` is wrong or `next` too short; kPermissionDenied when login
  // info changes are disabled.
  util::Result<void> ChangePassword(const std::string& user, const std::string& current,
                                    const std::string& next);
  // kPermissionDenied when the recovery key is wrong; kNotFound for an unknown user.
  util::Result<void> ResetPassword(const std::string& user, const std::string& recovery_key,
                                   const std::string& next);
  util::Result<domain::User> GetUser(const std::string& user);

  util::Result<CreatedApiKey> CreateApiKey(const std::string& name, const std::string& description);
  util::Result<std::vector<domain::ApiKey>> ListApiKeys();
  util::Result<domain::ApiKey> GetApiKey(std::int64_t id);
  util::Result<void> UpdateApiKey(std::int64_t id, const std::optional<std::string>& name,
                                  const std::optional<std::string>& description);
  util::Result<void> DeleteApiKey(std::int64_t id);
  // The key record for a presented key; kUnauthenticated when unknown.
  util::Result<domain::ApiKey> VerifyApiKey(std::string_view key);
  // VerifyApiKey without the database: nullopt when the key is not in the cache.
  std::optional<util::Result<domain::ApiKey>> VerifyApiKeyCached(std::string_view key);

 private:
  util::Result<void> CheckPassword(const std::string& password) const;
  // The argon2id hash of an acceptable user name and password.
  util::Result<std::string> CheckAndHash(const std::string& user,
                                         const std::string& password) const;
  // Signature, header and expiry of a JWT; the username it names.
  util::Result<std::string> CheckTokenSignature(std::string_view token) const;
  bool Throttled(const std::string& user, const std::string& address);
  void RecordFailure(const std::string& user, const std::string& address);
  void ClearFailures(const std::string& user, const std::string& address);
  // Before and after every key change (see key_epoch_).
  void InvalidateKeyCache();

  domain::UserRepository& users_;
  domain::ApiKeyRepository& keys_;
  const util::Clock& clock_;
  AuthOptions options_;

  std::mutex throttle_mu_;
  // Failure times per "u:<user>" and "a:<address>", pruned to the window.
  std::unordered_map<std::string, std::vector<util::TimePoint>>
      failures_;  // guarded by throttle_mu_

  std::shared_mutex cache_mu_;
  // Verified keys by hash, so authenticated requests skip the database. Cleared on any change.
  std::unordered_map<std::string, domain::ApiKey> key_cache_;  // guarded by cache_mu_
  // Accounts known to exist, so token checks skip the database. Guarded by cache_mu_.
  std::map<std::string, bool> known_users_;
  // Grows with every key change (guarded by cache_mu_): a lookup that started before a change
  // must not put what it read into the cache, or a revoked key could come back.
  std::uint64_t key_epoch_ = 0;
};

}  // namespace sb::services
