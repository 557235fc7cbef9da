#include "platforms/dingtalk/dingtalk_openapi.hpp"

#include <fmt/format.h>

#include <chrono>
#include <utility>

#include "platforms/common/rest_call.hpp"
#include "platforms/common/signatures.hpp"
#include "util/json.hpp"

namespace sb::platforms::dingtalk {
namespace {

namespace asio = boost::asio;
using util::ErrorCode;

// The SDKs renew this long before DingTalk's expireIn runs out.
constexpr std::chrono::minutes kRenewEarly{5};
constexpr std::size_t kMaxImageBytes = 10 * 1024 * 1024;

net::HttpRequest JsonPost(std::string url, std::string body) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = std::move(url);
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("Accept", "application/json");
  request.body = std::move(body);
  request.timeouts.connect = std::chrono::seconds(10);
  request.timeouts.total = std::chrono::seconds(30);
  request.timeouts.idle = std::chrono::seconds(30);
  request.max_response_bytes = 1024 * 1024;
  return request;
}

void ReplaceAll(std::string& text, std::string_view what, std::string_view with) {
  if (what.size() < 4) return;  // too short to be a credential; masking would garble the text
  for (std::size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + with.size())) {
    text.replace(at, what.size(), with);
  }
}

}  // namespace

DingTalkOpenApi::DingTalkOpenApi(std::shared_ptr<net::HttpClient> http, const util::Clock& clock,
                                 std::string base, std::string client_id, std::string client_secret)
    : http_(std::move(http)),
      clock_(clock),
      base_(std::move(base)),
      client_id_(std::move(client_id)),
      client_secret_(std::move(client_secret)) {}

std::string DingTalkOpenApi::Scrub(std::string text) const {
  ReplaceAll(text, client_secret_, "***");
  std::string token;
  {
    std::lock_guard lock(mu_);
    token = token_;
  }
  ReplaceAll(text, token, "***");
  return text;
}

asio::awaitable<util::Result<std::string>> DingTalkOpenApi::Token(std::string stale) {
  {
    std::lock_guard lock(mu_);
    if (!token_.empty() && token_ != stale && clock_.Now() < renew_after_) co_return token_;
  }
  util::JsonObject body{{"appKey", client_id_}, {"appSecret", client_secret_}};
  auto response = co_await common::SendWithRetry(
      *http_, JsonPost(base_ + "/v1.0/oauth2/accessToken", util::SerializeJson(body)));
  if (!response) {
    co_return util::Fail(response.error().code,
                         "cannot get a DingTalk access token: " + Scrub(response.error().message));
  }
  if (response->status != 200) {
    const std::string why = Scrub(DescribeError(response->status, response->body));
    if (response->status >= 400 && response->status < 500 && response->status != 429) {
      util::Error error{
          ErrorCode::kUpstreamAuth,
          "DingTalk refused the client_id/client_secret for an access token (" + why + ")"};
      co_return tl::unexpected(std::move(error));
    }
    co_return util::Fail(ErrorCode::kUpstreamFailed, "cannot get a DingTalk access token: " + why);
  }
  auto token = DecodeAccessToken(response->body);
  if (!token) co_return tl::unexpected(token.error());
  const auto lifetime = std::chrono::seconds(token->expires_in_seconds);
  std::lock_guard lock(mu_);
  token_ = token->token;
  renew_after_ =
      clock_.Now() + (lifetime > 2 * kRenewEarly ? lifetime - kRenewEarly : lifetime / 2);
  co_return token_;
}

