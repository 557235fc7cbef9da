#include "platforms/lark/lark_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "platforms/common/json_fields.hpp"
#include "platforms/common/rest_call.hpp"
#include "platforms/platform_adapter.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::lark {
namespace {

namespace asio = boost::asio;
using util::ErrorCode;

std::string Replace(std::string text, std::string_view what, std::string_view with) {
  if (what.empty()) return text;
  for (std::size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + with.size())) {
    text.replace(at, what.size(), with);
  }
  return text;
}

std::string Mime(const net::HttpResponse& response, std::string_view fallback) {
  std::string mime(response.Header("content-type"));
  if (const auto semi = mime.find(';'); semi != std::string::npos) mime.resize(semi);
  if (mime.empty() || mime.find('/') == std::string::npos || mime.size() > 100) {
    return std::string(fallback);
  }
  return mime;
}

}  // namespace

LarkApi::LarkApi(const AdapterContext& context, std::string app_id, std::string app_secret,
                 std::string base)
    : context_(context),
      app_id_(std::move(app_id)),
      app_secret_(std::move(app_secret)),
      base_(std::move(base)) {}

std::string LarkApi::Scrub(std::string text) const {
  text = Replace(std::move(text), app_secret_, "<app_secret>");
  std::string token;
  {
    std::lock_guard lock(mu_);
    token = token_;
  }
  return Replace(std::move(text), token, "<token>");
}

asio::awaitable<util::Result<std::string>> LarkApi::Token(bool refresh) {
  const util::TimePoint now = context_.clock->Now();
  {
    std::lock_guard lock(mu_);
    if (!refresh && !token_.empty() && now < renew_at_) co_return token_;
  }
  // Two callers renewing at once each get a valid token; Lark hands out the same one until its
  // last 30 minutes, so no single-flight is needed.
  util::JsonObject body;
  body["app_id"] = app_id_;
  body["app_secret"] = app_secret_;
  net::HttpRequest request;
  request.method = "POST";
  request.url = base_ + "/open-apis/auth/v3/tenant_access_token/internal";
  request.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
  request.body = util::SerializeJson(body);
  request.timeouts.total = std::chrono::seconds(30);
  request.max_response_bytes = 64 * 1024;
  auto response = co_await common::SendWithRetry(*context_.http, std::move(request));
  if (!response) {
    co_return util::Fail(response.error().code,
                         "the tenant access token call failed: " + response.error().message);
  }
  auto token = DecodeTenantToken(response->status, response->body);
  if (!token) co_return tl::unexpected(token.error());
  // Renewed in its last 30 minutes (when Lark starts handing out the next one), or half-way for
  // a short-lived token.
  const std::int64_t lifetime = token->expire_seconds;
  const std::int64_t keep = std::max<std::int64_t>(lifetime - 30 * 60, lifetime / 2);
  std::lock_guard lock(mu_);
  token_ = token->token;
  renew_at_ = context_.clock->Now() + std::chrono::seconds(keep);
  co_return token_;
}

asio::awaitable<util::Result<LarkApi::Answer>> LarkApi::Call(std::string method, std::string path,
                                                             std::string body,
                                                             std::string content_type,
                                                             std::size_t max_bytes,
                                                             bool json_answer) {
  for (int attempt = 0;; ++attempt) {
    auto token = co_await Token(attempt > 0);
    if (!token) co_return tl::unexpected(token.error());
    auto request = common::BearerRequest(method, base_ + path, *token);
    if (!body.empty()) {
      request.headers.emplace_back("Content-Type", content_type);
      request.body = body;
    }
    request.max_response_bytes = max_bytes;
    if (max_bytes > (1 << 20)) request.timeouts.total = std::chrono::seconds(60);
    auto response = co_await common::SendWithRetry(*context_.http, std::move(request));
    if (!response) {
      co_return util::Fail(response.error().code,
                           fmt::format("Lark {} failed: {}", path.substr(0, path.find('?')),
                                       response.error().message));
    }
    Answer answer;
    answer.status = response->status;
    const bool json = response->Header("content-type").find("json") != std::string_view::npos;
    if (!json_answer && response->status == 200 && !json) {
      answer.api.code = 0;
      answer.raw = std::move(*response);
      co_return answer;
    }
    auto api = DecodeApiAnswer(response->status, response->body);
    if (!api) co_return tl::unexpected(api.error());
    answer.api = std::move(*api);
    answer.raw = std::move(*response);
    if (IsTokenError(answer.api.code) && attempt == 0) {
      context_.host->Log(domain::LogLevel::kInfo,
                         fmt::format("Lark said the access token is invalid (code {}); fetching a "
                                     "new one and trying again",
                                     answer.api.code));
      continue;
    }
    co_return answer;
  }
}

