#include "services/auth_service.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <chrono>

#include "util/client_address.hpp"
#include "util/crypto.hpp"
#include "util/json.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;
using util::Fail;

constexpr const char* kApiKeyPrefix = "lbk_";
constexpr std::size_t kApiKeyRandomChars = 43;
constexpr std::size_t kMinPasswordLength = 8;

std::string JwtHeader() {
  static const std::string header = util::Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
  return header;
}

std::string MaskKey(const std::string& key) {
  return key.substr(0, 8) + "..." + key.substr(key.size() - 4);
}

util::Error RateLimited(std::string message, std::chrono::nanoseconds wait) {
  util::Error e{ErrorCode::kRateLimited, std::move(message)};
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(wait).count();
  e.retry_after_seconds = static_cast<int>(std::max<std::int64_t>(1, seconds));
  return e;
}

}  // namespace

AuthService::AuthService(domain::UserRepository& users, domain::ApiKeyRepository& keys,
                         const util::Clock& clock, AuthOptions options)
    : users_(users),
      keys_(keys),
      clock_(clock),
      options_(std::move(options)),
      login_tokens_(std::max(1, options_.login_rate_per_second)),
      login_tokens_at_(clock_.Now()) {}

util::Result<AuthService::HashPermit> AuthService::AcquireHash() {
  int running = hashes_running_.load();
  do {
    if (running >= std::max(1, options_.max_concurrent_hashes)) {
      return tl::unexpected(RateLimited("the server is busy checking passwords; try again shortly",
                                        std::chrono::seconds(1)));
    }
  } while (!hashes_running_.compare_exchange_weak(running, running + 1));
  return HashPermit(&hashes_running_);
}

util::Result<bool> AuthService::IsInitialized() {
  auto n = users_.Count();
  if (!n) return tl::unexpected(n.error());
  return *n > 0;
}

util::Result<void> AuthService::CheckPassword(const std::string& password) const {
  if (password.size() < kMinPasswordLength) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("password must have at least {} characters", kMinPasswordLength));
  }
  if (password.size() > 1024) {
    return Fail(ErrorCode::kInvalidArgument, "password must have at most 1024 characters");
  }
  return util::Ok();
}

util::Result<std::string> AuthService::CheckAndHash(const std::string& user,
                                                    const std::string& password) {
  if (user.empty() || user.size() > 255) {
    return Fail(ErrorCode::kInvalidArgument,
                "user must be a non-empty string of at most 255 bytes");
  }
  if (auto ok = CheckPassword(password); !ok) return tl::unexpected(ok.error());
  auto permit = AcquireHash();
  if (!permit) return tl::unexpected(permit.error());
  std::string hash = util::HashPassword(password);
  if (hash.empty()) return Fail(ErrorCode::kInternal, "password hashing failed");
  return hash;
}

util::Result<void> AuthService::InitAdmin(const std::string& user, const std::string& password) {
  // Cheap refusal first: hashing costs tens of milliseconds and 64 MiB.
  if (auto init = IsInitialized(); init && *init) {
    return Fail(ErrorCode::kConflict, "the instance is already initialized");
  }
  auto hash = CheckAndHash(user, password);
  if (!hash) return tl::unexpected(hash.error());
  const auto now = clock_.Now();
  auto r = users_.Insert({user, *hash, now, now}, /*only_if_none=*/true);
  if (!r && r.error().code == ErrorCode::kConflict) {
    return Fail(ErrorCode::kConflict, "the instance is already initialized");
  }
  return r;
}

util::Result<void> AuthService::UpsertUser(const std::string& user, const std::string& password) {
  auto hash = CheckAndHash(user, password);
  if (!hash) return tl::unexpected(hash.error());
  const auto now = clock_.Now();
  auto existing = users_.Get(user);
  if (existing) {
    ForgetUser(user);
    auto r = users_.UpdatePassword(user, *hash, now);
    ForgetUser(user);
    if (r) Announce(domain::ChangeKind::kUsers, user);
    return r;
  }
  if (existing.error().code != ErrorCode::kNotFound) return tl::unexpected(existing.error());
  return users_.Insert({user, *hash, now, now}, /*only_if_none=*/false);
}

