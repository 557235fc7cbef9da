#include "platforms/wechatpad/wechatpad_api.hpp"

#include <fmt/format.h>

#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/http_client.hpp"
#include "platforms/common/rest_call.hpp"
#include "platforms/common/signatures.hpp"

namespace sb::platforms::wechatpad {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using util::ErrorCode;

constexpr std::size_t kMaxAnswerBytes = 16 * 1024 * 1024;  // LangBot's limit on answers
constexpr std::size_t kMaxImageBytes = 10 * 1024 * 1024;

// The path without its query: the key rides in the query.
std::string_view Route(std::string_view path) { return path.substr(0, path.find('?')); }

}  // namespace

WeChatPadApi::WeChatPadApi(const AdapterContext& context, std::string token, std::string base)
    : context_(context), token_(std::move(token)), base_(std::move(base)) {}

std::string WeChatPadApi::Scrub(std::string text) const {
  if (token_.size() < 4) return text;
  const std::string keyed = KeyedUrl("", "", token_).substr(5);  // the encoded form, "?key=" off
  for (const std::string& secret : {token_, keyed}) {
    for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos)) {
      text.replace(pos, secret.size(), "<token>");
    }
  }
  return text;
}

asio::awaitable<util::Result<Answer>> WeChatPadApi::Call(std::string method, std::string path,
                                                         std::string body) {
  net::HttpRequest request;
  request.method = method;
  request.url = KeyedUrl(base_, path, token_);
  if (!body.empty()) {
    request.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
  }
  request.body = std::move(body);
  // LangBot waits up to 60 s: sends through the iPad protocol can be slow.
  request.timeouts.connect = 10s;
  request.timeouts.total = 60s;
  request.timeouts.idle = 60s;
  request.max_response_bytes = kMaxAnswerBytes;
  auto response = co_await common::SendWithRetry(*context_.http, std::move(request));
  if (!response) {
    co_return util::Fail(response.error().code,
                         fmt::format("wechatpad {} {} failed: {}", method, Route(path),
                                     Scrub(response.error().message)));
  }
  if (response->status < 200 || response->status >= 300) {
    co_return util::Fail(ErrorCode::kUpstreamFailed,
                         fmt::format("WeChatPad answered {} {} with HTTP {}", method, Route(path),
                                     response->status));
  }
  auto answer = DecodeAnswer(response->body);
  if (!answer) {
    co_return util::Fail(answer.error().code,
                         fmt::format("{} ({} {})", answer.error().message, method, Route(path)));
  }
  co_return std::move(*answer);
}

asio::awaitable<util::Result<Answer>> WeChatPadApi::Get(std::string path) {
  return Call("GET", std::move(path), "");
}

asio::awaitable<util::Result<Answer>> WeChatPadApi::Post(std::string path, util::JsonObject body) {
  return Call("POST", std::move(path), util::SerializeJson(body));
}

asio::awaitable<util::Result<std::string>> WeChatPadApi::DownloadBase64(const std::string& url) {
  net::HttpRequest request;
  request.url = url;
  request.timeouts.connect = 10s;
  request.timeouts.total = 60s;
  request.max_response_bytes = kMaxImageBytes;
  auto response = co_await context_.http->Send(std::move(request));
  if (!response) {
    co_return util::Fail(response.error().code,
                         "cannot fetch the image to send: " + response.error().message);
  }
  if (response->status != 200) {
    co_return util::Fail(ErrorCode::kUpstreamFailed,
                         fmt::format("cannot fetch the image to send: HTTP {}", response->status));
  }
  co_return common::Base64Encode(response->body);
}

asio::awaitable<void> WeChatPadApi::Deliver(domain::OutgoingMessage message,
                                            std::shared_ptr<common::SendOnce> once) {
  co_await asio::this_coro::throw_if_cancelled(false);
  std::unordered_map<std::string, std::string> nicknames;
  bool has_at = false;
  for (const auto& e : message.chain) has_at = has_at || e.type == domain::ElementType::kAt;
  if (has_at && IsChatroom(message.target_id)) {
    // A failed lookup only costs the nicknames: the @ then names the wxid.
    std::string path = "/group/GetChatroomMemberDetail";
    util::JsonObject body{{"ChatRoomName", message.target_id}};
    auto members = co_await Post(std::move(path), std::move(body));
    if (members) nicknames = DecodeMemberNicknames(*members);
  }
  std::vector<std::string> images;
  for (const auto& e : message.chain) {
    if (e.type != domain::ElementType::kImage || e.url.empty()) continue;
    auto b64 = co_await DownloadBase64(e.url);
    if (!b64) {
      (*once)(tl::unexpected(b64.error()));
      co_return;
    }
    images.push_back(std::move(*b64));
  }
  for (OutboundCall& call : EncodeOutgoing(message, nicknames, images)) {
    auto answer = co_await Post(call.path, std::move(call.body));
    if (!answer) {
      (*once)(tl::unexpected(answer.error()));
      co_return;
    }
    if (!answer->ok) {
      (*once)(util::Fail(ErrorCode::kUpstreamFailed,
                         fmt::format("WeChatPad refused {} (Code {}{}{})", call.path, answer->code,
                                     answer->text.empty() ? "" : ": ", Scrub(answer->text))));
      co_return;
    }
  }
  (*once)(domain::SendReceipt{});
}

}  // namespace sb::platforms::wechatpad