asio::awaitable<util::Result<Connection>> DingTalkOpenApi::OpenConnection() {
  auto request = JsonPost(base_ + "/v1.0/gateway/connections/open",
                          EncodeOpenConnection(client_id_, client_secret_));
  request.timeouts.total = std::chrono::seconds(20);
  request.max_response_bytes = 64 * 1024;
  auto response = co_await common::SendWithRetry(*http_, std::move(request));
  if (!response) {
    co_return util::Fail(response.error().code, "cannot open a DingTalk stream connection: " +
                                                    Scrub(response.error().message));
  }
  if (response->status != 200) {
    const std::string why = Scrub(DescribeError(response->status, response->body));
    if (response->status >= 400 && response->status < 500 && response->status != 429) {
      util::Error error{ErrorCode::kUpstreamAuth,
                        "DingTalk refused the client_id/client_secret for a stream connection (" +
                            why + "); fix them and save the bot to try again"};
      error.final = true;
      co_return tl::unexpected(std::move(error));
    }
    co_return util::Fail(ErrorCode::kUpstreamFailed,
                         "cannot open a DingTalk stream connection: " + why);
  }
  co_return DecodeConnection(response->body);
}

asio::awaitable<util::Result<net::HttpResponse>> DingTalkOpenApi::Post(std::string path,
                                                                       std::string json_body) {
  std::string stale;
  for (int attempt = 0;; ++attempt) {
    auto token = co_await Token(stale);
    if (!token) co_return tl::unexpected(token.error());
    auto request = JsonPost(base_ + path, json_body);
    request.headers.emplace_back("x-acs-dingtalk-access-token", *token);
    auto response = co_await common::SendWithRetry(*http_, std::move(request));
    if (!response || attempt > 0 || !IsTokenRejected(response->status, response->body)) {
      co_return response;
    }
    stale = *token;  // expired or revoked early: fetch a new one and try once more
  }
}

asio::awaitable<util::Result<net::HttpResponse>> DingTalkOpenApi::PostWebhook(
    std::string url, std::string json_body) {
  auto request = JsonPost(std::move(url), std::move(json_body));
  request.timeouts.total = std::chrono::seconds(15);
  request.max_response_bytes = 64 * 1024;
  co_return co_await http_->Send(std::move(request));
}

asio::awaitable<util::Result<std::string>> DingTalkOpenApi::DownloadUrl(std::string download_code,
                                                                        std::string robot_code) {
  util::JsonObject body{{"downloadCode", download_code}, {"robotCode", robot_code}};
  auto answer = co_await Post("/v1.0/robot/messageFiles/download", util::SerializeJson(body));
  if (!answer) co_return tl::unexpected(answer.error());
  if (answer->status != 200) {
    co_return util::Fail(
        ErrorCode::kUpstreamFailed,
        "messageFiles/download failed: " + Scrub(DescribeError(answer->status, answer->body)));
  }
  co_return DecodeDownloadUrl(answer->body);
}

asio::awaitable<util::Result<std::string>> DingTalkOpenApi::DownloadImage(std::string download_code,
                                                                          std::string robot_code) {
  auto url = co_await DownloadUrl(std::move(download_code), std::move(robot_code));
  if (!url) co_return tl::unexpected(url.error());
  net::HttpRequest request;
  request.method = "GET";
  request.url = std::move(*url);
  request.timeouts.connect = std::chrono::seconds(10);
  request.timeouts.total = std::chrono::seconds(60);
  request.timeouts.idle = std::chrono::seconds(30);
  request.max_response_bytes = kMaxImageBytes;
  auto image = co_await http_->Send(std::move(request));
  if (!image) {
    co_return util::Fail(image.error().code, "the image download failed: " + image.error().message);
  }
  if (image->status != 200 || image->body.empty()) {
    co_return util::Fail(ErrorCode::kUpstreamFailed,
                         fmt::format("the image download answered HTTP {}", image->status));
  }
  std::string mime(image->Header("content-type"));
  if (const auto semi = mime.find(';'); semi != std::string::npos) mime.erase(semi);
  if (mime.rfind("image/", 0) != 0 || mime.size() > 100) mime = "image/jpeg";
  co_return "data:" + mime + ";base64," + common::Base64Encode(image->body);
}

}  // namespace sb::platforms::dingtalk