std::vector<util::TimePoint>* AuthService::FailuresLocked(const std::string& key) {
  auto it = failures_.find(key);
  if (it == failures_.end()) return nullptr;
  const auto cutoff = clock_.Now() - std::chrono::seconds(options_.login_window_seconds);
  auto& times = it->second;
  std::erase_if(times, [&](util::TimePoint t) { return t < cutoff; });
  if (times.empty()) {
    failures_.erase(it);
    return nullptr;
  }
  return &times;
}

std::optional<util::Error> AuthService::ThrottledLocked(const std::string& user,
                                                        const std::string& address) {
  const int max = options_.login_max_failures;
  const std::string where = util::ClientAddressKey(address);
  // An account under attack from many addresses tightens only for addresses that failed on it.
  const auto* account = FailuresLocked("u:" + user);
  const bool under_attack = account && static_cast<int>(account->size()) >= max;
  const std::pair<std::string, int> limits[] = {
      {"a:" + where, max}, {"p:" + user + "\n" + where, under_attack ? 1 : max}};
  for (const auto& [key, limit] : limits) {
    const auto* times = FailuresLocked(key);
    if (!times || static_cast<int>(times->size()) < limit) continue;
    // Refused until the failure that reached the limit leaves the window.
    const auto until = (*times)[times->size() - static_cast<std::size_t>(limit)] +
                       std::chrono::seconds(options_.login_window_seconds);
    return RateLimited("too many failed logins; try again later", until - clock_.Now());
  }
  return std::nullopt;
}

void AuthService::RecordFailures(std::initializer_list<std::string> keys) {
  constexpr std::size_t kMaxTracked = 100000;
  std::lock_guard lock(throttle_mu_);
  const auto now = clock_.Now();
  if (failures_.size() + keys.size() > kMaxTracked) {
    // Bound memory under a flood of distinct names or addresses by forgetting expired windows
    // only: dropping live counters would let a flood reset the throttle on the attacked account.
    const auto cutoff = now - std::chrono::seconds(options_.login_window_seconds);
    std::erase_if(failures_, [&](const auto& entry) { return entry.second.back() < cutoff; });
  }
  for (const std::string& key : keys) {
    auto it = failures_.find(key);
    if (it != failures_.end()) {
      auto& times = it->second;
      times.push_back(now);
      // Only the newest max_failures matter for the decision.
      if (times.size() > static_cast<std::size_t>(options_.login_max_failures) * 2) {
        times.erase(times.begin(), times.end() - options_.login_max_failures);
      }
    } else if (failures_.size() < kMaxTracked) {
      failures_.emplace(key, std::vector<util::TimePoint>{now});
    }
  }
}

double AuthService::LoginTokensLocked() {
  const double rate = std::max(1, options_.login_rate_per_second);
  const auto now = clock_.Now();
  const double elapsed = std::chrono::duration<double>(now - login_tokens_at_).count();
  if (elapsed > 0) {
    login_tokens_ = std::min(rate, login_tokens_ + elapsed * rate);
    login_tokens_at_ = now;
  }
  return login_tokens_;
}

std::optional<util::Error> AuthService::LoginRefusal(const std::string& user,
                                                     const std::string& client_address) {
  {
    std::lock_guard lock(throttle_mu_);
    if (auto refused = ThrottledLocked(user, client_address)) return refused;
    if (LoginTokensLocked() < 1.0) {
      return RateLimited("too many logins on this server right now; try again shortly",
                         std::chrono::seconds(1));
    }
  }
  if (hashes_running_.load() >= std::max(1, options_.max_concurrent_hashes)) {
    return RateLimited("the server is busy checking passwords; try again shortly",
                       std::chrono::seconds(1));
  }
  return std::nullopt;
}

