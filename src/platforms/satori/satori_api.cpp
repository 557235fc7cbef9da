#include "platforms/satori/satori_api.hpp"

#include <fmt/format.h>

#include <boost/asio/this_coro.hpp>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/rest_call.hpp"

namespace sb::platforms::satori {
namespace {

namespace asio = boost::asio;
using util::ErrorCode;

constexpr std::size_t kMaxDmChannels = 4096;  // user id -> direct channel id
constexpr std::size_t kMaxReasonBytes = 200;  // of a refusal's body, in the error message

std::string Reason(const std::string& body) {
  std::string reason = body.substr(0, kMaxReasonBytes);
  for (char& c : reason) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return reason;
}

}  // namespace

SatoriApi::SatoriApi(const AdapterContext& context, std::string token, std::string api)
    : context_(context), token_(std::move(token)), api_(std::move(api)) {}

std::string SatoriApi::Scrub(std::string text) const {
  if (token_.size() < 4) return text;
  for (auto pos = text.find(token_); pos != std::string::npos; pos = text.find(token_, pos)) {
    text.replace(pos, token_.size(), "<token>");
  }
  return text;
}

void SatoriApi::SetLogin(Login login) {
  std::lock_guard lock(mu_);
  login_ = std::move(login);
}

void SatoriApi::RememberDm(const std::string& user_id, const std::string& channel_id) {
  std::lock_guard lock(mu_);
  if (dm_channels_.size() >= kMaxDmChannels) dm_channels_.clear();
  dm_channels_[user_id] = channel_id;
}

asio::awaitable<util::Result<std::string>> SatoriApi::Call(std::string method, std::string body) {
  Login login;
  {
    std::lock_guard lock(mu_);
    login = login_;
  }
  if (login.user_id.empty()) {
    co_return util::Fail(ErrorCode::kUnavailable,
                         "the bot is not connected to the Satori server yet (no READY)");
  }
  net::HttpRequest request =
      common::BearerRequest("POST", api_ + "/" + method, token_, std::move(body));
  // An SDK without authentication takes no Authorization header (protocol/api.html).
  if (token_.empty())
    std::erase_if(request.headers, [](auto& h) { return h.first == "Authorization"; });
  request.headers.emplace_back("Satori-Platform", login.platform);
  request.headers.emplace_back("Satori-User-ID", login.user_id);
  // The names of protocol versions before 2024 (X-Platform, X-Self-ID), still read by older SDKs.
  request.headers.emplace_back("X-Platform", login.platform);
  request.headers.emplace_back("X-Self-ID", login.user_id);
  auto response = co_await common::SendWithRetry(*context_.http, std::move(request));
  if (!response) {
    co_return util::Fail(response.error().code, fmt::format("satori {} failed: {}", method,
                                                            Scrub(response.error().message)));
  }
  if (response->status >= 200 && response->status < 300) co_return std::move(response->body);
  const std::string reason = Scrub(Reason(response->body));
  if (response->status == 401 || response->status == 403) {
    util::Error error{ErrorCode::kUpstreamAuth,
                      fmt::format("the Satori server refused {} (HTTP {}): {}", method,
                                  response->status, reason)};
    co_return tl::unexpected(std::move(error));
  }
  if (response->status == 429) {
    co_return util::Fail(ErrorCode::kUpstreamRateLimited,
                         fmt::format("the Satori server is rate limiting {}", method));
  }
  co_return util::Fail(
      ErrorCode::kUpstreamFailed,
      fmt::format("the Satori server refused {} (HTTP {}): {}", method, response->status, reason));
}

asio::awaitable<util::Result<std::string>> SatoriApi::DirectChannel(const std::string& user_id) {
  {
    std::lock_guard lock(mu_);
    if (auto it = dm_channels_.find(user_id); it != dm_channels_.end()) co_return it->second;
  }
  auto opened = co_await Call("user.channel.create", EncodeDirectChannelCreate(user_id));
  if (!opened) co_return tl::unexpected(opened.error());
  auto channel = DecodeChannelId(*opened);
  if (!channel) co_return tl::unexpected(channel.error());
  RememberDm(user_id, *channel);
  co_return *channel;
}

asio::awaitable<void> SatoriApi::Deliver(domain::TargetType type, std::string target,
                                         std::string content,
                                         std::shared_ptr<common::SendOnce> once) {
  co_await asio::this_coro::throw_if_cancelled(false);
  std::string channel = std::move(target);
  if (type == domain::TargetType::kPerson) {
    auto dm = co_await DirectChannel(channel);
    if (!dm) {
      (*once)(tl::unexpected(dm.error()));
      co_return;
    }
    channel = std::move(*dm);
  }
  auto created = co_await Call("message.create", EncodeMessageCreate(channel, content));
  if (!created) {
    (*once)(tl::unexpected(created.error()));
    co_return;
  }
  auto id = DecodeCreatedMessageId(*created);
  if (!id) {
    (*once)(tl::unexpected(id.error()));
    co_return;
  }
  domain::SendReceipt receipt;
  if (!id->empty()) receipt.message_id = std::move(*id);
  (*once)(std::move(receipt));
}

}  // namespace sb::platforms::satori
