// Accounts and credentials (contract §2): first-run init, login with throttling, JWT user
// tokens, password change and recovery-key reset, and API keys hashed at rest.
//   auto token = auth.Login("admin", "pw", "127.0.0.1");  // kUnauthenticated / kRateLimited
//   auto user = auth.VerifyToken(*token);                 // the username
//   if (auto no = auth.LoginRefusal("admin", "10.0.0.9")) ...  // 429 without touching the pool
//   auto created = auth.CreateApiKey("ci", "");           // created->key shown once
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "domain/account.hpp"
#include "domain/change_feed.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::services {

struct AuthOptions {
  std::string jwt_secret;    // from the data directory, never logged
  std::string recovery_key;  // from the data directory
  std::string issuer = "LangBot-community";
  int jwt_expire_seconds = 7 * 24 * 3600;
  // Failures within the window after which logins are refused (kRateLimited): per client
  // address (an IPv6 client by its /64), and per account and address; once an account has this
  // many failures from anywhere, an address that failed on it once is refused too. A login from an
  // address that has not failed is never refused for another address's failures.
  int login_max_failures = 5;
  int login_window_seconds = 300;
  // Password hashes running at once (each takes 64 MiB and tens of milliseconds of one core);
  // a login, reset, change or init that finds them all busy is refused (kRateLimited) at once.
  int max_concurrent_hashes = 1;
  // Logins that may reach password verification per second, over all clients (a burst of one
  // second's worth); beyond it logins are refused (kRateLimited) without hashing.
  int login_rate_per_second = 10;
  bool allow_modify_login_info = true;
};

struct CreatedApiKey {
  domain::ApiKey record;
  std::string key;  // the whole key; exists only in this answer
};

// Thread-safe. Password hashing is slow on purpose: call from the blocking pool (except the
// methods that say they never block). Every refusal for load or throttling is kRateLimited with
// retry_after_seconds set.
class AuthService {
 public:
  AuthService(domain::UserRepository& users, domain::ApiKeyRepository& keys,
              const util::Clock& clock, AuthOptions options);

  // Where committed key and password changes are announced to other instances (optional; set
  // before serving). What they announce reaches ForgetApiKeys / ForgetAccount there.
  void SetChangeFeed(domain::ChangeFeed* feed) { feed_ = feed; }
  // Drops the verified-key cache: a key was changed or revoked elsewhere. Never blocks long.
  void ForgetApiKeys() { InvalidateKeyCache(); }
  // Drops what is known of `user`'s token generation (every account's when empty): its password
  // changed elsewhere, so its next token check reads the database.
  void ForgetAccount(const std::string& user);

  util::Result<bool> IsInitialized();
  // Creates the first account. kConflict once one exists; kInvalidArgument for an empty user or
  // a password shorter than 8 characters.
  util::Result<void> InitAdmin(const std::string& user, const std::string& password);
  // Creates or replaces an account's password (CLI). kInvalidArgument as above.
  util::Result<void> UpsertUser(const std::string& user, const std::string& password);

  // A fresh token. kUnauthenticated on a wrong user or password; kRateLimited when throttled
  // (see AuthOptions), over the global login rate, or when every hashing slot is busy.
  util::Result<std::string> Login(const std::string& user, const std::string& password,
                                  const std::string& client_address);
  // The kRateLimited error Login would give now whatever the password, or nullopt when it may
  // go ahead. Never blocks (no database, no hashing): for the I/O thread, so a flood is turned
  // away before it queues on the blocking pool. Takes nothing; Login checks again.
  std::optional<util::Error> LoginRefusal(const std::string& user,
                                          const std::string& client_address);
  // The username of a valid, unexpired token of an existing account, issued since its last
  // password change; kUnauthenticated otherwise.
  util::Result<std::string> VerifyToken(std::string_view token);
  // VerifyToken without the database: nullopt when the account has not been seen yet.
  std::optional<util::Result<std::string>> VerifyTokenCached(std::string_view token);
  // A token for `user` at `generation`, unchecked (Login and tests).
  std::string IssueToken(const std::string& user, std::int64_t generation);
  // A fresh token for an existing account at its current generation (check-token);
  // kUnauthenticated when the account does not exist.
  util::Result<std::string> RenewToken(const std::string& user);