util::Result<std::string> AuthService::Login(const std::string& user, const std::string& password,
                                             const std::string& client_address) {
  if (user.size() > 255 || password.size() > 1024) {
    return Fail(ErrorCode::kUnauthenticated, "wrong user or password");
  }
  {
    std::lock_guard lock(throttle_mu_);
    if (auto refused = ThrottledLocked(user, client_address)) return tl::unexpected(*refused);
  }
  // The slot first: a login refused for a busy slot does not spend the global rate.
  auto permit = AcquireHash();
  if (!permit) return tl::unexpected(permit.error());
  {
    std::lock_guard lock(throttle_mu_);
    if (LoginTokensLocked() < 1.0) {
      return tl::unexpected(RateLimited(
          "too many logins on this server right now; try again shortly", std::chrono::seconds(1)));
    }
    login_tokens_ -= 1.0;
  }
  auto account = users_.Get(user);
  if (!account && account.error().code != ErrorCode::kNotFound) {
    return tl::unexpected(account.error());
  }
  // Verify against a fixed hash for unknown users too, so timing does not reveal which exist.
  static const std::string kDummyHash = util::HashPassword("dummy-password-for-timing");
  const bool ok = util::VerifyPassword(password, account ? account->password_hash : kDummyHash);
  const std::string where = util::ClientAddressKey(client_address);
  if (!account || !ok) {
    RecordFailures({"a:" + where, "p:" + user + "\n" + where, "u:" + user});
    return Fail(ErrorCode::kUnauthenticated, "wrong user or password");
  }
  {
    // Only this pair's counter: the address's stays, so logging into an account of one's own
    // cannot reset the count of guesses at others.
    std::lock_guard lock(throttle_mu_);
    failures_.erase("p:" + user + "\n" + where);
  }
  return IssueToken(user, account->token_generation);
}

std::string AuthService::IssueToken(const std::string& user, std::int64_t generation) {
  boost::json::object claims;
  claims["user"] = user;
  claims["gen"] = generation;
  claims["iss"] = options_.issuer;
  claims["exp"] = util::ToUnixSeconds(clock_.Now()) + options_.jwt_expire_seconds;
  const std::string signing_input =
      JwtHeader() + "." + util::Base64UrlEncode(boost::json::serialize(claims));
  return signing_input + "." +
         util::Base64UrlEncode(util::HmacSha256(options_.jwt_secret, signing_input));
}

util::Result<AuthService::TokenClaims> AuthService::CheckTokenSignature(
    std::string_view token) const {
  auto invalid = [] { return Fail(ErrorCode::kUnauthenticated, "invalid or expired token"); };
  const auto dot1 = token.find('.');
  const auto dot2 = token.rfind('.');
  if (dot1 == std::string_view::npos || dot1 == dot2) return invalid();
  const std::string_view signing_input = token.substr(0, dot2);
  if (token.substr(0, dot1) != JwtHeader()) return invalid();
  const std::string expected =
      util::Base64UrlEncode(util::HmacSha256(options_.jwt_secret, signing_input));
  if (!util::ConstantTimeEquals(expected, token.substr(dot2 + 1))) return invalid();
  std::string payload;
  if (!util::Base64UrlDecode(token.substr(dot1 + 1, dot2 - dot1 - 1), payload)) return invalid();
  auto claims = util::ParseJson(payload);
  if (!claims || !claims->is_object()) return invalid();
  const auto& obj = claims->as_object();
  auto user = obj.find("user");
  auto exp = obj.find("exp");
  if (user == obj.end() || !user->value().is_string() || exp == obj.end() ||
      !exp->value().is_int64()) {
    return invalid();
  }
  if (exp->value().as_int64() <= util::ToUnixSeconds(clock_.Now())) return invalid();
  TokenClaims out{std::string(user->value().as_string())};
  // Tokens from before generations existed count as generation 0.
  if (auto gen = obj.find("gen"); gen != obj.end()) {
    if (!gen->value().is_int64()) return invalid();
    out.generation = gen->value().as_int64();
  }
  return out;
}

