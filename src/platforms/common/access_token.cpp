#include "platforms/common/access_token.hpp"

#include <utility>

namespace sb::platforms::common {

AccessTokenCache::AccessTokenCache(const util::Clock& clock, Fetch fetch,
                                   std::chrono::seconds margin)
    : clock_(clock), fetch_(std::move(fetch)), margin_(margin) {}

boost::asio::awaitable<util::Result<std::string>> AccessTokenCache::Get() {
  {
    std::lock_guard lock(mu_);
    if (!token_.empty() && clock_.Now() < valid_until_) co_return token_;
  }
  auto issued = co_await fetch_();
  if (!issued) co_return tl::unexpected(issued.error());
  if (issued->token.empty()) {
    co_return util::Fail(util::ErrorCode::kUpstreamFailed, "the platform issued an empty token");
  }
  // A token that lives shorter than twice the margin is kept for half its life instead.
  std::chrono::seconds life =
      issued->expires_in.count() > 0 ? issued->expires_in : std::chrono::seconds(300);
  life = life > 2 * margin_ ? life - margin_ : life / 2;
  std::lock_guard lock(mu_);
  token_ = issued->token;
  valid_until_ = clock_.Now() + life;
  co_return token_;
}

void AccessTokenCache::Invalidate(const std::string& token) {
  std::lock_guard lock(mu_);
  if (token_ == token) token_.clear();
}

}  // namespace sb::platforms::common