util::Error LarkApi::Refused(std::string_view what, const Answer& answer) const {
  const std::string reason = DescribeAnswer(answer.status, answer.api);
  if (IsRateLimited(answer.status, answer.api.code)) {
    util::Error error{ErrorCode::kUpstreamRateLimited,
                      fmt::format("Lark is rate limiting the bot: {}", reason)};
    if (auto after = common::RetryAfter(answer.raw)) {
      error.retry_after_seconds = static_cast<int>(after->count());
    }
    return error;
  }
  return {ErrorCode::kUpstreamFailed, Scrub(fmt::format("Lark refused the {}: {}", what, reason))};
}

asio::awaitable<util::Result<BotInfo>> LarkApi::GetBotInfo() {
  auto answer = co_await Call("GET", "/open-apis/bot/v3/info", "", "");
  if (!answer) co_return tl::unexpected(answer.error());
  co_return DecodeBotInfo(answer->status, answer->raw.body);
}

asio::awaitable<util::Result<WsEndpoint>> LarkApi::GetWsEndpoint() {
  util::JsonObject body;
  body["AppID"] = app_id_;
  body["AppSecret"] = app_secret_;
  net::HttpRequest request;
  request.method = "POST";
  request.url = base_ + "/callback/ws/endpoint";
  request.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
  request.headers.emplace_back("locale", "zh");
  request.body = util::SerializeJson(body);
  request.timeouts.total = std::chrono::seconds(30);
  request.max_response_bytes = 64 * 1024;
  auto response = co_await context_.http->Send(std::move(request));
  if (!response) {
    co_return util::Fail(response.error().code,
                         "the long-connection endpoint call failed: " + response.error().message);
  }
  auto endpoint = DecodeWsEndpoint(response->status, response->body);
  if (!endpoint) {
    util::Error error = endpoint.error();
    error.message = Scrub(std::move(error.message));
    co_return tl::unexpected(std::move(error));
  }
  co_return endpoint;
}

asio::awaitable<util::Result<std::string>> LarkApi::Send(
    domain::TargetType type, std::string_view target, std::string_view reply_to,
    const std::string& msg_type, const std::string& content, std::string_view uuid) {
  std::string path;
  std::string body;
  if (!reply_to.empty()) {
    path = fmt::format("/open-apis/im/v1/messages/{}/reply", reply_to);
    body = SendBody("", msg_type, content, uuid);
  } else {
    path = fmt::format("/open-apis/im/v1/messages?receive_id_type={}",
                       type == domain::TargetType::kGroup ? "chat_id" : "open_id");
    body = SendBody(target, msg_type, content, uuid);
  }
  auto answer = co_await Call("POST", path, std::move(body), "application/json; charset=utf-8");
  if (!answer) co_return tl::unexpected(answer.error());
  if (answer->status != 200 || answer->api.code != 0) {
    co_return tl::unexpected(Refused(reply_to.empty() ? "message" : "reply", *answer));
  }
  co_return std::string(common::StringOr(answer->api.data, "message_id"));
}

asio::awaitable<util::Result<void>> LarkApi::PatchCard(std::string_view message_id,
                                                       const std::string& content) {
  if (!IsPlainId(message_id)) {
    co_return util::Fail(ErrorCode::kInvalidArgument, "a message id with unexpected characters");
  }
  auto answer = co_await Call("PATCH", fmt::format("/open-apis/im/v1/messages/{}", message_id),
                              PatchBody(content), "application/json; charset=utf-8");
  if (!answer) co_return tl::unexpected(answer.error());
  if (answer->status != 200 || answer->api.code != 0) {
    co_return tl::unexpected(Refused("card update", *answer));
  }
  co_return util::Ok();
}