std::optional<util::Result<std::string>> AuthService::VerifyTokenCached(std::string_view token) {
  auto claims = CheckTokenSignature(token);
  if (!claims) return tl::unexpected(claims.error());
  std::shared_lock lock(cache_mu_);
  auto known = known_users_.find(claims->user);
  if (known == known_users_.end() || claims->generation > known->second.generation ||
      clock_.Now() - known->second.read_at > std::chrono::seconds(kKnownUserSeconds)) {
    return std::nullopt;
  }
  if (claims->generation < known->second.generation) {
    return Fail(ErrorCode::kUnauthenticated, "invalid or expired token");
  }
  return claims->user;
}

util::Result<std::string> AuthService::VerifyToken(std::string_view token) {
  if (auto cached = VerifyTokenCached(token)) return *cached;
  auto claims = CheckTokenSignature(token);
  if (!claims) return tl::unexpected(claims.error());
  std::uint64_t epoch_before = 0;
  {
    std::shared_lock lock(cache_mu_);
    epoch_before = user_epoch_;
  }
  auto account = users_.Get(claims->user);
  if (!account) {
    if (account.error().code == ErrorCode::kNotFound) {
      return Fail(ErrorCode::kUnauthenticated, "invalid or expired token");
    }
    return tl::unexpected(account.error());
  }
  {
    // A password change meanwhile may have made what was read stale: do not cache it then.
    std::unique_lock lock(cache_mu_);
    if (user_epoch_ == epoch_before) {
      known_users_[claims->user] = {account->token_generation, clock_.Now()};
    }
  }
  if (claims->generation != account->token_generation) {
    return Fail(ErrorCode::kUnauthenticated, "invalid or expired token");
  }
  return claims->user;
}

util::Result<std::string> AuthService::RenewToken(const std::string& user) {
  {
    std::shared_lock lock(cache_mu_);
    if (auto known = known_users_.find(user);
        known != known_users_.end() &&
        clock_.Now() - known->second.read_at <= std::chrono::seconds(kKnownUserSeconds)) {
      return IssueToken(user, known->second.generation);
    }
  }
  auto account = users_.Get(user);
  if (!account) {
    if (account.error().code == ErrorCode::kNotFound) {
      return Fail(ErrorCode::kUnauthenticated, "invalid or expired token");
    }
    return tl::unexpected(account.error());
  }
  return IssueToken(user, account->token_generation);
}

void AuthService::ForgetUser(const std::string& user) {
  std::unique_lock lock(cache_mu_);
  known_users_.erase(user);
  ++user_epoch_;
}

void AuthService::ForgetAccount(const std::string& user) {
  if (!user.empty()) return ForgetUser(user);
  std::unique_lock lock(cache_mu_);
  known_users_.clear();
  ++user_epoch_;
}

void AuthService::Announce(domain::ChangeKind kind, std::string_view id) {
  if (feed_ != nullptr) feed_->Publish(kind, id);
}

util::Result<void> AuthService::ChangePassword(const std::string& user, const std::string& current,
                                               const std::string& next) {
  if (!options_.allow_modify_login_info) {
    return Fail(ErrorCode::kPermissionDenied, "changing login info is disabled on this instance");
  }
  auto permit = AcquireHash();
  if (!permit) return tl::unexpected(permit.error());
  auto account = users_.Get(user);
  if (!account) return tl::unexpected(account.error());
  if (!util::VerifyPassword(current, account->password_hash)) {
    return Fail(ErrorCode::kInvalidArgument, "current_password is wrong");
  }
  if (auto ok = CheckPassword(next); !ok) return ok;
  const std::string hash = util::HashPassword(next);
  if (hash.empty()) return Fail(ErrorCode::kInternal, "password hashing failed");
  ForgetUser(user);
  auto r = users_.UpdatePassword(user, hash, clock_.Now());
  ForgetUser(user);
  if (r) Announce(domain::ChangeKind::kUsers, user);
  return r;
}

