#include "platforms/discord/discord_rest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/this_coro.hpp>
#include <cmath>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/clock_waits.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::discord {

using common::IsCancelled;
using common::Sleep;
using common::WaitUntilCancelled;
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::chrono::milliseconds kCallTimeout = 30s;
constexpr std::chrono::milliseconds kUploadTimeout = 60s;
constexpr std::size_t kMaxResponseBytes = 4 * 1024 * 1024;
constexpr double kMaxRateLimitWaitSeconds = 30;  // a longer 429 wait fails the send instead
constexpr int kMaxRateLimitRetries = 3;
constexpr std::size_t kMaxDmChannels = 4096;  // user id -> DM channel id
constexpr const char* kUserAgent = "DiscordBot (https://github.com/switchboard, 1.0)";

}  // namespace

DiscordRest::DiscordRest(const AdapterContext& context, std::string token, std::string base)
    : context_(context), token_(std::move(token)), base_(std::move(base)) {}

std::string DiscordRest::Scrub(std::string text) const {
  if (token_.size() < 4) return text;
  for (auto pos = text.find(token_); pos != std::string::npos; pos = text.find(token_, pos)) {
    text.replace(pos, token_.size(), "<token>");
  }
  return text;
}

void DiscordRest::Log(LogLevel level, std::string text) {
  context_.host->Log(level, Scrub(std::move(text)));
}

asio::awaitable<DiscordRest::RestOutcome> DiscordRest::Rest(std::string method, std::string path,
                                                            std::string body,
                                                            std::string content_type,
                                                            std::chrono::milliseconds total) {
  for (int attempt = 0;; ++attempt) {
    net::HttpRequest request;
    request.method = method;
    request.url = base_ + path;
    request.headers.emplace_back("Authorization", "Bot " + token_);
    request.headers.emplace_back("User-Agent", kUserAgent);
    if (!content_type.empty()) request.headers.emplace_back("Content-Type", content_type);
    request.body = body;
    request.timeouts.connect = 10s;
    request.timeouts.total = total;
    request.timeouts.idle = total;
    request.max_response_bytes = kMaxResponseBytes;
    auto response = co_await context_.http->Send(std::move(request));
    RestOutcome outcome;
    if (!response) {
      outcome.error = {response.error().code,
                       fmt::format("discord {} {} failed: {}", method, Route(path),
                                   Scrub(response.error().message))};
      co_return outcome;
    }
    if (response->status >= 200 && response->status < 300) {
      outcome.ok = true;
      outcome.body = std::move(response->body);
      co_return outcome;
    }
    RestError error =
        DecodeRestError(response->status, response->Header("retry-after"), response->body);
    const std::string reason = Scrub(error.message);
    if (error.status == 429) {
      if (attempt < kMaxRateLimitRetries && error.retry_after <= kMaxRateLimitWaitSeconds) {
        const auto wait = std::chrono::milliseconds(
            static_cast<std::int64_t>(std::ceil(std::max(error.retry_after, 0.05) * 1000)));
        Log(LogLevel::kWarning,
            fmt::format("Discord rate limits {} {}{}: waiting {} ms as it asked", method,
                        Route(path), error.global ? " (global)" : "", wait.count()));
        const bool waited = co_await Sleep(*context_.clock, wait);
        if (!waited) {
          outcome.error = {ErrorCode::kCancelled, "the bot stopped while rate limited"};
          co_return outcome;
        }
        continue;
      }
      outcome.error = {ErrorCode::kUpstreamRateLimited,
                       fmt::format("discord is rate limiting the bot: {} (retry after {:.1f} s)",
                                   reason, error.retry_after)};
      outcome.error.retry_after_seconds = static_cast<int>(std::ceil(error.retry_after));
      co_return outcome;
    }
    if (error.status == 401) {
      outcome.error = {ErrorCode::kUpstreamAuth, "Discord refused the token (401 Unauthorized)"};
      outcome.error.final = true;
      co_return outcome;
    }
    outcome.error = {ErrorCode::kUpstreamFailed,
                     error.code != 0
                         ? fmt::format("discord refused: {} (HTTP {}, code {})", reason,
                                       error.status, error.code)
                         : fmt::format("discord refused: {} (HTTP {})", reason, error.status)};
    co_return outcome;
  }
}

// The path with ids kept (they are not secret) but without any query.
std::string DiscordRest::Route(std::string_view path) {
  return std::string(path.substr(0, path.find('?')));
}

asio::awaitable<util::Result<std::string>> DiscordRest::DmChannel(const std::string& user_id) {
  {
    std::lock_guard lock(mu_);
    if (auto it = dm_channels_.find(user_id); it != dm_channels_.end()) co_return it->second;
  }
  const std::string body = util::SerializeJson(util::JsonObject{{"recipient_id", user_id}});
  RestOutcome opened =
      co_await Rest("POST", "/users/@me/channels", body, "application/json", kCallTimeout);
  if (!opened.ok) co_return tl::unexpected(opened.error);
  auto channel = DecodeId(opened.body);
  if (!channel) co_return tl::unexpected(channel.error());
  RememberDm(user_id, *channel);
  co_return *channel;
}

void DiscordRest::RememberDm(const std::string& user_id, const std::string& channel_id) {
  std::lock_guard lock(mu_);
  if (dm_channels_.size() >= kMaxDmChannels) dm_channels_.clear();
  dm_channels_[user_id] = channel_id;
}

asio::awaitable<void> DiscordRest::SendAll(domain::TargetType type, std::string target,
                                           std::shared_ptr<const std::vector<OutboundCall>> calls,
                                           std::shared_ptr<common::SendOnce> once) {
  co_await asio::this_coro::throw_if_cancelled(false);
  std::string channel = target;
  if (type == domain::TargetType::kPerson) {
    auto dm = co_await DmChannel(target);
    if (!dm) {
      (*once)(tl::unexpected(dm.error()));
      co_return;
    }
    channel = std::move(*dm);
  }
  const std::string path = "/channels/" + channel + "/messages";
  domain::SendReceipt receipt;
  for (const OutboundCall& call : *calls) {
    RestOutcome outcome;
    if (call.uploads.empty()) {
      outcome = co_await Rest("POST", path, util::SerializeJson(call.payload), "application/json",
                              kCallTimeout);
    } else {
      const std::string boundary = "sb-" + util::RandomUrlSafe(24);
      outcome = co_await Rest("POST", path, EncodeMultipart(call, boundary),
                              "multipart/form-data; boundary=" + boundary, kUploadTimeout);
    }
    if (!outcome.ok) {
      (*once)(tl::unexpected(outcome.error));
      co_return;
    }
    if (auto id = DecodeId(outcome.body)) receipt.message_id = *id;
  }
  (*once)(receipt);
}

asio::awaitable<util::Result<GatewayBot>> DiscordRest::GetGatewayBot() {
  RestOutcome got = co_await Rest("GET", "/gateway/bot", "", "", kCallTimeout);
  if (!got.ok) co_return tl::unexpected(got.error);
  co_return DecodeGatewayBot(got.body);
}

}  // namespace sb::platforms::discord