asio::awaitable<util::Result<QuotedMessage>> LarkApi::GetQuoted(std::string_view message_id) {
  if (!IsPlainId(message_id)) {
    co_return util::Fail(ErrorCode::kInvalidArgument, "a message id with unexpected characters");
  }
  // A quoted message is small; 256 KiB bounds an answer that is not.
  auto answer = co_await Call("GET", fmt::format("/open-apis/im/v1/messages/{}", message_id), "",
                              "", 256 * 1024);
  if (!answer) co_return tl::unexpected(answer.error());
  if (answer->status != 200 || answer->api.code != 0) {
    co_return tl::unexpected(Refused("quoted message", *answer));
  }
  co_return DecodeQuotedMessage(answer->api.data);
}

asio::awaitable<util::Result<void>> LarkApi::Recall(std::string_view message_id) {
  if (!IsPlainId(message_id)) {
    co_return util::Fail(ErrorCode::kInvalidArgument, "a message id with unexpected characters");
  }
  auto answer =
      co_await Call("DELETE", fmt::format("/open-apis/im/v1/messages/{}", message_id), "", "");
  if (!answer) co_return tl::unexpected(answer.error());
  if (answer->status != 200 || answer->api.code != 0) {
    co_return tl::unexpected(Refused("recall", *answer));
  }
  co_return util::Ok();
}

asio::awaitable<util::Result<std::string>> LarkApi::UploadImage(std::string bytes) {
  const std::string boundary = "----switchboard" + util::RandomUrlSafe(16);
  Multipart multipart = ImageUploadBody(bytes, boundary);
  auto answer = co_await Call("POST", "/open-apis/im/v1/images", std::move(multipart.body),
                              multipart.content_type);
  if (!answer) co_return tl::unexpected(answer.error());
  if (answer->status != 200 || answer->api.code != 0) {
    co_return tl::unexpected(Refused("image upload", *answer));
  }
  std::string key(common::StringOr(answer->api.data, "image_key"));
  if (key.empty()) co_return util::Fail(ErrorCode::kUpstreamFailed, "the upload has no image_key");
  co_return key;
}

asio::awaitable<util::Result<Media>> LarkApi::FetchResource(std::string_view message_id,
                                                            std::string_view key,
                                                            std::size_t max_bytes) {
  if (!IsPlainId(message_id) || !IsPlainId(key)) {
    co_return util::Fail(ErrorCode::kInvalidArgument, "a resource id with unexpected characters");
  }
  auto answer = co_await Call(
      "GET", fmt::format("/open-apis/im/v1/messages/{}/resources/{}?type=image", message_id, key),
      "", "", max_bytes, false);
  if (!answer) co_return tl::unexpected(answer.error());
  if (answer->status != 200 || answer->api.code != 0) {
    co_return tl::unexpected(Refused("resource download", *answer));
  }
  if (answer->raw.body.empty()) co_return util::Fail(ErrorCode::kUpstreamFailed, "no content");
  co_return Media{std::move(answer->raw.body), Mime(answer->raw, "image/jpeg")};
}

asio::awaitable<util::Result<Media>> LarkApi::FetchUrl(std::string url, std::size_t max_bytes) {
  net::HttpRequest request;
  request.url = std::move(url);
  request.max_response_bytes = max_bytes;
  request.timeouts.total = std::chrono::seconds(60);
  auto response = co_await context_.http->Send(std::move(request));
  if (!response) co_return tl::unexpected(response.error());
  if (response->status != 200 || response->body.empty()) {
    co_return util::Fail(ErrorCode::kUpstreamFailed,
                         fmt::format("the image url answered HTTP {}", response->status));
  }
  co_return Media{std::move(response->body), Mime(*response, "application/octet-stream")};
}

}  // namespace sb::platforms::lark