util::Result<void> AuthService::ResetPassword(const std::string& user,
                                              const std::string& recovery_key,
                                              const std::string& next,
                                              const std::string& client_address) {
  const std::string key = "r:" + util::ClientAddressKey(client_address);
  {
    std::lock_guard lock(throttle_mu_);
    const auto* times = FailuresLocked(key);
    const int max = options_.login_max_failures;
    if (times && static_cast<int>(times->size()) >= max) {
      const auto until = (*times)[times->size() - static_cast<std::size_t>(max)] +
                         std::chrono::seconds(options_.login_window_seconds);
      return tl::unexpected(
          RateLimited("too many wrong recovery keys; try again later", until - clock_.Now()));
    }
  }
  if (!util::ConstantTimeEquals(recovery_key, options_.recovery_key) || recovery_key.empty()) {
    RecordFailures({key});
    return Fail(ErrorCode::kPermissionDenied, "recovery_key is wrong");
  }
  if (auto ok = CheckPassword(next); !ok) return ok;
  auto permit = AcquireHash();
  if (!permit) return tl::unexpected(permit.error());
  auto account = users_.Get(user);
  if (!account) {
    if (account.error().code == ErrorCode::kNotFound) {
      return Fail(ErrorCode::kNotFound, "user '" + user + "' does not exist");
    }
    return tl::unexpected(account.error());
  }
  const std::string hash = util::HashPassword(next);
  if (hash.empty()) return Fail(ErrorCode::kInternal, "password hashing failed");
  ForgetUser(user);
  auto r = users_.UpdatePassword(user, hash, clock_.Now());
  ForgetUser(user);
  if (r) Announce(domain::ChangeKind::kUsers, user);
  return r;
}

util::Result<domain::User> AuthService::GetUser(const std::string& user) {
  return users_.Get(user);
}

util::Result<CreatedApiKey> AuthService::CreateApiKey(const std::string& name,
                                                      const std::string& description) {
  if (name.empty() || name.size() > 255) {
    return Fail(ErrorCode::kInvalidArgument,
                "name must be a non-empty string of at most 255 bytes");
  }
  CreatedApiKey created;
  created.key = kApiKeyPrefix + util::RandomUrlSafe(kApiKeyRandomChars);
  auto& rec = created.record;
  rec.name = name;
  rec.description = description;
  rec.key_hash = util::Sha256Hex(created.key);
  rec.masked_key = MaskKey(created.key);
  rec.created_at = rec.updated_at = clock_.Now();
  auto id = keys_.Insert(rec);
  if (!id) return tl::unexpected(id.error());
  rec.id = *id;
  return created;
}

util::Result<void> AuthService::CheckImportedApiKey(const std::string& key,
                                                    const std::string& name) {
  if (name.empty() || name.size() > 255) {
    return Fail(ErrorCode::kInvalidArgument,
                "name must be a non-empty string of at most 255 bytes");
  }
  const bool blank =
      std::any_of(key.begin(), key.end(), [](unsigned char c) { return c <= ' ' || c == 0x7f; });
  if (key.size() < 12 || key.size() > 255 || blank) {
    return Fail(ErrorCode::kInvalidArgument,
                "the key must be 12 to 255 bytes without whitespace or control characters");
  }
  return util::Ok();
}

std::string AuthService::MaskApiKey(const std::string& key) { return MaskKey(key); }

