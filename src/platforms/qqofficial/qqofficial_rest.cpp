#include "platforms/qqofficial/qqofficial_rest.hpp"

#include <fmt/format.h>

#include <boost/asio/this_coro.hpp>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/rest_call.hpp"

namespace sb::platforms::qqofficial {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using util::ErrorCode;

// QQ issues a new token only in the last 60 s of the old one; asking earlier returns the same.
constexpr std::chrono::seconds kRenewBefore{50};
constexpr std::size_t kMaxResponseBytes = 1024 * 1024;

void Replace(std::string& text, const std::string& what, std::string_view with) {
  if (what.size() < 4) return;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos)) {
    text.replace(pos, what.size(), with);
    pos += with.size();
  }
}

}  // namespace

QqRest::QqRest(const AdapterContext& context, std::string appid, std::string secret,
               std::string api_base, std::string token_base)
    : context_(context),
      appid_(std::move(appid)),
      secret_(std::move(secret)),
      api_base_(std::move(api_base)),
      token_base_(std::move(token_base)) {}

std::string QqRest::Scrub(std::string text) const {
  Replace(text, secret_, "<secret>");
  std::string token;
  {
    std::lock_guard lock(mu_);
    token = token_;
  }
  Replace(text, token, "<token>");
  return text;
}

asio::awaitable<util::Result<std::string>> QqRest::FetchToken() {
  net::HttpRequest request;
  request.method = "POST";
  request.url = token_base_ + "/app/getAppAccessToken";
  request.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
  request.body = EncodeTokenRequest(appid_, secret_);
  request.timeouts.connect = 10s;
  request.timeouts.total = 30s;
  request.timeouts.idle = 30s;
  request.max_response_bytes = kMaxResponseBytes;
  auto response = co_await common::SendWithRetry(*context_.http, std::move(request));
  if (!response) {
    co_return util::Fail(response.error().code,
                         "fetching the QQ access token failed: " + Scrub(response.error().message));
  }
  auto token = DecodeAccessToken(response->status, response->body);
  if (!token) {
    token.error().message = Scrub(token.error().message);
    co_return tl::unexpected(token.error());
  }
  std::lock_guard lock(mu_);
  token_ = token->token;
  token_expiry_ = context_.clock->Now() + token->expires_in;
  co_return token->token;
}

asio::awaitable<util::Result<std::string>> QqRest::Token(bool renew) {
  if (!renew) {
    std::lock_guard lock(mu_);
    if (!token_.empty() && context_.clock->Now() + kRenewBefore < token_expiry_) co_return token_;
  }
  co_return co_await FetchToken();
}

asio::awaitable<util::Result<net::HttpResponse>> QqRest::Call(std::string method, std::string path,
                                                              std::string body, bool upload) {
  for (int attempt = 0;; ++attempt) {
    auto token = co_await Token(attempt > 0);
    if (!token) co_return tl::unexpected(token.error());
    net::HttpRequest request;
    request.method = method;
    request.url = api_base_ + path;
    request.headers.emplace_back("Authorization", "QQBot " + *token);
    request.headers.emplace_back("X-Union-Appid", appid_);
    if (!body.empty()) {
      request.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
    }
    request.body = body;
    // QQ asks for at least 5 s; uploads make QQ fetch the file first.
    request.timeouts.connect = 10s;
    request.timeouts.total = upload ? 120s : 30s;
    request.timeouts.idle = request.timeouts.total;
    request.max_response_bytes = kMaxResponseBytes;
    auto response = co_await common::SendWithRetry(*context_.http, std::move(request));
    if (response && attempt == 0 && IsTokenRejected(response->status, response->body)) {
      context_.host->Log(domain::LogLevel::kInfo,
                         "QQ said the access token expired; fetching a new one and trying again");
      continue;
    }
    if (!response) response.error().message = Scrub(response.error().message);
    co_return response;
  }
}

asio::awaitable<util::Result<std::string>> QqRest::GatewayUrl() {
  auto response = co_await Call("GET", "/gateway", "");
  if (!response) co_return tl::unexpected(response.error());
  if (response->status != 200) {
    util::Error error{
        ErrorCode::kUpstreamFailed,
        "GET /gateway failed: " + Scrub(DescribeError(response->status, response->body))};
    error.final = IsTokenRejected(response->status, response->body);
    co_return tl::unexpected(std::move(error));
  }
  co_return DecodeGatewayUrl(response->body);
}

util::Error QqRest::Refused(std::string_view what,
                            const util::Result<net::HttpResponse>& response) {
  if (!response) {
    return {response.error().code, fmt::format("QQ {} failed: {}", what, response.error().message)};
  }
  const std::string reason = Scrub(DescribeError(response->status, response->body));
  if (response->status == 429) {
    util::Error error{ErrorCode::kUpstreamRateLimited,
                      fmt::format("QQ is rate limiting the bot: {}", reason)};
    if (auto after = common::RetryAfter(*response)) {
      error.retry_after_seconds = static_cast<int>(after->count());
    }
    return error;
  }
  return {ErrorCode::kUpstreamFailed,
          fmt::format("QQ refused the {} ({}): {}", what, response->status, reason)};
}

asio::awaitable<void> QqRest::SendAll(Route route, std::string target,
                                      std::shared_ptr<const std::vector<Part>> parts,
                                      std::shared_ptr<ReplyAnchor> anchor,
                                      std::shared_ptr<common::SendOnce> once) {
  co_await asio::this_coro::throw_if_cancelled(false);
  const std::string msg_id = anchor ? anchor->msg_id : std::string();
  const bool v2 = route == Route::kC2c || route == Route::kGroup;
  domain::SendReceipt receipt;
  for (const Part& part : *parts) {
    // Every call answering the same msg_id needs a new msg_seq; one that repeats is refused.
    const int seq = anchor ? anchor->NextSeq() : 1;
    std::string body;
    if (part.file_type == 0) {
      body = EncodeText(route, part.text, msg_id, seq);
    } else if (!v2) {
      body = EncodeChannelImage(part.url, msg_id);
    } else {
      auto uploaded = co_await Call("POST", FilesPath(route, target), EncodeUpload(part), true);
      if (!uploaded || uploaded->status < 200 || uploaded->status >= 300) {
        (*once)(tl::unexpected(Refused("media upload", uploaded)));
        co_return;
      }
      auto file_info = DecodeFileInfo(uploaded->body);
      if (!file_info) {
        (*once)(tl::unexpected(file_info.error()));
        co_return;
      }
      body = EncodeMedia(*file_info, msg_id, seq);
    }
    auto response = co_await Call("POST", MessagesPath(route, target), std::move(body));
    if (!response || response->status < 200 || response->status >= 300) {
      util::Error error = Refused(msg_id.empty() ? "proactive message" : "reply", response);
      if (msg_id.empty() && response) {
        error.message +=
            " (QQ stopped proactive messages on 2025-04-21; a bot can answer only "
            "within the reply window of a user's message)";
      }
      (*once)(tl::unexpected(std::move(error)));
      co_return;
    }
    if (auto id = SentMessageId(response->body); !id.empty()) receipt.message_id = id;
  }
  (*once)(receipt);
}

}  // namespace sb::platforms::qqofficial
