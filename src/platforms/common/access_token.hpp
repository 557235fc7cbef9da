// A platform access token (WeChat's and WeCom's access_token, Lark's tenant token, ...) fetched on
// first use, kept until shortly before the platform says it expires, and dropped when a call
// finds it refused, so the next Get fetches a new one. The fetch itself is the platform's.
//   AccessTokenCache tokens(clock, [self] { return self->FetchToken(); });
//   auto token = co_await tokens.Get();               // cached, or fetched now
//   if (errcode == 40001) tokens.Invalidate(*token);  // then Get again and retry once
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::platforms::common {

struct IssuedToken {
  std::string token;
  std::chrono::seconds expires_in{0};  // as the platform said; 0 or less: unknown (kept 5 min)
};

// Thread-safe. Concurrent Gets on an empty cache may each fetch; platforms keep an older token
// valid for a while after issuing a new one, so that costs a call, never a failure.
class AccessTokenCache {
 public:
  using Fetch = std::function<boost::asio::awaitable<util::Result<IssuedToken>>()>;

  // `margin`: how long before the stated expiry a token is no longer handed out.
  AccessTokenCache(const util::Clock& clock, Fetch fetch,
                   std::chrono::seconds margin = std::chrono::seconds(300));

  boost::asio::awaitable<util::Result<std::string>> Get();

  // The platform refused `token` (expired, revoked): forget it unless a newer one replaced it.
  void Invalidate(const std::string& token);

 private:
  const util::Clock& clock_;
  const Fetch fetch_;
  const std::chrono::seconds margin_;
  std::mutex mu_;
  std::string token_;            // guarded by mu_
  util::TimePoint valid_until_;  // guarded by mu_
};

}  // namespace sb::platforms::common