util::Result<domain::ApiKey> AuthService::ImportApiKey(const std::string& key,
                                                       const std::string& name,
                                                       const std::string& description) {
  if (auto ok = CheckImportedApiKey(key, name); !ok) return tl::unexpected(ok.error());
  domain::ApiKey rec;
  rec.name = name;
  rec.description = description;
  rec.key_hash = util::Sha256Hex(key);
  rec.masked_key = MaskKey(key);
  rec.created_at = rec.updated_at = clock_.Now();
  if (auto existing = keys_.FindByHash(rec.key_hash); existing) {
    return Fail(ErrorCode::kConflict, fmt::format("API key {} exists already", rec.masked_key));
  } else if (existing.error().code != ErrorCode::kNotFound) {
    return tl::unexpected(existing.error());
  }
  auto id = keys_.Insert(rec);
  if (!id) return tl::unexpected(id.error());
  rec.id = *id;
  InvalidateKeyCache();
  return rec;
}

util::Result<std::vector<domain::ApiKey>> AuthService::ListApiKeys() { return keys_.List(); }

util::Result<domain::ApiKey> AuthService::GetApiKey(std::int64_t id) {
  auto r = keys_.Get(id);
  if (!r && r.error().code == ErrorCode::kNotFound) {
    return Fail(ErrorCode::kNotFound, fmt::format("API key {} does not exist", id));
  }
  return r;
}

util::Result<void> AuthService::UpdateApiKey(std::int64_t id,
                                             const std::optional<std::string>& name,
                                             const std::optional<std::string>& description) {
  auto current = GetApiKey(id);
  if (!current) return tl::unexpected(current.error());
  if (name) {
    if (name->empty() || name->size() > 255) {
      return Fail(ErrorCode::kInvalidArgument,
                  "name must be a non-empty string of at most 255 bytes");
    }
    current->name = *name;
  }
  if (description) current->description = *description;
  current->updated_at = clock_.Now();
  InvalidateKeyCache();
  auto r = keys_.Update(*current);
  InvalidateKeyCache();
  if (r) Announce(domain::ChangeKind::kApiKeys, "");
  return r;
}

util::Result<void> AuthService::DeleteApiKey(std::int64_t id) {
  InvalidateKeyCache();
  auto r = keys_.Delete(id);
  InvalidateKeyCache();
  if (r) Announce(domain::ChangeKind::kApiKeys, "");
  if (!r && r.error().code == ErrorCode::kNotFound) {
    return Fail(ErrorCode::kNotFound, fmt::format("API key {} does not exist", id));
  }
  return r;
}

std::optional<util::Result<domain::ApiKey>> AuthService::VerifyApiKeyCached(std::string_view key) {
  const std::string hash = util::Sha256Hex(key);
  std::shared_lock lock(cache_mu_);
  auto it = key_cache_.find(hash);
  if (it != key_cache_.end()) return it->second;
  return std::nullopt;
}

void AuthService::InvalidateKeyCache() {
  std::unique_lock lock(cache_mu_);
  key_cache_.clear();
  ++key_epoch_;
}

util::Result<domain::ApiKey> AuthService::VerifyApiKey(std::string_view key) {
  if (auto cached = VerifyApiKeyCached(key)) return *cached;
  const std::string hash = util::Sha256Hex(key);
  std::uint64_t epoch_before = 0;
  {
    std::shared_lock lock(cache_mu_);
    epoch_before = key_epoch_;
  }
  // The lookup is by hash, an exact index match: no timing signal about stored keys.
  auto found = keys_.FindByHash(hash);
  if (!found) {
    if (found.error().code == ErrorCode::kNotFound) {
      return Fail(ErrorCode::kUnauthenticated, "invalid API key");
    }
    return tl::unexpected(found.error());
  }
  std::unique_lock lock(cache_mu_);
  if (key_epoch_ != epoch_before) return *found;  // a key changed meanwhile: do not cache
  if (key_cache_.size() > 10000) key_cache_.clear();
  key_cache_[hash] = *found;
  return *found;
}

}  // namespace sb::services