  // Ends every token issued before. kInvalidArgument when `current` is wrong or `next` too short;
  // kPermissionDenied when login info changes are disabled; kRateLimited when hashing is busy.
  util::Result<void> ChangePassword(const std::string& user, const std::string& current,
                                    const std::string& next);
  // Ends every token issued before. kPermissionDenied when the recovery key is wrong;
  // kRateLimited after login_max_failures wrong keys from this address within the window, or
  // when hashing is busy; kNotFound for an unknown user.
  util::Result<void> ResetPassword(const std::string& user, const std::string& recovery_key,
                                   const std::string& next, const std::string& client_address);
  util::Result<domain::User> GetUser(const std::string& user);

  util::Result<CreatedApiKey> CreateApiKey(const std::string& name, const std::string& description);
  // Stores a key issued elsewhere (LangBot keeps its keys in the clear) by its hash, so it keeps
  // working here; the key itself is not kept. kInvalidArgument for an empty name or a key that is
  // shorter than 12 or longer than 255 bytes or holds whitespace or control characters;
  // kConflict when a key with that hash exists.
  util::Result<domain::ApiKey> ImportApiKey(const std::string& key, const std::string& name,
                                            const std::string& description);
  // ImportApiKey's checks of the key and name alone.
  static util::Result<void> CheckImportedApiKey(const std::string& key, const std::string& name);
  // How a key is shown once stored: "lbk_abcd...wxyz".
  static std::string MaskApiKey(const std::string& key);
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
  // One of max_concurrent_hashes, held while hashing; released when destroyed.
  class HashPermit {
   public:
    explicit HashPermit(std::atomic<int>* running) : running_(running) {}
    HashPermit(HashPermit&& other) noexcept : running_(other.running_) { other.running_ = nullptr; }
    HashPermit& operator=(HashPermit&&) = delete;
    ~HashPermit() {
      if (running_) --*running_;
    }

   private:
    std::atomic<int>* running_;
  };
  struct TokenClaims {
    std::string user;
    std::int64_t generation = 0;
  };

  // kRateLimited when every hashing slot is busy.
  util::Result<HashPermit> AcquireHash();
  util::Result<void> CheckPassword(const std::string& password) const;
  // The argon2id hash of an acceptable user name and password.
  util::Result<std::string> CheckAndHash(const std::string& user, const std::string& password);
  // Signature, header and expiry of a JWT; the username and generation it names.
  util::Result<TokenClaims> CheckTokenSignature(std::string_view token) const;
  // The refusal for a login of `user` from `address` by the failure counters; throttle_mu_ held.
  std::optional<util::Error> ThrottledLocked(const std::string& user, const std::string& address);
  // The failures of `key` within the window, oldest first, pruned; throttle_mu_ held.
  std::vector<util::TimePoint>* FailuresLocked(const std::string& key);
  void RecordFailures(std::initializer_list<std::string> keys);
  // Refills the global login bucket; throttle_mu_ held. Tokens available now.
  double LoginTokensLocked();
  // Before and after every key change (see key_epoch_).
  void InvalidateKeyCache();
  // Before and after every password change (see user_epoch_).
  void ForgetUser(const std::string& user);
  // Tells the change feed, if any.
  void Announce(domain::ChangeKind kind, std::string_view id);

  domain::UserRepository& users_;
  domain::ApiKeyRepository& keys_;
  const util::Clock& clock_;
  AuthOptions options_;
  domain::ChangeFeed* feed_ = nullptr;

  std::mutex throttle_mu_;
  // Failure times per "a:<address>", "p:<user>\n<address>", "u:<user>" and "r:<address>"
  // (recovery key), pruned to the window. Guarded by throttle_mu_.
  std::unordered_map<std::string, std::vector<util::TimePoint>> failures_;
  double login_tokens_;              // guarded by throttle_mu_
  util::TimePoint login_tokens_at_;  // guarded by throttle_mu_
  std::atomic<int> hashes_running_{0};

  std::shared_mutex cache_mu_;
  // Verified keys by hash, so authenticated requests skip the database. Cleared on any change.
  std::unordered_map<std::string, domain::ApiKey> key_cache_;  // guarded by cache_mu_
  // The token generation of accounts known to exist, so token checks skip the database. Trusted
  // for kKnownUserSeconds only: a change made by another process (the CLI) shows within that.
  struct KnownUser {
    std::int64_t generation = 0;
    util::TimePoint read_at;
  };
  static constexpr int kKnownUserSeconds = 10;
  std::map<std::string, KnownUser> known_users_;  // guarded by cache_mu_
  // Grows with every password change (guarded by cache_mu_), like key_epoch_ for known_users_.
  std::uint64_t user_epoch_ = 0;
  // Grows with every key change (guarded by cache_mu_): a lookup that started before a change
  // must not put what it read into the cache, or a revoked key could come back.
  std::uint64_t key_epoch_ = 0;
};

}  // namespace sb::services
