#include "platforms/kook/kook_rest.hpp"

#include <fmt/format.h>

#include <boost/asio/this_coro.hpp>
#include <cstdlib>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/rest_call.hpp"
#include "platforms/kook/kook_signals.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::kook {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::chrono::milliseconds kCallTimeout = 30s;
constexpr std::chrono::milliseconds kUploadTimeout = 60s;
constexpr std::size_t kMaxResponseBytes = 4 * 1024 * 1024;
constexpr std::size_t kMaxImageBytes = 20 * 1024 * 1024;

// The wait KOOK asks for after a 429 (X-Rate-Limit-Reset, seconds), at most 3 tries, 30 s.
common::RetryPolicy KookRetryPolicy() {
  common::RetryPolicy policy;
  policy.wait_header = "x-rate-limit-reset";
  return policy;
}

}  // namespace

KookRest::KookRest(const AdapterContext& context, std::string token, std::string base)
    : context_(context), token_(std::move(token)), base_(std::move(base)) {}

std::string KookRest::Scrub(std::string text) const {
  if (token_.size() < 4) return text;
  for (auto pos = text.find(token_); pos != std::string::npos; pos = text.find(token_, pos)) {
    text.replace(pos, token_.size(), "<token>");
  }
  return text;
}

asio::awaitable<util::Result<util::Json>> KookRest::Call(std::string method, std::string path,
                                                         std::string body, std::string content_type,
                                                         std::chrono::milliseconds total) {
  net::HttpRequest request;
  request.method = method;
  request.url = base_ + path;
  request.headers.emplace_back("Authorization", "Bot " + token_);
  if (!content_type.empty()) request.headers.emplace_back("Content-Type", content_type);
  request.body = std::move(body);
  request.timeouts.connect = 10s;
  request.timeouts.total = total;
  request.timeouts.idle = total;
  request.max_response_bytes = kMaxResponseBytes;
  const std::string route(path.substr(0, path.find('?')));
  auto response =
      co_await common::SendWithRetry(*context_.http, std::move(request), KookRetryPolicy());
  if (!response) {
    co_return util::Fail(response.error().code, fmt::format("kook {} {} failed: {}", method, route,
                                                            Scrub(response.error().message)));
  }
  auto data = DecodeEnvelope(response->status, response->body);
  if (!data) {
    util::Error error = data.error();
    error.message = Scrub(fmt::format("{} ({} {})", error.message, method, route));
    if (response->status == 429) {
      const std::string_view reset = response->Header("x-rate-limit-reset");
      error.retry_after_seconds = reset.empty() ? 1 : std::atoi(std::string(reset).c_str());
      context_.host->Log(LogLevel::kWarning,
                         "KOOK rate limits the bot beyond the waits it allows: " + error.message);
    }
    co_return tl::unexpected(std::move(error));
  }
  co_return std::move(*data);
}

asio::awaitable<util::Result<BotUser>> KookRest::UserMe() {
  auto data = co_await Call("GET", "/v3/user/me", "", "", kCallTimeout);
  if (!data) co_return tl::unexpected(data.error());
  co_return DecodeUserMe(*data);
}

asio::awaitable<util::Result<std::string>> KookRest::GatewayIndex() {
  auto data = co_await Call("GET", "/v3/gateway/index?compress=0", "", "", kCallTimeout);
  if (!data) co_return tl::unexpected(data.error());
  co_return DecodeGatewayUrl(*data);
}

asio::awaitable<util::Result<std::string>> KookRest::FetchImage(const std::string& url,
                                                                std::string& mime) {
  // A plain GET: the image lives anywhere, so KOOK's credential must not go with it.
  net::HttpRequest request;
  request.url = url;
  request.timeouts.connect = 10s;
  request.timeouts.total = kUploadTimeout;
  request.timeouts.idle = kCallTimeout;
  request.max_response_bytes = kMaxImageBytes;
  auto response = co_await context_.http->Send(std::move(request));
  if (!response) {
    co_return util::Fail(response.error().code,
                         "cannot fetch the image to upload to KOOK: " + response.error().message);
  }
  if (response->status < 200 || response->status >= 300 || response->body.empty()) {
    co_return util::Fail(
        ErrorCode::kUpstreamFailed,
        fmt::format("cannot fetch the image to upload to KOOK (HTTP {})", response->status));
  }
  mime = std::string(response->Header("content-type"));
  mime = mime.substr(0, mime.find(';'));
  co_return std::move(response->body);
}

asio::awaitable<util::Result<std::string>> KookRest::UploadImage(const OutboundCall& call) {
  std::string bytes = call.image_bytes;
  std::string mime = call.image_mime;
  if (bytes.empty()) {
    auto fetched = co_await FetchImage(call.image_url, mime);
    if (!fetched) co_return tl::unexpected(fetched.error());
    bytes = std::move(*fetched);
    if (!mime.starts_with("image/")) mime = "image/png";
  }
  const std::string boundary = "sb-" + util::RandomUrlSafe(24);
  auto data = co_await Call("POST", "/v3/asset/create", EncodeAssetUpload(bytes, mime, boundary),
                            "multipart/form-data; boundary=" + boundary, kUploadTimeout);
  if (!data) co_return tl::unexpected(data.error());
  co_return DecodeAssetUrl(*data);
}

asio::awaitable<void> KookRest::SendAll(domain::TargetType type, std::string target,
                                        std::string quote,
                                        std::shared_ptr<const std::vector<OutboundCall>> calls,
                                        std::shared_ptr<common::SendOnce> once) {
  co_await asio::this_coro::throw_if_cancelled(false);
  const std::string path =
      type == domain::TargetType::kPerson ? "/v3/direct-message/create" : "/v3/message/create";
  domain::SendReceipt receipt;
  for (const OutboundCall& call : *calls) {
    std::string content = call.content;
    if (call.type == kTypeImage) {
      auto asset = co_await UploadImage(call);
      if (!asset) {
        (*once)(tl::unexpected(asset.error()));
        co_return;
      }
      content = std::move(*asset);
    }
    const std::string body = util::SerializeJson(EncodeCreateBody(target, call, content, quote));
    quote.clear();  // only the first message quotes
    auto data = co_await Call("POST", path, body, "application/json", kCallTimeout);
    if (!data) {
      (*once)(tl::unexpected(data.error()));
      co_return;
    }
    if (auto id = DecodeMsgId(*data)) receipt.message_id = *id;
  }
  (*once)(receipt);
}

}  // namespace sb::platforms::kook
